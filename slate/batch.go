package slate

import "sort"

// Batch is an atomic group of writes. It gets one sequence number and is
// written to one WAL object, so after a crash it is either fully present or
// fully absent.
type Batch struct {
	ops   []batchOp
	bytes int64
}

type batchOp struct {
	kind  Kind
	key   []byte
	value []byte
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
func (b *Batch) Reset() { b.ops, b.bytes = b.ops[:0], 0 }

func (b *Batch) add(kind Kind, key, value []byte) {
	op := batchOp{kind: kind, key: append([]byte(nil), key...)}
	if value != nil {
		op.value = append([]byte(nil), value...)
	}
	b.ops = append(b.ops, op)
	b.bytes += int64(len(key) + len(value) + 24)
}

// resolve reduces the batch to one row per key (all with seq), in key order:
// the last put/delete of a key wins, and later merges fold onto it (or onto
// each other) with op.
func (b *Batch) resolve(op MergeOperator, seq uint64) ([]row, error) {
	idx := make(map[string]int, len(b.ops))
	var rows []row
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
	sort.Slice(rows, func(i, j int) bool { return string(rows[i].key) < string(rows[j].key) })
	return rows, nil
}
