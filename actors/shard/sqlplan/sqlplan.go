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
	"fmt"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
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
	if view.StageOf != nil {
		return planLowerStage(b, cat, view)
	}
	var inline func(*catalog.Relation) (*catalog.Relation, bool)
	if placed, ok := cat.(interface{ BucketMap() partition.Map }); ok && !view.Stages {
		inline = shard.Inlined(cat, placed.BucketMap(), view)
	}
	v, err := rsql.CompileViewWith(catalog.Pinned(cat, view), view.SQL, rsql.CompileOptions{InlineMaterialized: inline})
	if err != nil {
		return shard.PlannedView{}, err
	}
	p := v.Plan
	if view.Stages {
		// The upper stage, reading the lower stages' relations.
		st, err := stagesOf(view, p)
		if err != nil {
			return shard.PlannedView{}, err
		}
		p = st.Upper
	}
	return build(b, view, view.ID, p, nil)
}

// build lowers plan p of view into b, its output the sink of the view
// (or lower stage) id; spread, when set, places the inputs of a spread
// plan (else, for a spread view, dist.SpreadOrStageKeys does).
func build(b *circuit.Builder, view *catalog.Relation, id catalog.ID, p plan.Node, spread *dist.Spread) (shard.PlannedView, error) {
	srcs := incr.NewSources(func(rel *catalog.Relation) circuit.SourceID { return shard.SourceID(rel.ID) })
	out, err := incr.Build(b, p, srcs, lower.Lowerer{})
	if err != nil {
		return shard.PlannedView{}, err
	}
	b.Sink(shard.ViewID(id), out)
	planned := shard.PlannedView{Constants: map[circuit.SourceID]zset.Batch{}}
	for _, r := range plan.ScannedRelations(p) {
		planned.Sources = append(planned.Sources, r.ID)
	}
	switch {
	case spread != nil:
		if planned.SpreadKeys, err = lowerSpread(*spread); err != nil {
			return shard.PlannedView{}, err
		}
	case shard.IsSpread(view):
		if planned.SpreadKeys, err = spreadKeys(p); err != nil {
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
	return lowerSpread(sp)
}

// lowerSpread lowers the keys of sp.
func lowerSpread(sp dist.Spread) (map[catalog.ID]shard.SpreadKey, error) {
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

// StageRelations implements shard.StagePlanner: the relations of staged
// view view's lower stages (dist.SplitStages), as its shards hold them
// (catalog.StageID, StageOf), in the catalog cat it was compiled against.
func (Planner) StageRelations(cat catalog.Catalog, view *catalog.Relation) ([]*catalog.Relation, error) {
	v, err := rsql.CompileViewWith(catalog.Pinned(cat, view), view.SQL, rsql.CompileOptions{})
	if err != nil {
		return nil, err
	}
	st, err := stagesOf(view, v.Plan)
	if err != nil {
		return nil, err
	}
	out := make([]*catalog.Relation, len(st.Lowers))
	for i, l := range st.Lowers {
		out[i] = l.Relation
	}
	return out, nil
}

// stagesOf cuts staged view view's plan p into its stages.
func stagesOf(view *catalog.Relation, p plan.Node) (dist.Stages, error) {
	st, ok := dist.SplitStages(p, func(i int, cols []plan.Column) *catalog.Relation {
		r := *view
		r.ID = catalog.StageID(view.ID, i)
		r.Name = fmt.Sprintf("%s$stage%d", view.Name, i)
		r.Columns = make([]catalog.Column, len(cols))
		for j, c := range cols {
			r.Columns[j] = catalog.Column{Name: c.Name, Type: c.Type, NotNull: !c.Nullable}
		}
		r.Placement = catalog.PlacementSpread
		r.Stages = false
		r.StageOf = &catalog.StageRef{View: view.ID, Index: i}
		return &r
	})
	if !ok {
		// Cannot happen: CREATE cut it into stages.
		return dist.Stages{}, errcode.New(errcode.ViewBuildFailed, "materialized view %s runs in stages, but its plan can no longer be cut into stages", view.Name)
	}
	return st, nil
}

// planLowerStage plans lower stage rel (StageOf) of a staged view: the
// subtree of the view's plan it computes, spread over the view shards.
func planLowerStage(b *circuit.Builder, cat catalog.Catalog, rel *catalog.Relation) (shard.PlannedView, error) {
	view, ok := cat.RelationByID(rel.StageOf.View)
	if !ok {
		return shard.PlannedView{}, errcode.New(errcode.UndefinedObject, "the staged view of %s does not exist", rel.Name)
	}
	v, err := rsql.CompileViewWith(catalog.Pinned(cat, view), view.SQL, rsql.CompileOptions{})
	if err != nil {
		return shard.PlannedView{}, err
	}
	st, err := stagesOf(view, v.Plan)
	if err != nil {
		return shard.PlannedView{}, err
	}
	if rel.StageOf.Index >= len(st.Lowers) {
		return shard.PlannedView{}, errcode.New(errcode.ViewBuildFailed, "materialized view %s has %d lower stages, not %d", view.Name, len(st.Lowers), rel.StageOf.Index+1)
	}
	l := st.Lowers[rel.StageOf.Index]
	return build(b, rel, rel.ID, l.Plan, &l.Spread)
}
