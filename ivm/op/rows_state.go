package op

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// addRows adds a delta to an arrangement holding row → weight (the
// encoded row is the key, and its own partition key).
func addRows(txn kv.Txn, a *arrange.Arrangement, delta zset.Batch) error {
	var key []byte
	for i, row := range delta.Rows {
		key = zset.EncodeRow(key[:0], row)
		if _, _, err := a.AddWeight(txn, key, delta.Weights[i]); err != nil {
			return err
		}
	}
	return nil
}

// scanRows calls fn for every (row, weight) stored, bucket by bucket.
func scanRows(txn kv.Reader, a *arrange.Arrangement, fn func(row types.Row, weight int64) error) error {
	return a.Scan(txn, func(k, v []byte) error {
		row, rest, err := zset.DecodeRow(k)
		if err != nil || len(rest) != 0 {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt arranged row")
		}
		w, err := arrange.DecodeWeight(v)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt arranged weight")
		}
		return fn(row, w)
	})
}

// readRows returns every row stored.
func readRows(txn kv.Reader, a *arrange.Arrangement) (zset.Batch, error) {
	var out zset.Batch
	err := scanRows(txn, a, func(row types.Row, w int64) error {
		out.Add(row, w)
		return nil
	})
	return out, err
}

// replaceRows makes the arrangement hold exactly batch (consolidated) and
// returns what it held before.
func replaceRows(txn kv.Txn, a *arrange.Arrangement, batch zset.Batch) (zset.Batch, error) {
	old, err := readRows(txn, a)
	if err != nil {
		return zset.Batch{}, err
	}
	if err := addRows(txn, a, zset.Sum(batch, zset.Negate(old))); err != nil {
		return zset.Batch{}, err
	}
	return old, nil
}

// readGroupRows returns every row of one group of a grouped arrangement
// holding group ++ row → weight.
func readGroupRows(txn kv.Reader, a *arrange.Arrangement, group []byte) (zset.Batch, error) {
	g, err := a.Group(txn, group)
	if err != nil {
		return zset.Batch{}, err
	}
	entries := g.Entries()
	out := zset.Batch{Rows: make([]types.Row, 0, len(entries)), Weights: make([]int64, 0, len(entries))}
	for _, e := range entries {
		row, rest, err := zset.DecodeRow(e.Suffix)
		if err != nil || len(rest) != 0 {
			return zset.Batch{}, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt arranged row")
		}
		w, err := arrange.DecodeWeight(e.Value)
		if err != nil {
			return zset.Batch{}, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt arranged weight")
		}
		out.Add(row, w)
	}
	return out, nil
}

// addGroupRows adds a delta to one group of a grouped arrangement holding
// group ++ row → weight.
func addGroupRows(txn kv.Txn, a *arrange.Arrangement, group []byte, delta zset.Batch) error {
	var suffix []byte
	for i, row := range delta.Rows {
		suffix = zset.EncodeRow(suffix[:0], row)
		if err := addEntryWeight(txn, a, group, suffix, delta.Weights[i]); err != nil {
			return err
		}
	}
	return nil
}

// addEntryWeight adds dw to the weight stored under group ++ suffix of a
// grouped arrangement, deleting the entry when the weight reaches zero.
func addEntryWeight(txn kv.Txn, a *arrange.Arrangement, group, suffix []byte, dw int64) error {
	old, ok, err := a.GetEntry(txn, group, suffix)
	if err != nil {
		return err
	}
	oldLen := -1
	var w int64
	if ok {
		oldLen = len(old)
		if w, err = arrange.DecodeWeight(old); err != nil {
			return err
		}
	}
	w += dw
	if w == 0 {
		return a.DeleteEntry(txn, group, suffix, oldLen)
	}
	var buf [binary.MaxVarintLen64]byte
	return a.SetEntry(txn, group, suffix, binary.AppendVarint(buf[:0], w), oldLen)
}
