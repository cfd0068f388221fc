package op

import (
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
)

// WatermarkSource names the relation a watermark belongs to (a table's
// catalog object id) in Context.Watermarks.
type WatermarkSource [16]byte

// AggregateWatermark makes an Aggregate a windowed aggregate over an
// event-time column with a watermark W (the largest event time seen minus
// the declared lateness; rows behind W are dropped before they reach any
// view, so W only grows and no row behind it ever arrives). The window
// column holds, for each group, a time v such that no input row of the
// group can arrive once W >= v + CloseAfterMicros (for date_bin(s, ts) v
// is the window's start and CloseAfterMicros is s: the window's end).
//
// Once W reaches that point the group's output can no longer change, so
// the aggregate forgets the group's state without retracting its output
// row: the view keeps the window's final row while the operator's state
// holds only the open windows.
//
//	time | W  | input (w, x)          | output (w, count)     | groups stored
//	-----|----|-----------------------|-----------------------|--------------
//	0    | 0  | {(0,1):+1,(10,2):+1}  | {(0,1):+1,(10,1):+1}  | 0, 10
//	1    | 10 | {(10,3):+1}           | {(10,1):-1,(10,2):+1} | 10   (window 0 closed: s = 10)
//	2    | 25 | {(20,4):+1}           | {(20,1):+1}           | 20
//
// State, besides the aggregate's own:
//
//	0x01 KindWindowClose op_id bucket(empty key) close_at(8) group_key → ""
//
// written when a group is first stored; a step ends by deleting every
// group (accumulator, multisets, index entry) whose close_at <= W, a scan
// that stops at the first open one.
type AggregateWatermark struct {
	// Source is the watermark's relation in Context.Watermarks.
	Source WatermarkSource
	// Key is the window column's position among the GROUP BY columns (a
	// timestamp or timestamptz).
	Key int
	// CloseAfterMicros is how long after its window value a group closes.
	CloseAfterMicros int64
}

// windowCloseTag prefixes the close index's keys.
const windowCloseTag byte = 'c'

// initWatermark checks the spec against the aggregate's schema and opens
// the close index.
func (a *Aggregate) initWatermark(state State) error {
	w := a.spec.Watermark
	if w == nil {
		return nil
	}
	if w.Key < 0 || w.Key >= len(a.spec.GroupBy) {
		return fmt.Errorf("watermark window column %d out of range", w.Key)
	}
	if k := a.schema[w.Key].Type.Kind; k != types.KindTimestamp && k != types.KindTimestampTZ {
		return fmt.Errorf("watermark window column of type %s", a.schema[w.Key].Type)
	}
	a.closeIndex = state.arrangement(arrange.KindWindowClose)
	// NB: a thrown-away step did not delete what it swept.
	a.closeIndex.OnDiscardCache(func() { a.sweep.swept = false })
	return nil
}

// closeAt is when a group with key columns keyRow closes; ok is false for
// a NULL window (rows without an event time are never late: their group
// stays open).
func (a *Aggregate) closeAt(keyRow types.Row) (int64, bool) {
	v, ok := eventMicros(keyRow[a.spec.Watermark.Key])
	return v + a.spec.Watermark.CloseAfterMicros, ok
}

func windowCloseKey(dst []byte, at int64, groupKey []byte) []byte {
	dst = append(dst, windowCloseTag)
	dst = binary.BigEndian.AppendUint64(dst, uint64(at)^(1<<63))
	return append(dst, groupKey...)
}

// decodeCloseAt reads the close time of a close-index key.
func decodeCloseAt(key []byte) int64 { return int64(binary.BigEndian.Uint64(key[1:9]) ^ (1 << 63)) }

// indexGroup records a group stored for the first time in the close
// index (again after it emptied and came back: an existing entry stays).
func (a *Aggregate) indexGroup(ctx *Context, key []byte, keyRow types.Row) error {
	if a.closeIndex == nil {
		return nil
	}
	at, ok := a.closeAt(keyRow)
	if !ok {
		return nil
	}
	a.closeKeyBuf = windowCloseKey(a.closeKeyBuf[:0], at, key)
	if _, found, err := a.closeIndex.GetEntry(ctx.Txn, nil, a.closeKeyBuf); err != nil || found {
		return err
	}
	return a.closeIndex.SetEntry(ctx.Txn, nil, a.closeKeyBuf, nil, -1)
}

// closeWindows forgets every group whose window the step's watermark
// passed. Their output rows stay where the aggregate emitted them.
func (a *Aggregate) closeWindows(ctx *Context) error {
	if a.closeIndex == nil {
		return nil
	}
	wm, ok := ctx.Watermarks[a.spec.Watermark.Source]
	if !ok {
		return nil
	}
	return a.sweep.run(ctx, a.closeIndex, int64(wm), func(key []byte) error { return a.forgetGroup(ctx, key) })
}

// closeSweep is the progress of forgetting what a close index (windows of
// an aggregate, keys of a join) says closed: once a sweep ran in this
// process, every entry closing at or before sweptTo is deleted, so the
// next sweep starts after it (their tombstones need not be walked again;
// nothing stored since closes that early: its rows came while it was
// open). A thrown-away step did not delete what it swept: the owner
// clears swept when its index's caches are discarded.
type closeSweep struct {
	swept   bool
	sweptTo int64
}

// run calls forget with the key of every entry of index closing at or
// before watermark wm (microseconds), then deletes the entries.
func (s *closeSweep) run(ctx *Context, index *arrange.Arrangement, wm int64, forget func(key []byte) error) error {
	from := []byte{windowCloseTag}
	if s.swept {
		from = windowCloseKey(nil, s.sweptTo+1, nil)
	}
	var closed [][]byte
	err := index.ScanGroupFrom(ctx.Txn, nil, []byte{windowCloseTag}, from, func(suffix, _ []byte) error {
		if len(suffix) < 9 {
			return errcode.New(errcode.ArrangementCorrupt, "corrupt window close key %x", suffix)
		}
		if decodeCloseAt(suffix) > wm {
			return kv.ErrStop
		}
		closed = append(closed, append([]byte(nil), suffix...))
		return nil
	})
	if err != nil {
		return err
	}
	for _, entry := range closed {
		if err := forget(entry[9:]); err != nil {
			return err
		}
		if err := index.DeleteEntry(ctx.Txn, nil, entry, 0); err != nil {
			return err
		}
	}
	if !s.swept || wm > s.sweptTo {
		s.swept, s.sweptTo = true, wm
	}
	return nil
}

// forgetGroup deletes a closed group's accumulator and multisets.
func (a *Aggregate) forgetGroup(ctx *Context, key []byte) error {
	stored, found, err := a.acc.Get(ctx.Txn, key)
	if err != nil {
		return err
	}
	if found {
		if err := a.acc.Delete(ctx.Txn, key, len(stored)); err != nil {
			return err
		}
	}
	if l := a.lin; l != nil {
		// NB: the decoded cache must not keep the forgotten words.
		if slot, hit := l.cache.lookup(key, hashKey(key)); hit {
			l.cache.store(slot, make([]int64, l.words), false, 0)
		}
		return nil
	}
	type entry struct {
		suffix []byte
		oldLen int
	}
	var entries []entry
	err = a.multiset.ScanGroup(ctx.Txn, key, nil, func(suffix, value []byte) error {
		entries = append(entries, entry{suffix: append([]byte(nil), suffix...), oldLen: len(value)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := a.multiset.DeleteEntry(ctx.Txn, key, e.suffix, e.oldLen); err != nil {
			return err
		}
	}
	return nil
}
