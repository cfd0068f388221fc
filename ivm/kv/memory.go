package kv

import "bytes"

// Memory is an in-memory Store for tests, benchmarks and ad-hoc queries.
// It is not safe for concurrent use (IVM runs in one goroutine per shard).
type Memory struct {
	list *skiplist
	// bytes is the total size of keys and values, for statistics.
	bytes int
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{list: newSkiplist()} }

// Get implements Reader.
func (m *Memory) Get(key []byte) ([]byte, bool, error) {
	n := m.list.get(key)
	if n == nil {
		return nil, false, nil
	}
	return n.value, true, nil
}

// Scan implements Reader.
func (m *Memory) Scan(start, end []byte, fn func(k, v []byte) error) error {
	for n := m.list.first(start); n != nil; n = n.next[0] {
		if end != nil && bytes.Compare(n.key, end) >= 0 {
			break
		}
		if err := fn(n.key, n.value); err != nil {
			if err == ErrStop {
				return nil
			}
			return err
		}
	}
	return nil
}

// Put writes one key directly (outside any batch).
func (m *Memory) Put(key, value []byte) error {
	if old := m.list.get(key); old != nil {
		m.bytes -= len(old.key) + len(old.value)
	}
	m.list.set(key, value, false)
	m.bytes += len(key) + len(value)
	return nil
}

// Delete removes one key directly.
func (m *Memory) Delete(key []byte) error {
	if old := m.list.get(key); old != nil {
		m.bytes -= len(old.key) + len(old.value)
		m.list.remove(key)
	}
	return nil
}

// Apply implements Store.
func (m *Memory) Apply(b *WriteBatch) error {
	for _, op := range b.Ops {
		if op.Delete {
			_ = m.Delete(op.Key)
		} else {
			_ = m.Put(op.Key, op.Value)
		}
	}
	return nil
}

// Len is the number of keys stored.
func (m *Memory) Len() int { return m.list.length }

// Bytes is the total size of stored keys and values.
func (m *Memory) Bytes() int { return m.bytes }
