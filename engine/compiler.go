package engine

import (
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/zset"
)

// This file adapts the compiler's lowering (PlanIR → circuit, plan scalars
// → expressions) to what the engine and the shard need.

// planner implements shard.Planner with the SQL compiler.
type planner struct{}

// PlanView implements shard.Planner.
func (planner) PlanView(b *circuit.Builder, cat catalog.Catalog, view *catalog.Relation) (shard.PlannedView, error) {
	return shard.PlannedView{}, errcode.New(errcode.InternalError, "view planning is not wired yet")
}

// runOnce runs a plan once over snapshots of the relations it scans (the
// view engine in ad-hoc mode: one delta from empty).
func runOnce(n plan.Node, inputs map[catalog.ID]zset.Batch, env *expr.Env) (zset.Batch, error) {
	return zset.Batch{}, errcode.New(errcode.InternalError, "ad-hoc execution is not wired yet")
}

// lowerScalar turns a bound scalar into an evaluable expression.
func lowerScalar(s plan.Scalar) (expr.Expr, error) {
	return nil, errcode.New(errcode.InternalError, "scalar lowering is not wired yet")
}
