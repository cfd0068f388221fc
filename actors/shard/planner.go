package shard

import (
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Planner compiles a materialized view into circuit nodes. The compiler
// implements it; the shard only needs this much of it.
type Planner interface {
	// PlanView adds the view's operators to b: every relation it reads is a
	// b.Source(SourceID(id), schema of that relation) and the result ends in
	// b.Sink(ViewID(view.ID), …). It returns the relations read and the
	// view's constant relations (VALUES), which are fed once, at backfill.
	PlanView(b *circuit.Builder, cat catalog.Catalog, view *catalog.Relation) (PlannedView, error)
	// ColumnDefault evaluates a column's (immutable) DEFAULT; nil when the
	// column has none.
	ColumnDefault(c catalog.Column) (types.Datum, error)
}

// StagePlanner is implemented by a Planner that plans staged views
// (stages.go): StageRelations are the relations of view's lower stages
// (catalog.StageID, Relation.StageOf), which PlanView plans too.
type StagePlanner interface {
	StageRelations(cat catalog.Catalog, view *catalog.Relation) ([]*catalog.Relation, error)
}

// PlannedView is what PlanView reports about a planned view.
type PlannedView struct {
	Sources   []catalog.ID
	Constants map[circuit.SourceID]zset.Batch
	// SpreadKeys are, for a view spread over the shards (IsSpread), how
	// each source's rows are placed (dist.SpreadKeys); nil when the plan
	// cannot be spread.
	SpreadKeys map[catalog.ID]SpreadKey
}

// SpreadKey places a spread view's source rows: the hash of the values of
// columns Cols, or, when Exprs is set, of those expressions evaluated over
// the row in the view's environment (they read only columns Cols).
type SpreadKey struct {
	Cols  []int
	Exprs []expr.Expr
}

// SourceID is the circuit source id of a relation.
func SourceID(id catalog.ID) circuit.SourceID { return circuit.SourceID(objectNumber(id)) }

// ViewID is the circuit view id of a materialized view.
func ViewID(id catalog.ID) circuit.ViewID { return circuit.ViewID(objectNumber(id)) }

func objectNumber(id catalog.ID) uint64 {
	var n uint64
	for _, b := range id.Object[8:] {
		n = n<<8 | uint64(b)
	}
	return n
}
