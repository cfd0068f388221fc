package sql

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Ad-hoc fallback for correlated subqueries that decorrelation could not
// turn into joins (EXISTS under OR, a non-aggregate scalar subquery, a
// correlated NOT IN): the node's input runs first, then each subquery runs
// once per input row with the outer columns bound to that row's values
// (nested-loop evaluation, as PostgreSQL's SubPlan does). The per-row
// results become extra columns of a constant input, and the node reads
// them instead of the subqueries. Views never take this path: they reject
// such subqueries with RS-2001.

// correlatedRowsMax bounds the outer rows of one nested-loop evaluation
// (each costs one subquery run); beyond it the query is refused rather
// than running for a very long time.
const correlatedRowsMax = 10000

// evalCorrelated rewrites every Filter and Project holding correlated
// subqueries (bottom-up) into one over a constant input.
func evalCorrelated(n plan.Node, snap Snapshot, env *expr.Env) (plan.Node, error) {
	var firstErr error
	out := plan.Transform(n, func(x plan.Node) plan.Node {
		if firstErr != nil {
			return x
		}
		var input plan.Node
		switch y := x.(type) {
		case *plan.Filter:
			input = y.Input
		case *plan.Project:
			input = y.Input
		default:
			return x
		}
		var subs []*plan.Subquery
		for _, s := range plan.Scalars(x) {
			plan.Walk(s, func(e plan.Scalar) bool {
				if sq, ok := e.(*plan.Subquery); ok && plan.HasCorrelation(sq.Plan) {
					subs = append(subs, sq)
					return false
				}
				return true
			})
		}
		if len(subs) == 0 {
			return x
		}
		rewritten, err := nestedLoop(x, input, subs, snap, env)
		if err != nil {
			firstErr = err
			return x
		}
		return rewritten
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// nestedLoop evaluates subs for every row of input and returns node
// rewritten over a Values input carrying the results.
func nestedLoop(node, input plan.Node, subs []*plan.Subquery, snap Snapshot, env *expr.Env) (plan.Node, error) {
	rows, err := RunPlan(input, snap, env)
	if err != nil {
		return nil, err
	}
	if len(rows) > correlatedRowsMax {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support this correlated subquery over more than %d outer rows", correlatedRowsMax).
			WithDetail("construct: correlated subquery")
	}
	inCols := input.Schema()
	width := len(inCols)
	cols := append([]plan.Column(nil), inCols...)
	for i, sq := range subs {
		cols = append(cols, plan.Column{Name: "subquery" + string(rune('1'+i)), Type: sq.Typ, Nullable: true})
	}
	values := &plan.Values{Cols: cols}
	for _, r := range rows {
		row := make([]plan.Scalar, 0, len(cols))
		for i, v := range r {
			row = append(row, &plan.Const{Value: v, Typ: inCols[i].Type})
		}
		for _, sq := range subs {
			v, err := evalSubquery(sq, r, inCols, snap, env)
			if err != nil {
				return nil, err
			}
			row = append(row, &plan.Const{Value: v, Typ: sq.Typ})
		}
		values.Rows = append(values.Rows, row)
	}
	replace := func(s plan.Scalar) plan.Scalar {
		return plan.Rewrite(s, func(e plan.Scalar) plan.Scalar {
			for i, sq := range subs {
				if e == plan.Scalar(sq) {
					return &plan.ColRef{Index: width + i, Typ: sq.Typ, Name: cols[width+i].Name}
				}
			}
			return e
		})
	}
	switch x := node.(type) {
	case *plan.Filter:
		f := &plan.Filter{Input: values, Pred: replace(x.Pred)}
		return &plan.Project{Input: f, Exprs: plan.ColumnRefs(cols)[:width], Cols: inCols}, nil
	case *plan.Project:
		exprs := make([]plan.Scalar, len(x.Exprs))
		for i, e := range x.Exprs {
			exprs[i] = replace(e)
		}
		return &plan.Project{Input: values, Exprs: exprs, Cols: x.Cols}, nil
	}
	return nil, errcode.New(errcode.InternalError, "nested loop over %T", node)
}

// bindOuter replaces the depth-1 outer references of a subquery plan by
// the outer row's values (deeper references move one level in).
func bindOuter(n plan.Node, row types.Row, level int) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		return plan.MapScalars(x, func(s plan.Scalar) plan.Scalar {
			return plan.Rewrite(s, func(e plan.Scalar) plan.Scalar {
				switch y := e.(type) {
				case *plan.OuterRef:
					if y.Depth == level {
						return &plan.Const{Value: row[y.Index], Typ: y.Typ}
					}
					if y.Depth > level {
						return &plan.OuterRef{Depth: y.Depth - 1, Index: y.Index, Typ: y.Typ, Name: y.Name}
					}
				case *plan.Subquery:
					c := *y
					c.Plan = bindOuter(y.Plan, row, level+1)
					return &c
				}
				return e
			})
		})
	})
}

// evalSubquery runs one subquery for one outer row.
func evalSubquery(sq *plan.Subquery, outer types.Row, outerCols []plan.Column, snap Snapshot, env *expr.Env) (types.Datum, error) {
	bound := bindOuter(sq.Plan, outer, 1)
	rows, err := RunPlan(bound, snap, env)
	if err != nil {
		return nil, err
	}
	switch sq.Kind {
	case plan.SubScalar:
		if len(rows) > 1 {
			return nil, errcode.New(errcode.SQLCardinalityViolation, "more than one row returned by a subquery used as an expression")
		}
		if len(rows) == 0 {
			return nil, nil
		}
		return rows[0][0], nil
	case plan.SubExists:
		return (len(rows) > 0) != sq.Negate, nil
	case plan.SubIn:
		test, err := lower.Scalar(sq.Test)
		if err != nil {
			return nil, err
		}
		tv, err := test.Eval(env, outer)
		if err != nil {
			return nil, err
		}
		// SQL's IN: true on a match; NULL when no match but a NULL was
		// compared; false otherwise. NOT IN negates (NULL stays NULL).
		var result types.Datum = false
		t := sq.Plan.Schema()[0].Type
		for _, r := range rows {
			if tv == nil || r[0] == nil {
				result = nil
				continue
			}
			if types.Compare(t, tv, r[0]) == 0 {
				result = true
				break
			}
		}
		if tv == nil && len(rows) == 0 {
			result = false
		}
		if result != nil && sq.Negate {
			result = !result.(bool)
		}
		return result, nil
	}
	return nil, errcode.New(errcode.InternalError, "subquery kind %d", sq.Kind)
}
