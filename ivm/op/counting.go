package op

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// counting is the shared engine of Distinct and the set operations: it
// keeps, per distinct row, the integrated weight on each input (one or two)
// and emits f(new weights) − f(old weights) for every row whose weights
// changed. Rows are identified by their keyenc key, so SQL-equal rows
// (1.0 and 1.00) are one element; the first-seen representation is stored
// and emitted. State (spec §6.6):
//
//	0x01 KindDistinct op_id row_key → varint wLeft, varint wRight, row
type counting struct {
	schema types.Schema
	types  []types.Type
	cols   []int
	state  *arrange.Arrangement
	f      func(wLeft, wRight int64) int64
}

func newCounting(schema types.Schema, state *arrange.Arrangement, f func(wLeft, wRight int64) int64) counting {
	cols := allColumns(len(schema))
	return counting{schema: schema, types: keyTypes(schema, cols), cols: cols, state: state, f: f}
}

func (c *counting) Schema() types.Schema { return c.schema }

func (c *counting) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{c.state} }

type countingDelta struct {
	row           types.Row
	dLeft, dRight int64
	// key is the row's key in the step's key arena; next chains deltas
	// whose keys share a hash (index+1, 0 ends the chain).
	keyStart, keyEnd int32
	next             int32
}

func (c *counting) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	// Gather per-row weight changes; order of first appearance keeps the
	// output deterministic. NB: keys live in one arena and are indexed by
	// hash, so gathering allocates nothing per row.
	n := 0
	for _, in := range inputs {
		n += in.Len()
	}
	heads := make(map[uint64]int32, n)
	deltas := make([]countingDelta, 0, n)
	var keys []byte
	for side, in := range inputs {
		for i, row := range in.Rows {
			start := len(keys)
			keys = appendKey(keys, c.types, row, c.cols)
			key := keys[start:]
			h := arrange.HashKey(key)
			j := heads[h] - 1
			for j >= 0 && string(keys[deltas[j].keyStart:deltas[j].keyEnd]) != string(key) {
				j = deltas[j].next - 1
			}
			if j < 0 {
				j = int32(len(deltas))
				deltas = append(deltas, countingDelta{row: row, keyStart: int32(start), keyEnd: int32(len(keys)), next: heads[h]})
				heads[h] = j + 1
			} else {
				keys = keys[:start]
			}
			if side == 0 {
				deltas[j].dLeft += in.Weights[i]
			} else {
				deltas[j].dRight += in.Weights[i]
			}
		}
	}
	out := zset.Batch{Rows: make([]types.Row, 0, len(deltas)), Weights: make([]int64, 0, len(deltas))}
	var value []byte
	for _, d := range deltas {
		if d.dLeft == 0 && d.dRight == 0 {
			continue
		}
		key := keys[d.keyStart:d.keyEnd]
		old, ok, err := c.state.Get(ctx.Txn, key)
		if err != nil {
			return zset.Batch{}, err
		}
		var wLeft, wRight int64
		var stored []byte
		oldLen := -1
		if ok {
			oldLen = len(old)
			if wLeft, wRight, stored, err = decodeCounts(old); err != nil {
				return zset.Batch{}, err
			}
		}
		before := c.f(wLeft, wRight)
		wLeft += d.dLeft
		wRight += d.dRight
		if dw := c.f(wLeft, wRight) - before; dw != 0 {
			emitted := d.row
			if ok {
				// The stored (first-seen) representation is emitted.
				if emitted, _, err = zset.DecodeRow(stored); err != nil {
					return zset.Batch{}, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt distinct row")
				}
			}
			out.Add(emitted, dw)
		}
		if wLeft == 0 && wRight == 0 {
			err = c.state.Delete(ctx.Txn, key, oldLen)
		} else {
			value = binary.AppendVarint(binary.AppendVarint(value[:0], wLeft), wRight)
			if ok {
				value = append(value, stored...)
			} else {
				value = zset.EncodeRow(value, d.row)
			}
			err = c.state.Set(ctx.Txn, key, value, oldLen)
		}
		if err != nil {
			return zset.Batch{}, err
		}
	}
	return out, nil
}

// decodeCounts decodes two varint weights and returns the rest of v.
func decodeCounts(v []byte) (int64, int64, []byte, error) {
	a, n := binary.Varint(v)
	if n <= 0 {
		return 0, 0, nil, errcode.New(errcode.ArrangementCorrupt, "corrupt weights %x", v)
	}
	b, m := binary.Varint(v[n:])
	if m <= 0 {
		return 0, 0, nil, errcode.New(errcode.ArrangementCorrupt, "corrupt weights %x", v)
	}
	return a, b, v[n+m:], nil
}

func decodeTwoWeights(v []byte) (int64, int64, error) {
	a, n := binary.Varint(v)
	if n <= 0 {
		return 0, 0, errcode.New(errcode.ArrangementCorrupt, "corrupt weights %x", v)
	}
	b, m := binary.Varint(v[n:])
	if m <= 0 {
		return 0, 0, errcode.New(errcode.ArrangementCorrupt, "corrupt weights %x", v)
	}
	return a, b, nil
}

// streamCounting applies f to the integrated weights of each distinct row
// (rows equal under types.EqualRows are one row).
func streamCounting(f func(wLeft, wRight int64) int64, schema types.Schema, left, right zset.Batch) zset.Batch {
	ts := make([]types.Type, len(schema))
	for i, c := range schema {
		ts[i] = c.Type
	}
	type entry struct {
		row           types.Row
		wLeft, wRight int64
	}
	var entries []entry
	for side, in := range []zset.Batch{left, right} {
		for i, row := range in.Rows {
			// Quadratic on purpose: the reference is a direct reading of
			// the definition, independent of key encodings.
			j := -1
			for k := range entries {
				if types.EqualRows(ts, entries[k].row, row) {
					j = k
					break
				}
			}
			if j < 0 {
				j = len(entries)
				entries = append(entries, entry{row: row})
			}
			if side == 0 {
				entries[j].wLeft += in.Weights[i]
			} else {
				entries[j].wRight += in.Weights[i]
			}
		}
	}
	var out zset.Batch
	for _, e := range entries {
		out.Add(e.row, f(e.wLeft, e.wRight))
	}
	return out
}

func positive(w int64) int64 {
	if w > 0 {
		return w
	}
	return 0
}

func distinctWeight(wLeft, _ int64) int64 {
	if wLeft > 0 {
		return 1
	}
	return 0
}

func setOpWeight(kind SetOpKind) (func(wLeft, wRight int64) int64, error) {
	switch kind {
	case SetIntersect:
		return func(l, r int64) int64 {
			if l > 0 && r > 0 {
				return 1
			}
			return 0
		}, nil
	case SetIntersectAll:
		return func(l, r int64) int64 { return min(positive(l), positive(r)) }, nil
	case SetExcept:
		return func(l, r int64) int64 {
			if l > 0 && r <= 0 {
				return 1
			}
			return 0
		}, nil
	case SetExceptAll:
		return func(l, r int64) int64 { return positive(positive(l) - positive(r)) }, nil
	}
	return nil, fmt.Errorf("unknown set operation %d", kind)
}
