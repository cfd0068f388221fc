package opt

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// ExtractJoinKeys turns equality conjuncts of a join condition that compare
// an expression over the left side with an expression over the right side
// (of the same type) into equi-join keys; the rest stays as the residual
// condition. Key expressions that are not plain columns are computed by a
// Project added on their side, and a Project above the join drops them
// again, so the join's output schema is unchanged.
func ExtractJoinKeys(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		j, ok := x.(*plan.Join)
		if !ok || j.Cond == nil || plan.NodeHasCorrelatedSubquery(j) {
			return x
		}
		return extractKeys(j)
	})
}

func extractKeys(j *plan.Join) plan.Node {
	lcols, rcols := j.Left.Schema(), j.Right.Schema()
	nLeft, nRight := len(lcols), len(rcols)
	var extraL, extraR []plan.Scalar
	var keys []plan.EquiKey
	var rest []plan.Scalar
	// keyCol returns the column index of e on its side, adding a computed
	// column when e is not a plain column.
	keyCol := func(e plan.Scalar, right bool) int {
		if right {
			e = plan.RemapColumns(e, func(i int) int { return i - nLeft })
			if c, ok := e.(*plan.ColRef); ok {
				return c.Index
			}
			for i, x := range extraR {
				if plan.Equal(x, e) {
					return nRight + i
				}
			}
			extraR = append(extraR, e)
			return nRight + len(extraR) - 1
		}
		if c, ok := e.(*plan.ColRef); ok {
			return c.Index
		}
		for i, x := range extraL {
			if plan.Equal(x, e) {
				return nLeft + i
			}
		}
		extraL = append(extraL, e)
		return nLeft + len(extraL) - 1
	}
	for _, c := range plan.Conjuncts(j.Cond) {
		f, ok := c.(*plan.Func)
		if ok && f.Op && f.Name == "=" && len(f.Args) == 2 && movable(c) && f.Args[0].Type().Kind == f.Args[1].Type().Kind {
			a, b := f.Args[0], f.Args[1]
			sa, sb := side(a, nLeft), side(b, nLeft)
			if sa == 'R' && sb == 'L' {
				a, b, sa, sb = b, a, sb, sa
			}
			if sa == 'L' && sb == 'R' {
				keys = append(keys, plan.EquiKey{Left: keyCol(a, false), Right: keyCol(b, true)})
				continue
			}
		}
		rest = append(rest, c)
	}
	if len(keys) == 0 {
		return j
	}
	k := *j
	k.EquiKeys = append(append([]plan.EquiKey(nil), j.EquiKeys...), keys...)
	if len(extraL) == 0 && len(extraR) == 0 {
		k.Cond = plan.MakeAnd(rest)
		return &k
	}
	widen := func(in plan.Node, cols []plan.Column, extra []plan.Scalar) plan.Node {
		if len(extra) == 0 {
			return in
		}
		exprs := plan.ColumnRefs(cols)
		out := append([]plan.Column(nil), cols...)
		for i, e := range extra {
			exprs = append(exprs, e)
			out = append(out, plan.Column{Name: fmt.Sprintf("key%d", i+1), Type: e.Type(), Nullable: true})
		}
		return &plan.Project{Input: in, Exprs: exprs, Cols: out}
	}
	k.Left = widen(j.Left, lcols, extraL)
	k.Right = widen(j.Right, rcols, extraR)
	// Residual conjuncts: right columns shift by the extra left columns.
	shift := len(extraL)
	var residual []plan.Scalar
	for _, c := range rest {
		residual = append(residual, plan.RemapColumns(c, func(i int) int {
			if i >= nLeft {
				return i + shift
			}
			return i
		}))
	}
	k.Cond = plan.MakeAnd(residual)
	if j.Kind == plan.SemiJoin || j.Kind == plan.AntiJoin {
		// Output is the left side: drop the computed left keys.
		if shift == 0 {
			return &k
		}
		return &plan.Project{Input: &k, Exprs: plan.ColumnRefs(lcols), Cols: lcols}
	}
	// Drop the computed key columns: output left ++ right as before.
	outCols := j.Schema()
	full := k.Schema()
	exprs := make([]plan.Scalar, 0, nLeft+nRight)
	for i := 0; i < nLeft; i++ {
		exprs = append(exprs, &plan.ColRef{Index: i, Typ: full[i].Type, Name: full[i].Name})
	}
	for i := 0; i < nRight; i++ {
		idx := nLeft + shift + i
		exprs = append(exprs, &plan.ColRef{Index: idx, Typ: full[idx].Type, Name: full[idx].Name})
	}
	return &plan.Project{Input: &k, Exprs: exprs, Cols: outCols}
}
