package kv

import (
	"bytes"

	"github.com/RaduBerinde/btreemap"
)

// pendingWrite is one buffered write; deleted marks a tombstone.
type pendingWrite struct {
	value   []byte
	deleted bool
}

// overlayTxn is a Txn over a base Reader: pending writes live in an ordered
// overlay (tombstones included) that reads merge over the base.
type overlayTxn struct {
	base    Reader
	pending *btreemap.BTreeMap[treeKey, pendingWrite]
}

// NewTxn returns an epoch Txn reading base and buffering writes. The base
// must not change while the Txn is in use.
func NewTxn(base Reader) Txn {
	return &overlayTxn{base: base, pending: newTree[pendingWrite]()}
}

func (t *overlayTxn) Get(key []byte) ([]byte, bool, error) {
	if _, p, ok := t.pending.Get(makeTreeKey(key)); ok {
		if p.deleted {
			return nil, false, nil
		}
		return p.value, true, nil
	}
	return t.base.Get(key)
}

func (t *overlayTxn) set(key, value []byte, deleted bool) {
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	t.pending.ReplaceOrInsert(makeTreeKey(buf[:len(key):len(key)]), pendingWrite{value: buf[len(key):], deleted: deleted})
}

func (t *overlayTxn) Put(key, value []byte) error {
	t.set(key, value, false)
	return nil
}

func (t *overlayTxn) Delete(key []byte) error {
	t.set(key, nil, true)
	return nil
}

type overlayEntry struct {
	key []byte
	pendingWrite
}

// Scan merges the base scan with the overlay in key order. The overlay's
// entries in range are collected first (they are this epoch's writes, so
// few compared with the base), then merged as the base is scanned.
func (t *overlayTxn) Scan(start, end []byte, fn func(k, v []byte) error) error {
	var over []overlayEntry
	_ = scanTree(t.pending, start, end, func(k []byte, p pendingWrite) error {
		over = append(over, overlayEntry{key: k, pendingWrite: p})
		return nil
	})
	next := 0
	// emitOverlayBefore emits overlay entries strictly before key (all of
	// them when all is set).
	emitOverlayBefore := func(key []byte, all bool) error {
		for next < len(over) && (all || bytes.Compare(over[next].key, key) < 0) {
			e := over[next]
			next++
			if !e.deleted {
				if err := fn(e.key, e.value); err != nil {
					return err
				}
			}
		}
		return nil
	}
	stopped := false
	err := t.base.Scan(start, end, func(k, v []byte) error {
		if err := emitOverlayBefore(k, false); err != nil {
			stopped = err == ErrStop
			return err
		}
		if next < len(over) && bytes.Equal(over[next].key, k) {
			e := over[next]
			next++
			if e.deleted {
				return nil
			}
			err := fn(e.key, e.value)
			stopped = err == ErrStop
			return err
		}
		err := fn(k, v)
		stopped = err == ErrStop
		return err
	})
	if err == nil && !stopped {
		err = emitOverlayBefore(nil, true)
	}
	if err == ErrStop {
		return nil
	}
	return err
}

func (t *overlayTxn) Batch() *WriteBatch {
	b := &WriteBatch{Ops: make([]Op, 0, t.pending.Len())}
	t.pending.AscendFunc(btreemap.Min[treeKey](), btreemap.Max[treeKey](), func(k treeKey, p pendingWrite) bool {
		b.Ops = append(b.Ops, Op{Key: k.full, Value: p.value, Delete: p.deleted})
		return true
	})
	return b
}
