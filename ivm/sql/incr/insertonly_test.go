package incr

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// insertOnly holds through filters, projections, inner joins and UNION
// ALL of insert-only scans, and nowhere else.
func TestInsertOnly(t *testing.T) {
	cols := []plan.Column{{Name: "a", Type: types.TInt8}}
	bid := &plan.Scan{Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "bid", InsertOnly: true}, Cols: cols}
	keyed := &plan.Scan{Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "t"}, Cols: cols}
	pred := &plan.Const{Value: true, Typ: types.TBool}
	sub := &plan.Subquery{Plan: keyed, Typ: types.TBool}
	for _, c := range []struct {
		name string
		n    plan.Node
		want bool
	}{
		{"insert-only scan", bid, true},
		{"keyed scan", keyed, false},
		{"filter", &plan.Filter{Input: bid, Pred: pred}, true},
		{"filter with a subquery", &plan.Filter{Input: bid, Pred: sub}, false},
		{"project", &plan.Project{Input: bid, Exprs: []plan.Scalar{pred}, Cols: cols}, true},
		{"inner join", &plan.Join{Kind: plan.InnerJoin, Left: bid, Right: &plan.Filter{Input: bid, Pred: pred}}, true},
		{"inner join with a keyed side", &plan.Join{Kind: plan.InnerJoin, Left: bid, Right: keyed}, false},
		{"left join", &plan.Join{Kind: plan.LeftJoin, Left: bid, Right: bid}, false},
		{"union all", &plan.SetOp{Kind: plan.Union, All: true, Left: bid, Right: bid, Cols: cols}, true},
		{"union", &plan.SetOp{Kind: plan.Union, Left: bid, Right: bid, Cols: cols}, false},
		{"aggregate", &plan.Aggregate{Input: bid, Cols: cols}, false},
	} {
		if got := insertOnly(c.n); got != c.want {
			t.Errorf("%s: insertOnly %v, want %v", c.name, got, c.want)
		}
	}
}
