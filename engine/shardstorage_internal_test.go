package engine

import (
	"testing"

	"github.com/rockstream/rockstream/actors/storage"
)

// TestShardStorageSplitsTheBudget: the shards of a store share one shard's
// storage memory (the budget holds with any number of shards), each at
// least shardStorageBytesMin; defaults (zero) stay defaults.
func TestShardStorageSplitsTheBudget(t *testing.T) {
	one := budgets(2 << 30)
	if got := shardStorage(one, 1); got != one {
		t.Fatalf("one shard: %+v, want %+v", got, one)
	}
	four := shardStorage(one, 4)
	if four.MemtableBytesMax*4 != one.MemtableBytesMax || four.UnflushedBytesMax*4 != one.UnflushedBytesMax || four.BlockCacheBytes*4 != one.BlockCacheBytes {
		t.Fatalf("4 shards: %+v of %+v", four, one)
	}
	small := shardStorage(budgets(memoryBudgetMin), 64)
	if small.MemtableBytesMax != shardStorageBytesMin || small.BlockCacheBytes != shardStorageBytesMin || small.UnflushedBytesMax < small.MemtableBytesMax {
		t.Fatalf("64 shards of the smallest budget: %+v", small)
	}
	if got := shardStorage(storage.Options{}, 8); got != (storage.Options{}) {
		t.Fatalf("defaults over 8 shards: %+v", got)
	}
}
