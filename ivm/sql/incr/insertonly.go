package incr

import "github.com/rockstream/rockstream/ivm/sql/plan"

// insertOnly reports whether n's output never deletes a row: a scan of an
// insert-only table or a source (no UPDATE, DELETE or TRUNCATE reaches
// them), and filters, projections, inner joins and UNION ALL of such
// inputs, whose changes are then sums and products of insertions. Any
// other node (an aggregate, an outer join, a temporal filter, a work
// table, an exchange) may retract rows.
func insertOnly(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Scan:
		return x.Relation.InsertOnly && !plan.IsWorkTable(x.Relation)
	case *plan.Filter, *plan.Project:
	case *plan.Join:
		if x.Kind != plan.InnerJoin {
			return false
		}
	case *plan.SetOp:
		if x.Kind != plan.Union || !x.All {
			return false
		}
	default:
		return false
	}
	for _, s := range plan.Scalars(n) {
		sub := false
		plan.Walk(s, func(y plan.Scalar) bool {
			_, isSub := y.(*plan.Subquery)
			sub = sub || isSub
			return !sub
		})
		if sub {
			return false
		}
	}
	for _, in := range n.Inputs() {
		if !insertOnly(in) {
			return false
		}
	}
	return true
}
