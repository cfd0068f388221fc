package op

import (
	"bytes"
	"encoding/binary"

	"github.com/rockstream/rockstream/ivm/kv"
)

// hashKey hashes a group key (fixed, so cache behaviour is deterministic).
func hashKey(k []byte) uint64 { return kv.Hash(k) }

// linCache is the Aggregate's bounded cache of decoded group words. It is
// pointer-free (the garbage collector never scans it) and laid out so a
// lookup touches about two cache lines:
//
//   - table: open addressing with linear probing; an entry is the key
//     hash's high 32 bits (its fingerprint, which also picks the home
//     position) and slot+1; 0 is empty. Deletion shifts entries back, so
//     there are no tombstones.
//   - data: one record of linRecordHead+words int64s per slot:
//     [hash, keyLen<<32|keyOff, valueLen<<1|found, stamp<<32|group,
//     key bytes 0-7, key bytes 8-15, words...]; keys up to 16 bytes live
//     in the record, longer ones in the keys arena.
//
// A second key with the same 64-bit hash is simply not cached. Eviction is
// CLOCK-style over slots not pinned by the current step (stamp), so it
// depends only on the access sequence.
type linCache struct {
	limit, words, rec int
	table             []uint64
	n                 int
	data              []int64
	slots             int
	keys              []byte
	garbage           int
	hand              int
	stamp             uint32
	// prefetched and sink are prefetch's scratch.
	prefetched []uint64
	sink       int64
}

const (
	linRecordHead = 6
	linInlineKey  = 16
)

func (c *linCache) init(limit, words int) {
	c.limit, c.words, c.rec = limit, words, linRecordHead+words
	c.clear()
}

// clear drops every entry (arrange.OnDiscardCache).
func (c *linCache) clear() {
	c.table, c.n = nil, 0
	c.data, c.slots, c.keys = c.data[:0], 0, c.keys[:0]
	c.garbage, c.hand = 0, 0
}

// nextStep starts a step: slots pinned by the previous one are released.
func (c *linCache) nextStep() { c.stamp++ }

func (c *linCache) record(slot int32) []int64 {
	return c.data[int(slot)*c.rec : int(slot+1)*c.rec]
}

func (c *linCache) wordsOf(slot int32) []int64 { return c.record(slot)[linRecordHead:] }

// foundOf reports whether the slot's key exists in the store and its
// stored value length.
func (c *linCache) foundOf(slot int32) (bool, int) {
	v := c.record(slot)[2]
	return v&1 == 1, int(v >> 1)
}

// pinned returns the step group a slot is pinned to, if the current step
// touched it.
func (c *linCache) pinned(slot int32) (int32, bool) {
	v := uint64(c.record(slot)[3])
	return int32(uint32(v)), uint32(v>>32) == c.stamp
}

func (c *linCache) pin(slot, group int32) {
	c.record(slot)[3] = int64(uint64(c.stamp)<<32 | uint64(uint32(group)))
}

// packKey packs a key of at most linInlineKey bytes into two words.
func packKey(key []byte) (int64, int64) {
	var b [linInlineKey]byte
	copy(b[:], key)
	return int64(binary.LittleEndian.Uint64(b[:8])), int64(binary.LittleEndian.Uint64(b[8:]))
}

func (c *linCache) keyEqual(r []int64, key []byte) bool {
	kl := int(uint64(r[1]) >> 32)
	if kl != len(key) {
		return false
	}
	if kl <= linInlineKey {
		k0, k1 := packKey(key)
		return r[4] == k0 && r[5] == k1
	}
	off := int(uint32(r[1]))
	return bytes.Equal(c.keys[off:off+kl], key)
}

func fingerprint(h uint64) uint64 { return h >> 32 }

// find returns the table position of the entry for hash h whose record
// satisfies match, or the empty position where probing stopped.
func (c *linCache) find(h uint64, match func(r []int64) bool) (uint64, bool) {
	mask := uint64(len(c.table) - 1)
	fp := fingerprint(h)
	for i := fp & mask; ; i = (i + 1) & mask {
		e := c.table[i]
		if e == 0 {
			return i, false
		}
		if e>>32 == fp && match(c.record(int32(uint32(e))-1)) {
			return i, true
		}
	}
}

func (c *linCache) lookup(key []byte, h uint64) (int32, bool) {
	if c.limit == 0 || c.n == 0 {
		return -1, false
	}
	mask := uint64(len(c.table) - 1)
	fp := fingerprint(h)
	for i := fp & mask; ; i = (i + 1) & mask {
		e := c.table[i]
		if e == 0 {
			return -1, false
		}
		if e>>32 == fp {
			slot := int32(uint32(e)) - 1
			if r := c.record(slot); uint64(r[0]) == h && c.keyEqual(r, key) {
				return slot, true
			}
		}
	}
}

// grow doubles the table (or makes the first one) and reinserts entries.
func (c *linCache) grow() { c.table = kv.GrowTable(c.table) }

// remove deletes the table entry at position i.
func (c *linCache) remove(i uint64) {
	kv.ProbeDelete(c.table, i, func(e uint64) uint64 { return e >> 32 })
}

// insert caches key → words, pinned to group gi of the current step, and
// returns its slot, or -1 if it was not cached: the hash is taken by
// another key, or the cache is full and evict is false (or every slot is
// pinned).
func (c *linCache) insert(key []byte, h uint64, words []int64, found bool, valueLen int, evict bool, gi int32) int32 {
	if c.limit == 0 {
		return -1
	}
	if 2*(c.n+1) > len(c.table) {
		c.grow()
	}
	if _, taken := c.find(h, func(r []int64) bool { return uint64(r[0]) == h }); taken {
		return -1
	}
	var slot int32
	if c.slots < c.limit {
		slot = int32(c.slots)
		c.slots++
		c.data = append(c.data, make([]int64, c.rec)...)
	} else {
		if !evict {
			return -1
		}
		slot = -1
		for range c.limit {
			r := c.record(int32(c.hand))
			if uint32(uint64(r[3])>>32) != c.stamp {
				slot = int32(c.hand)
				victim := uint64(r[0])
				i, _ := c.find(victim, func(x []int64) bool { return &x[0] == &r[0] })
				c.remove(i)
				c.n--
				if kl := int(uint64(r[1]) >> 32); kl > linInlineKey {
					c.garbage += kl
				}
				r[1] = 0
			}
			c.hand = (c.hand + 1) % c.limit
			if slot >= 0 {
				break
			}
		}
		if slot < 0 {
			return -1
		}
	}
	r := c.record(slot)
	r[0] = int64(h)
	r[1] = int64(uint64(len(key)) << 32)
	if len(key) <= linInlineKey {
		r[4], r[5] = packKey(key)
	} else {
		if c.garbage > len(c.keys)/2 && c.garbage > 1<<16 {
			c.compactKeys()
		}
		r[1] |= int64(len(c.keys))
		c.keys = append(c.keys, key...)
	}
	r[2] = int64(uint64(max(valueLen, 0))<<1) | b2i(found)
	c.pin(slot, gi)
	copy(r[linRecordHead:], words)
	i, _ := c.find(h, func([]int64) bool { return false })
	c.table[i] = fingerprint(h)<<32 | uint64(slot+1)
	c.n++
	return slot
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// compactKeys rewrites the long-key arena without evicted keys.
func (c *linCache) compactKeys() {
	keys := make([]byte, 0, len(c.keys)-c.garbage)
	for s := range c.slots {
		r := c.record(int32(s))
		kl := int(uint64(r[1]) >> 32)
		if kl <= linInlineKey {
			continue
		}
		off := int(uint32(r[1]))
		r[1] = int64(uint64(kl)<<32 | uint64(len(keys)))
		keys = append(keys, c.keys[off:off+kl]...)
	}
	c.keys, c.garbage = keys, 0
}

// store records a group's new words in its slot (if cached).
func (c *linCache) store(slot int32, words []int64, found bool, valueLen int) {
	if slot < 0 {
		return
	}
	r := c.record(slot)
	copy(r[linRecordHead:], words)
	r[2] = int64(uint64(max(valueLen, 0))<<1) | b2i(found)
}

// prefetch touches the table entries of hashes, then the records they
// point to, in two passes of independent loads, so that the cache misses
// of a large cache overlap instead of being paid one lookup at a time.
// Callers pass a chunk of at most prefetchChunk hashes just before using
// them: touching a whole 10K-row delta up front evicted its first entries
// from the CPU cache again before they were used.
func (c *linCache) prefetch(hashes []uint64) {
	if len(c.table) < prefetchTableMin {
		return
	}
	mask := uint64(len(c.table) - 1)
	ents := c.prefetched[:0]
	for _, h := range hashes {
		ents = append(ents, c.table[fingerprint(h)&mask])
	}
	var sink int64
	for i, e := range ents {
		if e != 0 && e>>32 == fingerprint(hashes[i]) {
			at := int(uint32(e)-1) * c.rec
			sink += c.data[at] + c.data[at+c.rec-1]
		}
	}
	c.prefetched, c.sink = ents, sink
}

// prefetchSlots touches the records of slots (negative: not cached), as
// prefetch does, before a pass writes them back.
func (c *linCache) prefetchSlots(slots []int32) {
	if len(c.table) < prefetchTableMin {
		return
	}
	var sink int64
	for _, s := range slots {
		if s >= 0 {
			at := int(s) * c.rec
			sink += c.data[at] + c.data[at+c.rec-1]
		}
	}
	c.sink += sink
}

const (
	// prefetchChunk is how many lookups one prefetch pass covers: enough
	// independent loads to overlap their misses, few enough that what
	// they bring in (about three cache lines each) stays in the CPU's L2
	// cache until used.
	prefetchChunk = 128
	// prefetchTableMin is the table size below which the cache fits in
	// the CPU caches anyway and prefetching is skipped.
	prefetchTableMin = 1 << 15
)
