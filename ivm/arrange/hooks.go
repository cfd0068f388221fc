package arrange

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/kv"
)

// OnDiscardCache registers fn to run whenever DiscardCache runs: an
// operator that caches decoded state derived from this arrangement (the
// Aggregate's group cache) drops it there, so it never outlives an epoch
// batch that was thrown away.
func (a *Arrangement) OnDiscardCache(fn func()) { a.onDiscard = append(a.onDiscard, fn) }

// Merge writes a merge operand for key (kv.Merger, resolved with
// kv.MergeValues). oldLen is the length of the value before the merge (-1:
// absent) and newLen its length after, for statistics. Cached entries for
// key are dropped (the cache holds whole values, not operands).
func (a *Arrangement) Merge(txn kv.Merger, key, operand []byte, oldLen, newLen int) error {
	a.mustNotBeGrouped()
	full := a.fullKey(key, nil)
	if err := txn.Merge(full, operand); err != nil {
		return fmt.Errorf("arrange: merge: %w", err)
	}
	a.countPut(len(full), newLen, oldLen)
	a.cache.drop(full)
	return nil
}
