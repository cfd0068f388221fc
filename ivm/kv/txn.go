package kv

import "bytes"

// overlayTxn is a Txn over a base Reader: pending writes live in an ordered
// overlay (tombstones included) that reads merge over the base.
type overlayTxn struct {
	base    Reader
	pending *skiplist
}

// NewTxn returns an epoch Txn reading base and buffering writes. The base
// must not change while the Txn is in use.
func NewTxn(base Reader) Txn {
	return &overlayTxn{base: base, pending: newSkiplist()}
}

func (t *overlayTxn) Get(key []byte) ([]byte, bool, error) {
	if n := t.pending.get(key); n != nil {
		if n.deleted {
			return nil, false, nil
		}
		return n.value, true, nil
	}
	return t.base.Get(key)
}

func (t *overlayTxn) Put(key, value []byte) error {
	t.pending.set(key, value, false)
	return nil
}

func (t *overlayTxn) Delete(key []byte) error {
	t.pending.set(key, nil, true)
	return nil
}

// Scan merges the base scan with the overlay in key order.
func (t *overlayTxn) Scan(start, end []byte, fn func(k, v []byte) error) error {
	over := t.pending.first(start)
	inRange := func(n *slNode) bool {
		return n != nil && (end == nil || bytes.Compare(n.key, end) < 0)
	}
	// emitOverlayBefore emits overlay entries strictly before key (all of
	// them when all is set).
	emitOverlayBefore := func(key []byte, all bool) error {
		for inRange(over) && (all || bytes.Compare(over.key, key) < 0) {
			if !over.deleted {
				if err := fn(over.key, over.value); err != nil {
					return err
				}
			}
			over = over.next[0]
		}
		return nil
	}
	stopped := false
	err := t.base.Scan(start, end, func(k, v []byte) error {
		if err := emitOverlayBefore(k, false); err != nil {
			stopped = err == ErrStop
			return err
		}
		if inRange(over) && bytes.Equal(over.key, k) {
			n := over
			over = over.next[0]
			if n.deleted {
				return nil
			}
			err := fn(n.key, n.value)
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
	b := &WriteBatch{Ops: make([]Op, 0, t.pending.length)}
	for n := t.pending.head.next[0]; n != nil; n = n.next[0] {
		b.Ops = append(b.Ops, Op{Key: n.key, Value: n.value, Delete: n.deleted})
	}
	return b
}
