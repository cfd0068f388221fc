package circuit

import (
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// ReadView returns a view's stored output as a snapshot (rows bucket by
// bucket, each bucket's in encoding order; weights = multiplicities). If the view is in the error state it
// returns an *errcode.Error (RS-3501 with the failing expression's SQLSTATE
// and the offending row in the detail) instead.
func ReadView(r kv.Reader, view ViewID) (zset.Batch, error) {
	if err := viewHealthy(r, view); err != nil {
		return zset.Batch{}, err
	}
	return readArrangement(r, viewArrangement(view, arrange.KindViewRows))
}

// ViewRowCount returns the number of rows in a view's stored output (the
// sum of its weights) without decoding them, for statistics; like ReadView
// it returns the view's error if it is in the error state.
func ViewRowCount(r kv.Reader, view ViewID) (int64, error) {
	if err := viewHealthy(r, view); err != nil {
		return 0, err
	}
	var n int64
	err := viewArrangement(view, arrange.KindViewRows).Scan(r, func(_, v []byte) error {
		w, err := decodeViewWeight(v)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt view output weight")
		}
		n += w
		return nil
	})
	return n, err
}

// viewHealthy returns the view's error if it is in the error state.
func viewHealthy(r kv.Reader, view ViewID) error {
	errs, err := ViewErrors(r, view)
	if err != nil {
		return err
	}
	return viewError(view, errs)
}

// viewError turns a view's live errors into the error its readers get (nil
// when there are none): the first error in encoding order, so every reader
// sees the same one.
func viewError(view ViewID, errs zset.Batch) error {
	errs = zset.Consolidate(errs)
	for i, row := range errs.Rows {
		if errs.Weights[i] == 0 {
			continue
		}
		e := errcode.New(errcode.ViewEvaluationError, "%s", row[2].(string))
		e.SQLState = row[0].(string)
		e.Detail = fmt.Sprintf("view %d is in the error state (%s); offending input row: %s", view, row[1], row[3])
		return e
	}
	return nil
}

// ViewErrors returns a view's live evaluation errors (op.ErrorSchema rows);
// empty means the view is healthy.
func ViewErrors(r kv.Reader, view ViewID) (zset.Batch, error) {
	return readArrangement(r, viewArrangement(view, arrange.KindViewErrors))
}

// ViewHealthy returns the view's error if it is in the error state (the
// error ReadView returns), nil otherwise.
func ViewHealthy(r kv.Reader, view ViewID) error { return viewHealthy(r, view) }

// ViewRowsPrefix is the key prefix of a view's stored output rows: an
// owner reading them a range at a time (a backfill in chunks) scans keys
// with this prefix and decodes each entry with DecodeViewEntry.
func ViewRowsPrefix(view ViewID) []byte {
	return viewArrangement(view, arrange.KindViewRows).Prefix()
}

// DecodeViewEntry decodes one stored view output entry: key is the stored
// key without its prefix (ViewRowsPrefix), so the row's bucket and the
// row, and value the stored weight.
func DecodeViewEntry(key, value []byte) (types.Row, int64, error) {
	if len(key) < partition.BucketBytes {
		return nil, 0, errcode.New(errcode.ArrangementCorrupt, "view output key %x carries no bucket", key)
	}
	return decodeViewEntry(key[partition.BucketBytes:], value)
}

// decodeViewEntry decodes an entry whose key is the encoded row alone.
func decodeViewEntry(key, value []byte) (types.Row, int64, error) {
	row, rest, err := zset.DecodeRow(key)
	if err != nil || len(rest) != 0 {
		return nil, 0, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt view output row")
	}
	w, err := decodeViewWeight(value)
	if err != nil {
		return nil, 0, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt view output weight")
	}
	return types.Row(row), w, nil
}

func readArrangement(r kv.Reader, a *arrange.Arrangement) (zset.Batch, error) {
	var out zset.Batch
	err := a.Scan(r, func(k, v []byte) error {
		row, w, err := decodeViewEntry(k, v)
		if err != nil {
			return err
		}
		// NB: Add skips a stored weight of zero (sink.go): absent.
		out.Add(row, w)
		return nil
	})
	return out, err
}
