// Package sqlplan is the SQL compiler as a shard.Planner: it compiles a
// materialized view's defining query (parse, bind, plan, incrementalise)
// into circuit operators inside the shard, and evaluates column defaults for
// ADD COLUMN.
//
// It is a package of its own, not part of the engine, so that everything
// hosting a shard (the embedded engine, the whole-system simulation) uses the
// same compiler while the deterministic core never links the engine's edges
// (the pgwire server, net, crypto/tls).
//
// Walkthrough:
//
//	shard.New(shard.Config{OpenStore: open("shards/0"), Planner: sqlplan.Planner{}})
//	// inside the shard, on CREATE MATERIALIZED VIEW:
//	planned, err := cfg.Planner.PlanView(builder, catalogSnapshot, view)
package sqlplan

import (
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/partition"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Planner implements shard.Planner with the SQL compiler. It holds no state.
type Planner struct{}

var _ shard.Planner = Planner{}

// viewEnv is the fixed environment a view's constants are evaluated in:
// the session settings it was created with (catalog.Relation.ViewEnv:
// TimeZone, extra_float_digits), no statement time (views reject now()
// at DDL time). A fresh one per call keeps the package free of shared
// mutable state.
func viewEnv(view *catalog.Relation) (*expr.Env, error) {
	env := &expr.Env{}
	if view != nil {
		if err := view.ViewEnv(env); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// PlanView implements shard.Planner: the view's defining query is compiled
// from what it was pinned to (catalog.Pinned: the inline views and input
// schemas as they were at CREATE or the last RECOMPILE, never today's
// definitions, so the plan is the one that built the stored state) and
// lowered into b. Under a bucket map with several view shards (cat is the
// shard's catalog snapshot), a materialized view it reads on another view
// shard is compiled into it (shard.Inlined).
func (Planner) PlanView(b *circuit.Builder, cat catalog.Catalog, view *catalog.Relation) (shard.PlannedView, error) {
	var inline func(*catalog.Relation) (*catalog.Relation, bool)
	if placed, ok := cat.(interface{ BucketMap() partition.Map }); ok {
		inline = shard.Inlined(cat, placed.BucketMap(), view)
	}
	v, err := rsql.CompileViewWith(catalog.Pinned(cat, view), view.SQL, rsql.CompileOptions{InlineMaterialized: inline})
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
	for _, r := range plan.ScannedRelations(v.Plan) {
		planned.Sources = append(planned.Sources, r.ID)
	}
	if shard.IsSpread(view) {
		if planned.SpreadKeys, err = spreadKeys(v.Plan); err != nil {
			return shard.PlannedView{}, err
		}
	}
	env, err := viewEnv(view)
	if err != nil {
		return shard.PlannedView{}, err
	}
	for _, c := range srcs.Constants {
		batch, err := c.Batch(env)
		if err != nil {
			return shard.PlannedView{}, err
		}
		planned.Constants[c.ID] = batch
	}
	return planned, nil
}

// ColumnDefault implements shard.Planner: a column's DEFAULT evaluated once
// (only immutable defaults are accepted by ADD COLUMN, so the value is the
// same for every existing row, as PostgreSQL fills them).
func (Planner) ColumnDefault(c catalog.Column) (types.Datum, error) {
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
	env, err := viewEnv(nil)
	if err != nil {
		return nil, err
	}
	return e.Eval(env, nil)
}

// spreadKeys lowers how a spread view's plan places each source's rows
// (dist.SpreadOrStageKeys: as CREATE found it could be spread); nil when
// it cannot be spread.
func spreadKeys(p plan.Node) (map[catalog.ID]shard.SpreadKey, error) {
	sp, ok := dist.SpreadOrStageKeys(p)
	if !ok {
		return nil, nil
	}
	out := map[catalog.ID]shard.SpreadKey{}
	for id, keys := range sp.Keys { //lint:maprange filled into a map keyed the same way
		if cols, ok := sp.Columns(id); ok {
			out[id] = shard.SpreadKey{Cols: cols}
			continue
		}
		var k shard.SpreadKey
		seen := map[int]bool{}
		for _, sc := range keys {
			e, err := lower.Scalar(sc)
			if err != nil {
				return nil, err
			}
			k.Exprs = append(k.Exprs, e)
			plan.Walk(sc, func(x plan.Scalar) bool {
				if c, ok := x.(*plan.ColRef); ok && !seen[c.Index] {
					seen[c.Index] = true
					k.Cols = append(k.Cols, c.Index)
				}
				return true
			})
		}
		out[id] = k
	}
	return out, nil
}
