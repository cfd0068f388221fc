package control

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// The bucket map (spec §7.1, §10.1): which shard owns each virtual bucket,
// with its version. It lives in the control DB's topology namespace
//
//	0x03 'B'      the bucket map record (partition.Map.Encode)
//
// and is created at bootstrap, when the control DB has none, placing the
// buckets over Config.Shards shards by rendezvous hashing. From then on
// the stored map is the truth: every published catalog snapshot carries it
// (Snapshot.BucketMap; SnapshotValue.BucketMap in messages), and a later
// start with another shard count
// keeps it (moving buckets is a migration, spec §10.2, not a restart),
// and says so in the log.
const (
	prefixTopology    byte = 0x03
	topologyBucketMap byte = 'B'
	shardsDefault          = 1
)

func bucketMapKey() []byte { return []byte{prefixTopology, topologyBucketMap} }

// topologyPartitioned records, once, whether tables are partitioned over
// the shards (Snapshot.Partitioned):
//
//	0x03 'P'      1: partitioned, 0: every table on the first shard
//
// It is written with the first catalog of a new control DB and kept:
// moving rows between the layouts is a migration. A control DB from
// before it has none: not partitioned.
const topologyPartitioned byte = 'P'

func partitionedKey() []byte { return []byte{prefixTopology, topologyPartitioned} }

// loadPartitioned reads the stored layout of tables, recording want when
// the control DB is new (no catalog version and no bucket map yet).
func loadPartitioned(ctx runtime.Context, store kv.Store, want bool) (bool, error) {
	v, ok, err := store.Get(partitionedKey())
	if err != nil {
		return false, err
	}
	if ok {
		if len(v) != 1 || v[0] > 1 {
			return false, errcode.New(CatalogCorrupt, "the control DB's table layout record has %d bytes", len(v))
		}
		if (v[0] == 1) != want {
			ctx.Logger().Info("the stored table layout differs from the configured one: keeping the stored layout", "partitioned", v[0] == 1)
		}
		return v[0] == 1, nil
	}
	var ns catalog.NamespaceID
	if _, ok, err := store.Get(versionKey(ns)); err != nil {
		return false, err
	} else if ok {
		// A catalog from before the record: every table on the first shard.
		return false, nil
	}
	if _, ok, err := store.Get(bucketMapKey()); err != nil {
		return false, err
	} else if ok {
		// A catalog from before the record: every table on the first shard.
		return false, nil
	}
	b := byte(0)
	if want {
		b = 1
	}
	if err := store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: partitionedKey(), Value: []byte{b}}}}); err != nil {
		return false, errcode.Wrap(errcode.InternalError, err, "write the table layout")
	}
	return want, nil
}

// loadBucketMap reads the stored bucket map, creating it durably with
// shards shards if the control DB has none yet.
//
// Partitioned, the buckets go to the first half of the shards (rounded
// up), which store the tables' rows and take the commits; the others own
// no bucket and run the materialized views (actors/shard placement.go).
func loadBucketMap(ctx runtime.Context, store kv.Store, shards int, partitioned bool) (partition.Map, error) {
	if shards <= 0 {
		shards = shardsDefault
	}
	v, ok, err := store.Get(bucketMapKey())
	if err != nil {
		return partition.Map{}, err
	}
	if ok {
		m, err := partition.DecodeMap(v)
		if err != nil {
			return partition.Map{}, errcode.Wrap(CatalogCorrupt, err, "the control DB's bucket map")
		}
		if len(m.Shards()) != shards {
			ctx.Logger().Info("the stored bucket map places buckets on another number of shards than configured: keeping the stored map", "stored", len(m.Shards()), "configured", shards)
		}
		return m, nil
	}
	ids := make([]partition.ShardID, shards)
	for i := range ids {
		ids[i] = partition.ShardID(i)
	}
	m := partition.NewMap(1, ids)
	if partitioned {
		m = partition.NewMapOver(1, ids, ids[:(len(ids)+1)/2])
	}
	if err := store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: bucketMapKey(), Value: m.Encode()}}}); err != nil {
		return partition.Map{}, errcode.Wrap(errcode.InternalError, err, "write the bucket map")
	}
	// Paired with the read above on the next start: what was written
	// reads back as the same map.
	if back, err := partition.DecodeMap(m.Encode()); err != nil || back.Version != m.Version {
		panic("control: the bucket map does not read back as written")
	}
	return m, nil
}
