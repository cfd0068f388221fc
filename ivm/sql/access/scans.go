package access

import (
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// filteredScan is a scan of a table with the predicate of the nearest
// Filter above it (nil: none) and where each of the predicate's columns
// is in the table.
type filteredScan struct {
	scan *plan.Scan
	rel  *catalog.Relation
	pred plan.Scalar
	cols []int
}

// filteredScans lists the scans of n, in plan order; ok is false if n
// reads anything but tables or holds a subquery (which may scan
// relations again).
func filteredScans(n plan.Node) ([]filteredScan, bool) {
	var out []filteredScan
	ok := true
	// walk carries the predicate of the nearest Filter above n (nil: none)
	// and where each of its columns is in n's output (projections of
	// plain columns between a Filter and its Scan renumber them).
	var walk func(n plan.Node, pred plan.Scalar, cols []int)
	walk = func(n plan.Node, pred plan.Scalar, cols []int) {
		switch x := n.(type) {
		case *plan.Scan:
			if x.Relation.Kind != catalog.KindTable {
				ok = false
				return
			}
			out = append(out, filteredScan{scan: x, rel: x.Relation, pred: pred, cols: cols})
			return
		case *plan.Filter:
			width := len(x.Input.Schema())
			identity := make([]int, width)
			for i := range identity {
				identity[i] = i
			}
			checkScalars(n, &ok)
			walk(x.Input, x.Pred, identity)
			return
		case *plan.Project:
			checkScalars(n, &ok)
			if pred != nil {
				mapped := make([]int, len(cols))
				for i, c := range cols {
					ref, plain := x.Exprs[c].(*plan.ColRef)
					if !plain {
						pred = nil
						break
					}
					mapped[i] = ref.Index
				}
				if pred != nil {
					walk(x.Input, pred, mapped)
					return
				}
			}
			walk(x.Input, nil, nil)
			return
		}
		checkScalars(n, &ok)
		for _, in := range n.Inputs() {
			walk(in, nil, nil)
		}
	}
	walk(n, nil, nil)
	return out, ok
}

// checkScalars clears ok if n's expressions hold a subquery (it may scan
// relations again; such plans read whole tables).
func checkScalars(n plan.Node, ok *bool) {
	for _, sc := range plan.Scalars(n) {
		plan.Walk(sc, func(x plan.Scalar) bool {
			if _, sub := x.(*plan.Subquery); sub {
				*ok = false
			}
			return true
		})
	}
}

// rowFree reports whether s is computable without a row: constants,
// parameters and immutable functions and casts of them.
func rowFree(s plan.Scalar) bool {
	free := true
	plan.Walk(s, func(x plan.Scalar) bool {
		switch y := x.(type) {
		case *plan.Const, *plan.Param, *plan.Cast:
		case *plan.Func:
			if y.Volatile {
				free = false
			}
		default:
			free = false
		}
		return free
	})
	return free
}
