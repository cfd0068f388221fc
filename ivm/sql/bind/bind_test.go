package bind_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
)

// describe computes a view's columns by binding its query.
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

func formatQuery(q *bind.BoundQuery) string {
	var b strings.Builder
	cols := make([]string, len(q.Columns))
	for i, c := range q.Columns {
		cols[i] = c.Name + " " + c.Type.SQLName()
	}
	fmt.Fprintf(&b, "columns: %s\n", strings.Join(cols, ", "))
	if len(q.ParamTypes) > 0 {
		ps := make([]string, len(q.ParamTypes))
		for i, t := range q.ParamTypes {
			ps[i] = fmt.Sprintf("$%d %s", i+1, t.SQLName())
		}
		fmt.Fprintf(&b, "params: %s\n", strings.Join(ps, ", "))
	}
	if len(q.Order) > 0 || q.Limit >= 0 {
		fmt.Fprintf(&b, "order: %v limit=%d offset=%d\n", q.Order, q.Limit, q.Offset)
	}
	b.WriteString(plan.Format(q.Plan))
	return b.String()
}

func TestBind(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := catalog.NewMemory(catalog.NamespaceID{})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				if err := sqltest.Exec(cat, d.Input, describe); err != nil {
					return sqltest.FormatError(err)
				}
				return ""
			case "dml":
				st, err := parse.ParseOne(d.Input)
				if err != nil {
					return sqltest.FormatError(err)
				}
				out, err := bind.DML(cat, st.(*parse.PG), bind.Options{})
				if err != nil {
					return sqltest.FormatError(err)
				}
				return formatDML(out)
			case "bind":
				opts := bind.Options{ForView: d.HasArg("view")}
				q, err := bind.QueryText(cat, d.Input, opts)
				if err != nil {
					return sqltest.FormatError(err)
				}
				return formatQuery(q)
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}

func formatParams(ps []types.Type) string {
	if len(ps) == 0 {
		return ""
	}
	out := make([]string, len(ps))
	for i, t := range ps {
		out[i] = fmt.Sprintf("$%d %s", i+1, t.SQLName())
	}
	return "params: " + strings.Join(out, ", ") + "\n"
}

func formatReturning(r *bind.Returning) string {
	if r == nil {
		return ""
	}
	parts := make([]string, len(r.Exprs))
	for i, e := range r.Exprs {
		parts[i] = e.String() + " AS " + r.Columns[i].Name
	}
	return "returning: " + strings.Join(parts, ", ") + "\n"
}

func formatDML(x any) string {
	var b strings.Builder
	switch d := x.(type) {
	case *bind.Insert:
		fmt.Fprintf(&b, "insert into %s\n", d.Table.Name)
		b.WriteString(formatParams(d.ParamTypes))
		if oc := d.OnConflict; oc != nil {
			if oc.DoNothing {
				b.WriteString("on conflict do nothing\n")
			} else {
				for _, a := range oc.Set {
					fmt.Fprintf(&b, "on conflict set #%d = %s\n", a.Column, a.Expr)
				}
				if oc.Where != nil {
					fmt.Fprintf(&b, "on conflict where %s\n", oc.Where)
				}
			}
		}
		b.WriteString(formatReturning(d.Returning))
		b.WriteString(plan.Format(d.Rows))
	case *bind.Update:
		fmt.Fprintf(&b, "update %s\n", d.Table.Name)
		b.WriteString(formatParams(d.ParamTypes))
		b.WriteString(formatReturning(d.Returning))
		b.WriteString(plan.Format(d.Rows))
	case *bind.Delete:
		fmt.Fprintf(&b, "delete from %s\n", d.Table.Name)
		b.WriteString(formatParams(d.ParamTypes))
		b.WriteString(formatReturning(d.Returning))
		b.WriteString(plan.Format(d.Rows))
	}
	return b.String()
}
