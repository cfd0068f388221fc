package shard

import (
	"encoding/binary"
	"time"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// A view's change history: per epoch step, the step's delta of the view's
// output, written in the same batch as the output itself, so the history
// and the view never disagree after a crash. SUBSCRIBE ... AS OF EPOCH n
// replays it, and a subscriber that fell behind its queue catches up from
// it (subscription.go).
//
//	0x06 'H' view(16) epoch(8) → step time (8, unix ns), delta rows
//	0x06 'h' view(16)          → floor: every change after it is kept
//
// History is on for a view with retain_history > 0, and for a view with
// the default once it is first subscribed to (catalog.HistoryWindow). The
// floor is written when history starts (at the frontier of that moment)
// and advanced as entries older than the window are deleted; a resume
// from before it fails with RS-2005 naming it.
const (
	metaHistory      byte = 'H'
	metaHistoryFloor byte = 'h'
	// historyDeletesPerStepDefault is Config.HistoryDeletesPerStepMax's
	// default.
	historyDeletesPerStepDefault = 64
)

// viewHistory is an installed view's history state.
type viewHistory struct {
	// on says entries are written; window is how long they are kept.
	on     bool
	window time.Duration
	// floor is the epoch after which every change is kept.
	// INVARIANT: floor <= the shard's frontier.
	floor uint64
}

func historyPrefix(view catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaHistory}, view.Object[:]...)
}

func historyKey(view catalog.ID, epoch uint64) []byte {
	return binary.BigEndian.AppendUint64(historyPrefix(view), epoch)
}

func historyFloorKey(view catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaHistoryFloor}, view.Object[:]...)
}

// historyEpochOf returns the epoch of a history key.
func historyEpochOf(k []byte) (uint64, error) {
	if len(k) != 2+16+8 {
		return 0, corrupt("history key %x has %d bytes, want 26", k, len(k))
	}
	return binary.BigEndian.Uint64(k[18:]), nil
}

// loadHistory reads a view's history state at install. A view that keeps
// history from its creation (an explicit retain_history) starts it here.
func (a *Actor) loadHistory(v *installedView) error {
	window, onSubscribe := v.rel.HistoryWindow()
	v.history = viewHistory{window: window}
	floor, ok, err := a.historyFloor(v.rel.ID)
	if err != nil {
		return err
	}
	switch {
	case ok && window > 0:
		v.history.on, v.history.floor = true, floor
	case !ok && window > 0 && !onSubscribe:
		return a.startHistory(v)
	}
	return nil
}

func (a *Actor) historyFloor(view catalog.ID) (uint64, bool, error) {
	v, ok, err := a.store.Get(historyFloorKey(view))
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, corrupt("history floor of view %s holds %d bytes, want 8", view, len(v))
	}
	return binary.BigEndian.Uint64(v), true, nil
}

// adoptHistoryWindows applies a changed retain_history (ALTER
// MATERIALIZED VIEW ... SET) to installed views: a view that now keeps
// history from its creation starts it at the current frontier, one that
// keeps none stops adding entries (the old ones age out).
func (a *Actor) adoptHistoryWindows() error {
	for _, v := range a.views {
		window, onSubscribe := v.rel.HistoryWindow()
		if window == v.history.window {
			continue
		}
		v.history.window = window
		switch {
		case window <= 0:
			v.history.on = false
		case !onSubscribe:
			if err := a.startHistory(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// startHistory turns a view's history on from the current frontier: the
// floor is made durable before any entry depends on it.
func (a *Actor) startHistory(v *installedView) error {
	if v.history.on || v.history.window <= 0 {
		return nil
	}
	var b kv.WriteBatch
	b.Ops = append(b.Ops, kv.Op{Key: historyFloorKey(v.rel.ID), Value: binary.BigEndian.AppendUint64(nil, a.frontier)})
	if err := a.store.Apply(&b); err != nil {
		return err
	}
	v.history.on, v.history.floor = true, a.frontier
	return nil
}

// outputDelta is a view's step delta as subscribers see it: trimmed to the
// view's columns and consolidated.
func outputDelta(v *installedView, d zset.Delta) zset.Batch {
	b := zset.Consolidate(d.Batch())
	w := len(v.rel.Columns)
	for i, r := range b.Rows {
		if len(r) > w {
			b.Rows[i] = r[:w]
		}
	}
	return b
}

// encodeHistory encodes an entry: the step's time, then uvarint row count
// and per row varint weight, uvarint length and the encodeStoredRow bytes.
func encodeHistory(nowNanos int64, ts []types.Type, b zset.Batch) []byte {
	out := binary.BigEndian.AppendUint64(nil, uint64(nowNanos))
	out = binary.AppendUvarint(out, uint64(len(b.Rows)))
	var row []byte
	for i, r := range b.Rows {
		out = binary.AppendVarint(out, b.Weights[i])
		row = encodeStoredRow(row[:0], ts, r)
		out = binary.AppendUvarint(out, uint64(len(row)))
		out = append(out, row...)
	}
	return out
}

func historyTime(v []byte) (int64, error) {
	if len(v) < 8 {
		return 0, corrupt("history entry of %d bytes has no time", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func decodeHistory(v []byte, ts []types.Type) (zset.Batch, error) {
	if _, err := historyTime(v); err != nil {
		return zset.Batch{}, err
	}
	r := byteReader{src: v[8:]}
	n := r.uvarint()
	var out zset.Batch
	for i := uint64(0); i < n && r.err == nil; i++ {
		w := r.varint()
		enc := r.bytes(int(r.uvarint()))
		if r.err != nil {
			break
		}
		row, err := decodeStoredRow(enc, ts)
		if err != nil {
			return zset.Batch{}, err
		}
		out.Add(row, w)
	}
	if r.err != nil {
		return zset.Batch{}, r.err
	}
	if len(r.src) != 0 {
		return zset.Batch{}, corrupt("history entry has %d trailing bytes", len(r.src))
	}
	return out, nil
}

// writeHistory adds the step's entry of every view that keeps history and
// changed, in the step's batch.
func (a *Actor) writeHistory(txn kv.Txn, epoch uint64, outputs map[catalog.ID]zset.Batch) error {
	now := a.now()
	for _, v := range a.views {
		b, ok := outputs[v.rel.ID]
		if !v.history.on || !ok || len(b.Rows) == 0 {
			continue
		}
		if err := txn.Put(historyKey(v.rel.ID, epoch), encodeHistory(now, columnTypes(v.rel), b)); err != nil {
			return err
		}
	}
	return nil
}

// pruneHistory deletes entries older than their view's window, at most
// Config.HistoryDeletesPerStepMax per step, oldest first, and advances the floors
// in the same batch. It returns the new floors, adopted once the batch is
// applied.
func (a *Actor) pruneHistory(txn kv.Txn) (map[catalog.ID]uint64, error) {
	budget := a.cfg.HistoryDeletesPerStepMax
	now := a.now()
	var floors map[catalog.ID]uint64
	for _, v := range a.views {
		if !v.history.on || budget == 0 {
			continue
		}
		expired := now - v.history.window.Nanoseconds()
		var keys [][]byte
		floor := v.history.floor
		err := kv.ScanPrefix(txn, historyPrefix(v.rel.ID), func(k, val []byte) error {
			at, err := historyTime(val)
			if err != nil {
				return err
			}
			if at >= expired || len(keys) == budget {
				return kv.ErrStop
			}
			e, err := historyEpochOf(k)
			if err != nil {
				return err
			}
			keys = append(keys, append([]byte(nil), k...))
			floor = max(floor, e)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			continue
		}
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return nil, err
			}
		}
		budget -= len(keys)
		if err := putUint64(txn, historyFloorKey(v.rel.ID), floor); err != nil {
			return nil, err
		}
		if floors == nil {
			floors = map[catalog.ID]uint64{}
		}
		floors[v.rel.ID] = floor
	}
	return floors, nil
}

// nextHistory returns the first history entry of view v in (after, upTo].
func (a *Actor) nextHistory(v *installedView, after, upTo uint64) (uint64, zset.Batch, bool, error) {
	var (
		epoch uint64
		val   []byte
		found bool
	)
	err := a.store.Scan(historyKey(v.rel.ID, after+1), historyKey(v.rel.ID, upTo+1), func(k, value []byte) error {
		e, err := historyEpochOf(k)
		if err != nil {
			return err
		}
		epoch, val, found = e, append([]byte(nil), value...), true
		return kv.ErrStop
	})
	if err != nil || !found {
		return 0, zset.Batch{}, false, err
	}
	b, err := decodeHistory(val, columnTypes(v.rel))
	return epoch, b, err == nil, err
}

// dropHistory adds the deletion of a dropped view's history to b.
func (a *Actor) dropHistory(b *kv.WriteBatch, view catalog.ID) error {
	err := kv.ScanPrefix(a.store, historyPrefix(view), func(k, _ []byte) error {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
		return nil
	})
	b.Ops = append(b.Ops, kv.Op{Key: historyFloorKey(view), Delete: true})
	return err
}
