package circuit

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// View output storage. A view's rows (and its evaluation errors) are
// stored as encoded row → weight, the weight a one-word kv.TagAddWords
// value, so a sink can add a positive weight with a blind merge write
// (kv.Merger) instead of reading the stored weight first: most of a view's
// output delta is new rows, whose read is a store miss. A negative weight
// (a retraction) is still read, added and written back, or deleted when it
// reaches zero, so a retracted row leaves no key behind. A stored weight of
// zero can still arise (a positive merge onto a row whose stored weight was
// negative, which a correct view never has) and readers treat it as absent.
//
// The sink encodes each row once: keyedConsolidate sums the delta's
// weights by encoded row, and the same encodings become the stored keys.

// keyedDelta is a consolidated delta with each row's encoding: keys[i]
// and weights[i] are entry i's encoded row and (non-zero) weight, in key
// order, and delta holds the same entries in the input's form.
type keyedDelta struct {
	delta   zset.Delta
	keys    []string
	weights []int64
}

// keyedConsolidate is zset.Consolidate keeping each row's encoding
// (zset.EncodeRow, the sort key), so the caller need not encode again.
func keyedConsolidate(b zset.Batch) keyedDelta {
	keys, firsts, weights := consolidateKeys(b.Len(), b.Weights, func(buf []byte, i int) []byte {
		return zset.EncodeRow(buf, b.Rows[i])
	})
	out := zset.Batch{Rows: make([]types.Row, len(firsts)), Weights: weights}
	for k, i := range firsts {
		out.Rows[k] = b.Rows[i]
	}
	return keyedDelta{delta: zset.RowDelta(out), keys: keys, weights: weights}
}

// keyedConsolidateColumns is keyedConsolidate over a columnar delta: the
// rows are encoded straight from the arrays (the same bytes EncodeRow
// gives) and the consolidated delta stays columnar.
func keyedConsolidateColumns(c *zset.Columns) keyedDelta {
	keys, firsts, weights := consolidateKeys(c.Len(), c.Weights(), c.RowEncoder())
	return keyedDelta{delta: zset.TakeDelta(c, firsts, weights), keys: keys, weights: weights}
}

// consolidateKeys sums the weights of the n entries (weights) by their
// encoding (encode appends entry i's) and returns, in encoding order, each
// distinct encoding with a non-zero sum, the first entry that has it and
// the sum.
func consolidateKeys(n int, weights []int64, encode func(buf []byte, i int) []byte) (keys []string, firsts []int32, sums []int64) {
	if n == 0 {
		return nil, nil, nil
	}
	// NB: sized like zset.Consolidate: for every row only once a sample
	// of sampleRows rows was at least half distinct (inserts), so a
	// duplicate-heavy delta (an aggregate's input projected) does not pay
	// for a table it never fills.
	const sampleRows = 256
	index := make(map[string]int, min(n, sampleRows))
	var allKeys []string
	var allFirsts []int32
	var allSums []int64
	var buf []byte
	for i := 0; i < n; i++ {
		if i == sampleRows && 2*len(allKeys) >= i {
			sized := make(map[string]int, n)
			for j, k := range allKeys {
				sized[k] = j
			}
			index = sized
			allKeys = append(make([]string, 0, n), allKeys...)
			allFirsts = append(make([]int32, 0, n), allFirsts...)
			allSums = append(make([]int64, 0, n), allSums...)
		}
		buf = encode(buf[:0], i)
		if j, ok := index[string(buf)]; ok {
			allSums[j] += weights[i]
			continue
		}
		key := string(buf)
		index[key] = len(allKeys)
		allKeys = append(allKeys, key)
		allFirsts = append(allFirsts, int32(i))
		allSums = append(allSums, weights[i])
	}
	// NB: radix sorted (kv.SortOrder) over a copy of the keys: a
	// comparison sort of the encodings, which share long prefixes, cost
	// more than the rest of the consolidation.
	size := 0
	for _, k := range allKeys {
		size += len(k)
	}
	arena := make([]byte, 0, size)
	encoded := make([][]byte, len(allKeys))
	for i, k := range allKeys {
		at := len(arena)
		arena = append(arena, k...)
		encoded[i] = arena[at:len(arena):len(arena)]
	}
	order := kv.SortOrder(encoded)
	keys = make([]string, 0, len(order))
	firsts = make([]int32, 0, len(order))
	sums = make([]int64, 0, len(order))
	for _, i := range order {
		if allSums[i] == 0 {
			continue
		}
		keys = append(keys, allKeys[i])
		firsts = append(firsts, allFirsts[i])
		sums = append(sums, allSums[i])
	}
	return keys, firsts, sums
}

// writeViewDelta adds a keyed delta to the view output arrangement a (see
// the comment at the top of this file). Each stored row is its own
// partition key (arrange's package comment).
func writeViewDelta(txn kv.Txn, a *arrange.Arrangement, d keyedDelta) error {
	merger, _ := txn.(kv.Merger)
	var full []byte
	var vbuf [2 + binary.MaxVarintLen64]byte
	for i, key := range d.keys {
		full = a.AppendKey(full[:0], key)
		w := d.weights[i]
		if w > 0 && merger != nil {
			if err := merger.Merge(full, encodeViewWeight(vbuf[:0], w)); err != nil {
				return fmt.Errorf("circuit: view output merge: %w", err)
			}
			continue
		}
		v, ok, err := txn.Get(full)
		if err != nil {
			return fmt.Errorf("circuit: view output get: %w", err)
		}
		if ok {
			old, err := decodeViewWeight(v)
			if err != nil {
				return err
			}
			w += old
		}
		if w == 0 {
			err = txn.Delete(full)
		} else {
			err = txn.Put(full, encodeViewWeight(vbuf[:0], w))
		}
		if err != nil {
			return fmt.Errorf("circuit: view output write: %w", err)
		}
	}
	return nil
}

// encodeViewWeight appends a stored view weight (one kv.TagAddWords word).
func encodeViewWeight(dst []byte, w int64) []byte {
	dst = append(dst, kv.TagAddWords, 1)
	return binary.AppendVarint(dst, w)
}

// decodeViewWeight decodes a stored view weight.
func decodeViewWeight(v []byte) (int64, error) {
	if len(v) < 3 || v[0] != kv.TagAddWords || v[1] != 1 {
		return 0, fmt.Errorf("circuit: corrupt view weight %x", v)
	}
	w, n := binary.Varint(v[2:])
	if n <= 0 || 2+n != len(v) {
		return 0, fmt.Errorf("circuit: corrupt view weight %x", v)
	}
	return w, nil
}
