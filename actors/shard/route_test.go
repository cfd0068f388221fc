package shard

import (
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestRouterPlacement: every table key and write routes to the table
// shard (the lowest of the map), every materialized view to the view shard
// (the next); with one shard, everything to it. Maps over 1 to 64 shards
// are servable.
func TestRouterPlacement(t *testing.T) {
	_, table, keyless, _, _ := bucketSnapshot()
	m := partition.NewMap(1, []partition.ShardID{0, 1, 2, 3})
	r := NewRouter(m)
	if err := CheckServable(m); err != nil {
		t.Fatal(err)
	}
	for k := range int64(64) {
		key := types.Row{k}
		if got := r.OwnerOfKey(table, key); got != 0 {
			t.Fatalf("key %d routed to shard %d, not the table shard", k, got)
		}
		if got := r.OwnerOfWrite(keyless, RowWrite{Table: keyless.ID, Row: types.Row{k, "x"}}); got != 0 {
			t.Fatalf("keyless row routed to shard %d, not the table shard", got)
		}
	}
	// NB: a table of its own: the snapshot gives every relation a new id.
	table = &catalog.Relation{Kind: catalog.KindTable, Name: "p", PrimaryKey: table.PrimaryKey, Columns: table.Columns}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", Pinned: []*catalog.Relation{table}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, view)
	if h := r.HomeOf(snap, view.ID); h != 1 {
		t.Fatalf("view placed on shard %d, not the view shard", h)
	}
	if h := r.HomeOf(snap, table.ID); h != 0 {
		t.Fatalf("table placed on shard %d, not the table shard", h)
	}
	if _, ok := r.HomeOfAll(snap, []catalog.ID{table.ID, view.ID}); ok {
		t.Fatalf("a table and a view served by one shard of 4")
	}
	one := NewRouter(partition.NewMap(1, []partition.ShardID{5}))
	if one.OwnerOfKey(table, types.Row{int64(9)}) != 5 || one.HomeOf(snap, view.ID) != 5 || one.ActorOf(5) != "shard/5" {
		t.Fatalf("a one-shard router does not route everything to its shard")
	}
	var many []partition.ShardID
	for i := range shardsMax + 1 {
		many = append(many, partition.ShardID(i))
	}
	if err := CheckServable(partition.NewMap(1, many)); err == nil || !containsState(err, "XX002") {
		t.Fatalf("CheckServable over %d shards: %v", len(many), err)
	}
}
