package session

import (
	"testing"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestShardOfWritesRuns: the shard of a transaction's writes is found
// once per run of a table's writes when the table is not partitioned,
// and per write for a partitioned table: a run of writes to a table on
// the table shard followed by writes of a partitioned table that land on
// two shards still has no single shard, and each table's own runs do.
func TestShardOfWritesRuns(t *testing.T) {
	plain := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{1}}, Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0},
		Columns: []catalog.Column{{Name: "k", Type: types.TInt8, NotNull: true}}}
	spread := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{2}}, Kind: catalog.KindTable, Name: "p", PrimaryKey: []int{0},
		Columns: []catalog.Column{{Name: "k", Type: types.TInt8, NotNull: true}}, Placement: catalog.PlacementSpread}
	router := shard.NewRouter(partition.NewMap(1, []partition.ShardID{0, 1, 2}))
	a := &Actor{cfg: Config{Router: router}}
	txn := newTxn(Begin{})
	txn.table(*plain)
	txn.table(*spread)
	write := func(rel *catalog.Relation, k int64) shard.RowWrite {
		return shard.RowWrite{Table: rel.ID, Key: types.Row{k}, Row: types.Row{k}}
	}
	// Two keys of the partitioned table on different shards.
	var onTable, elsewhere int64 = -1, -1
	for k := range int64(64) {
		switch router.OwnerOfKey(spread, types.Row{k}) {
		case router.TableShard():
			if onTable < 0 {
				onTable = k
			}
		default:
			if elsewhere < 0 {
				elsewhere = k
			}
		}
	}
	if onTable < 0 || elsewhere < 0 {
		t.Fatal("64 keys all on one shard")
	}
	if to, err := a.shardOfWrites(txn, []shard.RowWrite{write(plain, 1), write(plain, 2), write(plain, 3)}); err != nil || to != router.ActorOf(router.TableShard()) {
		t.Fatalf("a table on the table shard: %v %v", to, err)
	}
	if _, err := a.shardOfWrites(txn, []shard.RowWrite{write(plain, 1), write(plain, 2), write(spread, onTable), write(spread, elsewhere)}); err == nil {
		t.Fatal("writes of two shards after a run of the table shard's have one shard")
	}
	if _, err := a.shardOfWrites(txn, []shard.RowWrite{write(plain, 1), write(plain, 2), write(spread, elsewhere)}); err == nil {
		t.Fatal("a partitioned table's write on another shard after the table shard's writes has one shard")
	}
}
