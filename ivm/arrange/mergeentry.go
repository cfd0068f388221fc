package arrange

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/kv"
)

// Blind entry writes. An operator that adds to an entry of a grouped
// arrangement — a join adding a new row of a delta to its own side — must
// otherwise read the entry first (GetEntry), and for a growing arrangement
// that read is almost always a store miss: a search of every memtable and
// a bloom probe of every SST, for a key that is not there. When the
// entry's value is a kv merge value (kv.TagAddWords) the change can be
// written instead as a merge operand, which the store resolves on read and
// at compaction (kv.Merger), so the write needs no read at all.
//
// MergeEntry writes blindly only when the arrangement has no copy of the
// entry to keep equal to the Txn: the entry's group is not cached, the
// cache is not complete (a complete cache knows the entry is absent, so
// the write costs no read anyway), and the entry cache does not hold it.
// Otherwise it is UpdateEntry, so the caches stay write-through.

// MergeEntry applies to group ++ suffix a change given twice: as operand,
// a kv merge operand, and as update, the same change as UpdateEntry takes
// it (old value → new value, nil deleting the entry). It writes operand
// blindly when the entry's value is not in memory and txn accepts merges,
// and calls UpdateEntry otherwise. The two must agree: update(old) must
// equal kv.MergeValues of operand onto old, except that update may delete
// an entry the merge would leave with all-zero words (readers must treat
// such an entry as absent).
//
// NB: a blind write does not know whether the entry existed, so it counts
// as a new entry in the size statistics (TakeStats): they overstate an
// arrangement that receives merges onto existing entries.
func (a *Arrangement) MergeEntry(txn kv.Txn, group, suffix, operand []byte, update func(old []byte, ok bool) ([]byte, error)) error {
	a.mustBeGrouped()
	merger, ok := txn.(kv.Merger)
	if !ok || !a.canMergeBlindly(txn, group) {
		return a.UpdateEntry(txn, group, suffix, update)
	}
	full := a.fullKey(group, suffix)
	if _, _, hit := a.entries.get(full); hit {
		return a.UpdateEntry(txn, group, suffix, update)
	}
	if err := merger.Merge(full, operand); err != nil {
		return fmt.Errorf("arrange: merge: %w", err)
	}
	a.countPut(len(full), len(operand), -1)
	return nil
}

// canMergeBlindly reports whether group's entries are neither cached nor
// known absent, so a write to one need not update the group cache.
func (a *Arrangement) canMergeBlindly(txn kv.Reader, group []byte) bool {
	c := a.groups
	if c.lookup(group, hashKey(group)) != nil {
		return false
	}
	if err := a.checkComplete(txn); err != nil {
		// NB: UpdateEntry meets the same error and returns it.
		return false
	}
	return c.state != completenessFull
}
