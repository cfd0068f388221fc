package sql_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
)

// env is the fixed evaluation environment of the tests.
func env(params ...types.Datum) *expr.Env {
	return &expr.Env{TimeZone: time.UTC, Params: params}
}

// engine is a tiny single-node database over the compiler: DDL updates an
// in-memory catalog, DML runs its plans ad hoc and applies the rows to an
// in-memory store, queries run ad hoc.
type engine struct {
	cat   *catalog.Memory
	store *sqltest.Store
}

func newEngine() *engine {
	return &engine{cat: catalog.NewMemory(catalog.NamespaceID{}), store: sqltest.NewStore()}
}

func columnsOf(cols []plan.Column) []catalog.Column {
	out := make([]catalog.Column, len(cols))
	for i, c := range cols {
		out[i] = catalog.Column{Name: c.Name, Type: c.Type, NotNull: !c.Nullable}
	}
	return out
}

// exec runs a script; it returns the output of the last statement.
func (e *engine) exec(script string) (string, error) {
	// Statements are compiled one at a time: each sees the catalog as
	// the previous ones left it.
	stmts, err := parse.Parse(script)
	if err != nil {
		return "", err
	}
	var out string
	for _, p := range stmts {
		st, err := sql.CompileStatement(e.cat, p, sql.Options{})
		if err != nil {
			return "", err
		}
		if out, err = e.run(st); err != nil {
			return "", err
		}
	}
	return out, nil
}

func (e *engine) run(st sql.Statement) (string, error) {
	switch x := st.(type) {
	case *sql.DDL:
		switch d := x.Stmt.(type) {
		case *ddl.CreateTable:
			e.cat.Add(&catalog.Relation{Kind: catalog.KindTable, Name: d.Name, Columns: d.Columns, PrimaryKey: d.PrimaryKey, InsertOnly: d.InsertOnly, Watermark: d.Watermark})
		case *ddl.CreateView:
			kind := catalog.KindView
			if d.Materialized {
				kind = catalog.KindMaterializedView
			}
			e.cat.Add(&catalog.Relation{Kind: kind, Name: d.Name, SQL: d.Query, Columns: columnsOf(x.Columns)})
		case *ddl.Drop:
			for _, n := range d.Names {
				e.cat.Drop(n)
			}
		case *ddl.CreateSource:
			rel := &catalog.Relation{Kind: catalog.KindSource, Name: d.Name, InsertOnly: true}
			for _, c := range d.Columns {
				rel.Columns = append(rel.Columns, c.Column)
			}
			e.cat.Add(rel)
		}
		return x.Tag() + "\n", nil
	case *sql.Insert:
		rows, err := sql.RunPlan(x.Rows, e.store, env())
		if err != nil {
			return "", err
		}
		if _, err := e.store.Insert(x.Table, rows); err != nil {
			return "", err
		}
		return fmt.Sprintf("INSERT 0 %d\n", len(rows)), nil
	case *sql.Delete:
		rows, err := sql.RunPlan(x.Rows, e.store, env())
		if err != nil {
			return "", err
		}
		e.store.Delete(x.Table, rows)
		return fmt.Sprintf("DELETE %d\n", len(rows)), nil
	case *sql.Update:
		rows, err := sql.RunPlan(x.Rows, e.store, env())
		if err != nil {
			return "", err
		}
		n := len(x.Table.Columns)
		var olds, news []types.Row
		for _, r := range rows {
			olds = append(olds, r[:n])
			news = append(news, r[n:])
		}
		e.store.Delete(x.Table, olds)
		if _, err := e.store.Insert(x.Table, news); err != nil {
			return "", err
		}
		return fmt.Sprintf("UPDATE %d\n", len(rows)), nil
	case *sql.Query:
		res, err := sql.RunQuery(x, e.store, env())
		if err != nil {
			return "", err
		}
		ts := make([]types.Type, len(res.Columns))
		names := make([]string, len(res.Columns))
		for i, c := range res.Columns {
			ts[i], names[i] = c.Type, c.Name
		}
		return strings.Join(names, " | ") + "\n" + sqltest.FormatRows(ts, res.Rows, len(x.Order) > 0), nil
	case *sql.Explain:
		if x.DML != nil {
			return sql.ExplainDML(x.DML), nil
		}
		return sql.ExplainQuery(x.Query), nil
	case *sql.ExplainIncremental:
		return sql.ExplainIncrementalText(x), nil
	}
	return st.Tag() + "\n", nil
}

func formatErr(err error) string {
	if e, ok := errcode.As(err); ok {
		return sqltest.FormatError(e)
	}
	return "untyped error: " + err.Error() + "\n"
}

func TestEngine(t *testing.T) {
	datadriven.Walk(t, "testdata/engine", func(t *testing.T, path string) {
		e := newEngine()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec", "query":
				out, err := e.exec(d.Input)
				if err != nil {
					return formatErr(err)
				}
				if d.Cmd == "exec" {
					return ""
				}
				return out
			}
			t.Fatalf("unknown command %s", d.Cmd)
			return ""
		})
	})
}
