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
	// prefetched and sink are prefetch's scratch.
	prefetched []int32
	sink       uint64
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
	if e, _, ok := m.find(key, h); ok {
		en := &m.entries[e]
		m.bytes += len(value) - len(en.value)
		en.value = append([]byte{}, value...)
		return nil
	}
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	en := memEntry{key: buf[:len(key):len(key)], value: buf[len(key):], hash: h}
	var e int32
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
	return nil
}

// Delete removes one key directly.
func (m *Memory) Delete(key []byte) error {
	e, pos, ok := m.find(key, Hash(key))
	if !ok {
		return nil
	}
	en := &m.entries[e]
	m.bytes -= len(en.key) + len(en.value)
	m.tree.Delete(makeTreeKey(en.key))
	m.unindex(pos)
	*en = memEntry{}
	m.free = append(m.free, e)
	m.n--
	return nil
}

// Apply implements Store.
func (m *Memory) Apply(b *WriteBatch) error {
	// NB: merge operands are resolved first so a bad operand fails the
	// batch before any of it is applied (Apply is atomic). An existing
	// key's entry number stays valid through the batch (keys are unique
	// in a batch, so no other op deletes or reuses it).
	type resolved struct {
		value []byte
		entry int32
	}
	var merged []resolved
	for i, op := range b.Ops {
		if i%prefetchChunk == 0 {
			m.prefetch(b.Ops[i:min(i+prefetchChunk, len(b.Ops))])
		}
		if !op.Merge {
			continue
		}
		if merged == nil {
			merged = make([]resolved, len(b.Ops))
		}
		e, _, ok := m.find(op.Key, Hash(op.Key))
		var base []byte
		if ok {
			base = m.entries[e].value
		} else {
			e = -1
		}
		v, err := mergeOne(op.Key, base, ok, op.Value)
		if err != nil {
			return err
		}
		merged[i] = resolved{value: v, entry: e}
	}
	for i, op := range b.Ops {
		switch {
		case op.Delete:
			_ = m.Delete(op.Key)
		case op.Merge && merged[i].entry >= 0:
			en := &m.entries[merged[i].entry]
			m.bytes += len(merged[i].value) - len(en.value)
			en.value = merged[i].value
		case op.Merge:
			_ = m.Put(op.Key, merged[i].value)
		default:
			_ = m.Put(op.Key, op.Value)
		}
	}
	return nil
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
