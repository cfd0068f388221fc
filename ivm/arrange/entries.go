package arrange

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
)

// Batched entry reads. An operator that will read single entries of a
// grouped arrangement (GetEntry) for a whole delta — a join adding each
// new row to its own side's state — names them up front with
// PrefetchEntries. The entries whose groups are not cached are read in
// one ordered pass over the store (kv.GetSorted: sorted keys let a slate
// store seek forward, reusing block reads and index positions, instead of
// searching from the top per key) into the arrangement's entry cache,
// which GetEntry consults after the group cache.
//
// The entry cache follows the point cache's rules (cache.go): it is
// bounded (FIFO), holds only what the Txn's view holds (values and known
// absences), is written through by SetEntry and DeleteEntry, and is
// dropped by DiscardCache. An entry evicted before use is simply read
// again by GetEntry, so a delta larger than the cache is still correct.

// entryPrefetch is PrefetchEntries' scratch.
type entryPrefetch struct {
	buf  []byte
	keys [][]byte
}

// PrefetchEntries loads the entries group[i] ++ suffix[i] that GetEntry
// would read from the store (their group is not cached and the cache is
// not complete) in one ordered pass, into the entry cache.
func (a *Arrangement) PrefetchEntries(txn kv.Reader, groups, suffixes [][]byte) error {
	a.mustBeGrouped()
	c := a.groups
	if c.limit == 0 || len(groups) == 0 {
		return nil
	}
	if err := a.checkComplete(txn); err != nil {
		return err
	}
	if c.state == completenessFull {
		return nil
	}
	p := &a.prefetch
	p.buf, p.keys = p.buf[:0], p.keys[:0]
	var spans []int32
	for i, g := range groups {
		if c.lookup(g, hashKey(g)) != nil {
			continue
		}
		p.buf = a.appendKey(p.buf, partition.BucketOf(g), g, suffixes[i])
		spans = append(spans, int32(len(p.buf)))
	}
	at := int32(0)
	for _, end := range spans {
		key := p.buf[at:end:end]
		at = end
		if _, _, hit := a.entries.get(key); !hit {
			p.keys = append(p.keys, key)
		}
	}
	if len(p.keys) == 0 {
		return nil
	}
	slices.SortFunc(p.keys, bytes.Compare)
	p.keys = slices.CompactFunc(p.keys, func(x, y []byte) bool { return bytes.Equal(x, y) })
	err := kv.GetSorted(txn, p.keys, func(i int, v []byte, ok bool) error {
		a.entries.put(p.keys[i], v, ok)
		return nil
	})
	if err != nil {
		return fmt.Errorf("arrange: get: %w", err)
	}
	return nil
}

// EntryPrefetchBatch is how many entries an operator should name per
// PrefetchEntries call: a large batch makes the ordered pass cheaper per
// key, but a batch must fit in the entry cache with room to spare, or its
// first entries are evicted before they are read.
func (a *Arrangement) EntryPrefetchBatch() int {
	return max(PrefetchChunk, a.groups.limit/4)
}

// NeedsEntryPrefetch reports whether PrefetchEntries may load anything:
// false when the arrangement's cache is complete (every entry is known)
// or disabled, so an operator can skip building the keys.
func (a *Arrangement) NeedsEntryPrefetch() bool {
	c := a.groups
	return c != nil && c.limit > 0 && c.state != completenessFull
}

// updateCached rewrites key's entry if it is cached and adds nothing
// (write-through without allocation).
func (c *cache) updateCached(key, value []byte, present bool) {
	if c.n == 0 {
		return
	}
	if i, ok := c.find(key, kv.Hash(key)); ok {
		c.rewrite(i, value, present)
	}
}
