package kv

import "github.com/RaduBerinde/btreemap"

// Memory is an in-memory Store for tests, benchmarks and ad-hoc queries.
// It is not safe for concurrent use (IVM runs in one goroutine per shard).
type Memory struct {
	tree *btreemap.BTreeMap[treeKey, []byte]
	// bytes is the total size of keys and values, for statistics.
	bytes int
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{tree: newTree[[]byte]()} }

// Get implements Reader.
func (m *Memory) Get(key []byte) ([]byte, bool, error) {
	_, v, ok := m.tree.Get(makeTreeKey(key))
	return v, ok, nil
}

// Scan implements Reader.
func (m *Memory) Scan(start, end []byte, fn func(k, v []byte) error) error {
	return scanTree(m.tree, start, end, func(k, v []byte) error { return fn(k, v) })
}

// Put writes one key directly (outside any batch). Key and value are copied.
func (m *Memory) Put(key, value []byte) error {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	_, old, replaced := m.tree.ReplaceOrInsert(makeTreeKey(buf[:len(key):len(key)]), buf[len(key):])
	if replaced {
		m.bytes -= len(key) + len(old)
	}
	m.bytes += len(key) + len(value)
	return nil
}

// Delete removes one key directly.
func (m *Memory) Delete(key []byte) error {
	if _, old, ok := m.tree.Delete(makeTreeKey(key)); ok {
		m.bytes -= len(key) + len(old)
	}
	return nil
}

// Apply implements Store.
func (m *Memory) Apply(b *WriteBatch) error {
	// NB: merge operands are resolved first so a bad operand fails the
	// batch before any of it is applied (Apply is atomic).
	var merged [][]byte
	for i, op := range b.Ops {
		if !op.Merge {
			continue
		}
		if merged == nil {
			merged = make([][]byte, len(b.Ops))
		}
		base, ok, _ := m.Get(op.Key)
		v, err := mergeOne(op.Key, base, ok, op.Value)
		if err != nil {
			return err
		}
		merged[i] = v
	}
	for i, op := range b.Ops {
		switch {
		case op.Delete:
			_ = m.Delete(op.Key)
		case op.Merge:
			_ = m.Put(op.Key, merged[i])
		default:
			_ = m.Put(op.Key, op.Value)
		}
	}
	return nil
}

// Len is the number of keys stored.
func (m *Memory) Len() int { return m.tree.Len() }

// Bytes is the total size of stored keys and values.
func (m *Memory) Bytes() int { return m.bytes }
