package engine

import (
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// This file adapts the compiler (PlanIR → circuit, plan scalars →
// expressions, ad-hoc runs) to what the engine and the shard need.

// planner implements shard.Planner with the SQL compiler.
type planner struct{}

// Planner returns the SQL compiler's shard.Planner (the simulator hosts shards without an engine).
func Planner() shard.Planner { return planner{} }

// viewEnv is the fixed environment views are evaluated in (UTC, no
// statement time: views reject now() at DDL time).
var viewEnv = expr.Env{}

// PlanView implements shard.Planner: the view's defining query is compiled
// from what it was pinned to (catalog.Pinned: the inline views and input
// schemas as they were at CREATE or the last RECOMPILE, never today's
// definitions, so the plan is the one that built the stored state) and
// lowered into b.
func (planner) PlanView(b *circuit.Builder, cat catalog.Catalog, view *catalog.Relation) (shard.PlannedView, error) {
	v, err := rsql.CompileView(catalog.Pinned(cat, view), view.SQL)
	if err != nil {
		return shard.PlannedView{}, err
	}
	srcs := incr.NewSources(func(rel *catalog.Relation) circuit.SourceID { return shard.SourceID(rel.ID) })
	out, err := incr.Build(b, v.Plan, srcs, lower.Lowerer{})
	if err != nil {
		return shard.PlannedView{}, err
	}
	b.Sink(shard.ViewID(view.ID), out)
	planned := shard.PlannedView{Constants: map[circuit.SourceID]zset.Batch{}}
	for _, r := range scannedRelations(v.Plan) {
		planned.Sources = append(planned.Sources, r.ID)
	}
	for _, c := range srcs.Constants {
		var batch zset.Batch
		for _, row := range c.Rows {
			vals := make(types.Row, len(row))
			for i, e := range row {
				d, err := e.Eval(&viewEnv, nil)
				if err != nil {
					return shard.PlannedView{}, err
				}
				vals[i] = d
			}
			batch.Add(vals, 1)
		}
		planned.Constants[c.ID] = batch
	}
	return planned, nil
}

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

// ColumnDefault implements shard.Planner: a column's DEFAULT evaluated once
// (only immutable defaults are accepted by ADD COLUMN, so the value is the
// same for every existing row, as PostgreSQL fills them).
func (planner) ColumnDefault(c catalog.Column) (types.Datum, error) {
	if c.Default == "" {
		return nil, nil
	}
	sc, err := bind.DefaultExpr(c.Default, c.Type, c.Name)
	if err != nil {
		return nil, err
	}
	e, err := lower.Scalar(sc)
	if err != nil {
		return nil, err
	}
	return e.Eval(&viewEnv, nil)
}
