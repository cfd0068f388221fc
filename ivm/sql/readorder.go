package sql

import (
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// readOrder gives a query without ORDER BY that only reads one
// materialized view — a scan of it under filters and projections, such as
// `SELECT * FROM v` or `SELECT a FROM v WHERE b > 1 LIMIT 3` — the view's
// defining ORDER BY (its keys on columns the view outputs, up to the
// first that is not) as its output order, with or without a LIMIT.
//
// NB: PostgreSQL stores a materialized view's rows in the order its query
// produced them and a sequential scan returns them in that order, so
// `SELECT * FROM v` over a view defined with ORDER BY ... [LIMIT n] comes
// back in the defining order; users rely on it. RockStream stores view
// rows by key, so without this the rows would come back in key order.
// Rows the defining order ties keep their scan order (PostgreSQL leaves
// those unspecified too).
//
// A key the query does not output is carried as a hidden trailing column
// (as a hidden ORDER BY expression is); q is changed in place.
func readOrder(cat catalog.Catalog, q *bind.BoundQuery) {
	if len(q.Order) > 0 {
		return
	}
	rel := scannedView(q.Plan)
	if rel == nil {
		return
	}
	order := viewOrder(cat, rel)
	if len(order) == 0 {
		return
	}
	var keys []plan.SortKey
	var hidden []plan.Scalar
	var hiddenCols []plan.Column
	top, isProject := q.Plan.(*plan.Project)
	for _, k := range order {
		if col, ok := viewColumn(q.Plan, k.Col); ok {
			k.Col = col
			keys = append(keys, k)
			continue
		}
		if !isProject {
			break
		}
		inner, ok := viewColumn(top.Input, k.Col)
		if !ok {
			break
		}
		in := top.Input.Schema()[inner]
		hidden = append(hidden, &plan.ColRef{Index: inner, Typ: in.Type, Name: in.Name})
		hiddenCols = append(hiddenCols, in)
		k.Col = len(top.Cols) + len(hidden) - 1
		keys = append(keys, k)
	}
	if len(hidden) > 0 {
		q.Plan = &plan.Project{
			Input: top.Input,
			Exprs: append(append([]plan.Scalar(nil), top.Exprs...), hidden...),
			Cols:  append(append([]plan.Column(nil), top.Cols...), hiddenCols...),
		}
	}
	q.Order = keys
}

// scannedView returns the materialized view a plan of only filters and
// projections over one scan reads; nil for any other plan.
func scannedView(n plan.Node) *catalog.Relation {
	for {
		switch x := n.(type) {
		case *plan.Project:
			n = x.Input
		case *plan.Filter:
			n = x.Input
		case *plan.Scan:
			if x.Relation.Kind == catalog.KindMaterializedView {
				return x.Relation
			}
			return nil
		default:
			return nil
		}
	}
}

// viewColumn is the output column of n (filters and projections over a
// view's scan) that is the view's column col unchanged.
func viewColumn(n plan.Node, col int) (int, bool) {
	switch x := n.(type) {
	case *plan.Scan:
		return col, true
	case *plan.Filter:
		return viewColumn(x.Input, col)
	case *plan.Project:
		inner, ok := viewColumn(x.Input, col)
		if !ok {
			return 0, false
		}
		for i, e := range x.Exprs {
			if c, ok := e.(*plan.ColRef); ok && c.Index == inner {
				return i, true
			}
		}
	}
	return 0, false
}

// viewOrder is a materialized view's defining ORDER BY over its columns
// (visibleOrder). The definition is bound again, against the relations it
// was compiled from, only when its text orders at the top level.
func viewOrder(cat catalog.Catalog, rel *catalog.Relation) []plan.SortKey {
	st, err := parse.ParseOne(rel.SQL)
	if err != nil {
		return nil
	}
	pg, ok := st.(*parse.PG)
	if !ok || pg.Stmt.GetSelectStmt() == nil || len(pg.Stmt.GetSelectStmt().SortClause) == 0 {
		return nil
	}
	q, err := bind.Query(catalog.Pinned(cat, rel), pg, bind.Options{ForView: true})
	if err != nil || len(q.Columns) != len(rel.Columns) {
		// NB: the view runs; a definition that no longer binds only loses
		// the order of a bare read, never its rows.
		return nil
	}
	return visibleOrder(q)
}
