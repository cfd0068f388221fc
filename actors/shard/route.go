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

// Router addresses shards: it maps a key or bucket to the shard that owns
// it by the bucket map (spec §7.1), and a shard to its actor. Senders of
// shard messages route through it rather than naming a shard.
//
// NB: while a process runs one shard, that shard owns every bucket, holds
// every table and runs every view, so whole-relation requests (reads,
// snapshots, subscriptions, catalog sync) go to Home. Serving several
// shards replaces Home with fan-out to Shards.
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

// OwnerOfKey is the shard that stores the row of table rel with
// primary-key values key.
func (r Router) OwnerOfKey(rel *catalog.Relation, key types.Row) partition.ShardID {
	if home, ok := r.home(); ok {
		return home // one owner: no need to encode and hash the key
	}
	return r.buckets.Owner(BucketOfKey(rel, key))
}

// OwnerOfWrite is the shard that stores the row a write changes: by its
// primary key, or for a table without one by the row's value.
//
// NB: a row of a keyless table stored before an ALTER TABLE ADD COLUMN
// keeps the bucket of its narrower encoding (BucketOfRow), so a delete by
// value routed here may find its row on another shard: routing over
// several shards must send deletes by value to every shard.
func (r Router) OwnerOfWrite(rel *catalog.Relation, w RowWrite) partition.ShardID {
	if home, ok := r.home(); ok {
		return home
	}
	if len(rel.PrimaryKey) == 0 {
		row := w.Row
		if row == nil {
			row = w.Base
		}
		return r.buckets.Owner(BucketOfRow(columnTypes(rel), row))
	}
	return r.buckets.Owner(BucketOfKey(rel, keyOfWrite(rel, w)))
}

// OwnerOfKeys is the shard that stores the rows of table rel with
// primary-key values keys; ok is false when they are on several shards.
// No keys: the home shard.
func (r Router) OwnerOfKeys(rel *catalog.Relation, keys []types.Row) (owner partition.ShardID, ok bool) {
	if home, ok := r.home(); ok {
		return home, true
	}
	if len(keys) == 0 {
		return r.home()
	}
	owner = r.OwnerOfKey(rel, keys[0])
	for _, k := range keys[1:] {
		if r.OwnerOfKey(rel, k) != owner {
			return 0, false
		}
	}
	return owner, true
}

// OwnerOfWrites is the shard that stores every row writes change (tables
// looked up in cat); ok is false when they are on several shards or a
// table is unknown. No writes: the home shard.
func (r Router) OwnerOfWrites(cat catalog.Catalog, writes []RowWrite) (owner partition.ShardID, ok bool) {
	if home, ok := r.home(); ok {
		return home, true
	}
	if len(writes) == 0 {
		return r.home()
	}
	for i, w := range writes {
		rel, found := cat.RelationByID(w.Table)
		if !found {
			return 0, false
		}
		s := r.OwnerOfWrite(rel, w)
		if i > 0 && s != owner {
			return 0, false
		}
		owner = s
	}
	return owner, true
}

// Home is the shard that serves whole-relation requests: the only shard
// of the map. ok is false when the map has several shards.
func (r Router) Home() (partition.ShardID, bool) { return r.home() }

// HomeActor is the actor of the home shard. Only for a map that passed
// CheckServable: it panics for a map over several shards.
func (r Router) HomeActor() runtime.ActorID {
	home, ok := r.home()
	if !ok {
		panic("shard: the home shard of a bucket map over several shards")
	}
	return ActorOf(home)
}

func (r Router) home() (partition.ShardID, bool) {
	if s := r.buckets.Shards(); len(s) == 1 {
		return s[0], true
	}
	return 0, false
}

// CheckServable refuses a bucket map this build cannot serve: one that
// places buckets on several shards, which needs cross-shard routing of
// reads and transactions.
func CheckServable(m partition.Map) error {
	if n := len(m.Shards()); n != 1 {
		return errcode.New(errcode.StorageFormatVersionIncompatible,
			"the stored bucket map (version %d) places buckets on %d shards, and this build serves one shard per process", m.Version, n)
	}
	return nil
}

// checkOwned is the receiving side of routing: a shard writes only rows of
// buckets it owns by the map of the catalog it runs, so a write routed by
// another map is refused instead of stored where no reader looks.
func (a *Actor) checkOwned(b partition.Bucket) error {
	m := a.snap.BucketMap()
	if !m.Valid() {
		return errcode.New(errcode.InternalError, "catalog version %d carries no bucket map", a.snap.Version)
	}
	if owner := m.Owner(b); owner != a.cfg.ID {
		return errcode.New(errcode.InternalError, "bucket %d is owned by shard %d under bucket map version %d, not by shard %d: the write was routed by another bucket map", b, owner, m.Version, a.cfg.ID)
	}
	return nil
}
