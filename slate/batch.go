package slate

import (
	"bytes"
	"slices"
)

// Batch is an atomic group of writes. It gets one sequence number and is
// written to one WAL object, so after a crash it is either fully present or
// fully absent. Once written it must not be changed: the DB may hold its
// operations as its rows (resolve).
type Batch struct {
	// ops are the operations as rows without their seq (set when the
	// batch is written); key and value point into an arena chunk (or the
	// caller's, for shared ones), value nil: none.
	ops   []row
	bytes int64
	// arena is the current chunk keys and values are copied into, back to
	// back: a few allocations per batch instead of two per operation (fewer
	// objects for the GC to trace while they wait in the WAL buffer; the
	// memtable copies rows into its own arena). A full
	// chunk is left as is and a new, bigger one started, so bytes are
	// copied once, never again on growth (a single growing slice copied a
	// 1 MiB batch about twice over).
	arena []byte
}

const (
	arenaChunkMin = 4 << 10
	arenaChunkMax = 1 << 20
)

// Put sets key to value.
func (b *Batch) Put(key, value []byte) { b.add(KindValue, key, value) }

// Delete removes key.
func (b *Batch) Delete(key []byte) { b.add(KindTombstone, key, nil) }

// Merge applies operand to key through the DB's MergeOperator.
func (b *Batch) Merge(key, operand []byte) { b.add(KindMerge, key, operand) }

// PutShared is Put without copying key and value: the batch, and the DB
// until the batch's WAL object is written, refer to them, so the caller
// must never change them afterwards.
func (b *Batch) PutShared(key, value []byte) { b.addShared(KindValue, key, value) }

// DeleteShared is Delete without copying key (as PutShared).
func (b *Batch) DeleteShared(key []byte) { b.addShared(KindTombstone, key, nil) }

// Len is the number of operations.
func (b *Batch) Len() int { return len(b.ops) }

// Grow reserves room for ops more operations of bytes key+value bytes in
// total, so a caller that knows the batch's size fills it without
// reallocating.
func (b *Batch) Grow(ops, bytes int) {
	if cap(b.ops)-len(b.ops) < ops {
		grown := make([]row, len(b.ops), len(b.ops)+ops)
		copy(grown, b.ops)
		b.ops = grown
	}
	if cap(b.arena)-len(b.arena) < bytes {
		b.arena = make([]byte, 0, bytes)
	}
}

// Reset empties the batch for reuse.
//
// NB: the DB may still hold a written batch's operations (as its rows) and
// arena: Reset drops both rather than recycling them.
func (b *Batch) Reset() { b.ops, b.bytes, b.arena = nil, 0, nil }

// copyIn copies p into the arena and returns the copy (capped so that an
// append to it cannot run into the next entry).
func (b *Batch) copyIn(p []byte) []byte {
	if cap(b.arena)-len(b.arena) < len(p) {
		size := min(max(arenaChunkMin, 2*cap(b.arena)), arenaChunkMax)
		b.arena = make([]byte, 0, max(size, len(p)))
	}
	off := len(b.arena)
	b.arena = append(b.arena, p...)
	return b.arena[off:len(b.arena):len(b.arena)]
}

func (b *Batch) addShared(kind Kind, key, value []byte) {
	// NB: capped like copyIn's copies, so nothing appends into what
	// follows them.
	op := row{kind: kind, key: key[:len(key):len(key)]}
	if value != nil {
		op.value = value[:len(value):len(value)]
	}
	b.ops = append(b.ops, op)
	b.bytes += int64(len(key) + len(value) + 24)
}

func (b *Batch) add(kind Kind, key, value []byte) {
	op := row{kind: kind, key: b.copyIn(key)}
	if value != nil {
		op.value = b.copyIn(value)
	}
	b.ops = append(b.ops, op)
	b.bytes += int64(len(key) + len(value) + 24)
}

// resolve reduces the batch to one row per key (all with seq), in key order:
// the last put/delete of a key wins, and later merges fold onto it (or onto
// each other) with op.
func (b *Batch) resolve(op MergeOperator, seq uint64) ([]row, error) {
	// NB: the arena is shared with the WAL buffer from here on (until the
	// buffer is sealed), so the batch's own later adds must not write into
	// it: cap it.
	b.arena = b.arena[:len(b.arena):len(b.arena)]
	// Fast path: keys already strictly ascending (kv.WriteBatch and most
	// bulk writers build them so) need neither the map nor the sort, nor
	// a copy: the operations are the rows (capped: an append to them, the
	// batch's or the DB's, goes elsewhere).
	sorted := true
	for i := 1; i < len(b.ops) && sorted; i++ {
		sorted = bytes.Compare(b.ops[i-1].key, b.ops[i].key) < 0
	}
	if sorted {
		for i := range b.ops {
			b.ops[i].seq = seq
		}
		return b.ops[:len(b.ops):len(b.ops)], nil
	}
	rows := make([]row, 0, len(b.ops))
	idx := make(map[string]int, len(b.ops))
	for _, o := range b.ops {
		i, seen := idx[string(o.key)]
		if !seen || o.kind != KindMerge {
			r := row{key: o.key, seq: seq, kind: o.kind, value: o.value}
			if seen {
				rows[i] = r
			} else {
				idx[string(o.key)] = len(rows)
				rows = append(rows, r)
			}
			continue
		}
		prev := rows[i]
		switch prev.kind {
		case KindValue:
			v, _, err := applyMerge(op, o.key, prev.value, true, [][]byte{o.value})
			if err != nil {
				return nil, err
			}
			rows[i] = row{key: o.key, seq: seq, kind: KindValue, value: v}
		case KindTombstone:
			v, _, err := applyMerge(op, o.key, nil, false, [][]byte{o.value})
			if err != nil {
				return nil, err
			}
			rows[i] = row{key: o.key, seq: seq, kind: KindValue, value: v}
		case KindMerge:
			v, _, err := applyMerge(op, o.key, nil, false, [][]byte{o.value, prev.value})
			if err != nil {
				return nil, err
			}
			rows[i] = row{key: o.key, seq: seq, kind: KindMerge, value: v}
		}
	}
	slices.SortFunc(rows, func(x, y row) int { return bytes.Compare(x.key, y.key) })
	return rows, nil
}
