package adhoc

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

// nestedLoop runs node row by row over input's rows: each correlated
// subquery is evaluated for a row only when the expression needs its value
// (a CASE branch not taken, or an AND already false, runs nothing, as in
// PostgreSQL). The result is a constant input carrying node's output.
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
	lazy := func(s plan.Scalar) (expr.Expr, error) {
		return lower.Scalar(plan.Rewrite(s, func(e plan.Scalar) plan.Scalar {
			for _, sq := range subs {
				if e == plan.Scalar(sq) {
					return &lazySubquery{sq: sq, inCols: inCols, snap: snap}
				}
			}
			return e
		}))
	}
	var out [][]plan.Scalar
	consts := func(r types.Row, cols []plan.Column) []plan.Scalar {
		row := make([]plan.Scalar, len(r))
		for i, v := range r {
			row[i] = &plan.Const{Value: v, Typ: cols[i].Type}
		}
		return row
	}
	switch x := node.(type) {
	case *plan.Filter:
		pred, err := lazy(x.Pred)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			v, err := pred.Eval(env, r)
			if err != nil {
				return nil, err
			}
			if b, _ := v.(bool); b {
				out = append(out, consts(r, inCols))
			}
		}
		return &plan.Values{Cols: inCols, Rows: out}, nil
	case *plan.Project:
		exprs := make([]expr.Expr, len(x.Exprs))
		for i, e := range x.Exprs {
			if exprs[i], err = lazy(e); err != nil {
				return nil, err
			}
		}
		for _, r := range rows {
			vals := make(types.Row, len(exprs))
			for i, e := range exprs {
				if vals[i], err = e.Eval(env, r); err != nil {
					return nil, err
				}
			}
			out = append(out, consts(vals, x.Cols))
		}
		return &plan.Values{Cols: x.Cols, Rows: out}, nil
	}
	return nil, errcode.New(errcode.InternalError, "nested loop over %T", node)
}

// lazySubquery is a correlated subquery inside an expression evaluated
// row by row: Eval runs it for the row it is given.
type lazySubquery struct {
	sq     *plan.Subquery
	inCols []plan.Column
	snap   Snapshot
}

func (l *lazySubquery) Type() types.Type                       { return l.sq.Typ }
func (l *lazySubquery) Children() []plan.Scalar                { return nil }
func (l *lazySubquery) WithChildren([]plan.Scalar) plan.Scalar { return l }
func (l *lazySubquery) String() string                         { return l.sq.String() }
func (l *lazySubquery) Lower() (expr.Expr, error)              { return l, nil }
func (l *lazySubquery) Eval(env *expr.Env, row types.Row) (types.Datum, error) {
	return evalSubquery(l.sq, row, l.inCols, l.snap, env)
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
	case plan.SubArray:
		return arrayOfRows(sq, rows), nil
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
