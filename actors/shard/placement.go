package shard

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Placement: which shard serves a relation. It is a pure function of the
// catalog and the bucket map, so every shard, session and engine computes
// the same answer without asking anyone.
//
//   - Tables and sources live on the table shard, the lowest shard of the
//     map, which takes every commit, holds the row locks and keeps the
//     delta log.
//   - Materialized views run on the view shards, every shard after it, fed
//     by the exchange (exchange.go): view maintenance runs beside the
//     commits instead of after them, on other cores. CREATE picks a view's
//     shard once (PlaceView) and records it in the catalog
//     (Relation.Placement): a view that reads no materialized view goes to
//     the view shard running the fewest views; one that reads views goes
//     where the earliest of them runs. A materialized view it reads on
//     another view shard is compiled into it (Inlined), as an inline view
//     would be: its state is kept twice, but no view shard waits on
//     another's outputs.
//
// A view whose plan can be spread (dist.SpreadKeys: every stateful
// operator keyed by expressions of the columns of the relations it reads,
// through filters and projections) reading no materialized view runs on
// EVERY shard when there are two or more, the table shard with a smaller
// share (Relation.Placement PlacementSpread): each maintains the part of
// the view made by the input rows whose partition key hashes to it
// (SpreadOwner), and a read sums the parts, all pinned at one epoch
// (pins.go). A view over a spread view
// computes it inline. Views needing an exchange between their operators
// run whole on one view shard.
//
// With one shard every relation is on it. Partitioned tables need
// multi-shard commits.
//
//	CREATE MATERIALIZED VIEW a AS SELECT ... FROM t        → shard 1 (fewest views)
//	CREATE MATERIALIZED VIEW b AS SELECT ... FROM t        → shard 2
//	CREATE MATERIALIZED VIEW c AS SELECT ... FROM a JOIN b → shard 1, b inlined
//	CREATE MATERIALIZED VIEW d AS SELECT k, count(*) FROM t GROUP BY k
//	                                                        → every shard, t's rows by hash(k)

// PlacementSpread is the Relation.Placement of a view spread over every
// shard.
const PlacementSpread = catalog.PlacementSpread

// SpreadShards is the home of a spread view in a read's Homes
// (Router.ReadHomeOf): every view shard.
const SpreadShards = partition.ShardID(math.MaxUint32)

// TableShards is the home of a partitioned table in a read's Homes
// (Router.ReadHomeOf): every table shard, each read as of one epoch.
const TableShards = partition.ShardID(math.MaxUint32 - 1)

// IsSpread reports whether rel is a materialized view spread over the view
// shards.
func IsSpread(rel *catalog.Relation) bool {
	return rel != nil && rel.Kind == catalog.KindMaterializedView && rel.Placement == PlacementSpread
}

// SpreadShardsOf are the shards of bucket map m that a spread view runs
// on: every shard when there are two or more, the table shard too (none
// with one shard: nothing is spread). In a partitioned layout, the view
// shards (where views are not spread yet, PlaceView).
//
// NB: the table shard takes a smaller share of the parts (SpreadOwner):
// it also takes every commit, and with two shards a view shard alone
// stepping the whole view was the bottleneck while the table shard idled
// half the time (rockstream bench nexmark --shards=2: shard/1 busy 95%,
// shard/0 35%). Its parts tie its commits to maintenance a little more:
// a read of a spread view pins a snapshot, for which the table shard
// first steps its parts to the pinned epoch.
func SpreadShardsOf(m partition.Map) []partition.ShardID {
	if partitionedLayout(m) {
		if shards := ViewShardsOf(m); len(shards) > 1 {
			return shards
		}
		return nil
	}
	if shards := m.Shards(); len(shards) > 1 {
		return shards
	}
	return nil
}

// Spread slots: a spread view's input rows are dealt out to slots by the
// hash of their partition key, and the slots to the shards: the table
// shard, taking every commit besides, has spreadTableShardSlots, every
// other shard spreadViewShardSlots. With two shards the table shard
// maintains a third of the view. Changing them moves parts between
// shards: a view's format record names them (spreadMarker), so views
// spread by other slots are rebuilt at install. Simulation range: fixed.
const (
	spreadTableShardSlots = 1
	spreadViewShardSlots  = 2
)

// SpreadOwner is the shard of m maintaining the rows of a spread view's
// inputs whose partition key hashes to h (types.HashRow).
func SpreadOwner(m partition.Map, h uint64) partition.ShardID { return newSpreadDeal(m).owner(h) }

// spreadDeal is how bucket map m deals a spread view's input rows out to
// its shards (SpreadOwner), worked out once: a spread part asks it for
// every input row, and the map's shard lists are built anew on each call.
type spreadDeal struct {
	shards      []partition.ShardID
	partitioned bool
	slots       uint64
}

func newSpreadDeal(m partition.Map) spreadDeal {
	d := spreadDeal{shards: SpreadShardsOf(m), partitioned: partitionedLayout(m)}
	d.slots = uint64(spreadTableShardSlots + spreadViewShardSlots*(len(d.shards)-1))
	return d
}

// owner is the shard maintaining the rows whose partition key hashes to h.
func (d spreadDeal) owner(h uint64) partition.ShardID {
	if d.partitioned {
		return d.shards[(h%partition.Buckets)%uint64(len(d.shards))]
	}
	slot := (h % partition.Buckets) % d.slots
	if slot < spreadTableShardSlots {
		return d.shards[0]
	}
	return d.shards[1+(slot-spreadTableShardSlots)/spreadViewShardSlots]
}

// spreadMarker names how a spread view's parts are dealt out under m, for
// its format record (installedView.marker): state dealt out otherwise
// must be rebuilt, never read.
func spreadMarker(m partition.Map) string {
	if partitionedLayout(m) {
		return fmt.Sprintf(" | spread over view shards %v", SpreadShardsOf(m))
	}
	return fmt.Sprintf(" | spread over shards %v, slots %d+%d", SpreadShardsOf(m), spreadTableShardSlots, spreadViewShardSlots)
}

// TableShardOf is the table shard of bucket map m: the first shard, which
// stores every table that is not partitioned.
func TableShardOf(m partition.Map) partition.ShardID { return m.Shards()[0] }

// TableShardsOf are the shards of bucket map m that store tables and take
// commits, ascending: in a partitioned layout (some shards own no bucket,
// control topology.go) every shard owning buckets, each storing the rows
// of partitioned tables in its buckets; else the table shard alone.
func TableShardsOf(m partition.Map) []partition.ShardID {
	if owning := m.Owning(); len(owning) < len(m.Shards()) {
		return owning
	}
	return m.Shards()[:1]
}

// partitionedLayout reports whether m spreads tables over several table
// shards, whose commits then take their epochs from the control plane
// (control epochs.go).
func partitionedLayout(m partition.Map) bool { return len(TableShardsOf(m)) > 1 }

// ViewShardOf is the first view shard of bucket map m: where views
// created before placements were recorded run.
func ViewShardOf(m partition.Map) partition.ShardID {
	shards := m.Shards()
	return shards[min(1, len(shards)-1)]
}

// ViewShardsOf are the shards of bucket map m that run materialized
// views, ascending: every shard after the table shard (the one shard when
// there is one); in a partitioned layout, the shards owning no bucket.
func ViewShardsOf(m partition.Map) []partition.ShardID {
	shards := m.Shards()
	if len(shards) == 1 {
		return shards
	}
	if tables := TableShardsOf(m); len(tables) > 1 {
		return shards[len(tables):]
	}
	return shards[1:]
}

// HomeOf is the shard serving relation id of cat under bucket map m.
func HomeOf(cat catalog.Catalog, m partition.Map, id catalog.ID) partition.ShardID {
	if rel, ok := cat.RelationByID(id); ok && rel.Kind == catalog.KindMaterializedView {
		return viewHome(m, rel)
	}
	return TableShardOf(m)
}

// viewHome is the shard running materialized view rel: its recorded
// placement while the map has that shard, else the first view shard.
func viewHome(m partition.Map, rel *catalog.Relation) partition.ShardID {
	if rel.Placement != 0 && rel.Placement != PlacementSpread {
		s := partition.ShardID(rel.Placement - 1)
		if slices.Contains(ViewShardsOf(m), s) {
			return s
		}
	}
	return ViewShardOf(m)
}

// viewsRead are the materialized views view's plan reads, earliest first
// (those it was compiled from: its pins, or its references for views
// created before pins were recorded).
func viewsRead(cat catalog.Catalog, view *catalog.Relation) []*catalog.Relation {
	var out []*catalog.Relation
	add := func(id catalog.ID) {
		if rel, ok := cat.RelationByID(id); ok && rel.Kind == catalog.KindMaterializedView && rel.ID != view.ID &&
			!slices.ContainsFunc(out, func(r *catalog.Relation) bool { return r.ID == id }) {
			out = append(out, rel)
		}
	}
	for _, p := range view.Pinned {
		add(p.ID)
	}
	for _, id := range catalog.RefIDs(view.Refs) {
		add(id)
	}
	slices.SortFunc(out, func(a, b *catalog.Relation) int {
		return cmp.Compare(control.ObjectNumber(a.ID), control.ObjectNumber(b.ID))
	})
	return out
}

// PlaceView chooses the shard a new materialized view runs on (see
// above), as Relation.Placement; spreadable: its plan can be spread
// (dist.SpreadKeys). cat holds every other view.
func PlaceView(cat *control.Snapshot, m partition.Map, view *catalog.Relation, spreadable bool) uint32 {
	if !m.Valid() {
		return 0
	}
	if read := viewsRead(cat, view); len(read) > 0 {
		return uint32(viewHome(m, read[0])) + 1
	}
	if spreadable && len(SpreadShardsOf(m)) > 1 && !partitionedLayout(m) {
		// NB: not yet in a partitioned layout, whose reads of several
		// view shards are not pinned at one epoch yet.
		return PlacementSpread
	}
	shards := ViewShardsOf(m)
	load := make([]int, len(shards))
	for _, rel := range cat.Relations() {
		if rel.Kind != catalog.KindMaterializedView || rel.ID == view.ID || IsSpread(rel) {
			continue
		}
		if i := slices.Index(shards, viewHome(m, rel)); i >= 0 {
			load[i]++
		}
	}
	best := 0
	for i := range shards {
		if load[i] < load[best] {
			best = i
		}
	}
	return uint32(shards[best]) + 1
}

// Inlined is the compiler's hook (bind.Options.InlineMaterialized) for
// view, running on its home under m: a materialized view it reads that
// runs on another shard is expanded from its current definition in cat
// (its pins), like an inline view, instead of read.
func Inlined(cat catalog.Catalog, m partition.Map, view *catalog.Relation) func(*catalog.Relation) (*catalog.Relation, bool) {
	if !m.Valid() || len(m.Shards()) < 2 {
		return nil // one shard: every view reads its inputs
	}
	home := viewHome(m, view)
	return func(read *catalog.Relation) (*catalog.Relation, bool) {
		cur, ok := cat.RelationByID(read.ID)
		if !ok || cur.Kind != catalog.KindMaterializedView || (!IsSpread(cur) && viewHome(m, cur) == home) {
			return nil, false
		}
		return cur, true
	}
}

// InlinedViews are the materialized views view reads that are compiled
// into it (Inlined), earliest first.
func InlinedViews(cat catalog.Catalog, m partition.Map, view *catalog.Relation) []*catalog.Relation {
	inline := Inlined(cat, m, view)
	if inline == nil {
		return nil
	}
	var out []*catalog.Relation
	for _, r := range viewsRead(cat, view) {
		if _, ok := inline(r); ok {
			out = append(out, r)
		}
	}
	return out
}

// InlinedInto lists the materialized views of cat that compile view w
// into themselves (Inlined), at any depth: a change of w's plan would
// change theirs.
func InlinedInto(cat *control.Snapshot, m partition.Map, w catalog.ID) []*catalog.Relation {
	var out []*catalog.Relation
	for _, d := range cat.Relations() {
		if d.Kind != catalog.KindMaterializedView || d.ID == w {
			continue
		}
		inline := Inlined(cat, m, d)
		if inline == nil {
			return nil
		}
		if inlines(cat, inline, d, w, 0) {
			out = append(out, d)
		}
	}
	return out
}

func inlines(cat catalog.Catalog, inline func(*catalog.Relation) (*catalog.Relation, bool), v *catalog.Relation, w catalog.ID, depth int) bool {
	if depth > 32 {
		return false // cannot happen: views read only views created before them
	}
	for _, r := range viewsRead(cat, v) {
		if _, ok := inline(r); !ok {
			continue
		}
		if r.ID == w || inlines(cat, inline, r, w, depth+1) {
			return true
		}
	}
	return false
}
