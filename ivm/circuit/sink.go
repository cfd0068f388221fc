package circuit

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

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

// keyedDelta is a consolidated delta with each row's encoding.
type keyedDelta struct {
	batch zset.Batch
	keys  []string
}

// keyedConsolidate is zset.Consolidate keeping each row's encoding
// (zset.EncodeRow, the sort key), so the caller need not encode again.
func keyedConsolidate(b zset.Batch) keyedDelta {
	if b.Len() == 0 {
		return keyedDelta{}
	}
	index := make(map[string]int, b.Len())
	keys := make([]string, 0, b.Len())
	rows := make([]types.Row, 0, b.Len())
	weights := make([]int64, 0, b.Len())
	var buf []byte
	for i, r := range b.Rows {
		buf = zset.EncodeRow(buf[:0], r)
		if j, ok := index[string(buf)]; ok {
			weights[j] += b.Weights[i]
			continue
		}
		key := string(buf)
		index[key] = len(keys)
		keys = append(keys, key)
		rows = append(rows, r)
		weights = append(weights, b.Weights[i])
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(keys[x], keys[y]) })
	out := keyedDelta{
		batch: zset.Batch{Rows: make([]types.Row, 0, len(keys)), Weights: make([]int64, 0, len(keys))},
		keys:  make([]string, 0, len(keys)),
	}
	for _, i := range order {
		if weights[i] == 0 {
			continue
		}
		out.batch.Rows = append(out.batch.Rows, rows[i])
		out.batch.Weights = append(out.batch.Weights, weights[i])
		out.keys = append(out.keys, keys[i])
	}
	return out
}

// writeViewDelta adds a keyed delta to the view output stored under
// prefix (see the comment at the top of this file).
func writeViewDelta(txn kv.Txn, prefix []byte, d keyedDelta) error {
	merger, _ := txn.(kv.Merger)
	var full []byte
	var vbuf [2 + binary.MaxVarintLen64]byte
	for i, key := range d.keys {
		full = append(append(full[:0], prefix...), key...)
		w := d.batch.Weights[i]
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
