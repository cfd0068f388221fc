package dist

import (
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// Stages is a view's plan that cannot be spread whole (SpreadKeys), cut
// where it needs an exchange into lower stages that can, and the upper
// stage reading their outputs. Each lower stage runs spread over the
// shards like a spread view, every shard stepping it on its part of the
// inputs; the sum of the parts' outputs is the lower stage's output, which
// the upper stage reads as a relation: its rows are exchanged to the shard
// running the upper stage.
//
//	q4: SELECT category, avg(final) FROM (SELECT max(b.price) AS final, a.category
//	      FROM auction a JOIN bid b ON a.id = b.auction GROUP BY a.id, a.category) q
//	    GROUP BY category
//
//	  upper:  Aggregate group=[category] aggs=[avg(final)]
//	            Scan lower 0
//	  lower 0 (auction by id, bid by auction):
//	          Project final, category
//	            Aggregate group=[id, category] aggs=[max(price)]
//	              Join auction.id = bid.auction
//
// The lower stages are the largest subtrees that can be spread with
// co-partitioning by subsets (distributor.subsets: the join by id above
// leaves the rows of one (id, category) group on one shard, so the
// aggregate needs no exchange): a cut is made at the first node from the
// top whose subtree keeps state and can be spread. Nodes whose subtree
// cannot (nor any below) stay in the upper stage, as do the tables read
// by filters and projections only, and subqueries in expressions.
type Stages struct {
	Lowers []Lower
	// Upper is the plan with every lower stage replaced by a Scan of its
	// Relation.
	Upper plan.Node
	// UpperSpread, when UpperSpreads, is how the upper stage can itself
	// run spread (StageKeys, reading the lower stages' relations like
	// tables): each lower stage's output rows then go to the shard their
	// keys hash to, instead of all to one shard.
	//
	//	q4 upper:  lower 0 by (category)
	//	q7 upper:  bid by (price), lower 0 by (maxprice)
	UpperSpread  Spread
	UpperSpreads bool
}

// Lower is one lower stage.
type Lower struct {
	// Plan is the subtree of the view's plan it computes, and Spread how
	// its inputs' rows are placed over the shards (StageKeys).
	Plan   plan.Node
	Spread Spread
	// Relation is what the upper stage scans its output as: its columns
	// are Plan's.
	Relation *catalog.Relation
}

// StageKeys is SpreadKeys for a lower stage (Stages): co-partitioning by
// subsets of an operator's keys too.
func StageKeys(n plan.Node) (Spread, bool) {
	return distributor{subsets: true}.spreadKeys(n, nil)
}

// SplitStages cuts plan n into stages (see Stages); relation(i, cols) is
// the relation the upper stage reads lower stage i's output from (cols
// its columns), with an id of its own. ok is false when n needs no stages (SpreadKeys spreads it
// whole, or StageKeys does: it needs no exchange between its operators),
// or cannot be cut (no subtree that keeps state can be spread).
func SplitStages(n plan.Node, relation func(i int, cols []plan.Column) *catalog.Relation) (Stages, bool) {
	if _, ok := SpreadKeys(n); ok {
		return Stages{}, false
	}
	if _, ok := StageKeys(n); ok {
		return Stages{}, false
	}
	var st Stages
	var cut func(n plan.Node) plan.Node
	cut = func(n plan.Node) plan.Node {
		if _, ok := n.(*plan.Scan); ok {
			return n
		}
		if !plan.HasCorrelation(n) {
			if sp, ok := StageKeys(n); ok {
				cols := append([]plan.Column(nil), n.Schema()...)
				rel := relation(len(st.Lowers), cols)
				st.Lowers = append(st.Lowers, Lower{Plan: n, Spread: sp, Relation: rel})
				return &plan.Scan{Relation: rel, Cols: cols}
			}
		}
		return plan.MapInputs(n, cut)
	}
	st.Upper = cut(n)
	if len(st.Lowers) == 0 {
		return Stages{}, false
	}
	lowers := map[catalog.ID]bool{}
	for _, l := range st.Lowers {
		lowers[l.Relation.ID] = true
	}
	st.UpperSpread, st.UpperSpreads = distributor{subsets: true}.spreadKeys(st.Upper, lowers)
	return st, true
}

// SpreadOrStageKeys is how a view spread over the shards places its
// inputs' rows: SpreadKeys, or when it cannot, StageKeys (a view CREATE
// spread with exchange stages on: co-partitioned by subsets of its
// operators' keys, or joining a constant). A view spread without them has
// the same keys as before: SpreadKeys accepted it.
func SpreadOrStageKeys(n plan.Node) (Spread, bool) {
	if sp, ok := SpreadKeys(n); ok {
		return sp, true
	}
	return StageKeys(n)
}
