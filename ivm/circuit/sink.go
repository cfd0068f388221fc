package circuit

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

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
//
// NB: the encodings go into one buffer, read as one string whose
// substrings are the keys, and are sorted with their duplicates, which
// then sit side by side: no hash table and no string per entry (a view's
// delta is mostly distinct rows, and hashing them into a table was the
// sink's largest cost).
func consolidateKeys(n int, weights []int64, encode func(buf []byte, i int) []byte) (keys []string, firsts []int32, sums []int64) {
	if n == 0 {
		return nil, nil, nil
	}
	var arena []byte
	ends := make([]int, n)
	for i := 0; i < n; i++ {
		arena = encode(arena, i)
		ends[i] = len(arena)
	}
	all := string(arena)
	rowKeys := make([]string, n)
	at := 0
	for i, end := range ends {
		rowKeys[i] = all[at:end]
		at = end
	}
	order := sortedKeyOrder(rowKeys)
	for x := 0; x < len(order); {
		first, sum := order[x], weights[order[x]]
		y := x + 1
		for ; y < len(order) && rowKeys[order[y]] == rowKeys[first]; y++ {
			first = min(first, order[y])
			sum += weights[order[y]]
		}
		if sum != 0 {
			keys = append(keys, rowKeys[first])
			firsts = append(firsts, first)
			sums = append(sums, sum)
		}
		x = y
	}
	return keys, firsts, sums
}

// sortedKeyOrder returns the indexes of keys in key order. NB: the keys
// compare first by the 8 bytes after the prefix they all share (row
// encodings often share a column's type tag and high bytes), read once
// into a word, so most comparisons touch no string.
func sortedKeyOrder(keys []string) []int32 {
	common := 0
	if len(keys) > 0 {
		common = len(keys[0])
		for _, k := range keys[1:] {
			n := min(common, len(k))
			i := 0
			for i < n && k[i] == keys[0][i] {
				i++
			}
			common = i
			if common == 0 {
				break
			}
		}
	}
	words := make([]uint64, len(keys))
	for i, k := range keys {
		var b [8]byte
		copy(b[:], k[common:])
		words[i] = binary.BigEndian.Uint64(b[:])
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int {
		// NB: a key shorter than common+8 is padded with zeros, so equal
		// words still need the strings compared.
		if wx, wy := words[x], words[y]; wx != wy {
			if wx < wy {
				return -1
			}
			return 1
		}
		return strings.Compare(keys[x], keys[y])
	})
	return order
}

// writeViewDelta adds a keyed delta to the view output arrangement a (see
// the comment at the top of this file). Each stored row is its own
// partition key (arrange's package comment).
//
// NB: the stored weights the read-modify-write entries add to (the
// retractions; every entry without merge writes) are read first, in one
// ordered pass (kv.GetSorted), instead of a Get per entry: a view of
// groups retracts its old row of every group a step changes, and each Get
// searched every memtable and SST from the top. The keys are distinct, so
// reading them all before writing any changes no answer.
func writeViewDelta(txn kv.Txn, a *arrange.Arrangement, d keyedDelta) error {
	merger, _ := txn.(kv.Merger)
	// reads are the read-modify-write entries: their stored keys, in
	// store order, and each one's entry.
	var reads viewReads
	for i, key := range d.keys {
		if d.weights[i] > 0 && merger != nil {
			continue
		}
		reads.arena = a.AppendKey(reads.arena, key)
		reads.ends = append(reads.ends, len(reads.arena))
		reads.entries = append(reads.entries, int32(i))
	}
	var keys [][]byte
	var old []int64
	if len(reads.ends) > 0 {
		keys = reads.sortedKeys()
		// old[j] is the stored weight under keys[j] (0: none).
		old = make([]int64, len(keys))
		err := kv.GetSorted(txn, keys, func(j int, v []byte, ok bool) error {
			if !ok {
				return nil
			}
			w, err := decodeViewWeight(v)
			old[j] = w
			return err
		})
		if err != nil {
			return fmt.Errorf("circuit: view output get: %w", err)
		}
	}
	var full []byte
	var vbuf [2 + binary.MaxVarintLen64]byte
	for i, key := range d.keys {
		w := d.weights[i]
		if w > 0 && merger != nil {
			full = a.AppendKey(full[:0], key)
			if err := merger.Merge(full, encodeViewWeight(vbuf[:0], w)); err != nil {
				return fmt.Errorf("circuit: view output merge: %w", err)
			}
		}
	}
	for j, key := range keys {
		var err error
		w := d.weights[reads.entries[reads.order[j]]] + old[j]
		if w == 0 {
			err = txn.Delete(key)
		} else {
			err = txn.Put(key, encodeViewWeight(vbuf[:0], w))
		}
		if err != nil {
			return fmt.Errorf("circuit: view output write: %w", err)
		}
	}
	return nil
}

// viewReads are the stored keys of a sink's read-modify-write entries:
// key x is arena[ends[x-1]:ends[x]], of delta entry entries[x].
type viewReads struct {
	arena   []byte
	ends    []int
	entries []int32
	// order lists the keys in store order (sortedKeys).
	order []int32
}

// sortedKeys returns the keys in store order (strictly ascending: the
// delta's rows are distinct) and sets order to match.
func (r *viewReads) sortedKeys() [][]byte {
	keys := make([][]byte, len(r.ends))
	from := 0
	for x, end := range r.ends {
		keys[x] = r.arena[from:end:end]
		from = end
	}
	r.order = make([]int32, len(keys))
	for x := range r.order {
		r.order[x] = int32(x)
	}
	slices.SortFunc(r.order, func(x, y int32) int { return bytes.Compare(keys[x], keys[y]) })
	sorted := make([][]byte, len(keys))
	for j, x := range r.order {
		sorted[j] = keys[x]
	}
	return sorted
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
