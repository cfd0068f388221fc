package circuit

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// viewNames labels the views of buildTestCircuit in script output.
var viewNames = map[ViewID]string{
	viewSums: "sums", viewBig: "big", viewJoin: "join", viewTotal: "total", viewDivide: "divide", viewTop: "top",
}

// TestScripts runs testdata/* scripts against buildTestCircuit over one
// store (regenerate with -rewrite). Commands:
//
//	step            input lines "<t|u> <weight> <k>,<v>" (NULL allowed);
//	                prints every view's output delta
//	read <view-id>  prints the view's stored snapshot or its error
//	restart         builds a new circuit over the same store
//	stats           prints per-node statistics (no timings)
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		store := kv.NewMemory()
		c := buildTestCircuit(t, 0)
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			switch td.Cmd {
			case "step":
				inputs := map[SourceID]zset.Batch{}
				for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
					if line == "" {
						continue
					}
					src, row, w, err := parseInputLine(line)
					if err != nil {
						t.Fatalf("%s: %v", line, err)
					}
					b := inputs[src]
					b.Add(row, w)
					inputs[src] = b
				}
				txn := kv.NewTxn(store)
				outs, err := c.Step(txn, inputs)
				if err != nil {
					return "step error: " + err.Error()
				}
				if err := store.Apply(txn.Batch()); err != nil {
					t.Fatal(err)
				}
				var sb strings.Builder
				for _, v := range allViews {
					if outs[v].Len() > 0 {
						fmt.Fprintf(&sb, "%s: %s\n", viewNames[v], outs[v])
					}
				}
				return sb.String()
			case "read":
				id, err := strconv.ParseUint(td.CmdArgs[0].Key, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ReadView(store, ViewID(id))
				if e, ok := errcode.As(err); ok {
					return fmt.Sprintf("error %s %s: %s\ndetail: %s\n", e.State(), e.Code.ID, e.Message, e.Detail)
				} else if err != nil {
					t.Fatal(err)
				}
				return got.String() + "\n"
			case "restart":
				c = buildTestCircuit(t, 0)
				return ""
			case "stats":
				var sb strings.Builder
				for _, s := range c.Stats() {
					fmt.Fprintf(&sb, "%-16s in=%d out=%d state_rows=%d\n", s.Label, s.RowsIn, s.RowsOut, s.StateRows)
				}
				return sb.String()
			}
			t.Fatalf("unknown command %q", td.Cmd)
			return ""
		})
	})
}

func parseInputLine(line string) (SourceID, types.Row, int64, error) {
	fields := strings.Fields(line)
	if len(fields) != 3 {
		return 0, nil, 0, fmt.Errorf("want <table> <weight> <k>,<v>")
	}
	src := map[string]SourceID{"t": tableT, "u": tableU}[fields[0]]
	if src == 0 {
		return 0, nil, 0, fmt.Errorf("unknown table %q", fields[0])
	}
	w, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return 0, nil, 0, err
	}
	var row types.Row
	for _, s := range strings.Split(fields[2], ",") {
		if s == "NULL" {
			row = append(row, nil)
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, nil, 0, err
		}
		row = append(row, v)
	}
	return src, row, w, nil
}
