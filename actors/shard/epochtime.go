package shard

import (
	"encoding/binary"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// Epoch times. Every delta-log entry records the time of its epoch: the
// table shard's clock (ctx.Now: virtual in simulation) when it assigned
// the epoch, never earlier than the previous epoch's. An epoch step runs
// the views' temporal filters (op.TemporalFilter) at the time of the last
// entry it consumes, and writes that time as the frontier's time in the
// step's batch, so a view's output at an epoch is a function of the log
// alone: a step lost in a crash is recomputed with the same time, on
// every shard (the view shards get the entries, times included, through
// the exchange). A backfill fills a view as of the frontier, at its time.
//
// Time passes without commits too: while the catalog has a materialized
// view with a temporal filter (catalog.Relation.Temporal), the table
// shard writes an entry with no rows (a tick epoch) when no epoch came in
// the last Config.TemporalTickEvery, so rows leave such views on time and
// SUBSCRIBE sees the retractions at the epoch they happen.
//
//	log entry   … tables … ['T' time(8, big-endian µs since 2000-01-01)]
//	0x06 'N'    the frontier's time (8 bytes), written with the frontier
//
// An entry written before times were recorded has no trailer: its time is
// the frontier's (time never goes back).

// temporalTickEvery is the default of Config.TemporalTickEvery: how often
// the table shard looks whether an epoch came in the last interval, and
// writes a tick epoch if none did, while temporal views exist. A row
// leaves with the first epoch at or after its deadline: at most two
// intervals after it (plus the step), at once if a commit comes.
const temporalTickEvery = time.Second

// temporalTick asks the table shard to write a tick epoch.
type temporalTick struct{}

const (
	logTimeTag       byte = 'T'
	logTimeBytes          = 1 + 8
	metaFrontierTime byte = 'N'
)

func frontierTimeKey() []byte { return []byte{kv.PrefixShardMeta, metaFrontierTime} }

// appendLogTime appends the time trailer of a log entry.
func appendLogTime(b []byte, at types.TimestampTZ) []byte {
	return binary.BigEndian.AppendUint64(append(b, logTimeTag), uint64(at))
}

// readLogTime reads the time trailer of a log entry from the bytes after
// its tables (none: time 0); ok is false when they are not a trailer.
func readLogTime(src []byte) (at types.TimestampTZ, rest []byte, ok bool) {
	if len(src) == 0 {
		return 0, src, true
	}
	if len(src) < logTimeBytes || src[0] != logTimeTag {
		return 0, src, false
	}
	return types.TimestampTZ(binary.BigEndian.Uint64(src[1:logTimeBytes])), src[logTimeBytes:], true
}

// nextEpochTime is the time of a new epoch: the clock, but never earlier
// than the last epoch's (a clock stepped back, a restart with another
// skew).
func (a *Actor) nextEpochTime(ctx runtime.Context) types.TimestampTZ {
	at := types.TimestampTZOf(ctx.Now())
	if at < a.lastEpochTime {
		at = a.lastEpochTime
	}
	return at
}

func getTime(r kv.Reader, key []byte) (types.TimestampTZ, error) {
	v, err := getUint64(r, key)
	return types.TimestampTZ(v), err
}

func putTime(w kv.Writer, key []byte, at types.TimestampTZ) error {
	return putUint64(w, key, uint64(at))
}

// temporalViewsIn reports whether a catalog has a materialized view with
// a temporal filter: the table shard then ticks epochs.
func temporalViewsIn(snap *control.Snapshot) bool {
	for _, rel := range snap.Relations() {
		if rel.Kind == catalog.KindMaterializedView && rel.Temporal {
			return true
		}
	}
	return false
}

func (a *Actor) hasTemporalViews() bool {
	if a.snap == nil {
		return false
	}
	if a.temporalOf != a.snap {
		a.temporalOf, a.temporalViews = a.snap, temporalViewsIn(a.snap)
	}
	return a.temporalViews
}

// logEntryTime reads the time of a log entry without decoding its rows.
func logEntryTime(v []byte) (types.TimestampTZ, error) {
	return decodeLog(v, catalog.NamespaceID{}, func(catalog.ID) (deltaDecoder, bool) { return nil, false })
}

// scheduleTemporalTick starts the tick timer if temporal views exist and
// it is not running (a tick re-arms it while they do).
func (a *Actor) scheduleTemporalTick(ctx runtime.Context) {
	if a.temporalTicking || !a.isTableShard() || !a.hasTemporalViews() {
		return
	}
	a.temporalTicking = true
	ctx.After(a.cfg.TemporalTickEvery, temporalTick{})
}

// receiveTemporalTick writes a tick epoch: a log entry with no rows and
// the clock's time, made durable as a commit is (the exchange sends only
// durable entries), then stepped like any epoch.
func (a *Actor) receiveTemporalTick(ctx runtime.Context) {
	a.temporalTicking = false
	if !a.isTableShard() || !a.hasTemporalViews() {
		return
	}
	defer a.scheduleTemporalTick(ctx)
	at := a.nextEpochTime(ctx)
	if a.commitUnsynced || len(a.pending) > 0 || at < a.lastEpochTime+types.TimestampTZ(a.cfg.TemporalTickEvery.Microseconds()) {
		// A group commit on its way carries a time; or an epoch came
		// within the interval (commits carry the time while they flow).
		return
	}
	epoch := a.lastEpoch + 1
	txn := kv.NewTxn(a.store)
	if err := txn.Put(logKey(epoch), appendLogTime(appendUvarintZero(nil), at)); err != nil {
		ctx.Logger().Error("tick epoch failed", "err", err)
		return
	}
	if err := putUint64(txn, lastEpochKey(), epoch); err != nil {
		ctx.Logger().Error("tick epoch failed", "err", err)
		return
	}
	if err := a.store.Apply(txn.Batch()); err != nil {
		// As for a commit: the outcome is uncertain, so the shard stops
		// until it is reopened from durable state.
		a.poison(err)
		ctx.Logger().Error("tick epoch was not made durable", "err", err)
		return
	}
	a.lastEpoch, a.lastEpochTime = epoch, at
	a.durableFrontier = a.frontier
	a.durableEpoch = epoch
	a.scheduleStep(ctx)
}

// appendUvarintZero appends a log entry's table count of zero.
func appendUvarintZero(b []byte) []byte { return binary.AppendUvarint(b, 0) }
