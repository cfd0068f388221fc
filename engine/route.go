package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// Addressing shards. Every shard message goes to the actor the router
// names (actors/shard/placement.go): commits, lookups, locks and table
// reads to the table shard, a view's reads and subscriptions to its home
// shard, catalog changes and status to every shard.

// spawnShards takes the bucket map from the catalog the control plane
// published, refuses one this build cannot serve, and spawns an actor for
// every shard in it, each with its own shard DB under shards/<id>.
func (e *Engine) spawnShards(snap *control.Snapshot, open func(path string, slot int) func(runtime.Context) (kv.Store, error)) error {
	buckets := snap.BucketMap()
	if err := shard.CheckServable(buckets); err != nil {
		return err
	}
	e.router = shard.NewRouter(buckets)
	for i, id := range e.router.Shards() {
		if err := e.rt.Spawn("embedded", e.router.ActorOf(id), shard.New(shard.Config{
			ID:               id,
			OpenStore:        open(fmt.Sprintf("shards/%d", id), i),
			Planner:          planner{},
			TickEvery:        e.cfg.StorageTickInterval,
			DeadlockDetector: shard.DetectorID,
			StepBytesMax:     e.cfg.StepBytesMax,
			RangeSeeksAlways: e.cfg.rangeSeeksAlways,
			BackfillRows:     e.cfg.backfillRows,
		})); err != nil {
			return err
		}
	}
	return nil
}

// tableShard is the actor storing every table: commits, lookups and table
// reads go to it.
func (e *Engine) tableShard() runtime.ActorID { return e.router.TableActor() }

// viewShard is the actor running materialized view id.
func (e *Engine) viewShard(snap *control.Snapshot, id catalog.ID) runtime.ActorID {
	return e.router.HomeActorOf(snap, id)
}

// homesOfRead are the shards serving the relations of one read, one each.
func (e *Engine) homesOfRead(snap *control.Snapshot, ids []catalog.ID) []partition.ShardID {
	if len(e.router.Shards()) == 1 {
		return nil
	}
	homes := make([]partition.ShardID, len(ids))
	for i, id := range ids {
		homes[i] = e.router.ReadHomeOf(snap, id)
	}
	return homes
}

// shardOfKeys is the actor storing the rows of table rel with primary-key
// values keys.
func (e *Engine) shardOfKeys(rel *catalog.Relation, keys []types.Row) (runtime.ActorID, error) {
	owner, ok := e.router.OwnerOfKeys(rel, keys)
	if !ok {
		return "", errcode.New(errcode.InternalError, "the keys of one lookup of %s are stored on several shards", rel.Name)
	}
	return e.router.ActorOf(owner), nil
}

// shardOfWrites is the actor storing every row a commit writes.
func (e *Engine) shardOfWrites(cat catalog.Catalog, writes []shard.RowWrite) (runtime.ActorID, error) {
	owner, ok := e.router.OwnerOfWrites(cat, writes)
	if !ok {
		return "", errcode.New(errcode.InternalError, "a transaction writes rows stored on several shards")
	}
	return e.router.ActorOf(owner), nil
}

// syncShards makes every shard run catalog snap. It waits for the
// backfills of snap's views to end unless background is set (a server's
// startup serves while the views restored unfinished backfill; DDL that
// adds no view need not wait for another statement's backfill).
//
// The shards are asked all at once: each backfills its views (or its part
// of a spread view) while the others do theirs. One after the other, a
// view spread over N shards took N backfills' time.
func (e *Engine) syncShards(ctx context.Context, snap *control.Snapshot, background bool) error {
	shards := e.router.Shards()
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, id := range shards {
		wg.Go(func() {
			_, errs[i] = e.ask(ctx, e.router.ActorOf(id), shard.SyncCatalog{Catalog: snap.Value(), Background: background})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // the lowest shard's, as when asked in order
		}
	}
	return nil
}

// explainPlacement is EXPLAIN INCREMENTAL's account of where view v
// (materialized view rel, nil for a query) runs and how its inputs reach
// it over several shards: on its view shard, each base table's committed
// changes sent by the table shard through the exchange; a materialized
// view it reads is read on the same shard, or computed inside it when it
// runs on another (shard.Inlined).
// spreadKeys is how a new materialized view over plan n would be spread
// over the view shards (dist.SpreadKeys; with exchange stages on, also
// dist.StageKeys).
func (e *Engine) spreadKeys(n plan.Node) (dist.Spread, bool) {
	if e.cfg.ExchangeStages {
		return dist.SpreadOrStageKeys(n)
	}
	return dist.SpreadKeys(n)
}

func (e *Engine) explainPlacement(snap *control.Snapshot, rel *catalog.Relation, v *rsql.View) string {
	m := e.router.Map()
	table, view := shard.TableShardOf(m), shard.ViewShardOf(m)
	if table == view {
		return "" // one shard: tables and views together, no exchange
	}
	rels := plan.ScannedRelations(v.Plan)
	if rel != nil {
		view = shard.HomeOf(snap, m, rel.ID)
	} else if first := earliestView(rels); first != nil {
		// A query, or a view not created yet: created, it would run where
		// the earliest materialized view it reads runs (shard.PlaceView).
		view = shard.HomeOf(snap, m, first.ID)
	}
	if rel != nil && rel.Stages {
		return explainStages(m, rel, v)
	}
	spread, spreadable := e.spreadKeys(v.Plan)
	if rel != nil && shard.IsSpread(rel) {
		// Spread as CREATE placed it, whatever this server's setting.
		spread, spreadable = dist.SpreadOrStageKeys(v.Plan)
	}
	if (rel != nil && shard.IsSpread(rel)) || (rel == nil && spreadable && len(shard.SpreadShardsOf(m)) > 1 && !readsViews(rels)) {
		return explainSpread(m, rels, spread)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SHARD  %d (view shard; tables on shard %d)\n", view, table)
	var inlined []*catalog.Relation
	if rel != nil {
		inlined = shard.InlinedViews(snap, m, rel)
	}
	for i, r := range rels {
		branch := "├─ "
		if i == len(rels)-1 && len(inlined) == 0 {
			branch = "└─ "
		}
		if r.Kind == catalog.KindMaterializedView {
			if rel == nil && len(m.Shards()) >= 2 {
				// Created, the view would compile the views it reads
				// elsewhere into itself (shard.Inlined).
				if cur, ok := snap.RelationByID(r.ID); ok && (shard.IsSpread(cur) || shard.HomeOf(snap, m, r.ID) != view) {
					fmt.Fprintf(&b, " %s%s: materialized view %s, computed here from its definition (inlined)\n", branch, r.Name, whereRuns(snap, m, cur))
					continue
				}
			}
			fmt.Fprintf(&b, " %s%s: materialized view on shard %d (no exchange)\n", branch, r.Name, view)
			continue
		}
		fmt.Fprintf(&b, " %sExchange loopback %s → %d: %s's committed changes, in epoch order, durable on both sides before collected\n", branch, storedOn(m, r), view, r.Name)
	}
	for i, u := range inlined {
		branch := "├─ "
		if i == len(inlined)-1 {
			branch = "└─ "
		}
		fmt.Fprintf(&b, " %s%s: materialized view %s, computed here from its definition (inlined)\n", branch, u.Name, whereRuns(snap, m, u))
	}
	return b.String()
}

// earliestView is the materialized view of rels created first (lowest
// object number), nil when there is none.
func earliestView(rels []*catalog.Relation) *catalog.Relation {
	var first *catalog.Relation
	for _, r := range rels {
		if r.Kind == catalog.KindMaterializedView && (first == nil || control.ObjectNumber(r.ID) < control.ObjectNumber(first.ID)) {
			first = r
		}
	}
	return first
}

// whereRuns says where materialized view rel runs: "on shard N", or
// "spread over shards 1, 2".
func whereRuns(snap *control.Snapshot, m partition.Map, rel *catalog.Relation) string {
	if shard.IsSpread(rel) {
		var names []string
		for _, s := range shard.SpreadShardsOf(m) {
			names = append(names, fmt.Sprint(s))
		}
		return "spread over shards " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("on shard %d", shard.HomeOf(snap, m, rel.ID))
}

func readsViews(rels []*catalog.Relation) bool {
	for _, r := range rels {
		if r.Kind == catalog.KindMaterializedView {
			return true
		}
	}
	return false
}

// explainSpread is explainPlacement for a view spread over the shards (shard.IsSpread): where it runs and how each table's changes are
// split among the shards.
func explainSpread(m partition.Map, rels []*catalog.Relation, spread dist.Spread) string {
	var b strings.Builder
	shards := shard.SpreadShardsOf(m)
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = fmt.Sprint(s)
	}
	list := strings.Join(names, ", ")
	to, own := spreadTargets(m, names)
	fmt.Fprintf(&b, "SHARDS  %s (spread: each shard maintains the part of the view made by its share of the input rows, the table shard a smaller share; a read adds the parts up; tables on shard %d)\n", list, shard.TableShardOf(m))
	for i, r := range rels {
		branch := "├─ "
		if i == len(rels)-1 {
			branch = "└─ "
		}
		var cols []string
		for _, k := range spread.Keys[r.ID] {
			cols = append(cols, k.String())
		}
		fmt.Fprintf(&b, " %sExchange loopback %s → %s: %s's committed changes, in epoch order, durable on both sides before collected%s; each shard keeps the rows of its hash(%s)\n", branch, storedOn(m, r), to, r.Name, own, strings.Join(cols, ", "))
	}
	return b.String()
}

// spreadTargets are the shards (of names, the spread shards) a table's
// changes are exchanged to for the parts of a spread view, and what the
// table shard does with its own share: outside a partitioned layout the
// table shard runs parts too, from its own log.
func spreadTargets(m partition.Map, names []string) (to, own string) {
	if len(shard.TableShardsOf(m)) == 1 && len(names) > 1 {
		return strings.Join(names[1:], ", "), fmt.Sprintf(" (shard %d keeps its own share)", shard.TableShardOf(m))
	}
	return strings.Join(names, ", "), ""
}

// storedOn says where table rel's rows are: "shard 0", or for a
// partitioned table "shards 0, 1 (partitioned by hash(id))".
func storedOn(m partition.Map, rel *catalog.Relation) string {
	if !rel.Partitioned() {
		return fmt.Sprintf("shard %d", shard.TableShardOf(m))
	}
	var names []string
	for _, s := range shard.TableShardsOf(m) {
		names = append(names, fmt.Sprint(s))
	}
	by := "its whole row"
	if len(rel.PrimaryKey) > 0 {
		var cols []string
		for _, c := range rel.PrimaryKey {
			cols = append(cols, rel.Columns[c].Name)
		}
		by = strings.Join(cols, ", ")
	}
	return fmt.Sprintf("shards %s (partitioned by hash(%s))", strings.Join(names, ", "), by)
}

// explainStages is explainPlacement for a view run in stages
// (actors/shard stages.go): its lower stages spread over the view shards,
// each fed by the tables' changes, and the exchange of their outputs to
// the upper stage on the view's shard.
func explainStages(m partition.Map, rel *catalog.Relation, v *rsql.View) string {
	st, ok := dist.SplitStages(v.Plan, func(i int, cols []plan.Column) *catalog.Relation {
		return &catalog.Relation{Kind: catalog.KindMaterializedView, Name: fmt.Sprintf("%s$stage%d", rel.Name, i), ID: catalog.StageID(rel.ID, i)}
	})
	if !ok {
		return "" // cannot happen: CREATE cut it into stages
	}
	shards := shard.SpreadShardsOf(m)
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = fmt.Sprint(s)
	}
	list, home := strings.Join(names, ", "), shard.ViewShardOf(m)
	var b strings.Builder
	fmt.Fprintf(&b, "SHARDS  %s (in stages: %d lower stage(s) spread over the shards, the upper stage on shard %d, which a read reads; tables on shard %d)\n", list, len(st.Lowers), home, shard.TableShardOf(m))
	fmt.Fprintf(&b, " UPPER STAGE  on shard %d: %s\n", home, strings.TrimSpace(strings.SplitN(plan.Format(st.Upper), "\n", 2)[0]))
	for i, l := range st.Lowers {
		branch := "├─ "
		if i == len(st.Lowers)-1 {
			branch = "└─ "
		}
		fmt.Fprintf(&b, " %sExchange stage shards %s → %d: %s (lower stage %d: %s), each shard's part of its output, a snapshot then each step's changes; the upper stage steps to epochs every shard's part ended a step at\n", branch, list, home, l.Relation.Name, i, strings.TrimSpace(strings.SplitN(plan.Format(l.Plan), "\n", 2)[0]))
		rels := plan.ScannedRelations(l.Plan)
		for j, r := range rels {
			sub := "├─ "
			if j == len(rels)-1 {
				sub = "└─ "
			}
			var cols []string
			for _, k := range l.Spread.Keys[r.ID] {
				cols = append(cols, k.String())
			}
			to, own := spreadTargets(m, names)
			fmt.Fprintf(&b, "     %sExchange loopback %s → %s: %s's committed changes%s; each shard keeps the rows of its hash(%s)\n", sub, storedOn(m, r), to, r.Name, own, strings.Join(cols, ", "))
		}
	}
	return b.String()
}
