package access_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/access"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
)

// indexes serves an in-memory catalog's indexes as the engine serves a
// snapshot's: those the shards keep entries for (shard.MaintainedIndex),
// in creation order.
type indexes struct{ cat *catalog.Memory }

func (x indexes) Indexes(table *catalog.Relation) []access.Index {
	var out []access.Index
	for _, name := range x.cat.Names() {
		idx, _ := x.cat.LookupRelation([]string{name})
		if idx.Kind != catalog.KindIndex || idx.Index.Table != table.ID {
			continue
		}
		if cols, ok := shard.MaintainedIndex(table, idx); ok {
			out = append(out, access.Index{Relation: idx, Columns: cols})
		}
	}
	slices.SortFunc(out, func(a, b access.Index) int {
		return bytes.Compare(a.Relation.ID.Object[:], b.Relation.ID.Object[:])
	})
	return out
}

// TestAccess runs the access-path choice on golden plans: the `access`
// command compiles a statement as a session does (a query, or the row plan
// of an UPDATE or DELETE), chooses its reads with the parameters given by
// the `params` argument (NULL: a NULL), and prints the plan and, per table
// it scans, what is read: `keys` (point reads), `ranges` of the primary
// key, `index <name> ranges`, or `whole`; then EXPLAIN's index lines.
func TestAccess(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := catalog.NewMemory(catalog.NamespaceID{})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				if err := sqltest.Exec(cat, d.Input, nil); err != nil {
					return sqltest.FormatError(err)
				}
				return ""
			case "access":
				stmts, err := rsql.Compile(cat, d.Input, rsql.Options{})
				if err != nil {
					return sqltest.FormatError(err)
				}
				var n plan.Node
				var paramTypes []types.Type
				switch st := stmts[0].(type) {
				case *rsql.Query:
					n, paramTypes = st.Plan, st.ParamTypes
				case *rsql.Update:
					n, paramTypes = st.Rows, st.ParamTypes
				case *rsql.Delete:
					n, paramTypes = st.Rows, st.ParamTypes
				default:
					t.Fatalf("access: %s is not a query, UPDATE or DELETE", st.Tag())
				}
				env := &expr.Env{TimeZone: time.UTC}
				for _, arg := range d.CmdArgs {
					if arg.Key != "params" {
						t.Fatalf("unknown argument %s", arg.Key)
					}
					for i, v := range arg.Vals {
						if v == "NULL" {
							env.Params = append(env.Params, nil)
							continue
						}
						val, err := types.Parse(paramTypes[i], v, time.UTC)
						if err != nil {
							t.Fatalf("param $%d: %v", i+1, err)
						}
						env.Params = append(env.Params, val)
					}
				}
				reads := rsql.PlanReads(n, env, indexes{cat})
				var b strings.Builder
				b.WriteString(plan.Format(n))
				seen := map[catalog.ID]bool{}
				for _, rel := range plan.ScannedRelations(n) {
					if seen[rel.ID] {
						continue
					}
					seen[rel.ID] = true
					b.WriteString(describe(cat, rel, reads))
				}
				for _, l := range reads.IndexScans {
					b.WriteString(l + "\n")
				}
				return b.String()
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

// describe renders how rel is read.
func describe(cat *catalog.Memory, rel *catalog.Relation, reads access.Reads) string {
	if keys, ok := reads.Points[rel.ID]; ok {
		var parts []string
		for _, k := range keys {
			parts = append(parts, "("+values(rel, rel.PrimaryKey, k)+")")
		}
		return fmt.Sprintf("%s: keys %s\n", rel.Name, strings.Join(parts, ", "))
	}
	for _, l := range reads.Lookups {
		if l.Table.ID != rel.ID {
			continue
		}
		keyCols, via := rel.PrimaryKey, rel.PrimaryKeyConstraint()
		if l.Index != (catalog.ID{}) {
			idx, _ := cat.RelationByID(l.Index)
			keyCols, _ = shard.MaintainedIndex(rel, idx)
			via = idx.Name
		}
		driver := l.Driver
		var conj []string
		for i, c := range l.DriverCols {
			conj = append(conj, rel.Columns[keyCols[i]].Name+" = "+driver.Name+"."+driver.Columns[c].Name)
		}
		return fmt.Sprintf("%s: lookup using %s [%s]\n", rel.Name, via, strings.Join(conj, " AND "))
	}
	ranges, ok := reads.Ranges[rel.ID]
	if !ok {
		return rel.Name + ": whole\n"
	}
	keyCols, via := rel.PrimaryKey, ""
	if id := ranges[0].Index; id != (catalog.ID{}) {
		idx, _ := cat.RelationByID(id)
		keyCols, _ = shard.MaintainedIndex(rel, idx)
		via = " index " + idx.Name
	}
	var parts []string
	for _, r := range ranges {
		var conj []string
		for i, v := range r.Eq {
			conj = append(conj, rel.Columns[keyCols[i]].Name+" = "+values(rel, keyCols[i:i+1], types.Row{v}))
		}
		if len(r.Eq) < len(keyCols) {
			c := rel.Columns[keyCols[len(r.Eq)]]
			if r.Lo != nil {
				conj = append(conj, c.Name+map[bool]string{false: " >= ", true: " > "}[r.LoOpen]+plan.FormatDatum(r.Lo, c.Type))
			}
			if r.Hi != nil {
				conj = append(conj, c.Name+map[bool]string{false: " <= ", true: " < "}[r.HiOpen]+plan.FormatDatum(r.Hi, c.Type))
			}
		}
		parts = append(parts, "["+strings.Join(conj, " AND ")+"]")
	}
	return fmt.Sprintf("%s:%s ranges %s\n", rel.Name, via, strings.Join(parts, ", "))
}

// values renders the values of the columns cols of rel.
func values(rel *catalog.Relation, cols []int, row types.Row) string {
	parts := make([]string, len(row))
	for i, v := range row {
		parts[i] = plan.FormatDatum(v, rel.Columns[cols[i]].Type)
	}
	return strings.Join(parts, ", ")
}

// TestLookupRanges: a lookup reads one key per distinct non-NULL tuple of
// the driving rows' join columns, in first-seen order, and nothing when
// there are more than LookupMax.
func TestLookupRanges(t *testing.T) {
	driver := &catalog.Relation{Columns: []catalog.Column{{Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TText}}}
	l := access.Lookup{Driver: driver, DriverCols: []int{1, 0}}
	rows := []types.Row{{int64(1), "x"}, {nil, "y"}, {int64(2), nil}, {int64(1), "x"}, {int64(3), "x"}}
	rs, ok := l.Ranges(rows)
	if !ok || len(rs) != 2 || fmt.Sprint(rs[0].Eq) != "[x 1]" || fmt.Sprint(rs[1].Eq) != "[x 3]" {
		t.Fatalf("Ranges = %v, %v", rs, ok)
	}
	if rs, ok := l.Ranges(nil); !ok || len(rs) != 0 {
		t.Fatalf("Ranges of no rows = %v, %v", rs, ok)
	}
	many := make([]types.Row, access.LookupMax+1)
	for i := range many {
		many[i] = types.Row{int64(i), "x"}
	}
	if _, ok := l.Ranges(many[:access.LookupMax]); !ok {
		t.Fatalf("%d values are not looked up", access.LookupMax)
	}
	if _, ok := l.Ranges(many); ok {
		t.Fatalf("%d values are looked up", len(many))
	}
}
