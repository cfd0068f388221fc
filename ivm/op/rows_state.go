package op

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// addRows adds a delta to an arrangement holding row → weight under prefix.
func addRows(txn kv.Txn, a *arrange.Arrangement, prefix []byte, delta zset.Batch) error {
	key := append([]byte(nil), prefix...)
	for i, row := range delta.Rows {
		key = zset.EncodeRow(key[:len(prefix)], row)
		if _, _, err := a.AddWeight(txn, key, delta.Weights[i]); err != nil {
			return err
		}
	}
	return nil
}

// scanRows calls fn for every (row, weight) stored under prefix.
func scanRows(txn kv.Reader, a *arrange.Arrangement, prefix []byte, fn func(row types.Row, weight int64) error) error {
	return a.Scan(txn, prefix, func(k, v []byte) error {
		row, rest, err := zset.DecodeRow(k[len(prefix):])
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

// readRows returns every row stored under prefix.
func readRows(txn kv.Reader, a *arrange.Arrangement, prefix []byte) (zset.Batch, error) {
	var out zset.Batch
	err := scanRows(txn, a, prefix, func(row types.Row, w int64) error {
		out.Add(row, w)
		return nil
	})
	return out, err
}

// replaceRows makes the arrangement hold exactly batch (consolidated) and
// returns what it held before.
func replaceRows(txn kv.Txn, a *arrange.Arrangement, batch zset.Batch) (zset.Batch, error) {
	old, err := readRows(txn, a, nil)
	if err != nil {
		return zset.Batch{}, err
	}
	if err := addRows(txn, a, nil, zset.Sum(batch, zset.Negate(old))); err != nil {
		return zset.Batch{}, err
	}
	return old, nil
}
