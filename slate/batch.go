package slate

import "sort"

// Batch is an atomic group of writes. It gets one sequence number and is
// written to one WAL object, so after a crash it is either fully present or
// fully absent.
type Batch struct {
	ops   []batchOp
	bytes int64
	// arena holds every key and value back to back: one allocation per
	// batch instead of two per operation (fewer objects for the GC to trace
	// while they sit in the memtable).
	arena []byte
}

// batchOp locates one operation's key and value in the arena.
type batchOp struct {
	kind             Kind
	keyOff, keyLen   int
	valueOff, valLen int
	hasValue         bool
}

func (b *Batch) key(o batchOp) []byte {
	return b.arena[o.keyOff : o.keyOff+o.keyLen : o.keyOff+o.keyLen]
}

func (b *Batch) value(o batchOp) []byte {
	if !o.hasValue {
		return nil
	}
	return b.arena[o.valueOff : o.valueOff+o.valLen : o.valueOff+o.valLen]
}

// Put sets key to value.
func (b *Batch) Put(key, value []byte) { b.add(KindValue, key, value) }

// Delete removes key.
func (b *Batch) Delete(key []byte) { b.add(KindTombstone, key, nil) }

// Merge applies operand to key through the DB's MergeOperator.
func (b *Batch) Merge(key, operand []byte) { b.add(KindMerge, key, operand) }

// Len is the number of operations.
func (b *Batch) Len() int { return len(b.ops) }

// Reset empties the batch for reuse.
//
// NB: a batch already written must not be Reset and reused while the DB may
// still hold its rows; Reset drops the arena rather than recycling it.
func (b *Batch) Reset() { b.ops, b.bytes, b.arena = b.ops[:0], 0, nil }

func (b *Batch) add(kind Kind, key, value []byte) {
	op := batchOp{kind: kind, keyOff: len(b.arena), keyLen: len(key)}
	b.arena = append(b.arena, key...)
	if value != nil {
		op.hasValue = true
		op.valueOff, op.valLen = len(b.arena), len(value)
		b.arena = append(b.arena, value...)
	}
	b.ops = append(b.ops, op)
	b.bytes += int64(len(key) + len(value) + 24)
}

// resolve reduces the batch to one row per key (all with seq), in key order:
// the last put/delete of a key wins, and later merges fold onto it (or onto
// each other) with op.
func (b *Batch) resolve(op MergeOperator, seq uint64) ([]row, error) {
	// NB: the arena is shared with the memtable from here on, so the
	// batch's own later adds must not write into it: cap it.
	b.arena = b.arena[:len(b.arena):len(b.arena)]
	idx := make(map[string]int, len(b.ops))
	rows := make([]row, 0, len(b.ops))
	for _, bop := range b.ops {
		o := struct {
			kind       Kind
			key, value []byte
		}{bop.kind, b.key(bop), b.value(bop)}
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
	sort.Slice(rows, func(i, j int) bool { return string(rows[i].key) < string(rows[j].key) })
	return rows, nil
}
