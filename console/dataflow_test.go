package console

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseDataflow reads EXPLAIN INCREMENTAL's tree back into operators.
func TestParseDataflow(t *testing.T) {
	text := `VIEW  sales_by_product
 └─ AGG  SUM(quantity) GROUP BY product_id
     └─ PROJECT  product_id, quantity
         └─ JOIN  orders ⋈ products ON product_id
             ├─ EXCHANGE  hash(product_id)
             │   └─ PROJECT  product_id, quantity
             │       └─ SCAN  orders AS o
             └─ PROJECT  product_id
                 └─ SCAN  products AS p`
	root := parseDataflow(strings.Split(text, "\n"))
	var draw func(o *operator, depth int, out *strings.Builder)
	draw = func(o *operator, depth int, out *strings.Builder) {
		out.WriteString(strings.Repeat("  ", depth) + o.Name + " | " + o.Detail + "\n")
		for _, in := range o.Inputs {
			draw(in, depth+1, out)
		}
	}
	var got strings.Builder
	draw(root, 0, &got)
	want := `VIEW | sales_by_product
  AGG | SUM(quantity) GROUP BY product_id
    PROJECT | product_id, quantity
      JOIN | orders ⋈ products ON product_id
        EXCHANGE | hash(product_id)
          PROJECT | product_id, quantity
            SCAN | orders AS o
        PROJECT | product_id
          SCAN | products AS p
`
	if got.String() != want {
		t.Fatalf("parsed\n%s\nwant\n%s", got.String(), want)
	}
	if c := root.Inputs[0].Inputs[0].Inputs[0].Class(); c != "op-join" {
		t.Fatalf("the join's class is %q", c)
	}
}

// TestParseAnalyzed reads EXPLAIN ANALYZE INCREMENTAL's text back into
// its summary, operators with their numbers, and notes: every form of
// operator line the engine prints (time, fused, state, recent counts, an
// operator drawn above).
func TestParseAnalyzed(t *testing.T) {
	text := `VIEW  v  (shards 1, 2, frontier epoch 9; 2 rows, state 2 rows, 66 bytes)
 └─ #5 aggregate  rows in 23  out 44  steps 23  time 0.312 ms  state 2 rows 66 bytes  (last 16 steps: rows in 16  out 32  time 0.100 ms)
     └─ #4 join inner  rows in 3  out 3  steps 3  time 1.053 ms  state 1001 rows 45037 bytes
         ├─ #2 filter  rows in 24  out 23  steps 23  time in its consumer (fused)
         │   └─ #1 source t  rows in 24  out 24  steps 23  time 0.005 ms
         └─ #2 filter  (shown above)
Counts are since the server started or the view was last rebuilt (backfill included), and over the last 16 steps once there were more; state is as stored.`
	summary, root, notes := parseAnalyzed(strings.Split(text, "\n"))
	if summary != "shards 1, 2, frontier epoch 9; 2 rows, state 2 rows, 66 bytes" {
		t.Fatalf("summary %q", summary)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "Counts are since") {
		t.Fatalf("notes %q", notes)
	}
	var draw func(o *operator, depth int, out *strings.Builder)
	draw = func(o *operator, depth int, out *strings.Builder) {
		out.WriteString(strings.Repeat("  ", depth) + o.Number + " " + o.Name + " [" + o.Detail + "]")
		if s := o.Stats; s != nil {
			fmt.Fprintf(out, " in=%d out=%d steps=%d time=%q fused=%v state=%v/%d/%d recent=%q above=%v",
				s.RowsIn, s.RowsOut, s.Steps, s.Time, s.Fused, s.HasState, s.StateRows, s.StateBytes, s.Recent, s.ShownAbove)
		}
		out.WriteString("\n")
		for _, in := range o.Inputs {
			draw(in, depth+1, out)
		}
	}
	var got strings.Builder
	draw(root, 0, &got)
	want := ` VIEW [v]
  5 aggregate [] in=23 out=44 steps=23 time="0.312 ms" fused=false state=true/2/66 recent="last 16 steps: rows in 16  out 32  time 0.100 ms" above=false
    4 join inner [] in=3 out=3 steps=3 time="1.053 ms" fused=false state=true/1001/45037 recent="" above=false
      2 filter [] in=24 out=23 steps=23 time="" fused=true state=false/0/0 recent="" above=false
        1 source t [] in=24 out=24 steps=23 time="0.005 ms" fused=false state=false/0/0 recent="" above=false
      2 filter [] in=0 out=0 steps=0 time="" fused=false state=false/0/0 recent="" above=true
`
	if got.String() != want {
		t.Fatalf("parsed\n%s\nwant\n%s", got.String(), want)
	}
	if c := root.Inputs[0].Class(); c != "op-aggregate" {
		t.Fatalf("the aggregate's class is %q", c)
	}

	// A line whose numbers are not as expected keeps them as its detail.
	_, root, _ = parseAnalyzed([]string{"VIEW  v  (shard 1, frontier epoch 1; backfilling: reading inputs, 10 input rows read)", " └─ #1 source t  rows in many"})
	if op := root.Inputs[0]; op.Stats != nil || op.Detail != "rows in many" || op.Name != "source t" {
		t.Fatalf("an unreadable line became %+v", op)
	}
}
