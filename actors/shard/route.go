package shard

import (
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// ActorOf is the actor id of shard id ("shard/<id>"), the same in every
// process so messages and durable state can name it.
func ActorOf(id partition.ShardID) runtime.ActorID {
	return runtime.ActorID(fmt.Sprintf("shard/%d", id))
}

// Router addresses shards: it maps a relation, key or bucket to the shard
// that serves it, and a shard to its actor. Senders of shard messages
// route through it rather than naming a shard.
//
// Placement (placement.go): every base table and source is stored on the
// table shard, the first shard of the map, which takes every commit; each
// materialized view runs on its home shard, which receives the table
// shard's committed deltas through the exchange (exchange.go). With one
// shard both are that shard.
//
// NB: table rows keep their bucket in their keys (rows.go), so a later
// change that partitions tables over the shards moves bucket ranges; the
// bucket map already places buckets, and view placement uses it.
type Router struct {
	buckets partition.Map
}

// NewRouter routes by bucket map m.
func NewRouter(m partition.Map) Router {
	if !m.Valid() {
		panic("shard: a router needs a bucket map")
	}
	return Router{buckets: m}
}

// Map is the bucket map the router routes by.
func (r Router) Map() partition.Map { return r.buckets }

// Shards lists every shard of the map, ascending.
func (r Router) Shards() []partition.ShardID { return r.buckets.Shards() }

// ActorOf is the actor of shard id.
func (r Router) ActorOf(id partition.ShardID) runtime.ActorID { return ActorOf(id) }

// OwnerOfBucket is the shard that owns bucket b.
func (r Router) OwnerOfBucket(b partition.Bucket) partition.ShardID { return r.buckets.Owner(b) }

// TableShard is the shard that stores every table's rows and takes every
// commit.
func (r Router) TableShard() partition.ShardID { return TableShardOf(r.buckets) }

// TableActor is the table shard's actor.
func (r Router) TableActor() runtime.ActorID { return ActorOf(r.TableShard()) }

// OwnerOfKey is the shard that stores the row of table rel with
// primary-key values key: the owner of its bucket for a partitioned
// table, else the table shard.
func (r Router) OwnerOfKey(rel *catalog.Relation, key types.Row) partition.ShardID {
	if !rel.Partitioned() {
		return r.TableShard()
	}
	return r.buckets.Owner(BucketOfKey(rel, key))
}

// OwnersOfWrite are the shards storing the rows a write changes: the
// old key's and, for an update moving the row to another key, the new
// key's (the same shard, or two).
func (r Router) OwnersOfWrite(rel *catalog.Relation, w RowWrite) (first, second partition.ShardID) {
	if !rel.Partitioned() {
		return r.TableShard(), r.TableShard()
	}
	if len(rel.PrimaryKey) == 0 {
		// An insert-only table's row, by its stored value (BucketOfRow).
		owner := r.buckets.Owner(BucketOfRow(columnTypes(rel), w.Row))
		return owner, owner
	}
	first = r.OwnerOfKey(rel, keyOfWrite(rel, w))
	second = first
	if w.Row != nil && w.Key != nil {
		second = r.OwnerOfKey(rel, keyOfWrite(rel, RowWrite{Row: w.Row}))
	}
	return first, second
}

// OwnerOfKeys is the shard that stores the rows of table rel with
// primary-key values keys; ok is false when they are on several shards.
func (r Router) OwnerOfKeys(rel *catalog.Relation, keys []types.Row) (owner partition.ShardID, ok bool) {
	owner = r.TableShard()
	for i, k := range keys {
		o := r.OwnerOfKey(rel, k)
		if i > 0 && o != owner {
			return 0, false
		}
		owner = o
	}
	return owner, true
}

// OwnerOfWrites is the shard that stores every row writes change; ok is
// false when they are on several shards.
func (r Router) OwnerOfWrites(cat catalog.Catalog, writes []RowWrite) (owner partition.ShardID, ok bool) {
	owner = r.TableShard()
	for i, w := range writes {
		first, second := r.TableShard(), r.TableShard()
		if rel, found := cat.RelationByID(w.Table); found {
			first, second = r.OwnersOfWrite(rel, w)
		}
		if first != second || (i > 0 && first != owner) {
			return 0, false
		}
		owner = first
	}
	return owner, true
}

// HomeOf is the shard serving relation id of cat: the table shard for a
// table or source, the home shard for a materialized view (placement.go).
func (r Router) HomeOf(cat catalog.Catalog, id catalog.ID) partition.ShardID {
	return HomeOf(cat, r.buckets, id)
}

// ReadHomeOf is where a read finds relation id of cat: HomeOf, or
// SpreadShards for a view spread over the shards.
func (r Router) ReadHomeOf(cat catalog.Catalog, id catalog.ID) partition.ShardID {
	if rel, ok := cat.RelationByID(id); ok && IsSpread(rel) && len(SpreadShardsOf(r.buckets)) > 1 {
		return SpreadShards
	}
	if r.Partitioned() {
		if rel, ok := cat.RelationByID(id); ok && rel.Kind != catalog.KindMaterializedView {
			// Tables, partitioned or not, are read as of one epoch of
			// every table shard (the first stores those not partitioned).
			return TableShards
		}
	}
	return r.HomeOf(cat, id)
}

// Partitioned reports whether the map spreads tables over several table
// shards (placement.go TableShardsOf).
func (r Router) Partitioned() bool { return partitionedLayout(r.buckets) }

// TableShards are the shards storing tables, ascending.
func (r Router) TableShards() []partition.ShardID { return TableShardsOf(r.buckets) }

// ViewShards are the shards running materialized views (ViewShardsOf).
func (r Router) ViewShards() []partition.ShardID { return ViewShardsOf(r.buckets) }

// ShardsOfHome are the shards a read's home names: every shard for
// SpreadShards (SpreadShardsOf).
func (r Router) ShardsOfHome(home partition.ShardID) []partition.ShardID {
	if home == SpreadShards {
		return SpreadShardsOf(r.buckets)
	}
	if home == TableShards {
		return TableShardsOf(r.buckets)
	}
	return []partition.ShardID{home}
}

// HomeActorOf is the actor of HomeOf.
func (r Router) HomeActorOf(cat catalog.Catalog, id catalog.ID) runtime.ActorID {
	return ActorOf(r.HomeOf(cat, id))
}

// HomeOfAll is the one shard serving every relation of ids; ok is false
// when they are served by several shards. No relations: the table shard.
func (r Router) HomeOfAll(cat catalog.Catalog, ids []catalog.ID) (partition.ShardID, bool) {
	home := r.TableShard()
	for i, id := range ids {
		h := r.HomeOf(cat, id)
		if i > 0 && h != home {
			return 0, false
		}
		home = h
	}
	return home, true
}

// shardsMax bounds the shards one bucket map may place buckets on in this
// build: every shard is an actor of this process.
const shardsMax = 64

// CheckServable refuses a bucket map this build cannot serve.
func CheckServable(m partition.Map) error {
	if n := len(m.Shards()); n < 1 || n > shardsMax {
		return errcode.New(errcode.StorageFormatVersionIncompatible,
			"the stored bucket map (version %d) places buckets on %d shards, and this build serves 1 to %d shards per process", m.Version, n, shardsMax)
	}
	return nil
}

// checkOwned is the receiving side of routing: a shard writes only rows of
// buckets it owns by the map of the catalog it runs, so a write routed by
// another map is refused instead of stored where no reader looks.
func (a *Actor) checkOwned(rel *catalog.Relation, b partition.Bucket) error {
	m := a.snap.BucketMap()
	if !m.Valid() {
		return errcode.New(errcode.InternalError, "catalog version %d carries no bucket map", a.snap.Version)
	}
	// NB: the buckets of a table that is not partitioned are all on the
	// table shard (placement.go).
	owner := TableShardOf(m)
	if rel.Partitioned() {
		owner = m.Owner(b)
	}
	if owner != a.cfg.ID {
		return errcode.New(errcode.InternalError, "bucket %d is stored by shard %d under bucket map version %d, not by shard %d: the write was routed by another bucket map", b, owner, m.Version, a.cfg.ID)
	}
	return nil
}
