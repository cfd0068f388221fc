package shard

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestRouterRoutesByBucket: over several shards the router sends a key to
// the owner of the bucket its storage key carries, says when keys or
// writes span shards, and has no home shard; over one shard everything
// routes home. A map over several shards is not servable by this build.
func TestRouterRoutesByBucket(t *testing.T) {
	snap, table, keyless, _, _ := bucketSnapshot()
	m := partition.NewMap(1, []partition.ShardID{0, 1, 2, 3})
	r := NewRouter(m)
	if _, ok := r.Home(); ok {
		t.Fatalf("a router over 4 shards has a home shard")
	}
	if err := CheckServable(m); err == nil || !containsState(err, "XX002") {
		t.Fatalf("CheckServable over 4 shards: %v", err)
	}
	owners := map[partition.ShardID]types.Row{}
	for k := range int64(64) {
		key := types.Row{k}
		want := m.Owner(keyBucket(keyOf(table, columnTypes(table), key)))
		if got := r.OwnerOfKey(table, key); got != want {
			t.Fatalf("key %d routed to shard %d, its bucket's owner is %d", k, got, want)
		}
		if got := r.OwnerOfWrite(table, RowWrite{Table: table.ID, Key: key, Row: types.Row{k, k}}); got != want {
			t.Fatalf("write of key %d routed to shard %d, want %d", k, got, want)
		}
		owners[want] = key
	}
	if len(owners) != 4 {
		t.Fatalf("64 keys reached %d of 4 shards", len(owners))
	}
	if _, ok := r.OwnerOfKeys(table, []types.Row{owners[0], owners[1]}); ok {
		t.Fatalf("keys of shards 0 and 1 routed to one shard")
	}
	if s, ok := r.OwnerOfKeys(table, []types.Row{owners[2], owners[2]}); !ok || s != 2 {
		t.Fatalf("keys of shard 2 routed to %d (%v)", s, ok)
	}
	row := types.Row{int64(1), "x"}
	if got, want := r.OwnerOfWrite(keyless, RowWrite{Table: keyless.ID, Row: row}), m.Owner(BucketOfRow(columnTypes(keyless), row)); got != want {
		t.Fatalf("keyless row routed to shard %d, want %d", got, want)
	}
	if _, ok := r.OwnerOfWrites(snap, []RowWrite{{Table: table.ID, Key: owners[0], Row: types.Row{owners[0][0], int64(1)}}, {Table: table.ID, Key: owners[3], Row: types.Row{owners[3][0], int64(1)}}}); ok {
		t.Fatalf("writes to shards 0 and 3 routed to one shard")
	}
	one := NewRouter(partition.NewMap(1, []partition.ShardID{5}))
	if home, ok := one.Home(); !ok || home != 5 || one.OwnerOfKey(table, types.Row{int64(9)}) != 5 || one.ActorOf(5) != "shard/5" {
		t.Fatalf("a one-shard router does not route home")
	}
	if err := CheckServable(one.Map()); err != nil {
		t.Fatal(err)
	}
}
