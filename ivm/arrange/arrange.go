// Package arrange holds arrangements: indexed Z-sets and per-key operator
// state stored in ivm/kv under the shard key prefixes of spec §5.1/§6.
//
// Every key an arrangement writes is
//
//	namespace(1) kind(1) op_id(16) bucket(2) partition_key(var) suffix(var)
//
// where namespace is kv.PrefixOpState (0x01), kv.PrefixOpIndex (0x02) or
// kv.PrefixViewOutput (0x03), kind distinguishes the arrangements of one
// operator (spec §6: 0xAG aggregate, 0xJL/0xJR join sides, ...), op_id
// is the operator's stable 16-byte id, and bucket is the virtual bucket
// of the partition key (partition.BucketOf, big-endian). All writes go to
// the epoch's kv.Txn, so they land in the epoch's ONE write batch; nothing
// is held only in memory, so a new circuit over the same store continues
// where the old one stopped (no recomputation after a restart).
//
// Buckets. The partition key is the part of the key an exchange in front
// of the operator would route by, so that when state is spread over
// shards every key of one bucket is on the shard that owns the bucket,
// and all state of one bucket of one operator is the one contiguous range
// namespace kind op_id bucket — a bucket moves between shards by range
// scans, never by decoding keys. Callers name the partition key: it is
// the whole key of Get, Set, Delete, AddWeight and Merge, and the group
// of the Entry methods, Group and ScanGroup (group ++ suffix keys). The
// operators use:
//
//	Aggregate            group key (keyenc of the GROUP BY columns; empty
//	                     for a global aggregate), for its accumulators and
//	                     for its MIN/MAX/ordered-set multisets (group ++
//	                     call ++ value)
//	Join                 join key (keyenc of the key columns); the NOT IN
//	                     right-side totals are global: empty partition key
//	Distinct, SetOp      the whole row's keyenc key (the state's key)
//	TopK, Window         the PARTITION BY key
//	Session              the session key (keyenc of its key columns)
//	Integrate, Delay,    the stored row (zset.EncodeRow): their state has
//	Differentiate        no other key
//	view outputs         the stored row (zset.EncodeRow, the whole row: a
//	                     view output has no key, and rows that differ in
//	                     representation are distinct entries anyway)
//
// A lookup by partition key (a join probe, a group's scan) computes the
// key's bucket and reads one range; a full scan (Scan: backfill, reading a
// view) reads the buckets in order, each in key order, which is
// deterministic but is not key order across buckets.
//
// RULE: changing this layout changes KeyFormat, which every circuit's
// state format record includes, so state written in another layout is
// rebuilt rather than misread.
//
// Reads go through a bounded per-arrangement cache (cacheEntriesMax) of
// values read from the store; a grouped arrangement caches whole groups
// instead (group.go). Writes update cached keys (write-through) and
// add new keys only while the cache has room (never evicting for a write),
// so the cache always equals the Txn's view for the keys it holds. If the owner throws an epoch's write batch away instead of
// committing it, it must call DiscardCache (circuit.Circuit.DiscardCaches).
package arrange

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
)

// KeyFormat names the key layout above in state format records
// (circuit.StateFormat): 2 added the bucket after op_id (1 had none).
const KeyFormat = "keys=bucketed/2"

// ID is an operator's stable 16-byte id (spec §6: op_id).
type ID [16]byte

// MakeID builds an id from a circuit id and a node number; the compiler may
// also assign ids directly.
func MakeID(circuitID uint64, node uint64) ID {
	var id ID
	binary.BigEndian.PutUint64(id[:8], circuitID)
	binary.BigEndian.PutUint64(id[8:], node)
	return id
}

func (id ID) String() string { return fmt.Sprintf("%x", id[:]) }

// Arrangement kinds (the second key byte). Values are ours; spec §6 names
// them symbolically (0xAG, 0xJL, ...).
const (
	KindAggregate byte = 0xA1 // group key → accumulator state
	KindMultiset  byte = 0xA2 // group key, value → weight (MIN/MAX/DISTINCT aggregates)
	KindAggOutput byte = 0xA3 // group key → last emitted row (global aggregate marker)
	// KindWindowClose is a windowed aggregate's close index (close time,
	// group key → nothing): global state, under the empty partition key,
	// so one scan reads the groups whose window the watermark passed.
	KindWindowClose byte = 0xA4
	KindJoinLeft    byte = 0xB1 // join key, row → words[weight, weight·match count]
	KindJoinRight   byte = 0xB2
	KindJoinMeta    byte = 0xB3 // global counters (null-aware anti join)
	KindDistinct    byte = 0xC1 // row → weights per input
	// KindRecursiveRows and KindRecursiveSupport are a recursive query's
	// relation (row → row) and its derivation counts (row → weight, row).
	KindRecursiveRows    byte = 0xC2
	KindRecursiveSupport byte = 0xC3
	KindTopK             byte = 0xD1 // partition key, row → weight
	KindWindow           byte = 0xD2 // partition key, row → weight (window functions)
	// KindTemporal is a temporal filter's activation and expiry indexes
	// (deadline, row → weight) and its last applied time: global state,
	// under the empty partition key, so one scan reads it in deadline order.
	KindTemporal    byte = 0xD3
	KindSession     byte = 0xD4 // key, time, row → weight (session windows)
	KindIntegral    byte = 0xE1 // row → weight (Integrate)
	KindPrevious    byte = 0xE2 // row → weight (Delay, Differentiate)
	KindViewRows    byte = 0xF1 // view output rows
	KindViewErrors  byte = 0xF2 // view evaluation errors
	KindViewMarkers byte = 0xF3
)

// cacheEntriesMaxDefault bounds each arrangement's read cache. Sized so a
// 1K-group aggregate stays fully cached while a circuit of a few dozen
// operators stays under ~100 MiB with small rows. Simulation range: 0..1<<16.
const cacheEntriesMaxDefault = 1 << 16

// Arrangement is one operator's keyed state.
type Arrangement struct {
	prefix []byte
	cache  *cache
	// groups is the group cache of a grouped arrangement (nil otherwise).
	groups *groupCache
	// entries caches single entries of a grouped arrangement whose groups
	// are not cached, loaded by PrefetchEntries (entries.go).
	entries *cache
	// prefetch is PrefetchEntries' scratch.
	prefetch entryPrefetch
	// keyBuf is scratch space for building full keys.
	keyBuf []byte
	// Rows and Bytes count live entries (keys) and their key+value bytes,
	// maintained by writes that know the previous value.
	rowsDelta, bytesDelta int64
	// onDiscard are called by DiscardCache (see OnDiscardCache).
	onDiscard []func()
}

// Config configures an arrangement.
type Config struct {
	// Namespace is kv.PrefixOpState, kv.PrefixOpIndex or kv.PrefixViewOutput.
	Namespace byte
	Kind      byte
	ID        ID
	// CacheEntriesMax bounds the read cache; 0 means the default, negative
	// disables caching. For a grouped arrangement it bounds the cached
	// groups plus their entries.
	CacheEntriesMax int
	// Grouped makes the arrangement hold group ++ suffix keys, read a group
	// at a time through Group and written through SetEntry/DeleteEntry
	// (group.go). Set and Delete are not allowed on it.
	Grouped bool
}

// New returns an arrangement.
func New(cfg Config) *Arrangement {
	prefix := make([]byte, 0, 18)
	prefix = append(prefix, cfg.Namespace, cfg.Kind)
	prefix = append(prefix, cfg.ID[:]...)
	limit := cfg.CacheEntriesMax
	if limit == 0 {
		limit = cacheEntriesMaxDefault
	}
	if cfg.Grouped {
		return &Arrangement{prefix: prefix, cache: newCache(-1), groups: newGroupCache(limit), entries: newCache(limit)}
	}
	return &Arrangement{prefix: prefix, cache: newCache(limit)}
}

// Prefix is the key prefix of every entry.
func (a *Arrangement) Prefix() []byte { return a.prefix }

// fullKey builds the store key of part ++ suffix (part the partition key)
// in the arrangement's scratch buffer.
func (a *Arrangement) fullKey(part, suffix []byte) []byte {
	a.keyBuf = a.appendKey(a.keyBuf[:0], partition.BucketOf(part), part, suffix)
	return a.keyBuf
}

// appendKey appends the store key of part ++ suffix, whose bucket is b.
func (a *Arrangement) appendKey(dst []byte, b partition.Bucket, part, suffix []byte) []byte {
	dst = partition.AppendBucket(append(dst, a.prefix...), b)
	return append(append(dst, part...), suffix...)
}

// AppendKey appends to dst the store key of key, its own partition key
// (as for Get and Set), for owners that write an arrangement's keys
// themselves (a view's sink, which holds its keys as strings).
func (a *Arrangement) AppendKey(dst []byte, key string) []byte {
	dst = append(dst, a.prefix...)
	at := len(dst)
	dst = append(append(dst, 0, 0), key...)
	partition.PutBucket(dst[at:], partition.BucketOf(dst[at+partition.BucketBytes:]))
	return dst
}

// AppendPointKey appends to dst the store key Get and Set use for key (its
// own partition key), for owners that read many keys in one ordered pass
// (kv.GetSorted) themselves. The key follows the first PointKeyHead bytes.
func (a *Arrangement) AppendPointKey(dst, key []byte) []byte {
	return a.appendKey(dst, partition.BucketOf(key), key, nil)
}

// PointKeyHead is the length of a store key's head before the key
// (AppendPointKey): the arrangement prefix and the bucket.
func (a *Arrangement) PointKeyHead() int { return len(a.prefix) + partition.BucketBytes }

// keyHeadBytes is the length of every key before its partition key:
// namespace, kind, op id and bucket.
const keyHeadBytes = 2 + len(ID{}) + partition.BucketBytes

// Get reads key (relative to the arrangement prefix, and its own
// partition key). The returned value must not be modified.
func (a *Arrangement) Get(txn kv.Reader, key []byte) ([]byte, bool, error) {
	return a.getPoint(txn, a.fullKey(key, nil))
}

// getPoint reads the store key full through the point cache.
func (a *Arrangement) getPoint(txn kv.Reader, full []byte) ([]byte, bool, error) {
	if v, present, hit := a.cache.get(full); hit {
		return v, present, nil
	}
	if a.cache.state == completenessUnknown && a.cache.limit > 0 {
		empty, err := a.isEmpty(txn)
		if err != nil {
			return nil, false, err
		}
		a.cache.state = completenessPartial
		if empty {
			a.cache.state = completenessFull
		}
	}
	if a.cache.state == completenessFull {
		return nil, false, nil
	}
	v, ok, err := txn.Get(full)
	if err != nil {
		return nil, false, fmt.Errorf("arrange: get: %w", err)
	}
	if ok {
		// NB: only values read from the store are cached (not absences,
		// not fresh writes): a stream of new keys — a join's arrangement
		// growing — then never churns the cache. The caller gets the
		// cache's copy (or its own), never the Txn's slice, which the
		// next write may invalidate.
		a.cache.put(full, v, true)
		if cached, _, hit := a.cache.get(full); hit {
			return cached, true, nil
		}
		v = append([]byte(nil), v...)
	}
	return v, ok, nil
}

// Set writes key → value (key is its own partition key); old tells
// whether the key existed with oldLen bytes of value (for statistics; pass
// -1 when unknown).
func (a *Arrangement) Set(txn kv.Writer, key, value []byte, oldLen int) error {
	a.mustNotBeGrouped()
	return a.setPoint(txn, a.fullKey(key, nil), value, oldLen)
}

// setPoint writes the store key full through the point cache.
func (a *Arrangement) setPoint(txn kv.Writer, full, value []byte, oldLen int) error {
	if err := txn.Put(full, value); err != nil {
		return fmt.Errorf("arrange: put: %w", err)
	}
	a.countPut(len(full), len(value), oldLen)
	a.cache.update(full, value, true)
	return nil
}

// Delete removes key; oldLen is the removed value's length (-1 if the key
// was absent, which makes the call a no-op for statistics).
func (a *Arrangement) Delete(txn kv.Writer, key []byte, oldLen int) error {
	a.mustNotBeGrouped()
	return a.deletePoint(txn, a.fullKey(key, nil), oldLen)
}

// deletePoint deletes the store key full through the point cache.
func (a *Arrangement) deletePoint(txn kv.Writer, full []byte, oldLen int) error {
	if err := txn.Delete(full); err != nil {
		return fmt.Errorf("arrange: delete: %w", err)
	}
	a.countDelete(len(full), oldLen)
	a.cache.update(full, nil, false)
	return nil
}

// Scan calls fn for every entry, bucket by bucket and in key order within
// a bucket (deterministic, but not key order overall); fn gets the key
// relative to the arrangement prefix and bucket (partition key ++ suffix).
// Scans bypass the caches (which are write-through, so the Txn is always
// current).
func (a *Arrangement) Scan(txn kv.Reader, fn func(key, value []byte) error) error {
	err := txn.Scan(a.prefix, kv.PrefixEnd(a.prefix), func(k, v []byte) error {
		if len(k) < keyHeadBytes {
			return fmt.Errorf("arrange: key %x carries no bucket", k)
		}
		return fn(k[keyHeadBytes:], v)
	})
	if err != nil && err != kv.ErrStop {
		return fmt.Errorf("arrange: scan: %w", err)
	}
	return nil
}

// ScanGroup calls fn, in key order, for every entry group ++ suffix whose
// suffix starts with suffixPrefix, group being the partition key: one
// contiguous range of group's bucket. fn gets the suffix.
func (a *Arrangement) ScanGroup(txn kv.Reader, group, suffixPrefix []byte, fn func(suffix, value []byte) error) error {
	return a.ScanGroupFrom(txn, group, suffixPrefix, suffixPrefix, fn)
}

// ScanGroupFrom is ScanGroup starting at the suffix from (which starts
// with suffixPrefix) instead of at the first entry: a scan that resumes
// past entries deleted earlier does not walk their tombstones again.
func (a *Arrangement) ScanGroupFrom(txn kv.Reader, group, suffixPrefix, from []byte, fn func(suffix, value []byte) error) error {
	prefix := a.appendKey(nil, partition.BucketOf(group), group, suffixPrefix)
	n := len(prefix) - len(suffixPrefix)
	start := append(append([]byte(nil), prefix[:n]...), from...)
	err := txn.Scan(start, kv.PrefixEnd(prefix), func(k, v []byte) error {
		return fn(k[n:], v)
	})
	if err != nil && err != kv.ErrStop {
		return fmt.Errorf("arrange: scan: %w", err)
	}
	return nil
}

// AddWeight adds dw to the int64 weight stored under key (deleting the key
// when the weight reaches zero) and returns the old and new weights.
func (a *Arrangement) AddWeight(txn kv.Txn, key []byte, dw int64) (oldWeight, newWeight int64, err error) {
	v, ok, err := a.Get(txn, key)
	if err != nil {
		return 0, 0, err
	}
	oldLen := -1
	if ok {
		oldLen = len(v)
		oldWeight, err = DecodeWeight(v)
		if err != nil {
			return 0, 0, err
		}
	}
	newWeight = oldWeight + dw
	if newWeight == 0 {
		return oldWeight, 0, a.Delete(txn, key, oldLen)
	}
	var buf [binary.MaxVarintLen64]byte
	return oldWeight, newWeight, a.Set(txn, key, binary.AppendVarint(buf[:0], newWeight), oldLen)
}

// DecodeWeight decodes a weight value written by AddWeight.
func DecodeWeight(v []byte) (int64, error) {
	w, n := binary.Varint(v)
	if n <= 0 {
		return 0, fmt.Errorf("arrange: corrupt weight %x", v)
	}
	return w, nil
}

// countPut accounts for a write of a keyLen-byte key with a valueLen-byte
// value whose previous value had oldLen bytes (-1: absent).
func (a *Arrangement) countPut(keyLen, valueLen, oldLen int) {
	if oldLen < 0 {
		a.rowsDelta++
		a.bytesDelta += int64(keyLen + valueLen)
	} else {
		a.bytesDelta += int64(valueLen - oldLen)
	}
}

// countDelete accounts for deleting a keyLen-byte key whose value had
// oldLen bytes (-1: it was absent, so nothing changes).
func (a *Arrangement) countDelete(keyLen, oldLen int) {
	if oldLen >= 0 {
		a.rowsDelta--
		a.bytesDelta -= int64(keyLen + oldLen)
	}
}

// Stats are an arrangement's size changes since TakeStats was last called.
type Stats struct {
	RowsDelta, BytesDelta int64
}

// TakeStats returns and resets the size changes.
func (a *Arrangement) TakeStats() Stats {
	s := Stats{RowsDelta: a.rowsDelta, BytesDelta: a.bytesDelta}
	a.rowsDelta, a.bytesDelta = 0, 0
	return s
}

// DiscardCache drops every cached entry (after an epoch's batch was thrown
// away instead of committed).
func (a *Arrangement) DiscardCache() {
	a.cache.clear()
	if a.groups != nil {
		a.groups.clear()
		a.entries.clear()
	}
	for _, fn := range a.onDiscard {
		fn()
	}
}

func (a *Arrangement) mustNotBeGrouped() {
	if a.groups != nil {
		// NB: a write that bypasses the group cache would leave a cached
		// group behind the Txn.
		panic("arrange: Set/Delete on a grouped arrangement (use SetEntry/DeleteEntry)")
	}
}
