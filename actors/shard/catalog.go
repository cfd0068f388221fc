package shard

import (
	"encoding/binary"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/runtime"
)

// The catalog travels as a version (issue 16: messages are values). A
// Commit, Read, Lookup or OpenSnapshot names the catalog version its
// sender planned against; the shard caches the newest catalog it has, so
// the hot path is one comparison. A shard that is behind parks the message,
// fetches the catalog from the control plane, adopts it and then handles
// the parked messages in arrival order:
//
//	message needs v ──(shard runs ≥ v, nothing parked)──────────► handled
//	      │ (behind, or messages already parked: FIFO)
//	      ▼
//	   parked ──GetSnapshot{Known}──► control ──SnapshotValue──► adopt ──► replay parked
//	      ▲                                       │ (lost, still older, error)
//	      └───────── catalogFetchTick ◄───────────┘  past catalogFetchAttemptsMax:
//	                                                  parked answered ShardUnavailable
//
// Pushes (SyncCatalog, after DDL) are adopted directly when newer.
//
// Never behind-and-destructive: a catalog lacking a view makes the shard
// drop that view's state, so adopting an OLDER catalog than one the shard
// already ran would destroy state because of a stale message (a delayed
// push, a sender holding an old version). The shard therefore never adopts
// a catalog older than the one it runs, and across restarts it keeps the
// version its state reflects durably (the catalog floor, key 0x06 'C'): a
// restarted shard offered an older catalog fetches a current one instead.
// Only a newer catalog that lacks a view drops it.

// metaCatalogFloor keys the catalog floor: the newest catalog version the
// shard adopted (uint64 BE). INVARIANT: it never decreases.
const metaCatalogFloor byte = 'C'

func catalogFloorKey() []byte { return []byte{kv.PrefixShardMeta, metaCatalogFloor} }

// Catalog fetch limits.
const (
	// parkedMessagesMax bounds the messages waiting for a catalog (a
	// mailbox's worth): past it a message is answered ShardUnavailable at
	// once (backpressure) rather than queued without limit. Simulation
	// range: fixed (the mailbox bound limits it first).
	parkedMessagesMax = 1024
	// catalogFetchEvery is how long the shard waits for the control
	// plane's answer before asking again (an answer can be lost, or the
	// control plane may still be loading). Simulation range: 1ms..1s.
	catalogFetchEvery = 20 * time.Millisecond
	// catalogFetchAttemptsMax bounds the asks for one wanted version: a
	// version the control plane does not reach in that many attempts
	// (≈ 50 × catalogFetchEvery) fails the parked messages, whose senders
	// retry. Simulation range: fixed.
	catalogFetchAttemptsMax = 50
)

// catalogFetchTick re-asks the control plane while messages are parked.
// Only the tick of the latest ask counts (an earlier chain's tick, left
// behind when the parked messages were answered, is ignored).
type catalogFetchTick struct{ Ask uint64 }

// catalogFetch is the shard's state of following the control plane.
type catalogFetch struct {
	// floor is the durable catalog floor (see metaCatalogFloor).
	floor uint64
	// parked wait, in arrival order, for catalog version want.
	parked []parkedMessage
	want   uint64
	// asking: a GetSnapshot is outstanding and its retry timer queued.
	asking   bool
	attempts int
	timer    runtime.TimerID
	// ask numbers the asks; the retry tick names the ask it follows.
	ask uint64
}

// parkedMessage is a message waiting for a catalog, with the handle that
// answers its sender.
type parkedMessage struct {
	msg   runtime.Message
	from  runtime.ActorID
	reply runtime.Deferred
}

// catalogNeeded is the catalog version msg needs before it can be
// handled, if msg is one that names a catalog.
func (a *Actor) catalogNeeded(msg runtime.Message) (uint64, bool) {
	switch m := msg.(type) {
	case Commit:
		return m.CatalogVersion, true
	case Read:
		return m.CatalogVersion, true
	case Lookup:
		return m.CatalogVersion, true
	case OpenSnapshot:
		return m.CatalogVersion, true
	case PinViews:
		return m.CatalogVersion, true
	case Subscribe:
		return m.CatalogVersion, true
	case ExportRequest:
		return m.CatalogVersion, true
	case ExportStart:
		return m.CatalogVersion, true
	case Prepare:
		return m.CatalogVersion, true
	case Resolve, Decided:
		// An intent read back at open is decoded with the catalog.
		if a.snap == nil && a.inDoubt() {
			return 0, true
		}
	case GetStatus:
		// A shard restarted without its catalog yet cannot step back to
		// the frontier readers saw (readFloor) to show it, nor know
		// whether it is a view shard that must learn that floor first.
		if a.frontier < a.readFloor || (a.snap == nil && a.exchange.floorPending) {
			return 0, true
		}
	case Probe:
		// NB: behind parked messages, as it was sent after them.
		if len(a.catalog.parked) > 0 {
			return 0, true
		}
	case UnlockRows:
		// NB: behind a parked Commit of the same transaction (its reply
		// was lost, so the session unlocks too), the locks must wait for
		// that commit: they are released only once it is durable.
		if len(a.catalog.parked) > 0 {
			return 0, true
		}
	case SyncCatalog:
		// A push is adopted directly unless it is older than the floor
		// of a shard that has no catalog yet (restarted): then a current
		// catalog is fetched first and the push answered after it.
		if a.snap == nil && m.Catalog.Version < a.catalog.floor {
			return a.catalog.floor, true
		}
	}
	return 0, false
}

// parkForCatalog parks msg if the shard's catalog is older than the one
// msg needs, or if earlier messages are parked (they keep their order). It
// reports whether msg was parked (or refused because too many are).
func (a *Actor) parkForCatalog(ctx runtime.Context, msg runtime.Message) bool {
	if a.openErr != nil || a.store == nil {
		return false // the normal path answers the error
	}
	need, ok := a.catalogNeeded(msg)
	if !ok {
		return false
	}
	need = max(need, a.catalog.floor)
	f := &a.catalog
	if len(f.parked) == 0 && a.snap != nil && a.snap.Version >= need {
		return false
	}
	if len(f.parked) >= parkedMessagesMax {
		a.locks.transactionFailed(msg)
		ctx.Reply(errcode.New(errcode.ShardUnavailable, "the shard is waiting for catalog version %d and has %d requests queued", f.want, len(f.parked)))
		return true
	}
	f.parked = append(f.parked, parkedMessage{msg: msg, from: ctx.From(), reply: ctx.Defer()})
	f.want = max(f.want, need)
	if !f.asking {
		f.asking, f.attempts = true, 0
		a.askCatalog(ctx)
	}
	return true
}

// askCatalog sends one GetSnapshot and arms the retry timer.
func (a *Actor) askCatalog(ctx runtime.Context) {
	f := &a.catalog
	f.attempts++
	a.stats.CatalogFetches++
	var known uint64
	if a.snap != nil {
		known = a.snap.Version
	}
	ctx.Send(a.cfg.Control, control.GetSnapshot{Known: known})
	f.ask++
	f.timer = ctx.After(catalogFetchEvery, catalogFetchTick{Ask: f.ask})
}

// receiveCatalog handles the control plane's answers and the retry timer.
func (a *Actor) receiveCatalog(ctx runtime.Context, msg runtime.Message) {
	f := &a.catalog
	switch m := msg.(type) {
	case control.SnapshotValue:
		if err := a.adoptValue(ctx, m); err != nil {
			ctx.Logger().Error("adopting the fetched catalog failed", "version", m.Version, "err", err)
			// NB: the adoption's own error (e.g. 23505 from re-keying a
			// table with duplicates), as a pushed catalog answers it.
			a.failParked(err)
			return
		}
	case control.SnapshotUnchanged:
	case error:
		ctx.Logger().Warn("catalog fetch failed; asking again", "err", m)
		return
	case catalogFetchTick:
		if !f.asking || m.Ask != f.ask {
			return
		}
		if f.attempts >= catalogFetchAttemptsMax {
			a.failParked(errcode.New(errcode.ShardUnavailable, "the control plane did not provide catalog version %d after %d attempts", f.want, f.attempts))
			return
		}
		a.askCatalog(ctx)
		return
	}
	if f.asking && a.snap != nil && a.snap.Version >= f.want {
		a.replayParked(ctx)
	}
}

// adoptValue adopts a catalog that arrived as a value, if it is newer than
// the shard's (never an older one: see the top of this file).
func (a *Actor) adoptValue(ctx runtime.Context, v control.SnapshotValue) error {
	if v.Version < a.catalog.floor || (a.snap != nil && v.Version <= a.snap.Version) {
		return nil
	}
	_, err := a.syncCatalog(ctx, control.SnapshotOf(v))
	return err
}

// receiveSyncCatalog handles a pushed catalog.
func (a *Actor) receiveSyncCatalog(ctx runtime.Context, m SyncCatalog) {
	// INVARIANT: parkForCatalog held back a push older than the floor
	// while the shard had no catalog.
	assert.That(a.snap != nil || m.Catalog.Version >= a.catalog.floor, "push of catalog %d below the floor %d", m.Catalog.Version, a.catalog.floor)
	if err := a.adoptValue(ctx, m.Catalog); err != nil {
		ctx.Reply(err)
		return
	}
	if m.Background || !a.awaitBackfills(ctx, m.Catalog) {
		ctx.Reply(Synced{Version: a.snap.Version})
	}
	if f := &a.catalog; f.asking && a.snap.Version >= f.want {
		a.replayParked(ctx)
	}
}

// recordCatalogFloor makes the adopted catalog version the durable floor.
func (a *Actor) recordCatalogFloor(version uint64) error {
	if version <= a.catalog.floor {
		return nil
	}
	b := kv.WriteBatch{Ops: []kv.Op{{Key: catalogFloorKey(), Value: binary.BigEndian.AppendUint64(nil, version)}}}
	if err := a.store.Apply(&b); err != nil {
		return err
	}
	a.catalog.floor = version
	return nil
}

// replayParked handles the parked messages in arrival order, now that the
// catalog they waited for is current. A message may park again (it needs
// a newer version still); the ones behind it then park behind it.
func (a *Actor) replayParked(ctx runtime.Context) {
	f := &a.catalog
	parked := f.parked
	f.parked, f.want, f.asking, f.attempts = nil, 0, false, 0
	ctx.CancelTimer(f.timer)
	a.replay(ctx, parked)
}

// failParked answers every parked message with err.
func (a *Actor) failParked(err error) {
	f := &a.catalog
	parked := f.parked
	f.parked, f.want, f.asking, f.attempts = nil, 0, false, 0
	for _, p := range parked {
		a.locks.transactionFailed(p.msg)
		p.reply.Reply(err)
	}
}

// replayContext is the context a parked message is handled in: the
// current Receive's, except that the message's own sender is answered.
type replayContext struct {
	runtime.Context
	from  runtime.ActorID
	reply runtime.Deferred
}

func (c replayContext) From() runtime.ActorID     { return c.from }
func (c replayContext) Reply(msg runtime.Message) { c.reply.Reply(msg) }
func (c replayContext) Defer() runtime.Deferred   { return c.reply }

// Buggify keeps buggify.FromContext working for replayed messages (the
// simulator's context carries the run's plan).
func (c replayContext) Buggify() *buggify.Plan { return buggify.FromContext(c.Context) }

// ReportWork keeps runtime.Report working for replayed messages (the
// simulator's cost model charges the current Receive).
func (c replayContext) ReportWork(w runtime.Work, n int) { runtime.Report(c.Context, w, n) }
