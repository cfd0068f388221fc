package engine

import (
	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/shard/sqlplan"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// This file adapts the compiler (PlanIR → circuit, plan scalars →
// expressions, ad-hoc runs, the choice of what a plan reads) to what the
// engine and the shard need.

// planner is the SQL compiler's shard.Planner. It lives in
// actors/shard/sqlplan so that the simulator can host shards with the real
// compiler without linking the engine (and through it the pgwire server).
type planner = sqlplan.Planner

// snapshot serves ad-hoc execution from relations read in one request.
type snapshot struct {
	batches map[catalog.ID]zset.Batch
}

// ScanRelation implements rsql.Snapshot.
func (s snapshot) ScanRelation(rel *catalog.Relation) (zset.Batch, error) {
	b, ok := s.batches[rel.ID]
	if !ok {
		// INVARIANT: scannedRelations found every relation the plan reads.
		return zset.Batch{}, errcode.New(errcode.InternalError, "relation %s was not read for this query", rel.Name)
	}
	return b, nil
}

// runOnce runs a plan once over snapshots of the relations it scans (the
// view engine in ad-hoc mode: one delta from empty).
func runOnce(n plan.Node, inputs map[catalog.ID]zset.Batch, env *expr.Env) ([]types.Row, error) {
	return rsql.RunPlan(n, snapshot{batches: inputs}, env)
}

// lowerScalar turns a bound scalar into an evaluable expression.
func lowerScalar(s plan.Scalar) (expr.Expr, error) { return lower.Scalar(s) }

// readIndexes is the compiler's view of a catalog snapshot when it chooses
// what a plan reads (rsql.PlanReads): the indexes the shards keep entries
// for (shard.MaintainedIndex).
type readIndexes struct{ snap *control.Snapshot }

// Indexes implements rsql.IndexCatalog.
func (r readIndexes) Indexes(table *catalog.Relation) []rsql.ReadableIndex {
	if r.snap == nil {
		return nil
	}
	var out []rsql.ReadableIndex
	for _, idx := range r.snap.Indexes(table.ID) {
		if cols, ok := shard.MaintainedIndex(table, idx); ok {
			out = append(out, rsql.ReadableIndex{Relation: idx, Columns: cols})
		}
	}
	return out
}

// shardRanges turns the compiler's key ranges into the shard's read
// requests (the same fields).
func shardRanges(in map[catalog.ID][]rsql.KeyRange) map[catalog.ID][]shard.KeyRange {
	if in == nil {
		return nil
	}
	out := make(map[catalog.ID][]shard.KeyRange, len(in))
	for id, rs := range in { //lint:maprange copying a map into a map
		conv := make([]shard.KeyRange, len(rs))
		for i, r := range rs {
			conv[i] = shard.KeyRange(r)
		}
		out[id] = conv
	}
	return out
}
