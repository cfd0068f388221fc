package engine

import (
	"testing"

	"github.com/rockstream/rockstream/actors/storage"
)

// TestShardStorageSplitsTheBudget: the shards of a store share one shard's
// storage memory (the budget holds with any number of shards): their
// memtables and unflushed bytes in one pool (slate TestMemoryPoolShares),
// their block caches split, each at least shardStorageBytesMin; defaults
// (zero) stay defaults.
func TestShardStorageSplitsTheBudget(t *testing.T) {
	one := budgets(2 << 30)
	if got := shardStorage(one, 1); got != one {
		t.Fatalf("one shard: %+v, want %+v", got, one)
	}
	// Four shards: their memtables and unflushed bytes share one shard's
	// budgets in one pool (each may take what the others leave), their
	// block caches split it.
	four := shardStorage(one, 4)
	if four.Pool == nil || four.MemtableBytesMax != one.MemtableBytesMax || four.UnflushedBytesMax != one.UnflushedBytesMax || four.BlockCacheBytes*4 != one.BlockCacheBytes {
		t.Fatalf("4 shards: %+v of %+v", four, one)
	}
	small := shardStorage(budgets(memoryBudgetMin), 64)
	if small.BlockCacheBytes != shardStorageBytesMin || small.Pool == nil {
		t.Fatalf("64 shards of the smallest budget: %+v", small)
	}
	if got := shardStorage(storage.Options{}, 8); got != (storage.Options{}) {
		t.Fatalf("defaults over 8 shards: %+v", got)
	}
}
