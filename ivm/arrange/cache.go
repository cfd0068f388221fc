package arrange

import "github.com/rockstream/rockstream/ivm/kv"

// cache is a bounded map from full keys to values (or known absence) with
// FIFO eviction: entries live in a ring of slots; when the ring is full,
// the oldest slot is evicted for the new key. Eviction order depends only
// on the access sequence, so it is deterministic.
//
// Like the group cache (group.go) it may be complete: when the arrangement
// was empty at the cache's first miss, every key written since is cached,
// so a miss means absent and costs no store read, until a present entry is
// evicted (or dropped) or the cache is cleared.
//
// Layout. The cache holds no pointers but its three arrays, so the garbage
// collector never traces its entries, and a lookup touches about three
// cache lines:
//
//   - table: open addressing with linear probing on kv.Hash; an entry is
//     the hash's high 32 bits (its fingerprint, which also picks the home
//     position) and slot+1; 0 is empty. Removal shifts entries back
//     (kv.ProbeDelete), so there are no tombstones.
//   - slots: the ring, one cacheSlot per entry (hash, key and value
//     offsets into the arena).
//   - arena: keys and values, append-only: a rewritten value is appended
//     and the old bytes become garbage, reclaimed by copying the live ones
//     into a new arena. NB: bytes in an arena are never overwritten, so a
//     value returned by get stays unchanged while the caller holds it.
type cache struct {
	limit   int
	table   []uint64
	n       int
	slots   []cacheSlot
	hand    int
	arena   []byte
	garbage int
	state   completeness
}

// cacheSlot is one ring slot. live is false for a slot whose entry was
// dropped (it is reused when the hand comes round).
type cacheSlot struct {
	hash                   uint64
	keyOff, keyLen, valOff int32
	valLen                 int32
	present, live          bool
}

func newCache(limit int) *cache {
	if limit < 0 {
		limit = 0
	}
	return &cache{limit: limit}
}

func (c *cache) key(s *cacheSlot) []byte { return c.arena[s.keyOff : s.keyOff+s.keyLen] }

func (c *cache) value(s *cacheSlot) []byte {
	end := s.valOff + s.valLen
	return c.arena[s.valOff:end:end]
}

// find returns the table position of key's entry, or the empty position
// where probing stopped.
func (c *cache) find(key []byte, h uint64) (uint64, bool) {
	if len(c.table) == 0 {
		return 0, false
	}
	mask := uint64(len(c.table) - 1)
	fp := h >> 32
	for i := fp & mask; ; i = (i + 1) & mask {
		e := c.table[i]
		if e == 0 {
			return i, false
		}
		if e>>32 == fp {
			if s := &c.slots[uint32(e)-1]; s.hash == h && string(c.key(s)) == string(key) {
				return i, true
			}
		}
	}
}

func (c *cache) get(key []byte) ([]byte, bool, bool) {
	if c.limit == 0 {
		return nil, false, false
	}
	i, ok := c.find(key, kv.Hash(key))
	if !ok {
		return nil, false, false
	}
	s := &c.slots[uint32(c.table[i])-1]
	return c.value(s), s.present, true
}

// setValue points slot s at a copy of value (the old bytes become
// garbage).
func (c *cache) setValue(s *cacheSlot, value []byte, present bool) {
	c.compact()
	c.garbage += int(s.valLen)
	s.valOff, s.valLen, s.present = int32(len(c.arena)), int32(len(value)), present
	c.arena = append(c.arena, value...)
}

// rewrite sets the value of the cached entry at table position i, or
// drops the entry when the arena has no room for it.
func (c *cache) rewrite(i uint64, value []byte, present bool) {
	slot := int(uint32(c.table[i]) - 1)
	if !c.room(len(value)) {
		c.unlink(slot)
		c.lost()
		return
	}
	c.setValue(&c.slots[slot], value, present)
}

// lost records that an entry the store holds is no longer cached.
func (c *cache) lost() {
	if c.state == completenessFull {
		c.state = completenessPartial
	}
}

// room reports whether n more bytes fit in the arena (offsets are int32),
// compacting it first if that makes them fit.
func (c *cache) room(n int) bool {
	if len(c.arena)+n <= cacheArenaBytesMax {
		return true
	}
	c.compactNow()
	return len(c.arena)+n <= cacheArenaBytesMax
}

// cacheArenaBytesMax bounds a cache's arena so its offsets fit in int32;
// an entry that does not fit is not cached.
const cacheArenaBytesMax = 1<<31 - 1

// put caches key → value (copied), evicting the oldest entry when full.
func (c *cache) put(key []byte, value []byte, present bool) {
	if c.limit == 0 {
		return
	}
	h := kv.Hash(key)
	if i, ok := c.find(key, h); ok {
		c.rewrite(i, value, present)
		return
	}
	if !c.room(len(key) + len(value)) {
		if present {
			c.lost()
		}
		return
	}
	var slot int
	if len(c.slots) < c.limit {
		slot = len(c.slots)
		c.slots = append(c.slots, cacheSlot{})
	} else {
		slot = c.hand
		c.hand = (c.hand + 1) % c.limit
		if s := &c.slots[slot]; s.live {
			if s.present {
				c.state = completenessPartial
			}
			c.unlink(slot)
		}
	}
	if 2*(c.n+1) > len(c.table) {
		c.grow()
	}
	c.compact()
	s := &c.slots[slot]
	*s = cacheSlot{hash: h, keyOff: int32(len(c.arena)), keyLen: int32(len(key)), live: true}
	c.arena = append(c.arena, key...)
	c.setValue(s, value, present)
	i, _ := c.find(key, h)
	c.table[i] = h>>32<<32 | uint64(slot+1)
	c.n++
}

// unlink removes the live entry in slot from the table and marks its
// bytes garbage.
func (c *cache) unlink(slot int) {
	s := &c.slots[slot]
	mask := uint64(len(c.table) - 1)
	want := s.hash>>32<<32 | uint64(slot+1)
	i := (s.hash >> 32) & mask
	for c.table[i] != want {
		i = (i + 1) & mask
	}
	kv.ProbeDelete(c.table, i, func(e uint64) uint64 { return e >> 32 })
	c.n--
	c.garbage += int(s.keyLen + s.valLen)
	s.live, s.keyLen, s.valLen = false, 0, 0
}

// grow doubles the table (or makes the first one) and reinserts entries.
func (c *cache) grow() { c.table = kv.GrowTable(c.table) }

// compact copies the live keys and values into a new arena once most of
// the arena is garbage.
func (c *cache) compact() {
	if c.garbage < cacheArenaGarbageMinBytes || 2*c.garbage < len(c.arena) {
		return
	}
	c.compactNow()
}

func (c *cache) compactNow() {
	arena := make([]byte, 0, len(c.arena)-c.garbage+cacheArenaGarbageMinBytes)
	for i := range c.slots {
		s := &c.slots[i]
		if !s.live {
			continue
		}
		key, value := c.key(s), c.value(s)
		s.keyOff = int32(len(arena))
		arena = append(arena, key...)
		s.valOff = int32(len(arena))
		arena = append(arena, value...)
	}
	c.arena, c.garbage = arena, 0
}

// cacheArenaGarbageMinBytes is the garbage a cache's arena holds at least
// before it is compacted, so small caches do not copy for every write.
const cacheArenaGarbageMinBytes = 64 << 10

// update changes the entry for key if it is cached (write-through). Other
// keys are added only while the cache has room (write-allocate without
// eviction): state that fits in the cache is then served from it from its
// first write on, while a stream of new keys — a join's arrangement
// growing — never evicts what is cached. A complete cache adds every
// written key (evicting, which ends completeness), so it stays complete
// while the state fits.
func (c *cache) update(key []byte, value []byte, present bool) {
	if c.limit == 0 {
		return
	}
	if i, ok := c.find(key, kv.Hash(key)); ok {
		c.rewrite(i, value, present)
		return
	}
	if present && (len(c.slots) < c.limit || c.state == completenessFull) {
		c.put(key, value, true)
	}
}

func (c *cache) clear() {
	c.table, c.n = nil, 0
	c.slots, c.hand = c.slots[:0], 0
	c.arena, c.garbage = nil, 0
	c.state = completenessUnknown
}

// drop forgets key (its ring slot is reused when the hand comes round).
func (c *cache) drop(key []byte) {
	if c.limit == 0 {
		return
	}
	if i, ok := c.find(key, kv.Hash(key)); ok {
		c.unlink(int(uint32(c.table[i]) - 1))
	}
	// NB: key's value is no longer known, so a miss no longer means
	// absent.
	c.lost()
}
