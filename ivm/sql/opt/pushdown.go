package opt

import (
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// PushFilters moves filter conjuncts as close to the scans as they can go
// without changing the result:
//
//   - through Project (substituting the projected expressions),
//   - through Distinct and set operations (into both sides),
//   - below an Aggregate when they read group columns only,
//   - into join sides (an outer join whose NULL-extended rows a conjunct
//     rejects first becomes inner, see simplifyOuterJoin): a conjunct over one side's columns moves into that
//     side when the join does not null-extend that side; other conjuncts
//     above an inner join become part of its condition. Inner-join ON
//     conjuncts over one side move into that side; LEFT JOIN ON conjuncts
//     over the right side move into the right side.
//
// Conjuncts holding subqueries or volatile functions stay where they are.
func PushFilters(n plan.Node) plan.Node {
	return plan.Transform(n, func(x plan.Node) plan.Node {
		switch y := x.(type) {
		case *plan.Filter:
			return pushFilter(y.Input, plan.Conjuncts(y.Pred))
		case *plan.Join:
			return pushJoinCond(y)
		}
		return x
	})
}

// movable reports whether a conjunct may be moved.
func movable(s plan.Scalar) bool {
	return !plan.HasSubquery(s) && !plan.IsVolatile(s) && !hasOuterRef(s)
}

func hasOuterRef(s plan.Scalar) bool {
	found := false
	plan.Walk(s, func(x plan.Scalar) bool {
		if _, ok := x.(*plan.OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// filterOver wraps n in a Filter of conjuncts (n itself when none).
func filterOver(n plan.Node, conjuncts []plan.Scalar) plan.Node {
	if len(conjuncts) == 0 {
		return n
	}
	return &plan.Filter{Input: n, Pred: plan.MakeAnd(conjuncts)}
}

// pushFilter places conjuncts over input, pushing what it can below.
func pushFilter(input plan.Node, conjuncts []plan.Scalar) plan.Node {
	var keep, push []plan.Scalar
	for _, c := range conjuncts {
		if movable(c) {
			push = append(push, c)
		} else {
			keep = append(keep, c)
		}
	}
	if len(push) == 0 {
		return filterOver(input, keep)
	}
	switch in := input.(type) {
	case *plan.Filter:
		return pushFilter(in.Input, append(plan.Conjuncts(in.Pred), conjuncts...))
	case *plan.Project:
		var below, stay []plan.Scalar
		for _, c := range push {
			sub, ok := substitute(c, in.Exprs)
			if ok {
				below = append(below, sub)
			} else {
				stay = append(stay, c)
			}
		}
		if len(below) == 0 {
			return filterOver(input, conjuncts)
		}
		p := &plan.Project{Input: pushFilter(in.Input, below), Exprs: in.Exprs, Cols: in.Cols}
		return filterOver(p, append(keep, stay...))
	case *plan.Distinct:
		if len(in.On) > 0 {
			// DISTINCT ON picks the first row per key: only key-only
			// conjuncts commute with it.
			var below, stay []plan.Scalar
			onSet := map[int]bool{}
			for _, c := range in.On {
				onSet[c] = true
			}
			for _, c := range push {
				if subset(plan.ColumnsUsed(c), onSet) {
					below = append(below, c)
				} else {
					stay = append(stay, c)
				}
			}
			if len(below) == 0 {
				return filterOver(input, conjuncts)
			}
			d := *in
			d.Input = pushFilter(in.Input, below)
			return filterOver(&d, append(keep, stay...))
		}
		d := *in
		d.Input = pushFilter(in.Input, push)
		return filterOver(&d, keep)
	case *plan.SetOp:
		s := *in
		s.Left = pushFilter(in.Left, push)
		s.Right = pushFilter(in.Right, remapSetOpSide(push))
		return filterOver(&s, keep)
	case *plan.Aggregate:
		if len(in.GroupBy) == 0 {
			return filterOver(input, conjuncts)
		}
		var below, stay []plan.Scalar
		for _, c := range push {
			used := plan.ColumnsUsed(c)
			ok := len(used) > 0
			//lint:maprange membership test only
			for col := range used {
				if col >= len(in.GroupBy) {
					ok = false
				}
			}
			if ok {
				below = append(below, plan.RemapColumns(c, func(i int) int { return in.GroupBy[i] }))
			} else {
				stay = append(stay, c)
			}
		}
		if len(below) == 0 {
			return filterOver(input, conjuncts)
		}
		a := *in
		a.Input = pushFilter(in.Input, below)
		return filterOver(&a, append(keep, stay...))
	case *plan.Join:
		return pushIntoJoin(in, push, keep)
	}
	return filterOver(input, conjuncts)
}

// remapSetOpSide returns conjuncts for the right side of a set operation:
// both sides have the same column positions, so they are unchanged.
func remapSetOpSide(cs []plan.Scalar) []plan.Scalar { return cs }

func subset(a, b map[int]bool) bool {
	//lint:maprange membership test only
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// substitute rewrites a conjunct over a Project's output into one over its
// input; ok is false when it would duplicate a volatile or subquery
// expression.
func substitute(c plan.Scalar, exprs []plan.Scalar) (plan.Scalar, bool) {
	ok := true
	out := plan.Rewrite(c, func(x plan.Scalar) plan.Scalar {
		if r, isRef := x.(*plan.ColRef); isRef {
			e := exprs[r.Index]
			if !movable(e) {
				ok = false
			}
			return e
		}
		return x
	})
	return out, ok
}

// side classifies the columns a conjunct reads in a join of nLeft left
// columns: 'L', 'R', 'B' (both) or 'N' (none).
func side(c plan.Scalar, nLeft int) byte {
	l, r := false, false
	//lint:maprange the result does not depend on order
	for col := range plan.ColumnsUsed(c) {
		if col < nLeft {
			l = true
		} else {
			r = true
		}
	}
	switch {
	case l && r:
		return 'B'
	case l:
		return 'L'
	case r:
		return 'R'
	}
	return 'N'
}

// pushIntoJoin pushes filter conjuncts (above the join) into its sides.
func pushIntoJoin(j *plan.Join, push, keep []plan.Scalar) plan.Node {
	j = simplifyOuterJoin(j, push)
	nLeft := len(j.Left.Schema())
	var left, right, cond, stay []plan.Scalar
	leftOK := j.Kind != plan.RightJoin && j.Kind != plan.FullJoin
	rightOK := j.Kind == plan.InnerJoin || j.Kind == plan.RightJoin
	for _, c := range push {
		switch s := side(c, nLeft); {
		case s == 'L' && leftOK:
			left = append(left, c)
		case s == 'R' && rightOK && j.Kind != plan.SemiJoin && j.Kind != plan.AntiJoin:
			right = append(right, plan.RemapColumns(c, func(i int) int { return i - nLeft }))
		case (s == 'B' || s == 'R') && j.Kind == plan.InnerJoin:
			cond = append(cond, c)
		default:
			stay = append(stay, c)
		}
	}
	k := *j
	k.Left = pushFilter(j.Left, left)
	k.Right = pushFilter(j.Right, right)
	if len(cond) > 0 {
		k.Cond = plan.MakeAnd(append(plan.Conjuncts(j.Cond), cond...))
	}
	return filterOver(pushJoinCond(&k), append(keep, stay...))
}

// pushJoinCond moves single-side ON conjuncts into the join's inputs where
// that preserves the join's result.
func pushJoinCond(j *plan.Join) plan.Node {
	if j.Cond == nil {
		return j
	}
	nLeft := len(j.Left.Schema())
	var left, right, rest []plan.Scalar
	// An ON conjunct over the preserved side of an outer join must stay:
	// failing it null-extends the row instead of removing it.
	leftOK := j.Kind == plan.InnerJoin || j.Kind == plan.RightJoin || j.Kind == plan.SemiJoin
	rightOK := j.Kind == plan.InnerJoin || j.Kind == plan.LeftJoin || j.Kind == plan.SemiJoin || j.Kind == plan.AntiJoin
	for _, c := range plan.Conjuncts(j.Cond) {
		if !movable(c) {
			rest = append(rest, c)
			continue
		}
		switch s := side(c, nLeft); {
		case s == 'L' && leftOK:
			left = append(left, c)
		case s == 'R' && rightOK:
			right = append(right, plan.RemapColumns(c, func(i int) int { return i - nLeft }))
		default:
			rest = append(rest, c)
		}
	}
	if len(left) == 0 && len(right) == 0 {
		return j
	}
	k := *j
	k.Left = pushFilter(j.Left, left)
	k.Right = pushFilter(j.Right, right)
	k.Cond = plan.MakeAnd(rest)
	return &k
}
