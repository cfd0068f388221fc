package op

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TopK is ORDER BY … LIMIT … OFFSET …, optionally per partition (spec
// §6.10). Each partition's rows are arranged in ORDER BY order (ivm/keyenc
// keys), so the current window is a bounded prefix scan. For every
// partition touched by the delta it emits
//
//	TopK(Δ)_p = window(P_p + Δ_p) − window(P_p)
//
//	ORDER BY x LIMIT 2   time | input        | output
//	                     -----|--------------|-------------------
//	                     0    | {3:+1, 5:+1} | {3:+1, 5:+1}
//	                     1    | {1:+1}       | {1:+1, 5:-1}
//	                     2    | {1:-1}       | {1:-1, 5:+1}
//
// Rows equal under ORDER BY are ordered by their row encoding, so the
// window is deterministic. A step reads at most OFFSET + LIMIT + (copies
// the delta removes) entries of a touched partition: an arranged row beyond
// that cannot enter the new window, because at most that many rows ahead
// of it leave.
//
// State:
//
//	0x01 KindTopK op_id partition_key order_key row → weight
type TopK struct {
	spec       TopKSpec
	schema     types.Schema
	partTypes  []types.Type
	orderTypes []types.Type
	orderDirs  []keyenc.Direction
	state      *arrange.Arrangement
}

// NewTopK returns an incremental TopK over rows of schema in.
func NewTopK(state State, in types.Schema, spec TopKSpec) (*TopK, error) {
	for _, c := range spec.PartitionBy {
		if c < 0 || c >= len(in) {
			return nil, fmt.Errorf("partition column %d out of range", c)
		}
	}
	o := &TopK{spec: spec, schema: in, partTypes: keyTypes(in, spec.PartitionBy), state: state.groupedArrangement(arrange.KindTopK)}
	for _, k := range spec.OrderBy {
		if k.Column < 0 || k.Column >= len(in) {
			return nil, fmt.Errorf("order-by column %d out of range", k.Column)
		}
		o.orderTypes = append(o.orderTypes, keyType(in[k.Column].Type))
		o.orderDirs = append(o.orderDirs, keyenc.Direction{Descending: k.Descending, NullsFirst: k.NullsFirst})
	}
	if spec.Offset < 0 {
		return nil, fmt.Errorf("negative OFFSET")
	}
	return o, nil
}

// Schema implements Operator.
func (o *TopK) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *TopK) Arrangements() []*arrange.Arrangement { return []*arrange.Arrangement{o.state} }

// sortKey is order_key ++ row: the position of a row within its partition.
func (o *TopK) sortKey(dst []byte, row types.Row) []byte {
	for i, k := range o.spec.OrderBy {
		dst = keyenc.EncodeColumn(dst, o.orderTypes[i], row[k.Column], o.orderDirs[i])
	}
	return zset.EncodeRow(dst, row)
}

type topKEntry struct {
	key    []byte // sort key
	row    types.Row
	weight int64
	// stored is the entry's weight in the state before the step (0 for a
	// row the step adds), for an insert-only TopK's writes.
	stored int64
}

// Step implements Operator.
func (o *TopK) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	prefixes, deltas := byPartition(inputs[0], o.partTypes, o.spec.PartitionBy)
	var out zset.Batch
	for j, delta := range deltas {
		if err := o.stepPartition(ctx, []byte(prefixes[j]), zset.Consolidate(delta), &out); err != nil {
			return zset.Batch{}, err
		}
	}
	return out, nil
}

func (o *TopK) stepPartition(ctx *Context, prefix []byte, delta zset.Batch, out *zset.Batch) error {
	need := int64(-1) // -1: the whole partition
	if o.spec.Limit >= 0 {
		need = o.spec.Offset + o.spec.Limit
		for _, w := range delta.Weights {
			if w < 0 {
				need -= w
			}
		}
	}
	before, err := o.readPartition(ctx.Txn, prefix, need)
	if err != nil {
		return err
	}
	// after = before + delta, in sort-key order.
	after := append([]topKEntry(nil), before...)
	position := make(map[string]int, len(after)+len(delta.Rows))
	for e := range after {
		after[e].stored = after[e].weight
		position[string(after[e].key)] = e
	}
	pruned := o.pruned()
	for i, row := range delta.Rows {
		sortKey := o.sortKey(nil, row)
		if e, ok := position[string(sortKey)]; ok {
			after[e].weight += delta.Weights[i]
		} else {
			position[string(sortKey)] = len(after)
			after = append(after, topKEntry{key: sortKey, row: row, weight: delta.Weights[i]})
		}
		if pruned {
			if delta.Weights[i] < 0 {
				return errcode.New(errcode.InternalError, "top-k over an insert-only input received a deletion")
			}
			continue // stored below, if it enters the window
		}
		if err := addEntryWeight(ctx.Txn, o.state, prefix, sortKey, delta.Weights[i]); err != nil {
			return err
		}
	}
	sort.SliceStable(after, func(a, b int) bool { return bytes.Compare(after[a].key, after[b].key) < 0 })
	if pruned {
		if err := o.storePruned(ctx, prefix, after); err != nil {
			return err
		}
	}
	out.AddBatch(windowOf(o.spec, before), -1)
	out.AddBatch(windowOf(o.spec, after), +1)
	return nil
}

// partitionWindow returns the rows of one partition's current window
// (the TopK's integrated output for it), for a Window reading its input
// from this TopK (Window.ReadInputFrom).
func (o *TopK) partitionWindow(txn kv.Reader, prefix []byte) (zset.Batch, error) {
	need := int64(-1) // -1: the whole partition
	if o.spec.Limit >= 0 {
		need = o.spec.Offset + o.spec.Limit
	}
	entries, err := o.readPartition(txn, prefix, need)
	if err != nil {
		return zset.Batch{}, err
	}
	return windowOf(o.spec, entries), nil
}

// readPartition returns a partition's stored entries in sort-key order,
// stopping once they hold need copies (-1: all of them).
func (o *TopK) readPartition(txn kv.Reader, prefix []byte, need int64) ([]topKEntry, error) {
	var before []topKEntry
	var copies int64
	visit := func(sortKey, v []byte) error {
		_, rowBytes, err := keyenc.DecodeKey(sortKey, o.orderTypes, o.orderDirs, nil)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt top-k order key")
		}
		row, _, err := zset.DecodeRow(rowBytes)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt top-k row")
		}
		w, err := arrange.DecodeWeight(v)
		if err != nil {
			return err
		}
		before = append(before, topKEntry{key: append([]byte(nil), sortKey...), row: row, weight: w})
		if w > 0 {
			copies += w
		}
		if need >= 0 && copies >= need {
			return kv.ErrStop
		}
		return nil
	}
	if need != 0 {
		// NB: a partition held by the cache is read from memory; any other
		// is read by a scan bounded by need (never loaded whole: the
		// partition may be far larger than the window).
		group, cached, err := o.state.CachedGroup(txn, prefix)
		if err != nil {
			return nil, err
		}
		if cached {
			for _, e := range group.Entries() {
				if err := visit(e.Suffix, e.Value); err == kv.ErrStop {
					break
				} else if err != nil {
					return nil, err
				}
			}
		} else {
			err := o.state.ScanGroup(txn, prefix, nil, visit)
			if err != nil {
				return nil, err
			}
		}
	}
	return before, nil
}

// pruned reports whether the state keeps only each partition's first
// OFFSET + LIMIT rows: over an insert-only input (TopKSpec.InsertOnly) a
// row pushed past them can never come back, since no row ahead of it is
// ever removed. Nexmark q19's top 10 bids per auction stored every bid
// (most of its writes); pruned it stores about ten per auction.
func (o *TopK) pruned() bool { return o.spec.InsertOnly && o.spec.Limit >= 0 }

// storePruned writes a pruned TopK's state for a partition whose entries
// after the step are after (sorted, with their stored weights): the
// entries within the first OFFSET + LIMIT copies at their new weights,
// none of the others. Rows stored beyond those the step read (an older
// build's state) are left: they can never enter the window either.
func (o *TopK) storePruned(ctx *Context, prefix []byte, after []topKEntry) error {
	need := o.spec.Offset + o.spec.Limit
	var position int64
	for _, e := range after {
		want := int64(0)
		if position < need {
			want = e.weight
		}
		position += max(e.weight, 0)
		if d := want - e.stored; d != 0 {
			if err := addEntryWeight(ctx.Txn, o.state, prefix, e.key, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// windowOf returns the rows at positions [Offset, Offset+Limit) of entries
// (sorted), counting multiplicities; entries with non-positive weight are
// absent.
func windowOf(spec TopKSpec, entries []topKEntry) zset.Batch {
	var out zset.Batch
	var position int64
	end := int64(-1)
	if spec.Limit >= 0 {
		end = spec.Offset + spec.Limit
	}
	for _, e := range entries {
		if e.weight <= 0 {
			continue
		}
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

// compareSortKeys orders two rows by ORDER BY keys (types.Compare per
// column, NULL placement per key).
func compareSortKeys(schema types.Schema, keys []SortKey, a, b types.Row) int {
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
			c = types.Compare(schema[k.Column].Type, x, y)
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

// StreamTopK is the non-incremental TopK over a whole Z-set: rows sorted
// with types.Compare (ties by row encoding), windowed per partition.
func StreamTopK(schema types.Schema, spec TopKSpec, in zset.Batch) zset.Batch {
	in = zset.Consolidate(in)
	partTypes := make([]types.Type, len(spec.PartitionBy))
	for i, c := range spec.PartitionBy {
		partTypes[i] = schema[c].Type
	}
	var keys []types.Row
	var parts [][]topKEntry
	for i, r := range in.Rows {
		key := project(r, spec.PartitionBy)
		j := -1
		for k := range keys {
			if types.EqualRows(partTypes, keys[k], key) {
				j = k
				break
			}
		}
		if j < 0 {
			j = len(keys)
			keys = append(keys, key)
			parts = append(parts, nil)
		}
		parts[j] = append(parts[j], topKEntry{key: zset.EncodeRow(nil, r), row: r, weight: in.Weights[i]})
	}
	var out zset.Batch
	for _, p := range parts {
		sort.Slice(p, func(a, b int) bool {
			if c := compareSortKeys(schema, spec.OrderBy, p[a].row, p[b].row); c != 0 {
				return c < 0
			}
			return bytes.Compare(p[a].key, p[b].key) < 0
		})
		out.AddBatch(windowOf(spec, p), 1)
	}
	return out
}
