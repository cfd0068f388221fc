package plan

import (
	"github.com/rockstream/rockstream/ivm/types"
)

// Equal reports whether two scalars are structurally identical (same
// nodes, same column indexes, same constants and types). Subqueries are
// equal only when they are the same object.
func Equal(a, b Scalar) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if !a.Type().Equal(b.Type()) {
		return false
	}
	switch x := a.(type) {
	case *ColRef:
		y, ok := b.(*ColRef)
		return ok && x.Index == y.Index
	case *OuterRef:
		y, ok := b.(*OuterRef)
		return ok && x.Index == y.Index && x.Depth == y.Depth
	case *Const:
		y, ok := b.(*Const)
		if !ok {
			return false
		}
		if x.Value == nil || y.Value == nil {
			return x.Value == nil && y.Value == nil
		}
		return FormatDatum(x.Value, x.Typ) == FormatDatum(y.Value, y.Typ)
	case *Param:
		y, ok := b.(*Param)
		return ok && x.Index == y.Index
	case *Cast:
		_, ok := b.(*Cast)
		return ok && childrenEqual(a, b)
	case *Func:
		y, ok := b.(*Func)
		return ok && x.Name == y.Name && x.Op == y.Op && !x.Volatile && !y.Volatile && childrenEqual(a, b)
	case *BoolOp:
		y, ok := b.(*BoolOp)
		return ok && x.Op == y.Op && childrenEqual(a, b)
	case *IsNull:
		y, ok := b.(*IsNull)
		return ok && x.Negate == y.Negate && childrenEqual(a, b)
	case *IsDistinct:
		y, ok := b.(*IsDistinct)
		return ok && x.Negate == y.Negate && childrenEqual(a, b)
	case *Case:
		y, ok := b.(*Case)
		return ok && len(x.Whens) == len(y.Whens) && childrenEqual(a, b)
	case *Coalesce:
		_, ok := b.(*Coalesce)
		return ok && childrenEqual(a, b)
	case *AnyAll:
		y, ok := b.(*AnyAll)
		return ok && x.Op == y.Op && x.All == y.All && childrenEqual(a, b)
	case *ArrayCtor:
		_, ok := b.(*ArrayCtor)
		return ok && childrenEqual(a, b)
	case *Subquery:
		return a == b
	}
	return a == b
}

func childrenEqual(a, b Scalar) bool {
	ca, cb := a.Children(), b.Children()
	if len(ca) != len(cb) {
		return false
	}
	for i := range ca {
		if !Equal(ca[i], cb[i]) {
			return false
		}
	}
	return true
}

// MaxOuterDepth is how many query levels above n its deepest outer
// reference reaches (0: none).
func MaxOuterDepth(n Node) int { return maxOuterDepth(n, 1) }

// HasCorrelation reports whether a plan references an enclosing query
// (an OuterRef reaching above the plan itself).
func HasCorrelation(n Node) bool {
	return maxOuterDepth(n, 1) > 0
}

// maxOuterDepth returns how many levels above n the deepest outer
// reference reaches (0 = none); level is the depth of n's own row for
// OuterRefs directly in n.
func maxOuterDepth(n Node, level int) int {
	deepest := 0
	for _, s := range Scalars(n) {
		Walk(s, func(x Scalar) bool {
			switch y := x.(type) {
			case *OuterRef:
				if d := y.Depth - level + 1; d > deepest {
					deepest = d
				}
			case *Subquery:
				if d := maxOuterDepth(y.Plan, level+1); d > deepest {
					deepest = d
				}
			}
			return true
		})
	}
	for _, in := range n.Inputs() {
		if d := maxOuterDepth(in, level); d > deepest {
			deepest = d
		}
	}
	return deepest
}

var _ = types.TBool

// HasCorrelatedSubquery reports whether s holds a subquery that reads the
// row s is evaluated over (OuterRefs reaching it). Rewrites that change a
// node's input columns must leave such nodes alone: the OuterRefs index
// that input row.
func HasCorrelatedSubquery(s Scalar) bool {
	found := false
	Walk(s, func(x Scalar) bool {
		if sq, ok := x.(*Subquery); ok && HasCorrelation(sq.Plan) {
			found = true
		}
		return !found
	})
	return found
}

// NodeHasCorrelatedSubquery is HasCorrelatedSubquery over a node's scalars.
func NodeHasCorrelatedSubquery(n Node) bool {
	for _, s := range Scalars(n) {
		if HasCorrelatedSubquery(s) {
			return true
		}
	}
	return false
}
