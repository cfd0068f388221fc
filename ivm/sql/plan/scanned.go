package plan

import "github.com/rockstream/rockstream/ivm/sql/catalog"

// ScannedRelations lists the relations a plan reads, deduplicated, in
// first-seen order, including those read by subqueries in its scalars. Work
// tables of recursive queries are not relations anyone stores, so they are
// left out.
func ScannedRelations(n Node) []*catalog.Relation {
	var out []*catalog.Relation
	seen := map[catalog.ID]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if sc, ok := n.(*Scan); ok && !seen[sc.Relation.ID] && !IsWorkTable(sc.Relation) {
			seen[sc.Relation.ID] = true
			out = append(out, sc.Relation)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		for _, sc := range Scalars(n) {
			Walk(sc, func(x Scalar) bool {
				if sq, ok := x.(*Subquery); ok {
					walk(sq.Plan)
				}
				return true
			})
		}
	}
	walk(n)
	return out
}
