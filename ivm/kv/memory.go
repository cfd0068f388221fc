package kv

import "github.com/RaduBerinde/btreemap"

// Memory is an in-memory Store for tests, benchmarks and ad-hoc queries.
// It is not safe for concurrent use (IVM runs in one goroutine per shard).
//
// Entries live in a slice; a hash index (open addressing on Hash, linear
// probing, back-shifting deletes) serves point reads and writes of
// existing keys without touching the B-tree, which orders the keys for
// Scan and changes only when a key is added or removed.
type Memory struct {
	tree    *btreemap.BTreeMap[treeKey, int32]
	entries []memEntry
	free    []int32
	// index holds entry number + 1 (0: empty).
	index []int32
	n     int
	// bytes is the total size of keys and values, for statistics.
	bytes int
	// prefetched and sink are prefetch's scratch; applied and merged
	// Apply's.
	prefetched []int32
	sink       uint64
	applied    []appliedOp
	merged     []byte
}

type memEntry struct {
	key, value []byte
	hash       uint64
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{tree: newTree[int32]()} }

// find returns the entry for key (hash h) or the index position where
// probing stopped.
func (m *Memory) find(key []byte, h uint64) (int32, uint64, bool) {
	if len(m.index) == 0 {
		return 0, 0, false
	}
	mask := uint64(len(m.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := m.index[i]
		if e == 0 {
			return 0, i, false
		}
		if en := &m.entries[e-1]; en.hash == h && string(en.key) == string(key) {
			return e - 1, i, true
		}
	}
}

func (m *Memory) growIndex() {
	m.index = make([]int32, max(1024, 2*len(m.index)))
	mask := uint64(len(m.index) - 1)
	for n := range m.entries {
		if m.entries[n].key == nil {
			continue
		}
		i := m.entries[n].hash & mask
		for m.index[i] != 0 {
			i = (i + 1) & mask
		}
		m.index[i] = int32(n + 1)
	}
}

// unindex removes index position i.
func (m *Memory) unindex(i uint64) {
	ProbeDelete(m.index, i, func(e int32) uint64 { return m.entries[e-1].hash })
}

// GrowTable returns a linear-probing table of uint64 entries (0 = empty)
// twice old's size (64 for none) holding old's entries, each with its
// hash in the high 32 bits (its home slot) and a payload in the low ones:
// the layout of the pointer-free caches in ivm/arrange and ivm/op.
func GrowTable(old []uint64) []uint64 {
	table := make([]uint64, max(64, 2*len(old)))
	mask := uint64(len(table) - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := (e >> 32) & mask
		for table[i] != 0 {
			i = (i + 1) & mask
		}
		table[i] = e
	}
	return table
}

// ProbeDelete empties position i of a linear-probing hash table whose
// empty entries are the zero value, shifting later entries of the probe
// run back so lookups need no tombstones. hash gives an entry's hash (its
// home position is hash & (len(table)-1)); len(table) is a power of two.
func ProbeDelete[E comparable](table []E, i uint64, hash func(E) uint64) {
	var empty E
	mask := uint64(len(table) - 1)
	for {
		table[i] = empty
		j := i
		for {
			j = (j + 1) & mask
			e := table[j]
			if e == empty {
				return
			}
			home := hash(e) & mask
			// Move e to i if i lies cyclically in [home, j).
			if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
				table[i] = e
				i = j
				break
			}
		}
	}
}

// Get implements Reader.
func (m *Memory) Get(key []byte) ([]byte, bool, error) {
	if e, _, ok := m.find(key, Hash(key)); ok {
		return m.entries[e].value, true, nil
	}
	return nil, false, nil
}

// Scan implements Reader.
func (m *Memory) Scan(start, end []byte, fn func(k, v []byte) error) error {
	return scanTree(m.tree, start, end, func(k []byte, e int32) error { return fn(k, m.entries[e].value) })
}

// Put writes one key directly (outside any batch). Key and value are copied.
func (m *Memory) Put(key, value []byte) error {
	h := Hash(key)
	e, _, ok := m.find(key, h)
	m.put(key, h, e, ok, value)
	return nil
}

// put writes value under key (hash h), whose entry is e when found.
//
// NB: a new value always gets a new buffer, although the Reader contract
// only keeps a value valid until the next write: callers (tests holding a
// value across an Apply) rely on values staying unchanged.
func (m *Memory) put(key []byte, h uint64, e int32, found bool, value []byte) {
	if found {
		en := &m.entries[e]
		m.bytes += len(value) - len(en.value)
		en.value = append([]byte{}, value...)
		return
	}
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	en := memEntry{key: buf[:len(key):len(key)], value: buf[len(key):], hash: h}
	if n := len(m.free); n > 0 {
		e = m.free[n-1]
		m.free = m.free[:n-1]
		m.entries[e] = en
	} else {
		e = int32(len(m.entries))
		m.entries = append(m.entries, en)
	}
	m.n++
	if 2*m.n > len(m.index) {
		m.growIndex()
	} else {
		_, pos, _ := m.find(key, h)
		m.index[pos] = e + 1
	}
	m.tree.ReplaceOrInsert(makeTreeKey(en.key), e)
	m.bytes += len(key) + len(value)
}

// Delete removes one key directly.
func (m *Memory) Delete(key []byte) error {
	e, pos, ok := m.find(key, Hash(key))
	if !ok {
		return nil
	}
	m.remove(e, pos)
	return nil
}

// remove deletes entry e, indexed at position pos.
func (m *Memory) remove(e int32, pos uint64) {
	en := &m.entries[e]
	m.bytes -= len(en.key) + len(en.value)
	m.tree.Delete(makeTreeKey(en.key))
	m.unindex(pos)
	*en = memEntry{}
	m.free = append(m.free, e)
	m.n--
}

// Apply implements Store.
func (m *Memory) Apply(b *WriteBatch) error {
	// NB: every op's entry is found and every merge operand resolved
	// first, so a bad operand fails the batch before any of it is applied
	// (Apply is atomic). An existing key's entry number stays valid
	// through the batch: keys are unique in a batch, so no other op
	// deletes or reuses it.
	if cap(m.applied) < len(b.Ops) {
		m.applied = make([]appliedOp, len(b.Ops))
	}
	applied := m.applied[:len(b.Ops)]
	merged := m.merged[:0]
	for i := range b.Ops {
		if i%prefetchChunk == 0 {
			m.prefetch(b.Ops[i:min(i+prefetchChunk, len(b.Ops))])
		}
		op := &b.Ops[i]
		h := Hash(op.Key)
		e, _, ok := m.find(op.Key, h)
		a := appliedOp{hash: h, entry: -1}
		if ok {
			a.entry = e
		}
		if op.Merge {
			var base []byte
			if ok {
				base = m.entries[e].value
			}
			start := len(merged)
			var err error
			if merged, err = appendMerged(merged, op.Key, base, ok, op.Value); err != nil {
				m.merged = merged[:0]
				return err
			}
			a.mergedStart, a.mergedEnd = start, len(merged)
		}
		applied[i] = a
	}
	m.merged = merged[:0]
	for i := range b.Ops {
		op, a := &b.Ops[i], &applied[i]
		switch {
		case op.Delete:
			if a.entry >= 0 {
				// NB: the index position is looked up again: inserts
				// earlier in the batch may have moved it.
				_, pos, _ := m.find(op.Key, a.hash)
				m.remove(a.entry, pos)
			}
		case op.Merge:
			m.put(op.Key, a.hash, a.entry, a.entry >= 0, merged[a.mergedStart:a.mergedEnd])
		default:
			m.put(op.Key, a.hash, a.entry, a.entry >= 0, op.Value)
		}
	}
	return nil
}

// appliedOp is what Apply's first pass learned about one op.
type appliedOp struct {
	hash uint64
	// entry is the key's entry (-1: absent).
	entry int32
	// mergedStart and mergedEnd locate a merge's result in Memory.merged.
	mergedStart, mergedEnd int
}

// Len is the number of keys stored.
func (m *Memory) Len() int { return m.n }

// Bytes is the total size of stored keys and values.
func (m *Memory) Bytes() int { return m.bytes }

// prefetch touches the index entries of a batch's keys, then their entries
// and key bytes, in passes of independent loads, so the cache misses of a
// large store overlap instead of being paid one op at a time. Apply passes
// chunks of prefetchChunk ops just before using them (touching a whole
// batch up front evicted its first entries again before they were used).
func (m *Memory) prefetch(ops []Op) {
	if len(m.index) < prefetchIndexMin {
		return
	}
	mask := uint64(len(m.index) - 1)
	ents := m.prefetched[:0]
	for i := range ops {
		ents = append(ents, m.index[Hash(ops[i].Key)&mask])
	}
	var sink uint64
	for _, e := range ents {
		if e != 0 {
			sink += m.entries[e-1].hash
		}
	}
	for _, e := range ents {
		if e != 0 {
			if k := m.entries[e-1].key; len(k) > 0 {
				sink += uint64(k[0])
			}
		}
	}
	m.prefetched, m.sink = ents, sink
}

const (
	// prefetchChunk is how many ops one prefetch pass covers: enough
	// independent loads to overlap their misses, few enough that what
	// they bring in stays in the CPU's L2 cache until used.
	prefetchChunk = 128
	// prefetchIndexMin is the index size below which the store fits in
	// the CPU caches anyway and prefetching is skipped.
	prefetchIndexMin = 1 << 15
)
