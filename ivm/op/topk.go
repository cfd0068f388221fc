package op

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TopK is ORDER BY … LIMIT … OFFSET …, optionally per partition (spec
// §6.10). It keeps each partition's rows in an arrangement; for every
// partition touched by the delta it computes the window before and after
// and emits the difference:
//
//	TopK(Δ)_p = window(P_p + Δ_p) − window(P_p)
//
//	ORDER BY x LIMIT 2   time | input        | output
//	                     -----|--------------|-------------------
//	                     0    | {3:+1, 5:+1} | {3:+1, 5:+1}
//	                     1    | {1:+1}       | {1:+1, 5:-1}
//	                     2    | {1:-1}       | {1:-1, 5:+1}
//
// Rows equal under ORDER BY are ordered by their encoding, so the window is
// deterministic. NB: a touched partition is read whole, so cost is
// proportional to the partition's size; with memcomparable keys (ivm/keyenc)
// this becomes a bounded prefix scan.
//
// State:
//
//	0x01 KindTopK op_id partition_key row → weight
type TopK struct {
	spec   TopKSpec
	schema types.Schema
	state  *arrange.Arrangement
}

// NewTopK returns an incremental TopK over rows of schema in.
func NewTopK(state State, in types.Schema, spec TopKSpec) (*TopK, error) {
	for _, c := range spec.PartitionBy {
		if c < 0 || c >= len(in) {
			return nil, fmt.Errorf("partition column %d out of range", c)
		}
	}
	for _, k := range spec.OrderBy {
		if k.Column < 0 || k.Column >= len(in) {
			return nil, fmt.Errorf("order-by column %d out of range", k.Column)
		}
	}
	if spec.Offset < 0 {
		return nil, fmt.Errorf("negative OFFSET")
	}
	if spec.PartitionBy == nil {
		spec.PartitionBy = []int{} // NB: nil means "all columns" to EncodeKey.
	}
	return &TopK{spec: spec, schema: in, state: state.arrangement(arrange.KindTopK)}, nil
}

// Schema implements Operator.
func (o *TopK) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *TopK) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{o.state} }

// Step implements Operator.
func (o *TopK) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	index := map[string]int{}
	var keys []string
	var deltas []zset.Batch
	var buf []byte
	for i, row := range inputs[0].Rows {
		buf = zset.EncodeKey(buf[:0], row, o.spec.PartitionBy)
		j, ok := index[string(buf)]
		if !ok {
			j = len(deltas)
			index[string(buf)] = j
			keys = append(keys, string(buf))
			deltas = append(deltas, zset.Batch{})
		}
		deltas[j].Add(row, inputs[0].Weights[i])
	}
	var out zset.Batch
	for j, delta := range deltas {
		prefix := []byte(keys[j])
		before, err := readRows(ctx.Txn, o.state, prefix)
		if err != nil {
			return zset.Batch{}, err
		}
		delta = zset.Consolidate(delta)
		after := zset.Consolidate(zset.Sum(before, delta))
		out.AddBatch(topKWindow(o.spec, before), -1)
		out.AddBatch(topKWindow(o.spec, after), +1)
		if err := addRows(ctx.Txn, o.state, prefix, delta); err != nil {
			return zset.Batch{}, err
		}
	}
	return out, nil
}

// compareSortKeys orders two rows by ORDER BY keys.
func compareSortKeys(keys []SortKey, a, b types.Row) int {
	for _, k := range keys {
		x, y := a[k.Column], b[k.Column]
		var c int
		switch {
		case x == nil && y == nil:
			c = 0
		case x == nil:
			c = 1
			if k.NullsFirst {
				c = -1
			}
		case y == nil:
			c = -1
			if k.NullsFirst {
				c = 1
			}
		default:
			c = zset.CompareDatum(x, y)
			if k.Descending {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// topKWindow returns the rows of one partition (a consolidated Z-set) at
// positions [Offset, Offset+Limit) of the ORDER BY order, counting
// multiplicities; rows with non-positive weight are absent.
func topKWindow(spec TopKSpec, rows zset.Batch) zset.Batch {
	type entry struct {
		row    types.Row
		enc    []byte
		weight int64
	}
	entries := make([]entry, 0, len(rows.Rows))
	for i, r := range rows.Rows {
		if rows.Weights[i] > 0 {
			entries = append(entries, entry{row: r, enc: zset.EncodeRow(nil, r), weight: rows.Weights[i]})
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		if c := compareSortKeys(spec.OrderBy, entries[i].row, entries[j].row); c != 0 {
			return c < 0
		}
		return bytes.Compare(entries[i].enc, entries[j].enc) < 0
	})
	var out zset.Batch
	var position int64
	end := int64(-1)
	if spec.Limit >= 0 {
		end = spec.Offset + spec.Limit
	}
	for _, e := range entries {
		lo, hi := position, position+e.weight // this row's copies occupy [lo, hi)
		position = hi
		from := max(lo, spec.Offset)
		to := hi
		if end >= 0 {
			to = min(hi, end)
		}
		if to > from {
			out.Add(e.row, to-from)
		}
		if end >= 0 && position >= end {
			break
		}
	}
	return out
}

// StreamTopK is the non-incremental TopK over a whole Z-set.
func StreamTopK(spec TopKSpec, in zset.Batch) zset.Batch {
	in = zset.Consolidate(in)
	index := map[string]int{}
	var parts []zset.Batch
	for i, r := range in.Rows {
		k := string(zset.EncodeKey(nil, r, append([]int{}, spec.PartitionBy...)))
		j, ok := index[k]
		if !ok {
			j = len(parts)
			index[k] = j
			parts = append(parts, zset.Batch{})
		}
		parts[j].Add(r, in.Weights[i])
	}
	var out zset.Batch
	for _, p := range parts {
		out.AddBatch(topKWindow(spec, p), 1)
	}
	return out
}
