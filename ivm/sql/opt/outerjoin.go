package opt

import (
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// simplifyOuterJoin turns an outer join into a less-outer one when a filter
// conjunct above it rejects the rows it null-extends: `t LEFT JOIN u ON ...
// WHERE u.d > 5` keeps no row whose u columns are all NULL, so it equals
// the inner join (which ReorderJoins may then move and PushFilters push
// into). FULL becomes LEFT or RIGHT when only one side's NULLs are
// rejected, INNER when both are.
func simplifyOuterJoin(j *plan.Join, conjuncts []plan.Scalar) *plan.Join {
	if j.Kind != plan.LeftJoin && j.Kind != plan.RightJoin && j.Kind != plan.FullJoin {
		return j
	}
	nLeft := len(j.Left.Schema())
	isLeft := func(c int) bool { return c < nLeft }
	isRight := func(c int) bool { return c >= nLeft }
	rejL, rejR := false, false
	for _, c := range conjuncts {
		if !movable(c) {
			continue
		}
		rejL = rejL || nullRejecting(c, isLeft)
		rejR = rejR || nullRejecting(c, isRight)
	}
	kind := j.Kind
	switch {
	case kind == plan.LeftJoin && rejR, kind == plan.RightJoin && rejL, kind == plan.FullJoin && rejL && rejR:
		kind = plan.InnerJoin
	case kind == plan.FullJoin && rejL:
		kind = plan.LeftJoin // rows with a NULL-extended left side go
	case kind == plan.FullJoin && rejR:
		kind = plan.RightJoin
	}
	if kind == j.Kind {
		return j
	}
	k := *j
	k.Kind = kind
	return &k
}

// nullRejecting reports whether conjunct c is NULL or false whenever every
// column for which side is true is NULL (so a filter on c drops the rows an
// outer join null-extends on that side). Conservative: comparisons, LIKE
// and IS NOT NULL over strict expressions of such a column, and ORs of
// null-rejecting conjuncts.
func nullRejecting(c plan.Scalar, side func(int) bool) bool {
	switch x := c.(type) {
	case *plan.Func:
		if !x.Op || !rejectingOps[x.Name] {
			return false
		}
		for _, a := range x.Args {
			if strictOver(a, side) {
				return true
			}
		}
	case *plan.IsNull:
		return x.Negate && strictOver(x.Arg, side)
	case *plan.BoolOp:
		switch x.Op {
		case plan.And:
			for _, a := range x.Args {
				if nullRejecting(a, side) {
					return true
				}
			}
		case plan.Or:
			for _, a := range x.Args {
				if !nullRejecting(a, side) {
					return false
				}
			}
			return len(x.Args) > 0
		}
	}
	return false
}

// strictOver reports whether e is NULL whenever the side's columns are
// NULL: such a column, or a strict operator or cast over one.
func strictOver(e plan.Scalar, side func(int) bool) bool {
	switch x := e.(type) {
	case *plan.ColRef:
		return side(x.Index)
	case *plan.Cast:
		return strictOver(x.Arg, side)
	case *plan.Func:
		if !x.Op || !strictOps[x.Name] {
			return false
		}
		for _, a := range x.Args {
			if strictOver(a, side) {
				return true
			}
		}
	}
	return false
}

// rejectingOps are boolean operators that are NULL when an argument is.
//
//lint:immutable constant table
var rejectingOps = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true, "~~": true, "!~~": true, "~~*": true, "!~~*": true}

// strictOps are arithmetic operators that are NULL when an argument is
// ("||" is not: array || NULL is the array).
//
//lint:immutable constant table
var strictOps = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true}
