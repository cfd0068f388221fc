package shard

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestRouterPlacement: every table key and write routes to the table
// shard (the lowest of the map); materialized views spread over the other
// shards, a view reading a view runs where that view runs, and a view
// reading views on different shards is reported. Maps over 1 to 64
// shards are servable.
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
	var views []*catalog.Relation
	for i := range 32 {
		views = append(views, &catalog.Relation{Kind: catalog.KindMaterializedView, Name: fmt.Sprintf("v%d", i), Pinned: []*catalog.Relation{table}})
	}
	// on and both read views (below); created last, so they may.
	on := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "on"}
	both := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "both"}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, append(append([]*catalog.Relation{table}, views...), on, both)...)
	homes := map[partition.ShardID]bool{}
	for _, v := range views {
		h := r.HomeOf(snap, v.ID)
		if h == 0 {
			t.Fatalf("view %s placed on the table shard", v.Name)
		}
		homes[h] = true
	}
	if len(homes) != 3 {
		t.Fatalf("32 views placed on %d of the 3 view shards", len(homes))
	}
	if r.HomeOf(snap, table.ID) != 0 {
		t.Fatalf("table placed off the table shard")
	}
	// A view over views[0]: where views[0] runs. Over two views on
	// different shards: reported.
	var other *catalog.Relation
	for _, v := range views[1:] {
		if r.HomeOf(snap, v.ID) != r.HomeOf(snap, views[0].ID) {
			other = v
			break
		}
	}
	on.Pinned = []*catalog.Relation{views[0], table}
	both.Pinned = []*catalog.Relation{other, views[0]}
	snap2 := snap
	if got, want := r.HomeOf(snap2, on.ID), r.HomeOf(snap2, views[0].ID); got != want {
		t.Fatalf("a view over %s placed on shard %d, %s runs on %d", views[0].Name, got, views[0].Name, want)
	}
	if apart := CheckPlacement(snap2, m, both); len(apart) != 1 || apart[0].ID != other.ID {
		t.Fatalf("a view over views on two shards: apart = %v", apart)
	}
	if apart := CheckPlacement(snap2, m, on); len(apart) != 0 {
		t.Fatalf("a view over one view: apart = %v", apart)
	}
	one := NewRouter(partition.NewMap(1, []partition.ShardID{5}))
	if one.OwnerOfKey(table, types.Row{int64(9)}) != 5 || one.HomeOf(snap, views[0].ID) != 5 || one.ActorOf(5) != "shard/5" {
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
