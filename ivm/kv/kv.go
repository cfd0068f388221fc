// Package kv is the small key-value interface IVM state persists through.
//
// Arrangements (ivm/arrange) and view outputs (ivm/circuit) read and write
// through a Txn: a view of the shard's store at the start of an epoch plus
// the epoch's own pending writes. At the end of the epoch the owner (the
// shard actor) takes the Txn's single WriteBatch and commits it atomically to
// slate together with the frontier (spec §9, ARCHITECTURE.md §7), so a crash
// replays the whole epoch or none of it.
//
// Keys are raw bytes compared bytewise. The shard key prefixes of spec §5.1
// are declared here so every user agrees on them.
//
// Walkthrough:
//
//	store := kv.NewMemory()                 // or an adapter over slate.DB
//	txn := kv.NewTxn(store)                 // one per epoch
//	txn.Put(k, v)                           // buffered; txn.Get(k) sees it
//	batch := txn.Batch()                    // ONE write batch for the epoch
//	store.Apply(batch)                      // the owner commits it
package kv

import "errors"

// Shard-local key namespaces (spec §5.1). Every IVM key starts with one.
const (
	// PrefixOpState holds all operator state (arrangements).
	PrefixOpState byte = 0x01
	// PrefixOpIndex holds secondary indexes over op_state.
	PrefixOpIndex byte = 0x02
	// PrefixViewOutput holds materialized view outputs.
	PrefixViewOutput byte = 0x03
	// PrefixShardMeta holds per-shard frontiers, epoch markers and offsets.
	PrefixShardMeta byte = 0x06
)

// ErrStop may be returned by a Scan callback to end the scan early; Scan then
// returns nil.
var ErrStop = errors.New("kv: stop scan")

// Reader reads a consistent view.
type Reader interface {
	// Get returns the value stored under key; ok is false if absent. The
	// returned slice must not be modified and is valid until the next write.
	Get(key []byte) (value []byte, ok bool, err error)
	// Scan calls fn for every key k with start <= k < end in ascending
	// order; a nil end means no upper bound. fn must not modify k or v nor
	// retain them past the call, and must not write to the same Txn/Store.
	// Returning ErrStop from fn ends the scan without error.
	Scan(start, end []byte, fn func(k, v []byte) error) error
}

// Writer buffers or applies writes.
type Writer interface {
	Put(key, value []byte) error
	Delete(key []byte) error
}

// Txn is one epoch's read-write view: reads see the base snapshot overlaid
// with the Txn's own pending writes; Batch returns those writes as one batch.
type Txn interface {
	Reader
	Writer
	// Batch returns the pending writes, sorted by key, as one write batch.
	Batch() *WriteBatch
}

// OpApplier is a Txn that applies a batch's operation and reports whether
// its key existed before, in one lookup (NewTxn's Txns are). A key with a
// pending merge operand counts as existing, unresolved.
type OpApplier interface {
	ApplyOp(op Op) (existed bool, err error)
}

// UnsortedBatcher is a Txn that returns its writes as Batch does but in
// no particular order, for a caller that sorts only some of them (NewTxn's
// Txns are).
type UnsortedBatcher interface {
	UnsortedBatch() *WriteBatch
}

// Store is what the owner of the durable state implements: reads of the
// committed state and atomic application of one epoch's write batch.
type Store interface {
	Reader
	// Apply commits every operation in b atomically.
	Apply(b *WriteBatch) error
}

// Op is one write in a batch: a put, a delete, or (Merge) a merge operand
// to apply to the key's value with MergeValues.
type Op struct {
	Key    []byte
	Value  []byte
	Delete bool
	Merge  bool
}

// WriteBatch is an ordered list of writes applied atomically. Ops are sorted
// by key with at most one op per key.
type WriteBatch struct {
	Ops []Op
	// Immutable promises that the ops' keys and values are never changed
	// once the batch is applied, so a store may keep them instead of
	// copying them (a large commit's bytes were copied once more only to
	// be held until its WAL object was written).
	Immutable bool
}

// Len is the number of operations.
func (b *WriteBatch) Len() int { return len(b.Ops) }

// PrefixEnd returns the smallest key greater than every key with the given
// prefix, or nil if there is none (prefix of all 0xff).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ScanPrefix scans every key starting with prefix.
func ScanPrefix(r Reader, prefix []byte, fn func(k, v []byte) error) error {
	return r.Scan(prefix, PrefixEnd(prefix), fn)
}
