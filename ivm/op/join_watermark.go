package op

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// JoinWatermark makes a Join forget a join key's arranged rows once an
// event-time watermark W passes the window the key names: one key column
// holds, on both sides, a window value v such that neither input changes
// rows of key v once W >= v + CloseAfterMicros (see AggregateWatermark).
// No later delta probes the key, so its arranged rows can go; the joined
// rows already emitted stay in the view.
//
//	time | W  | ΔL (w, a)  | ΔR (w, b)  | output          | keys arranged
//	-----|----|------------|------------|-----------------|--------------
//	0    | 0  | {(0,x):+1} | {(0,y):+1} | {(0,x,0,y):+1}  | 0
//	1    | 10 | {(10,z):+1}| {}         | {}              | 10   (key 0 closed: s = 10)
//
// State, besides the join's own:
//
//	0x01 KindWindowClose op_id bucket(empty key) close_at(8) join_key → ""
//
// written when a delta row brings a key the index does not hold; a step
// ends by deleting both sides' rows of every key whose close_at <= W.
type JoinWatermark struct {
	Source WatermarkSource
	// Key is the window column's position among the join keys.
	Key              int
	CloseAfterMicros int64
}

// joinClose is a Join's close index (nil without a watermark).
type joinClose struct {
	index *arrange.Arrangement
	// seen holds the keys indexed this step (a delta holds many rows of
	// one key); keyBuf is scratch.
	seen   map[string]bool
	keyBuf []byte
	// sweep is the progress of forgetting closed keys.
	sweep closeSweep
}

func (j *Join) initWatermark(state State) error {
	w := j.spec.Watermark
	if w == nil {
		return nil
	}
	if j.spec.NullAware || j.spec.RightConstant {
		return fmt.Errorf("a null-aware or right-constant join cannot close windows")
	}
	if w.Key < 0 || w.Key >= len(j.spec.LeftKeys) {
		return fmt.Errorf("join watermark key %d out of range", w.Key)
	}
	for _, t := range []types.Type{j.leftTypes[w.Key], j.rightTypes[w.Key]} {
		if t.Kind != types.KindTimestamp && t.Kind != types.KindTimestampTZ {
			return fmt.Errorf("join watermark key of type %s", t)
		}
	}
	c := &joinClose{index: state.arrangement(arrange.KindWindowClose)}
	c.index.OnDiscardCache(func() { c.sweep.swept = false })
	j.close = c
	return nil
}

// indexKeys records in the close index the join keys of a delta's rows
// (side's key columns) it does not hold yet.
func (j *Join) indexKeys(ctx *Context, delta zset.Batch, ts []types.Type, keys []int) error {
	c := j.close
	col := keys[j.spec.Watermark.Key]
	for i, row := range delta.Rows {
		if delta.Weights[i] == 0 || j.keyNull(row, keys) {
			continue
		}
		at, ok := eventMicros(row[col])
		if !ok {
			continue
		}
		joinKey := appendKey(nil, ts, row, keys)
		if c.seen[string(joinKey)] {
			continue
		}
		c.seen[string(joinKey)] = true
		c.keyBuf = windowCloseKey(c.keyBuf[:0], int64(at)+j.spec.Watermark.CloseAfterMicros, joinKey)
		if _, found, err := c.index.GetEntry(ctx.Txn, nil, c.keyBuf); err != nil || found {
			if err != nil {
				return err
			}
			continue
		}
		if err := c.index.SetEntry(ctx.Txn, nil, c.keyBuf, nil, -1); err != nil {
			return err
		}
	}
	return nil
}

// eventMicros is a window value in microseconds; ok is false for NULL.
func eventMicros(d types.Datum) (int64, bool) {
	switch x := d.(type) {
	case types.TimestampTZ:
		return int64(x), true
	case types.Timestamp:
		return int64(x), true
	}
	return 0, false
}

// closeKeys forgets both sides' rows of every key the watermark passed.
func (j *Join) closeKeys(ctx *Context) error {
	c := j.close
	wm, ok := ctx.Watermarks[j.spec.Watermark.Source]
	if !ok {
		return nil
	}
	return c.sweep.run(ctx, c.index, int64(wm), func(key []byte) error {
		for _, side := range []*arrange.Arrangement{j.left, j.right} {
			if err := forgetJoinKey(ctx, side, key); err != nil {
				return err
			}
		}
		return nil
	})
}

// forgetJoinKey deletes one side's arranged rows of a join key.
func forgetJoinKey(ctx *Context, side *arrange.Arrangement, joinKey []byte) error {
	group, err := side.Group(ctx.Txn, joinKey)
	if err != nil {
		return err
	}
	type entry struct {
		suffix []byte
		oldLen int
	}
	var entries []entry
	for _, e := range group.Entries() {
		entries = append(entries, entry{suffix: append([]byte(nil), e.Suffix...), oldLen: len(e.Value)})
	}
	for _, e := range entries {
		if err := side.DeleteEntry(ctx.Txn, joinKey, e.suffix, e.oldLen); err != nil {
			return err
		}
	}
	return nil
}

// stepWatermark runs a windowed join's index and sweep around a step.
func (j *Join) stepWatermark(ctx *Context, dl, dr zset.Batch) error {
	if j.close == nil {
		return nil
	}
	j.close.seen = map[string]bool{}
	if err := j.indexKeys(ctx, dl, j.leftTypes, j.spec.LeftKeys); err != nil {
		return err
	}
	if err := j.indexKeys(ctx, dr, j.rightTypes, j.spec.RightKeys); err != nil {
		return err
	}
	return j.closeKeys(ctx)
}
