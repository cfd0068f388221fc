package shard

import (
	"sort"

	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Placement: which shard serves a relation. It is a pure function of the
// catalog and the bucket map, so every shard, session and engine computes
// the same answer without asking anyone.
//
//   - Tables and sources live on the table shard, the lowest shard of the
//     map, which takes every commit and keeps the delta log.
//   - A materialized view that reads no materialized view runs on a view
//     shard chosen by rendezvous hashing of its id over the other shards,
//     so view maintenance runs beside the commits instead of after them,
//     and views spread over the shards.
//   - A materialized view that reads materialized views runs where the
//     first of them (by creation) runs: its input deltas are computed in
//     the same epoch step there. A view reading views on several shards is
//     refused at DDL (CheckPlacement).
//
// With one shard every relation is on it.

// TableShardOf is the table shard of bucket map m.
func TableShardOf(m partition.Map) partition.ShardID { return m.Shards()[0] }

// HomeOf is the shard serving relation id of cat under bucket map m.
func HomeOf(cat catalog.Catalog, m partition.Map, id catalog.ID) partition.ShardID {
	shards := m.Shards()
	if len(shards) == 1 {
		return shards[0]
	}
	rel, ok := cat.RelationByID(id)
	if !ok || rel.Kind != catalog.KindMaterializedView {
		return shards[0]
	}
	if inputs := viewInputs(cat, rel); len(inputs) > 0 {
		return HomeOf(cat, m, inputs[0])
	}
	return partition.Rendezvous(partition.BucketOf(id.Object[:]), shards[1:])
}

// CheckPlacement reports the materialized views a new view rel reads that
// run on shards other than the first one it reads (placement above): such
// a view cannot be maintained in one shard's epoch step. Empty: rel can
// be placed.
func CheckPlacement(cat catalog.Catalog, m partition.Map, rel *catalog.Relation) []*catalog.Relation {
	inputs := viewInputs(cat, rel)
	if len(m.Shards()) == 1 || len(inputs) < 2 {
		return nil
	}
	home := HomeOf(cat, m, inputs[0])
	var apart []*catalog.Relation
	for _, id := range inputs[1:] {
		if HomeOf(cat, m, id) != home {
			in, _ := cat.RelationByID(id)
			apart = append(apart, in)
		}
	}
	return apart
}

// viewInputs are the materialized views rel's plan reads (its pinned
// relations of that kind, as the catalog has them now), in creation
// order. Only views created before rel count (all of them, for a rel not
// created yet), so placement never loops.
func viewInputs(cat catalog.Catalog, rel *catalog.Relation) []catalog.ID {
	var ids []catalog.ID
	seen := map[catalog.ID]bool{}
	created := rel.ID != (catalog.ID{})
	for _, p := range rel.Pinned {
		if p == nil || seen[p.ID] || (created && objectNumber(p.ID) >= objectNumber(rel.ID)) {
			continue
		}
		if now, ok := cat.RelationByID(p.ID); ok && now.Kind == catalog.KindMaterializedView {
			seen[p.ID] = true
			ids = append(ids, p.ID)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		if a, b := objectNumber(ids[i]), objectNumber(ids[j]); a != b {
			return a < b
		}
		return string(ids[i].Namespace[:])+string(ids[i].Object[:]) < string(ids[j].Namespace[:])+string(ids[j].Object[:])
	})
	return ids
}
