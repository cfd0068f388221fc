package opt_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/opt"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
)

//lint:immutable a constant table of the rules under test.
var rules = map[string]func(plan.Node) plan.Node{
	"fold":        opt.FoldConstants,
	"decorrelate": opt.Decorrelate,
	"pushdown":    opt.PushFilters,
	"joinkeys":    opt.ExtractJoinKeys,
	"reorder":     opt.ReorderJoins,
	"prune":       opt.PruneColumns,
	"merge":       opt.MergeProjects,
	"windowtopk":  opt.WindowTopK,
	"all":         opt.Optimize,
	"distribute":  dist.Distribute,
}

func describe(cat catalog.Catalog, query string) ([]catalog.Column, error) {
	q, err := bind.QueryText(cat, query, bind.Options{})
	if err != nil {
		return nil, err
	}
	var cols []catalog.Column
	for _, c := range q.Columns {
		cols = append(cols, catalog.Column{Name: c.Name, Type: c.Type, NotNull: !c.Nullable})
	}
	return cols, nil
}

// TestRules runs each optimizer rule alone on golden plans: the `rule`
// command binds the query, applies the rules named by its arguments in
// order, and prints the plan before (`before` argument) and after.
func TestRules(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := catalog.NewMemory(catalog.NamespaceID{})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				if err := sqltest.Exec(cat, d.Input, describe); err != nil {
					return sqltest.FormatError(err)
				}
				return ""
			case "rule":
				q, err := bind.QueryText(cat, d.Input, bind.Options{})
				if err != nil {
					return sqltest.FormatError(err)
				}
				n := q.Plan
				var b strings.Builder
				if d.HasArg("before") {
					b.WriteString(plan.Format(n))
					b.WriteString("=>\n")
				}
				width := len(n.Schema())
				for _, arg := range d.CmdArgs {
					if arg.Key == "before" {
						continue
					}
					rule, ok := rules[arg.Key]
					if !ok {
						t.Fatalf("unknown rule %s", arg.Key)
					}
					n = rule(n)
				}
				if got := len(n.Schema()); got != width {
					fmt.Fprintf(&b, "SCHEMA WIDTH CHANGED: %d -> %d\n", width, got)
				}
				b.WriteString(plan.Format(n))
				if err := opt.CheckMaintainable(n); err != nil {
					b.WriteString(sqltest.FormatError(err))
				}
				return b.String()
			case "spread":
				// The view's plan spread over shards without an exchange
				// inside (dist.SpreadKeys): each relation with the columns
				// that place its rows.
				v, err := rsql.CompileView(cat, d.Input)
				if err != nil {
					return sqltest.FormatError(err)
				}
				sp, ok := dist.SpreadKeys(v.Plan)
				if !ok {
					return "not spread\n"
				}
				var lines []string
				for id, keys := range sp.Keys { //lint:maprange sorted below
					rel, _ := cat.RelationByID(id)
					var names []string
					for _, k := range keys {
						names = append(names, k.String())
					}
					lines = append(lines, fmt.Sprintf("%s by (%s)", rel.Name, strings.Join(names, ", ")))
				}
				sort.Strings(lines)
				return strings.Join(lines, "\n") + "\n"
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}
