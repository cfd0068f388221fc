package shard

import (
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
//   - Materialized views run on the view shard, the next one, fed by the
//     exchange (exchange.go): view maintenance runs beside the commits
//     instead of after them, on another core.
//
// With one shard every relation is on it. The shards after the view shard
// hold nothing yet: spreading views over them needs the exchange of view
// outputs between view shards (a view reading views on another shard),
// and partitioned view state needs exchanges inside circuits.

// TableShardOf is the table shard of bucket map m.
func TableShardOf(m partition.Map) partition.ShardID { return m.Shards()[0] }

// ViewShardOf is the view shard of bucket map m.
func ViewShardOf(m partition.Map) partition.ShardID {
	shards := m.Shards()
	return shards[min(1, len(shards)-1)]
}

// HomeOf is the shard serving relation id of cat under bucket map m.
func HomeOf(cat catalog.Catalog, m partition.Map, id catalog.ID) partition.ShardID {
	if rel, ok := cat.RelationByID(id); ok && rel.Kind == catalog.KindMaterializedView {
		return ViewShardOf(m)
	}
	return TableShardOf(m)
}
