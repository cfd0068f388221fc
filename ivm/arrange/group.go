package arrange

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
)

// Grouped arrangements. Many operators read their state one group at a
// time: a join probes every arranged row of one join key, a TopK or window
// reads one partition. A grouped arrangement (Config.Grouped) keys every
// entry as group ++ suffix and caches whole groups: Group returns the
// complete, ordered listing of one group's entries, from memory when the
// group is cached.
//
// Layout. A cached group is one object in the common case: a short key
// (groupKeyHeadBytes) and a small first entry (groupInlineBytes) live
// inside the Group, so the garbage collector traces one object per group
// and a probe touches one or two cache lines after the map.
//
// The group cache follows the point cache's rule: it always equals the
// Txn's view for the groups it holds. Writes (SetEntry, DeleteEntry) go
// to the Txn and update a cached group in place (write-through).
//
// Completeness. The first group operation after the cache was created or
// discarded checks whether the arrangement holds any entry at all. If it
// is empty, the cache is complete: it holds every non-empty group, so a
// group it does not hold is empty and is answered without reading the
// store, and groups written from then on are added to the cache. The cache
// stays complete until it must evict a non-empty group (state outgrew the
// cache) or is discarded; from then on a missing group is read from the
// store (one scan) and cached, evicting the oldest groups first. Eviction
// order depends only on the sequence of operations, so it is
// deterministic.
//
// A group costs one unit of the cache bound for itself (so cached absences
// are bounded too) plus one per entry; a group larger than the whole bound
// is served but not kept.

// GroupEntry is one entry of a group.
type GroupEntry struct {
	// Suffix is the entry's key after the group key; Value its value.
	// Neither may be modified.
	Suffix, Value []byte
}

// Group is the complete listing of one group's entries in key order. It is
// valid until the next write to, or Group call on, its arrangement.
type Group struct {
	// NB: the fields a probe reads (hash, keyLen, head, entries and the
	// inline entry) come first, so a lookup of a small group touches its
	// first two cache lines only.
	hash    uint64
	keyLen  int
	head    [groupKeyHeadBytes]byte
	entries []GroupEntry
	// inline holds the entry of a one-entry group (the common case for a
	// join on a unique key) without a separate allocation, and bytes the
	// key and value of one small entry.
	inline    [1]GroupEntry
	bytes     [groupInlineBytes]byte
	bytesUsed bool
	// bucket is the group key's bucket (partition.BucketOf), computed
	// once when the group is made, so writes to a cached group do not
	// hash its key again.
	bucket partition.Bucket
	// cached is set while the group is held by the cache (an evicted or
	// never-cached group is a private copy).
	cached bool
	// key is the group key when it is longer than head (else head holds
	// all of it and key is empty).
	key string
}

// Entries returns the group's entries in suffix order; they must not be
// modified.
func (g *Group) Entries() []GroupEntry { return g.entries }

// groupInlineBytes is the room for one entry's suffix and value inside a
// Group: a row of a few narrow columns and a weight or two.
const groupInlineBytes = 32

// newEntry copies suffix and value into a new entry, inside g when they
// fit its unused inline bytes.
func (g *Group) newEntry(suffix, value []byte) GroupEntry {
	n := len(suffix) + len(value)
	var buf []byte
	if !g.bytesUsed && n <= groupInlineBytes {
		g.bytesUsed = true
		buf = g.bytes[:n]
	} else {
		buf = make([]byte, n, n+valueSlackBytes)
	}
	copy(buf, suffix)
	copy(buf[len(suffix):], value)
	return GroupEntry{Suffix: buf[:len(suffix):len(suffix)], Value: buf[len(suffix):]}
}

// find returns the position of suffix in g (or where it would go) and
// whether it is there.
func (g *Group) find(suffix []byte) (int, bool) {
	i := sort.Search(len(g.entries), func(i int) bool { return bytes.Compare(g.entries[i].Suffix, suffix) >= 0 })
	return i, i < len(g.entries) && bytes.Equal(g.entries[i].Suffix, suffix)
}

// valueSlackBytes is spare capacity given to a cached value so a value
// that grows by a few bytes (a varint weight crossing a byte boundary) is
// rewritten in place.
const valueSlackBytes = 4

// set inserts or replaces suffix → value (both copied) and reports whether
// the entry is new.
func (g *Group) set(suffix, value []byte) bool {
	i, found := g.find(suffix)
	return g.setAt(i, found, suffix, value)
}

// setAt is set where find(suffix) gave i and found.
func (g *Group) setAt(i int, found bool, suffix, value []byte) bool {
	if found {
		e := &g.entries[i]
		if len(value) <= cap(e.Value) {
			e.Value = append(e.Value[:0], value...)
		} else {
			e.Value = append(make([]byte, 0, len(value)+valueSlackBytes), value...)
		}
		return false
	}
	e := g.newEntry(suffix, value)
	if g.entries == nil {
		g.entries = g.inline[:0]
	}
	g.entries = append(g.entries, GroupEntry{})
	copy(g.entries[i+1:], g.entries[i:])
	g.entries[i] = e
	return true
}

// remove deletes suffix and reports whether it was there.
func (g *Group) remove(suffix []byte) bool {
	i, found := g.find(suffix)
	if !found {
		return false
	}
	copy(g.entries[i:], g.entries[i+1:])
	g.entries[len(g.entries)-1] = GroupEntry{}
	g.entries = g.entries[:len(g.entries)-1]
	return true
}

// completeness of a group cache.
type completeness uint8

const (
	completenessUnknown completeness = iota // not checked since the cache was (re)created
	completenessFull                        // every non-empty group is cached
	completenessPartial                     // a missing group must be read
)

// groupCache holds whole groups. INVARIANT: units = Σ over cached groups of
// 1 + len(entries), and units <= limit after every operation.
type groupCache struct {
	limit int
	units int
	// table indexes the cached groups by key hash (groupSlot).
	table []groupSlot
	n     int
	// admitted is a doorkeeper for a partial cache: a group read from the
	// store is cached only on its second miss since the filter was last
	// reset, so a stream of one-off probes over state much larger than the
	// cache does not churn it.
	admitted []uint64
	misses   int
	// fifo holds cached groups in insertion order from head on; evicted
	// groups stay in it (cached = false) until they reach the head.
	fifo  []*Group
	head  int
	state completeness
	// last is the group lookup found last (it may have been evicted since).
	last *Group
	// scratch serves groups that are neither cached nor kept (an empty
	// group of a complete cache, a group read but not admitted), with
	// loadEntries and loadBytes as its reused backing.
	loadEntries []GroupEntry
	loadBytes   []byte
	scratch     Group
	// prefetched and sink are Prefetch's scratch.
	prefetched []*Group
	sink       uint64
}

func newGroupCache(limit int) *groupCache {
	if limit < 0 {
		limit = 0
	}
	return &groupCache{limit: limit}
}

// groupSlot is an entry of the group cache's table: open addressing with
// linear probing on the key hash, the hash beside the group so a probe
// past other groups does not touch them; the zero slot is empty and
// removal shifts entries back (kv.ProbeDelete), so there are no
// tombstones. Groups whose keys share a hash occupy separate slots.
type groupSlot struct {
	hash  uint64
	group *Group
}

// find returns the table position of g, or of the group with key and
// hash when g is nil, or the empty position where probing stopped.
func (c *groupCache) find(key []byte, hash uint64, g *Group) (uint64, bool) {
	if len(c.table) == 0 {
		return 0, false
	}
	mask := uint64(len(c.table) - 1)
	for i := hash & mask; ; i = (i + 1) & mask {
		s := c.table[i]
		if s.group == nil {
			return i, false
		}
		if s.hash == hash && (s.group == g || (g == nil && s.group.is(key, hash))) {
			return i, true
		}
	}
}

// add puts g (not in the table) into the table.
func (c *groupCache) add(g *Group) {
	if 2*(c.n+1) > len(c.table) {
		old := c.table
		c.table = make([]groupSlot, max(64, 2*len(old)))
		mask := uint64(len(c.table) - 1)
		for _, s := range old {
			if s.group == nil {
				continue
			}
			i := s.hash & mask
			for c.table[i].group != nil {
				i = (i + 1) & mask
			}
			c.table[i] = s
		}
	}
	i, _ := c.find(nil, g.hash, g)
	c.table[i] = groupSlot{hash: g.hash, group: g}
	c.n++
}

// Prefetch touches the table slots of hashes (kv.Hash of group keys), then
// the groups they hold, in passes of independent loads, so that the CPU
// cache misses of a large cache overlap instead of being paid one probe at
// a time. Operators call it for a chunk of PrefetchChunk keys just before
// reading those groups.
func (a *Arrangement) Prefetch(hashes []uint64) {
	c := a.groups
	if c == nil || len(c.table) < prefetchTableMin {
		return
	}
	mask := uint64(len(c.table) - 1)
	groups := c.prefetched[:0]
	for _, h := range hashes {
		if s := c.table[h&mask]; s.hash == h {
			groups = append(groups, s.group)
		}
	}
	var sink uint64
	for _, g := range groups {
		sink += g.hash + uint64(len(g.inline[0].Value))
	}
	c.prefetched, c.sink = groups[:0], sink
}

const (
	// PrefetchChunk is how many keys one Prefetch call should cover:
	// enough independent loads to overlap their misses, few enough that
	// what they bring in stays in the CPU's L2 cache until used.
	PrefetchChunk = 128
	// prefetchTableMin is the table size below which the cache fits in
	// the CPU caches anyway and Prefetch does nothing.
	prefetchTableMin = 1 << 15
)

// groupKeyHeadBytes is how much of a group key a Group holds inline.
const groupKeyHeadBytes = 16

// newGroup returns an empty, uncached group; b is key's bucket.
func newGroup(key []byte, hash uint64, b partition.Bucket) *Group {
	g := &Group{keyLen: len(key), hash: hash, bucket: b}
	if len(key) > groupKeyHeadBytes {
		g.key = string(key)
	}
	copy(g.head[:], key)
	g.entries = g.inline[:0]
	return g
}

// is reports whether g's key is key.
func (g *Group) is(key []byte, hash uint64) bool {
	if g.hash != hash || g.keyLen != len(key) {
		return false
	}
	if len(key) <= groupKeyHeadBytes {
		return string(g.head[:len(key)]) == string(key)
	}
	return g.key == string(key)
}

// lookup returns the cached group with key (nil if none).
func (c *groupCache) lookup(key []byte, hash uint64) *Group {
	// NB: operators read a group and then write it; remembering the last
	// group found saves the second map probe.
	if g := c.last; g != nil && g.cached && g.is(key, hash) {
		return g
	}
	if i, ok := c.find(key, hash, nil); ok {
		g := c.table[i].group
		c.last = g
		return g
	}
	return nil
}

// admit reports whether a group read from the store after a miss should be
// cached (its second miss since the doorkeeper was reset).
func (c *groupCache) admit(hash uint64) bool {
	if c.admitted == nil {
		// Bits per cache unit: enough that unrelated groups rarely share
		// a bit. Reset after as many misses as the cache has units.
		c.admitted = make([]uint64, (c.limit*doorkeeperBitsPerUnit+63)/64)
	}
	bit := hash % uint64(len(c.admitted)*64)
	word, mask := bit/64, uint64(1)<<(bit%64)
	if c.admitted[word]&mask != 0 {
		return true
	}
	c.admitted[word] |= mask
	c.misses++
	if c.misses >= c.limit {
		clear(c.admitted)
		c.misses = 0
	}
	return false
}

// doorkeeperBitsPerUnit sizes the admission filter: 8 bits per cache unit
// keep false admissions rare while the filter stays 1/8 of a uint64 per
// unit. Simulation range: any positive value.
const doorkeeperBitsPerUnit = 8

// unlink removes g from the table.
func (c *groupCache) unlink(g *Group) {
	i, ok := c.find(nil, g.hash, g)
	if !ok {
		panic("arrange: cached group missing from the group table")
	}
	kv.ProbeDelete(c.table, i, func(s groupSlot) uint64 { return s.hash })
	c.n--
}

func (c *groupCache) clear() {
	c.table, c.n = nil, 0
	c.last = nil
	clear(c.admitted)
	c.misses = 0
	for i := c.head; i < len(c.fifo); i++ {
		c.fifo[i].cached = false
	}
	c.fifo = c.fifo[:0]
	c.head = 0
	c.units = 0
	c.state = completenessUnknown
}

// insert caches g (not cached yet) if it can ever fit, evicting the oldest
// groups to make room.
func (c *groupCache) insert(g *Group) {
	need := 1 + len(g.entries)
	if need > c.limit {
		if len(g.entries) > 0 {
			c.state = completenessPartial
		}
		return
	}
	c.makeRoom(need)
	g.cached = true
	c.add(g)
	c.fifo = append(c.fifo, g)
	c.units += need
}

// makeRoom evicts the oldest groups until need more units fit.
func (c *groupCache) makeRoom(need int) {
	for c.units+need > c.limit && c.head < len(c.fifo) {
		g := c.fifo[c.head]
		c.fifo[c.head] = nil
		c.head++
		if g.cached {
			c.evict(g)
		}
	}
	// Compact the queue once most of it is consumed.
	if c.head > 64 && c.head*2 > len(c.fifo) {
		n := copy(c.fifo, c.fifo[c.head:])
		clear(c.fifo[n:])
		c.fifo = c.fifo[:n]
		c.head = 0
	}
}

func (c *groupCache) evict(g *Group) {
	g.cached = false
	c.unlink(g)
	c.units -= 1 + len(g.entries)
	if len(g.entries) > 0 {
		// NB: a non-empty group leaves; the store now knows groups the
		// cache does not.
		c.state = completenessPartial
	}
}

// grew accounts for an entry added to the cached group g, evicting other
// groups (or g itself) to stay within the bound.
func (c *groupCache) grew(g *Group) {
	c.units++
	if c.units > c.limit {
		c.makeRoom(0)
	}
}

// checkComplete decides, once per cache lifetime, whether the arrangement
// is empty (and the cache therefore complete).
func (a *Arrangement) checkComplete(txn kv.Reader) error {
	c := a.groups
	if c.state != completenessUnknown {
		return nil
	}
	empty, err := a.isEmpty(txn)
	if err != nil {
		return err
	}
	c.state = completenessPartial
	if empty && c.limit > 0 {
		c.state = completenessFull
	}
	return nil
}

// isEmpty reports whether the arrangement holds no entry in txn's view.
func (a *Arrangement) isEmpty(txn kv.Reader) (bool, error) {
	empty := true
	err := txn.Scan(a.prefix, kv.PrefixEnd(a.prefix), func(_, _ []byte) error {
		empty = false
		return kv.ErrStop
	})
	if err != nil {
		return false, fmt.Errorf("arrange: scan: %w", err)
	}
	return empty, nil
}

func (a *Arrangement) mustBeGrouped() {
	if a.groups == nil {
		panic("arrange: group operation on an arrangement not configured Grouped")
	}
}

// Group returns every entry whose key starts with group (relative to the
// arrangement prefix), in key order. The result is valid until the next
// write to, or Group call on, the arrangement.
func (a *Arrangement) Group(txn kv.Reader, group []byte) (*Group, error) {
	a.mustBeGrouped()
	c := a.groups
	hash := hashKey(group)
	if g := c.lookup(group, hash); g != nil {
		return g, nil
	}
	if err := a.checkComplete(txn); err != nil {
		return nil, err
	}
	if c.state == completenessFull {
		c.scratch = Group{}
		return &c.scratch, nil
	}
	b := partition.BucketOf(group)
	a.keyBuf = a.appendKey(a.keyBuf[:0], b, group, nil)
	start := a.keyBuf
	n := len(start)
	if c.limit > 0 && c.admit(hash) {
		g := newGroup(group, hash, b)
		err := txn.Scan(start, kv.PrefixEnd(start), func(k, v []byte) error {
			g.entries = append(g.entries, g.newEntry(k[n:], v))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("arrange: scan: %w", err)
		}
		c.insert(g)
		return g, nil
	}
	// NB: a group that is not kept is read into reused scratch space, so
	// a miss allocates nothing that outlives it. Earlier entries stay
	// valid when loadBytes grows: they keep the old array.
	c.loadBytes = c.loadBytes[:0]
	c.scratch = Group{entries: c.loadEntries[:0]}
	err := txn.Scan(start, kv.PrefixEnd(start), func(k, v []byte) error {
		at := len(c.loadBytes)
		c.loadBytes = append(append(c.loadBytes, k[n:]...), v...)
		split := at + len(k) - n
		c.scratch.entries = append(c.scratch.entries, GroupEntry{
			Suffix: c.loadBytes[at:split:split],
			Value:  c.loadBytes[split:len(c.loadBytes):len(c.loadBytes)],
		})
		return nil
	})
	c.loadEntries = c.scratch.entries
	if err != nil {
		return nil, fmt.Errorf("arrange: scan: %w", err)
	}
	return &c.scratch, nil
}

// CachedGroup returns group from memory, when it is cached or known empty
// (complete cache), without reading the store; ok is false otherwise. For
// owners that read a bounded part of a group (a TopK window) and must not
// load a whole large group on a miss.
func (a *Arrangement) CachedGroup(txn kv.Reader, group []byte) (g *Group, ok bool, err error) {
	a.mustBeGrouped()
	c := a.groups
	if g := c.lookup(group, hashKey(group)); g != nil {
		return g, true, nil
	}
	if err := a.checkComplete(txn); err != nil {
		return nil, false, err
	}
	if c.state == completenessFull {
		c.scratch = Group{}
		return &c.scratch, true, nil
	}
	return nil, false, nil
}

// GetEntry reads group ++ suffix, group being the partition key: from a
// cached group, as absent when the cache is complete, and from the store
// otherwise (without caching). On an arrangement that is not Grouped it
// reads through the point cache, like Get. The value must not be modified
// and is valid until the next write.
func (a *Arrangement) GetEntry(txn kv.Reader, group, suffix []byte) ([]byte, bool, error) {
	c := a.groups
	if c == nil {
		return a.getPoint(txn, a.fullKey(group, suffix))
	}
	if g := c.lookup(group, hashKey(group)); g != nil {
		if i, found := g.find(suffix); found {
			return g.entries[i].Value, true, nil
		}
		return nil, false, nil
	}
	if err := a.checkComplete(txn); err != nil {
		return nil, false, err
	}
	if c.state == completenessFull {
		return nil, false, nil
	}
	full := a.fullKey(group, suffix)
	if v, present, hit := a.entries.get(full); hit {
		return v, present, nil
	}
	v, ok, err := txn.Get(full)
	if err != nil {
		return nil, false, fmt.Errorf("arrange: get: %w", err)
	}
	return v, ok, nil
}

// SetEntry writes group ++ suffix → value, group being the partition key;
// oldLen is the previous value's length (-1 if absent), for statistics.
// On an arrangement that is not Grouped it writes through the point
// cache, like Set.
func (a *Arrangement) SetEntry(txn kv.Writer, group, suffix, value []byte, oldLen int) error {
	c := a.groups
	if c == nil {
		return a.setPoint(txn, a.fullKey(group, suffix), value, oldLen)
	}
	hash := hashKey(group)
	g := c.lookup(group, hash)
	b := groupBucket(g, group)
	a.keyBuf = a.appendKey(a.keyBuf[:0], b, group, suffix)
	full := a.keyBuf
	if err := txn.Put(full, value); err != nil {
		return fmt.Errorf("arrange: put: %w", err)
	}
	a.countPut(len(full), len(value), oldLen)
	a.entries.updateCached(full, value, true)
	if g != nil {
		if g.set(suffix, value) {
			c.grew(g)
		}
		return nil
	}
	if c.state == completenessFull {
		// The group was empty; cache it so the cache stays complete.
		g := newGroup(group, hash, b)
		g.set(suffix, value)
		c.insert(g)
	}
	return nil
}

// UpdateEntry replaces the value of group ++ suffix (old; ok false: the
// entry is absent) by what update returns, or deletes the entry when that
// is nil: GetEntry and then SetEntry or DeleteEntry, in one search of a
// cached group. update must not keep or modify old.
func (a *Arrangement) UpdateEntry(txn kv.Txn, group, suffix []byte, update func(old []byte, ok bool) ([]byte, error)) error {
	var g *Group
	if c := a.groups; c != nil {
		g = c.lookup(group, hashKey(group))
	}
	if g == nil {
		old, ok, err := a.GetEntry(txn, group, suffix)
		if err != nil {
			return err
		}
		oldLen := -1
		if ok {
			oldLen = len(old)
		}
		value, err := update(old, ok)
		switch {
		case err != nil:
			return err
		case value == nil:
			return a.DeleteEntry(txn, group, suffix, oldLen)
		}
		return a.SetEntry(txn, group, suffix, value, oldLen)
	}
	i, found := g.find(suffix)
	var old []byte
	oldLen := -1
	if found {
		old = g.entries[i].Value
		oldLen = len(old)
	}
	value, err := update(old, found)
	switch {
	case err != nil:
		return err
	case value == nil:
		return a.DeleteEntry(txn, group, suffix, oldLen)
	}
	// NB: SetEntry's steps, with the group and the entry's place known.
	a.keyBuf = a.appendKey(a.keyBuf[:0], g.bucket, group, suffix)
	full := a.keyBuf
	if err := txn.Put(full, value); err != nil {
		return fmt.Errorf("arrange: put: %w", err)
	}
	a.countPut(len(full), len(value), oldLen)
	a.entries.updateCached(full, value, true)
	if g.setAt(i, found, suffix, value) {
		a.groups.grew(g)
	}
	return nil
}

// DeleteEntry removes group ++ suffix, group being the partition key;
// oldLen is the removed value's length (-1 if it was absent). On an
// arrangement that is not Grouped it writes through the point cache, like
// Delete.
func (a *Arrangement) DeleteEntry(txn kv.Writer, group, suffix []byte, oldLen int) error {
	c := a.groups
	if c == nil {
		return a.deletePoint(txn, a.fullKey(group, suffix), oldLen)
	}
	g := c.lookup(group, hashKey(group))
	b := groupBucket(g, group)
	a.keyBuf = a.appendKey(a.keyBuf[:0], b, group, suffix)
	full := a.keyBuf
	if err := txn.Delete(full); err != nil {
		return fmt.Errorf("arrange: delete: %w", err)
	}
	a.countDelete(len(full), oldLen)
	a.entries.updateCached(full, nil, false)
	if g != nil && g.remove(suffix) {
		c.units--
	}
	return nil
}

// groupBucket is the bucket of group, whose cached group is g (nil when
// not cached): a cached group's, without hashing its key again.
func groupBucket(g *Group, group []byte) partition.Bucket {
	if g != nil {
		return g.bucket
	}
	return partition.BucketOf(group)
}

// hashKey is the group cache's hash of a group key.
func hashKey(key []byte) uint64 { return kv.Hash(key) }

// HashKey is the hash the group cache uses (kv.Hash), for operators that
// index keys the same way.
func HashKey(key []byte) uint64 { return kv.Hash(key) }
