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
// changed. State (spec §6.6):
//
//	0x01 KindDistinct op_id row → varint wLeft, varint wRight
type counting struct {
	schema types.Schema
	state  *arrange.Arrangement
	f      func(wLeft, wRight int64) int64
}

func (c *counting) Schema() types.Schema { return c.schema }

func (c *counting) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{c.state} }

type countingDelta struct {
	row    types.Row
	dLeft  int64
	dRight int64
}

func (c *counting) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	// Gather per-row weight changes; order of first appearance keeps the
	// output deterministic.
	index := map[string]int{}
	var keys []string
	var deltas []countingDelta
	var buf []byte
	for side, in := range inputs {
		for i, row := range in.Rows {
			buf = zset.EncodeRow(buf[:0], row)
			j, ok := index[string(buf)]
			if !ok {
				j = len(deltas)
				index[string(buf)] = j
				keys = append(keys, string(buf))
				deltas = append(deltas, countingDelta{row: row})
			}
			if side == 0 {
				deltas[j].dLeft += in.Weights[i]
			} else {
				deltas[j].dRight += in.Weights[i]
			}
		}
	}
	var out zset.Batch
	var value []byte
	for j, d := range deltas {
		if d.dLeft == 0 && d.dRight == 0 {
			continue
		}
		key := []byte(keys[j])
		old, ok, err := c.state.Get(ctx.Txn, key)
		if err != nil {
			return zset.Batch{}, err
		}
		var wLeft, wRight int64
		oldLen := -1
		if ok {
			oldLen = len(old)
			if wLeft, wRight, err = decodeTwoWeights(old); err != nil {
				return zset.Batch{}, err
			}
		}
		before := c.f(wLeft, wRight)
		wLeft += d.dLeft
		wRight += d.dRight
		out.Add(d.row, c.f(wLeft, wRight)-before)
		if wLeft == 0 && wRight == 0 {
			err = c.state.Delete(ctx.Txn, key, oldLen)
		} else {
			value = binary.AppendVarint(binary.AppendVarint(value[:0], wLeft), wRight)
			err = c.state.Set(ctx.Txn, key, value, oldLen)
		}
		if err != nil {
			return zset.Batch{}, err
		}
	}
	return out, nil
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

// streamCounting applies f to the integrated weights of each distinct row.
func streamCounting(f func(wLeft, wRight int64) int64, left, right zset.Batch) zset.Batch {
	type entry struct {
		row           types.Row
		wLeft, wRight int64
	}
	index := map[string]int{}
	var entries []entry
	var buf []byte
	for side, in := range []zset.Batch{left, right} {
		for i, row := range in.Rows {
			buf = zset.EncodeRow(buf[:0], row)
			j, ok := index[string(buf)]
			if !ok {
				j = len(entries)
				index[string(buf)] = j
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
