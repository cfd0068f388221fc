// Package opt is the rule-based optimizer over PlanIR. Each rule is a
// function Node → Node that preserves the plan's result (as a Z-set) and
// its output schema; each is tested alone on datadriven goldens
// (testdata/<rule>). Optimize runs them in a fixed order.
//
// Rules: FoldConstants (constant folding and boolean simplification,
// conjuncts common to every arm of an OR taken out of it),
// Decorrelate (EXISTS / IN / NOT IN / scalar subqueries into joins),
// PushFilters (predicate pushdown, into join sides), ReorderJoins
// (inner-join clusters in a connected order, no needless cross products),
// ExtractJoinKeys (equality conjuncts of join conditions into equi-join
// keys), WindowTopK (ROW_NUMBER() ≤ k cuts partitions to k rows),
// PruneColumns (projection pruning).
package opt

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// Optimize runs every rule in order.
func Optimize(n plan.Node) plan.Node {
	n = FoldConstants(n)
	n = Decorrelate(n)
	n = PushFilters(n)
	n = ReorderJoins(n)
	n = WindowTopK(n)
	n = ExtractJoinKeys(n)
	n = PruneColumns(n)
	n = MergeProjects(n)
	return n
}

// CheckMaintainable fails with RS-2001 when a plan still holds something
// the incremental engine cannot maintain (a subquery decorrelation could
// not remove, a volatile function).
func CheckMaintainable(n plan.Node) error {
	var err error
	plan.Transform(n, func(x plan.Node) plan.Node {
		if err != nil {
			return x
		}
		for _, s := range plan.Scalars(x) {
			plan.Walk(s, func(e plan.Scalar) bool {
				if err != nil {
					return false
				}
				switch y := e.(type) {
				case *plan.Subquery:
					err = unsupported("this form of subquery (" + subqueryKind(y) + ")")
				case *plan.OuterRef:
					err = unsupported("this correlated subquery")
				case *plan.Func:
					if y.Volatile {
						err = unsupported(y.Name + "() (its value changes over time)")
					}
				}
				return err == nil
			})
		}
		return x
	})
	return err
}

func unsupported(construct string) error {
	return errcode.New(errcode.UnsupportedSQLConstruct, "materialized views do not support %s", construct).WithDetail("construct: %s", construct)
}

func subqueryKind(s *plan.Subquery) string {
	switch s.Kind {
	case plan.SubExists:
		return "EXISTS"
	case plan.SubIn:
		return "IN"
	}
	return "scalar subquery"
}
