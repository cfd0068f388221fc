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
		if got, _ := r.OwnersOfWrite(keyless, RowWrite{Table: keyless.ID, Row: types.Row{k, "x"}}); got != 0 {
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

// TestRouterPartitionedTable: a partitioned table's keys route to the
// owners of their buckets, every shard getting some; a write moving a
// row to a key of another shard, or writes of several shards, have no
// single owner; tables that are not partitioned stay on the table shard.
func TestRouterPartitionedTable(t *testing.T) {
	_, table, keyless, _, _ := bucketSnapshot()
	m := partition.NewMap(1, []partition.ShardID{0, 1, 2})
	r := NewRouter(m)
	part := *table
	part.Placement = catalog.PlacementSpread
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, &part, keyless)
	p, _ := snap.RelationByID(part.ID)
	if !p.Partitioned() {
		t.Fatal("a table placed PlacementSpread is not partitioned")
	}
	seen := map[partition.ShardID]bool{}
	var a, b types.Row
	for k := range int64(64) {
		key := types.Row{k}
		got := r.OwnerOfKey(p, key)
		if want := m.Owner(BucketOfKey(p, key)); got != want {
			t.Fatalf("key %d routed to shard %d, its bucket's owner is %d", k, got, want)
		}
		seen[got] = true
		if got == 0 && a == nil {
			a = key
		}
		if got != 0 && b == nil {
			b = key
		}
		if got, _ := r.OwnersOfWrite(keyless, RowWrite{Table: keyless.ID, Row: types.Row{k, "x"}}); got != 0 {
			t.Fatalf("keyless row routed to shard %d, not the table shard", got)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("64 keys landed on %d of 3 shards", len(seen))
	}
	if o, ok := r.OwnerOfKeys(p, []types.Row{a, a}); !ok || o != 0 {
		t.Fatalf("keys of one shard: %d %v", o, ok)
	}
	if _, ok := r.OwnerOfKeys(p, []types.Row{a, b}); ok {
		t.Fatal("keys of two shards have one owner")
	}
	move := RowWrite{Table: p.ID, Key: a, Row: types.Row{b[0], "y"}}
	if first, second := r.OwnersOfWrite(p, move); first != 0 || second == 0 {
		t.Fatalf("an update moving key %v to %v routes to %d and %d", a, b, first, second)
	}
	if _, ok := r.OwnerOfWrites(snap, []RowWrite{move}); ok {
		t.Fatal("a write moving a row between shards has one owner")
	}
	if _, ok := r.OwnerOfWrites(snap, []RowWrite{{Table: p.ID, Row: types.Row{a[0], "x"}}, {Table: p.ID, Row: types.Row{b[0], "x"}}}); ok {
		t.Fatal("writes of two shards have one owner")
	}
	if o, ok := r.OwnerOfWrites(snap, []RowWrite{{Table: p.ID, Row: types.Row{b[0], "x"}}, {Table: p.ID, Key: b}}); !ok || o != r.OwnerOfKey(p, b) {
		t.Fatalf("writes of one shard: %d %v", o, ok)
	}
	// A partitioned insert-only table without a key: each row to the owner
	// of its stored value's bucket, as the commit stores it.
	events := *keyless
	events.InsertOnly, events.Placement = true, catalog.PlacementSpread
	rows := map[partition.ShardID]bool{}
	for k := range int64(64) {
		row := types.Row{k, "x"}
		first, second := r.OwnersOfWrite(&events, RowWrite{Table: events.ID, Row: row})
		if want := m.Owner(BucketOfRow(columnTypes(&events), row)); first != want || second != want {
			t.Fatalf("insert-only row %v routed to shards %d and %d, its bucket's owner is %d", row, first, second, want)
		}
		rows[first] = true
	}
	if len(rows) != 3 {
		t.Fatalf("64 insert-only rows landed on %d of 3 shards", len(rows))
	}
}

// TestSpreadDealSlots: a spread view's input rows are dealt out by slot,
// the table shard taking spreadTableShardSlots to every other shard's
// spreadViewShardSlots; in a partitioned layout, evenly over the view
// shards. The deal worked out once answers as SpreadOwner does.
func TestSpreadDealSlots(t *testing.T) {
	for _, tc := range []struct {
		m    partition.Map
		want map[partition.ShardID]int
	}{
		{partition.NewMap(1, []partition.ShardID{0, 1, 2}), map[partition.ShardID]int{0: spreadTableShardSlots, 1: spreadViewShardSlots, 2: spreadViewShardSlots}},
		{partition.NewMapOver(1, []partition.ShardID{0, 1, 2, 3}, []partition.ShardID{0, 1}), map[partition.ShardID]int{2: 1, 3: 1}},
		{partition.NewMap(1, []partition.ShardID{4}), nil},
	} {
		d := newSpreadDeal(tc.m)
		if tc.want == nil {
			if len(d.shards) != 0 {
				t.Fatalf("one shard: spread over %v, want none", d.shards)
			}
			continue
		}
		per := 0
		for _, n := range tc.want { //lint:maprange summed
			per += n
		}
		got := map[partition.ShardID]int{}
		rounds := 100
		for h := uint64(0); h < uint64(per*rounds); h++ {
			s := d.owner(h)
			if s != SpreadOwner(tc.m, h) {
				t.Fatalf("hash %d: deal says shard %d, SpreadOwner %d", h, s, SpreadOwner(tc.m, h))
			}
			got[s]++
		}
		for s, n := range tc.want { //lint:maprange checked one by one
			if got[s] != n*rounds {
				t.Errorf("shards %v: shard %d maintains %d of %d hashes, want %d", tc.m.Shards(), s, got[s], per*rounds, n*rounds)
			}
		}
		if len(got) != len(tc.want) {
			t.Errorf("shards %v: rows dealt to %v, want %v", tc.m.Shards(), got, tc.want)
		}
	}
}
