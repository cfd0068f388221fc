package shard

import (
	"encoding/binary"
	"slices"
	"sort"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// A backfill fills a new (or rebuilt) view from its inputs. It runs in
// chunks, one chunk per backfillChunk message the shard sends itself, so
// the Commits, Reads and epoch steps queued meanwhile are served between
// chunks: a slow backfill never holds the shard for longer than one chunk.
//
//	queued ──first chunk: frontier caught up, inputs pinned──► scanning
//	                                                             │ chunks of
//	                                                             │ pinned rows
//	                                                             ▼
//	         maintained ◄──buffer empty: marker (durable)── catching up
//	                                                         ▲  │ chunks of
//	                                                         └──┘ buffered deltas
//
//	any state ──view dropped / recompiled / CancelBackfill / error──► abandoned
//	            (partial state scan-deleted; waiting syncs answered)
//
// Consistency: the first chunk brings the frontier up to the last epoch
// and pins a snapshot of the store, so the pinned tables and view outputs
// describe one epoch, from. The chunks feed the pinned rows (source after
// source, in key order) to the circuit; while they run, every epoch step
// computes the view's input deltas exactly as it would for a maintained
// view and stores them (0x06 'b' view epoch), in the step's own batch,
// instead of stepping the view. Once the pinned rows are fed, the buffered
// deltas are fed in epoch order; the chunk that consumes the last one
// leaves the view's state equal to its query at the frontier, writes the
// installed marker in the same (durable) batch, and the view joins the
// epoch steps. Buffering in the store rather than in memory keeps a long
// backfill under heavy commits bounded in memory.
//
// Backfills run one at a time, in creation order, so a view reading a
// view being backfilled starts from its finished output. A Read naming a
// view being filled waits for it; a pinned snapshot (REPEATABLE READ)
// taken while a view was being filled refuses it with 40001.
//
// Crash: the attempt record (0x06 'B' view, backfillbound.go) is written
// durably before the first chunk, and deleted in the batch of the last.
// A view whose backfill starts while a record is there had an unfinished
// attempt: its partial state is dropped and it starts again (within its
// bounded attempts), after the server is serving (the startup sync does
// not wait), so the server is reachable and DROP works while it runs.
//
// A backfill that fails (an error, attempts used up, refused for memory)
// fails the view (failed.go): the syncs waiting for it are answered and
// find it failed in the status, with the error's code.
//
// The SyncCatalog that makes a shard run a view answers once the view's
// backfill is done (unless Background), so CREATE MATERIALIZED VIEW
// returns a filled view. A statement canceled while it waits sends
// CancelBackfill: the backfill stops at the next chunk and the view is
// marked failed until the catalog drops it.

// Backfill limits.
const (
	// backfillRowsPerChunkDefault is Config.BackfillRowsPerChunkMax's
	// default: a backstop, chunks are sized by time (backfillChunkTarget);
	// cheap chunks (a GROUP BY whose state is held, backfillstate.go, at
	// about 0.5 µs a row) reach it.
	backfillRowsPerChunkDefault = 16384
	// backfillChunkTarget is how long one chunk should take. The rows per
	// chunk start at one and scale toward backfillChunkAim of it
	// (nextChunkRows), so a view with an expensive expression per row
	// holds the shard for about one row's work, and a cheap one moves in
	// large chunks. Simulation range: fixed (virtual time advances only
	// by store latency there).
	backfillChunkTarget = 10 * time.Millisecond
	// backfillChunkAim is the chunk time the sizing aims at: below the
	// target, so chunks that vary a little stay under it.
	backfillChunkAim = backfillChunkTarget * 3 / 4
	// backfillWaitersMax bounds the syncs waiting for backfills to end:
	// past it a sync is answered ShardUnavailable at once rather than
	// queued without limit. Simulation range: fixed.
	backfillWaitersMax = 256
	// backfillReadersMax bounds the reads waiting for one view's backfill
	// (a read of a view being filled waits for it, as a read in
	// PostgreSQL waits for the lock of a table being rebuilt): past it a
	// read is answered at once that the view is still being filled.
	// Simulation range: fixed.
	backfillReadersMax = 1024
)

// metaBackfillDelta keys a view's buffered input deltas, by the epoch of
// the step that computed them.
const metaBackfillDelta byte = 'b'

func backfillDeltaPrefix(view catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaBackfillDelta}, view.Object[:]...)
}

func backfillDeltaKey(view catalog.ID, epoch uint64) []byte {
	return binary.BigEndian.AppendUint64(backfillDeltaPrefix(view), epoch)
}

// CancelBackfill stops the backfill of a view (queued or running), e.g.
// because the CREATE that waited for it was canceled: its partial state is
// dropped and it is marked failed until the catalog drops it. → struct{}.
type CancelBackfill struct{ View catalog.ID }

// backfillChunk runs the next chunk of the current backfill.
type backfillChunk struct{}

// backfill is one view's fill in progress.
type backfill struct {
	view *installedView
	// reader is the pinned input snapshot (nil while queued); release
	// ends the pin.
	reader  kv.Reader
	release func()
	// from is the frontier the snapshot describes.
	from uint64
	// fromTime is the time of epoch from, which the snapshot's rows are
	// filtered at by the view's temporal filters (epochtime.go).
	fromTime types.TimestampTZ
	// source indexes view.sources: the one being scanned; resume is the
	// key its scan continues at (nil: its first key).
	source int
	resume []byte
	// scanned: every pinned row is fed; buffered deltas follow.
	scanned bool
	// rowsPerChunk is the adaptive chunk size (backfillChunkTarget).
	rowsPerChunk int
	rowsRead     int64
	// readers are the Reads waiting for the view (backfillReadersMax).
	readers []parkedMessage
	// bufferedSinceChunk counts the entries buffered since the last
	// chunk: a catching-up chunk takes at least one more than that, so
	// the buffer shrinks however fast commits arrive and the backfill
	// ends.
	bufferedSinceChunk int
	// remote is, on a view shard, the export of the view's tables from
	// the table shard (export.go).
	remote *remoteInputs
	// state is the view's state held in memory while the pinned rows are
	// fed (backfillstate.go); nil: written to the store.
	state *backfillState
}

// backfillWaiter is a SyncCatalog waiting for backfills of its views.
type backfillWaiter struct {
	reply runtime.Deferred
	views []catalog.ID
}

// backfilling returns the backfill of view id, if one is queued or runs.
func (a *Actor) backfilling(id catalog.ID) *backfill {
	for _, b := range a.backfills {
		if b.view.rel.ID == id {
			return b
		}
	}
	return nil
}

// queueBackfill builds a view's circuit and queues its backfill; a view
// that cannot be built is failed (failed.go).
func (a *Actor) queueBackfill(ctx runtime.Context, snap *control.Snapshot, rel *catalog.Relation) {
	if a.backfilling(rel.ID) != nil {
		return
	}
	v, err := a.build(snap, rel)
	if err != nil {
		a.fail(ctx, rel, err)
		a.answerBackfillWaiters(rel.ID, errcode.Wrap(errcode.ViewBuildFailed, err, "materialized view %s could not be built", rel.Name))
		return
	}
	a.backfills = append(a.backfills, &backfill{view: v, rowsPerChunk: 1})
	// INVARIANT: queued in creation (= dependency) order. The running
	// one keeps its place: it reads none of the views queued after it
	// (adoptBackfills restarts a backfill whose input is rebuilt).
	start := 0
	if a.backfills[0].reader != nil {
		start = 1
	}
	queued := a.backfills[start:]
	sort.SliceStable(queued, func(i, j int) bool {
		return objectNumber(queued[i].view.rel.ID) < objectNumber(queued[j].view.rel.ID)
	})
	a.scheduleBackfill(ctx)
}

func (a *Actor) scheduleBackfill(ctx runtime.Context) {
	if len(a.backfills) > 0 && !a.backfillScheduled {
		a.backfillScheduled = true
		ctx.After(0, backfillChunk{})
	}
}

// adoptBackfills reconciles the queue with a new catalog: a backfilling
// view that left it, whose plan changed, or that reads a view rebuilt
// (rebuild: installed views about to be rebuilt) or restarted here, is
// abandoned (the caller queues it again, in order); a renamed one adopts
// its record.
func (a *Actor) adoptBackfills(ctx runtime.Context, snap *control.Snapshot, rebuild map[catalog.ID]bool) error {
	restarted := map[catalog.ID]bool{}
	for i := 0; i < len(a.backfills); {
		b := a.backfills[i]
		rel, ok := snap.RelationByID(b.view.rel.ID)
		reads := false
		for _, s := range b.view.sources {
			reads = reads || rebuild[s] || restarted[s]
		}
		if ok && rel.Kind == catalog.KindMaterializedView && rel.Plan == b.view.rel.Plan && !reads {
			b.view.rel = rel
			i++
			continue
		}
		restarted[b.view.rel.ID] = true
		why := errcode.New(errcode.ViewBackfillAbandoned, "materialized view %s was dropped or recompiled while it was being backfilled", b.view.rel.Name)
		// NB: a view still in the catalog is queued again by the caller;
		// the syncs waiting for it keep waiting for that backfill.
		still := ok && rel.Kind == catalog.KindMaterializedView
		if err := a.abandonBackfill(ctx, i, why, still); err != nil {
			return err
		}
	}
	return nil
}

// receiveBackfillChunk runs one chunk and schedules the next.
func (a *Actor) receiveBackfillChunk(ctx runtime.Context) {
	a.backfillScheduled = false
	if len(a.backfills) == 0 {
		return
	}
	b := a.backfills[0]
	start := ctx.Now()
	started := b.reader != nil
	source, resume, scanned, rowsRead := b.source, b.resume, b.scanned, b.rowsRead
	streamed := streamPositions(b)
	done, err := a.runBackfillChunk(ctx, b)
	if err == errBackfillWaiting {
		// The export's chunks, or the frames up to its epoch, schedule
		// the next chunk (export.go).
		return
	}
	if err != nil && started && b.rowsPerChunk > 1 && a.openErr == nil && errcode.Has(err, errcode.StepMemoryExceeded) {
		// A chunk refused for memory is retried smaller (its batch was
		// not applied): only a single row's work beyond the step bound
		// fails the view.
		ctx.Logger().Info("backfill chunk refused for memory; retrying it smaller", "view", b.view.rel.Name, "rows", b.rowsPerChunk)
		b.source, b.resume, b.scanned, b.rowsRead = source, resume, scanned, rowsRead
		rewindStream(b, streamed)
		b.rowsPerChunk /= 2
		a.scheduleBackfill(ctx)
		return
	}
	if err != nil {
		ctx.Logger().Error("view backfill failed", "view", b.view.rel.Name, "err", err)
		rel := b.view.rel
		if len(a.backfills) == 0 || a.backfills[0] != b {
			// A failed write poisoned the shard, which forgot every
			// backfill (abandonAllBackfills); the reopen queues them again.
			return
		}
		// NB: the waiters are answered below, once the view is failed,
		// so that they find the failure (and its code) in the status.
		if aerr := a.abandonBackfill(ctx, 0, err, true); aerr != nil {
			ctx.Logger().Error("dropping the state of a failed backfill", "view", rel.Name, "err", aerr)
		}
		switch {
		case a.openErr != nil:
			// Poisoned meanwhile: the waiters were answered.
		case err == errAttemptsUsedUp:
			// countBackfillAttempt failed the view with the last reason.
		default:
			// The attempt's error is recorded; the view stays failed
			// until the next sync retries it, within its attempts.
			if ferr := a.backfillFailed(ctx, rel, err); ferr != nil {
				a.fail(ctx, rel, ferr)
				if storageFault(ferr) {
					// Not the view's fault: no DDL may come to sync
					// again, so the shard retries by itself.
					a.retryBackfillsLater(ctx)
				}
			}
		}
		a.answerBackfillWaiters(rel.ID, nil)
		a.scheduleBackfill(ctx)
		return
	}
	a.stats.BackfillChunks++
	b.bufferedSinceChunk = 0
	if done {
		a.finishBackfill(ctx, b)
	} else {
		b.rowsPerChunk = nextChunkRows(b.rowsPerChunk, ctx.Now().Sub(start), a.cfg.BackfillRowsPerChunkMax)
	}
	a.scheduleBackfill(ctx)
}

// nextChunkRows sizes a backfill's next chunk from its last one, of rows
// rows that took took: scaled by backfillChunkAim/took, at most doubled,
// at least halved, within [1, rowsMax].
//
// NB: proportional, not only doubling below half the target: a chunk's
// time grows slower than its rows where the view rewrites each group a
// chunk touches (a GROUP BY with many groups), so a chunk twice as large
// costs far less than two, and chunks left at half the target rewrote
// every group twice as often as they had to.
//
//	512 rows took 6ms → 640 rows (7.5ms aimed at); 1 row took 0 → 2 rows
func nextChunkRows(rows int, took time.Duration, rowsMax int) int {
	next := 2 * rows
	if took > 0 {
		next = min(next, int(int64(rows)*int64(backfillChunkAim)/int64(took)))
	}
	return min(rowsMax, max(1, rows/2, next))
}

// runBackfillChunk feeds the next chunk of b to its circuit and reports
// whether the view is now complete (marker written, durable).
func (a *Actor) runBackfillChunk(ctx runtime.Context, b *backfill) (bool, error) {
	v := b.view
	first := b.reader == nil
	if first {
		remote, waiting, err := a.remoteBackfill(ctx, b)
		if err != nil {
			return false, err
		}
		if waiting {
			return false, errBackfillWaiting
		}
		if !remote {
			if err := a.beginBackfill(ctx, b); err != nil {
				return false, err
			}
		}
		if err := a.holdBackfillState(b); err != nil {
			return false, err
		}
	} else if b.remote != nil && b.remote.stream {
		waiting, err := a.streamWaiting(ctx, b)
		if err != nil {
			return false, err
		}
		if waiting {
			return false, errBackfillWaiting
		}
	}
	if b.state != nil && (b.scanned || b.state.flush) {
		// The held state is written before any buffered delta is fed.
		return false, a.flushBackfillState(b)
	}
	// NB: after beginBackfill, whose epoch steps write the store.
	var txn kv.Txn
	if b.state != nil {
		txn = kv.NewTxn(stateReader{s: b.state, store: a.store})
	} else {
		txn = kv.NewTxn(a.store)
	}
	inputs := map[circuit.SourceID]zset.Delta{}
	if first {
		for id, c := range v.constants { //lint:maprange copied into a map keyed the same way
			inputs[id] = zset.RowDelta(c)
		}
		// NB: the first step names every source, empty or not, as the
		// one-batch backfill did: an aggregate without GROUP BY emits its
		// row over empty input at the first step.
		for _, s := range v.sources {
			inputs[SourceID(s)] = zset.RowDelta(zset.Batch{})
		}
	}
	done := false
	switch {
	case !b.scanned && b.remote != nil && b.remote.stream:
		if err := a.streamBackfill(b, inputs); err != nil {
			return false, err
		}
	case !b.scanned:
		if err := a.scanBackfill(b, inputs); err != nil {
			return false, err
		}
	default:
		buffered := map[circuit.SourceID]zset.Batch{}
		var err error
		if done, err = a.takeBufferedDeltas(txn, b, buffered); err != nil {
			return false, err
		}
		for id, in := range buffered { //lint:maprange copied into a map keyed the same way
			inputs[id] = zset.RowDelta(in)
		}
	}
	if first || nonEmpty(inputs) || (v.temporal && b.scanned) {
		// The snapshot is the tables at epoch from, at its time; the
		// buffered deltas go up to the frontier, at its time.
		v.circuit.SetNow(b.fromTime)
		if b.scanned {
			v.circuit.SetNow(a.frontierTime)
		}
		// NB: windows close only with the last of the backfill's steps,
		// at the frontier's watermarks: a row fed later (committed after
		// the snapshot) may belong to a window an earlier watermark
		// would have closed (watermark.go).
		v.circuit.SetWatermarks(nil)
		if done {
			v.circuit.SetWatermarks(a.stepWatermarks())
		}
		runtime.Report(ctx, runtime.WorkStepRow, deltaRows(inputs))
		// NB: StepDeltas, not Step: the view's output delta is not read
		// here, so it is never built into rows.
		if _, err := v.circuit.StepDeltas(txn, inputs); err != nil {
			v.circuit.DiscardCaches()
			return false, err
		}
	}
	if !done {
		var batch *kv.WriteBatch
		if b.state != nil {
			// NB: unsorted: the held writes go to a hash table, and
			// keepState sorts the rest.
			var err error
			if batch, err = b.state.keepState(txn.(kv.UnsortedBatcher).UnsortedBatch()); err != nil {
				v.circuit.DiscardCaches()
				return false, err
			}
		} else {
			batch = txn.Batch()
		}
		if err := a.applyNoWait(batch); err != nil {
			v.circuit.DiscardCaches()
			a.poison(err)
			return false, err
		}
		a.ackFedChunks(ctx, b)
		return false, nil
	}
	// NB: the marker is the state's format record (format.go), in the
	// same batch as the last of the state; durable, so a view a CREATE
	// returned is not backfilled again after a restart.
	if err := txn.Put(viewMarkerKey(v.rel.ID), v.marker()); err != nil {
		return false, err
	}
	// The attempt ends with the state (backfillbound.go).
	if err := txn.Delete(backfillKey(v.rel.ID)); err != nil {
		return false, err
	}
	if err := a.store.Apply(txn.Batch()); err != nil {
		v.circuit.DiscardCaches()
		a.poison(err)
		return false, err
	}
	return true, nil
}

func nonEmpty(inputs map[circuit.SourceID]zset.Delta) bool {
	//lint:maprange any non-empty delta answers; order cannot matter.
	for _, d := range inputs {
		if d.Len() > 0 {
			return true
		}
	}
	return false
}

// errBackfillWaiting: the backfill waits for its export (export.go).
var errBackfillWaiting = errcode.New(errcode.InternalError, "the backfill waits for its input tables")

// errAttemptsUsedUp ends a backfill whose view used up its attempts
// (countBackfillAttempt failed it).
var errAttemptsUsedUp = errcode.New(errcode.ViewBuildFailed, "the view's backfill used up its attempts")

// beginBackfill brings the frontier up to the last epoch, so the tables
// and the view outputs of the snapshot describe one epoch, drops the
// state an unfinished earlier attempt left, counts this attempt and pins
// the inputs.
func (a *Actor) beginBackfill(ctx runtime.Context, b *backfill) error {
	if err := a.stepAll(ctx); err != nil {
		return err
	}
	if err := a.prepareBackfill(ctx, b); err != nil {
		return err
	}
	b.reader, b.release = a.pinInputs()
	b.from, b.fromTime = a.frontier, a.frontierTime
	ctx.Logger().Info("view backfill started", "view", b.view.rel.Name, "frontier", b.from)
	return nil
}

// prepareBackfill drops the state an unfinished earlier attempt left,
// counts this attempt and checks the views the view reads.
func (a *Actor) prepareBackfill(ctx runtime.Context, b *backfill) error {
	id := b.view.rel.ID
	if _, left, err := a.store.Get(backfillKey(id)); err != nil {
		return err
	} else if left {
		ctx.Logger().Info("dropping the partial state of an unfinished backfill", "view", b.view.rel.Name)
		if err := a.dropState(id); err != nil {
			return err
		}
	}
	if ok, err := a.countBackfillAttempt(ctx, b.view.rel); err != nil {
		return err
	} else if !ok {
		return errAttemptsUsedUp
	}
	for _, s := range b.view.sources {
		if rel, ok := a.snap.RelationByID(s); ok && rel.Kind == catalog.KindMaterializedView {
			// Backfills run in creation order: a view read by this one
			// is installed by now, unless its own backfill failed.
			if a.installed(s) == nil {
				f, failed := a.failed[s]
				assert.That(failed, "view %s is backfilled before view %s it reads", b.view.rel.Name, rel.Name)
				return errcode.New(errcode.ViewBuildFailed, "it reads materialized view %s, which failed: %s", rel.Name, f.reason)
			}
			if err := circuit.ViewHealthy(a.store, ViewID(s)); err != nil {
				return err
			}
		}
	}
	return nil
}

// pinInputs pins the store's current state. A store that cannot pin
// snapshots (the tests' in-memory store) is copied instead.
func (a *Actor) pinInputs() (kv.Reader, func()) {
	if s, ok := a.store.(Snapshotter); ok {
		r := s.Snapshot()
		return r, func() {
			if rel, ok := r.(releaser); ok {
				rel.Release()
			}
		}
	}
	copied := kv.NewMemory()
	var batch kv.WriteBatch
	err := a.store.Scan(nil, nil, func(k, v []byte) error {
		batch.Ops = append(batch.Ops, kv.Op{Key: append([]byte(nil), k...), Value: append([]byte(nil), v...)})
		return nil
	})
	// INVARIANT: the in-memory stores this copy serves do not fail reads.
	assert.That(err == nil, "copying the store for a backfill: %v", err)
	assert.That(copied.Apply(&batch) == nil, "copying the store for a backfill")
	return copied, func() {}
}

// scanBackfill reads up to rowsPerChunk pinned rows, from the current
// source on, into inputs: a table's rows straight into columns when the
// view steps them columnar (backfillDecoder), as an epoch step decodes
// them, rows otherwise.
func (a *Actor) scanBackfill(b *backfill, inputs map[circuit.SourceID]zset.Delta) error {
	budget := b.rowsPerChunk
	for budget > 0 && b.source < len(b.view.sources) {
		s := b.view.sources[b.source]
		prefix, dec, err := a.backfillDecoder(b.view, s)
		if err != nil {
			return err
		}
		start := b.resume
		if start == nil {
			start = prefix
		}
		dec.grow(budget)
		n := 0
		var next []byte
		err = scanOnce(b.reader)(start, kv.PrefixEnd(prefix), func(k, val []byte) error {
			if budget == 0 {
				next = append([]byte(nil), k...)
				return kv.ErrStop
			}
			if err := dec.add(k[len(prefix):], val); err != nil {
				return err
			}
			n++
			budget--
			return nil
		})
		if err != nil {
			return err
		}
		if n > 0 {
			id := SourceID(s)
			trimmed := b.view.trimDelta(s, dec.delta())
			if in := inputs[id]; in.Len() > 0 {
				// NB: cannot happen (a chunk scans each source once); kept
				// correct by appending rows.
				rows := in.Batch()
				more := trimmed.Batch()
				rows.Rows, rows.Weights = append(rows.Rows, more.Rows...), append(rows.Weights, more.Weights...)
				trimmed = zset.RowDelta(rows)
			}
			inputs[id] = trimmed
			b.rowsRead += int64(n)
			if _, ok := dec.(tableScan); ok && trimmed.Columnar() {
				a.stats.BackfillColumnarRows += uint64(n)
			}
		}
		if next != nil {
			b.resume = next
			return nil
		}
		b.source, b.resume = b.source+1, nil
		if b.state != nil && b.source < len(b.view.sources) && b.state.spillBeforeNextSource() {
			// The next chunk ingests the held state before this one
			// feeds the next source (backfillSpillEntriesMin).
			b.state.flush = true
			return nil
		}
	}
	b.scanned = b.source >= len(b.view.sources)
	return nil
}

// uncachedScanner is a pinned input whose scans can leave the store's
// block cache alone: a backfill reads each row once.
type uncachedScanner interface {
	ScanUncached(start, end []byte, fn func(k, v []byte) error) error
}

// scanOnce is r's scan of rows read once: uncached where r can.
func scanOnce(r kv.Reader) func(start, end []byte, fn func(k, v []byte) error) error {
	if u, ok := r.(uncachedScanner); ok {
		return u.ScanUncached
	}
	return r.Scan
}

// scanDecoder accumulates a backfill's scanned entries of one source
// (key without the source's prefix, value) into a delta.
type scanDecoder interface {
	// grow makes room for n more entries.
	grow(n int)
	add(k, v []byte) error
	delta() zset.Delta
}

// tableScan decodes a table's stored rows (weight 1 each) with a
// deltaDecoder, in columns or rows.
type tableScan struct{ dec deltaDecoder }

func (t tableScan) grow(n int)            { t.dec.grow(n) }
func (t tableScan) add(_, v []byte) error { return t.dec.add(v, 1) }
func (t tableScan) delta() zset.Delta     { return t.dec.delta() }

// rowScan decodes entries into rows with a decoder of one entry.
type rowScan struct {
	decode func(k, v []byte) (types.Row, int64, error)
	rows   zset.Batch
}

func (r *rowScan) grow(n int) {
	r.rows.Rows = slices.Grow(r.rows.Rows, n)
	r.rows.Weights = slices.Grow(r.rows.Weights, n)
}

func (r *rowScan) add(k, v []byte) error {
	row, w, err := r.decode(k, v)
	if err != nil {
		return err
	}
	r.rows.Add(row, w)
	return nil
}

func (r *rowScan) delta() zset.Delta { return zset.RowDelta(r.rows) }

// backfillDecoder is the key prefix of the rows of view v's source id and
// a decoder of the entries of one chunk: columnar for a table whose rows
// v's circuit steps columnar (columnarReader), rows otherwise.
func (a *Actor) backfillDecoder(v *installedView, id catalog.ID) ([]byte, scanDecoder, error) {
	rel, ok := a.snap.RelationByID(id)
	if ok && (rel.Kind == catalog.KindTable || rel.Kind == catalog.KindSource) && !a.cfg.BackfillRows {
		schema := Schema(rel)
		if zset.ColumnarSchema(schema) && columnarReader(v, id, schema) {
			codec, err := a.codecOf(rel)
			if err != nil {
				return nil, nil, err
			}
			dec := newColumnDecoder(codec, schema)
			return tablePrefix(id), tableScan{dec: dec}, nil
		}
	}
	prefix, decode, err := a.sourceRows(id)
	if err != nil {
		return nil, nil, err
	}
	return prefix, &rowScan{decode: decode}, nil
}

// sourceRows is the key prefix of a relation's stored rows and the
// decoder of one entry (key without the prefix, value) into a row and its
// weight.
func (a *Actor) sourceRows(id catalog.ID) ([]byte, func(k, v []byte) (types.Row, int64, error), error) {
	rel, ok := a.snap.RelationByID(id)
	if !ok {
		return nil, nil, errcode.New(errcode.UndefinedObject, "relation %s does not exist", id)
	}
	switch rel.Kind {
	case catalog.KindTable, catalog.KindSource:
		codec, err := a.codecOf(rel)
		if err != nil {
			return nil, nil, err
		}
		return tablePrefix(id), func(_, v []byte) (types.Row, int64, error) {
			row, err := codec.decode(v)
			return row, 1, err
		}, nil
	case catalog.KindMaterializedView:
		return circuit.ViewRowsPrefix(ViewID(id)), circuit.DecodeViewEntry, nil
	}
	return nil, nil, errcode.New(errcode.WrongObjectType, "%s is a %s; it has no stored rows", rel.Name, rel.Kind)
}

// bufferBackfillDeltas stores, in the epoch step's batch, the input deltas
// the running backfill's view would have stepped on (see the top of this
// file).
func (a *Actor) bufferBackfillDeltas(txn kv.Txn, epoch uint64, tableDeltas, viewDeltas map[catalog.ID]zset.Delta) error {
	if len(a.backfills) == 0 {
		return nil
	}
	b := a.backfills[0]
	from := b.from
	switch {
	case a.stagesAside(b):
		// Its tables are being copied as of the export's epoch: the
		// epochs up to it are in those rows (no step straddles it).
		// NB: before b.reader: a streamed export's rows are fed before
		// the frontier reaches the epoch.
		from = b.remote.epoch
		if epoch <= from {
			return nil
		}
	case b.reader != nil:
	default:
		return nil
	}
	// INVARIANT: the step covers only epochs after the snapshot's.
	assert.That(epoch > from && a.frontier >= from, "buffering epochs %d to %d for a backfill from %d", a.frontier+1, epoch, from)
	inputs := b.view.stepInputs(tableDeltas, viewDeltas)
	if len(inputs) == 0 {
		return nil
	}
	b.bufferedSinceChunk++
	return txn.Put(backfillDeltaKey(b.view.rel.ID, epoch), encodeBackfillDelta(b.view, inputs))
}

// takeBufferedDeltas moves buffered deltas, oldest first and about
// rowsPerChunk rows, into inputs and deletes them in txn: at least one
// entry more than were buffered since the last chunk, so the buffer
// shrinks with every chunk. It reports whether none is left.
func (a *Actor) takeBufferedDeltas(txn kv.Txn, b *backfill, inputs map[circuit.SourceID]zset.Batch) (bool, error) {
	prefix := backfillDeltaPrefix(b.view.rel.ID)
	rows, entries := 0, 0
	entriesMin := b.bufferedSinceChunk + 1
	empty := true
	var keys [][]byte
	err := a.store.Scan(prefix, kv.PrefixEnd(prefix), func(k, v []byte) error {
		if entries >= entriesMin && (rows >= b.rowsPerChunk || entries >= a.cfg.LogEntriesPerStepMax) {
			empty = false
			return kv.ErrStop
		}
		n, err := decodeBackfillDelta(v, b.view, inputs)
		if err != nil {
			return err
		}
		rows += n
		entries++
		keys = append(keys, append([]byte(nil), k...))
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return false, err
		}
	}
	return empty, nil
}

// encodeBackfillDelta encodes a step's input deltas of a view: uvarint
// count, then per source its index in view.sources, uvarint row count, and
// per row varint weight and the lossless row encoding (zset.EncodeRow).
func encodeBackfillDelta(v *installedView, inputs map[circuit.SourceID]zset.Delta) []byte {
	var out []byte
	n := 0
	for _, s := range v.sources {
		if _, ok := inputs[SourceID(s)]; ok {
			n++
		}
	}
	out = binary.AppendUvarint(out, uint64(n))
	for i, s := range v.sources {
		d, ok := inputs[SourceID(s)]
		if !ok {
			continue
		}
		b := d.Batch()
		out = binary.AppendUvarint(out, uint64(i))
		out = binary.AppendUvarint(out, uint64(len(b.Rows)))
		for j, r := range b.Rows {
			out = binary.AppendVarint(out, b.Weights[j])
			out = zset.EncodeRow(out, r)
		}
	}
	return out
}

// decodeBackfillDelta adds an entry's rows to inputs and returns how many
// it held.
func decodeBackfillDelta(enc []byte, v *installedView, inputs map[circuit.SourceID]zset.Batch) (int, error) {
	r := byteReader{src: enc}
	total := 0
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		idx := r.uvarint()
		if r.err == nil && idx >= uint64(len(v.sources)) {
			return 0, corrupt("buffered delta of view %s names source %d of %d", v.rel.Name, idx, len(v.sources))
		}
		id := SourceID(v.sources[idx])
		in := inputs[id]
		rows := r.uvarint()
		for j := uint64(0); j < rows && r.err == nil; j++ {
			w := r.varint()
			row, rest, err := zset.DecodeRow(r.src)
			if err != nil {
				return 0, corrupt("buffered delta of view %s: %v", v.rel.Name, err)
			}
			r.src = rest
			in.Rows, in.Weights = append(in.Rows, row), append(in.Weights, w)
			total++
		}
		inputs[id] = in
	}
	if r.err != nil {
		return 0, r.err
	}
	if len(r.src) != 0 {
		return 0, corrupt("buffered delta of view %s has %d trailing bytes", v.rel.Name, len(r.src))
	}
	return total, nil
}

// finishBackfill installs a filled view, answers the syncs waiting for
// it and serves the reads that waited.
func (a *Actor) finishBackfill(ctx runtime.Context, b *backfill) {
	a.backfills = a.backfills[1:]
	b.release()
	if err := a.endStaged(b); err != nil {
		ctx.Logger().Error("deleting the rows staged for a backfill", "view", b.view.rel.Name, "err", err)
	}
	if err := a.addView(b.view); err != nil {
		ctx.Logger().Error("installing a backfilled view", "view", b.view.rel.Name, "err", err)
		a.fail(ctx, b.view.rel, err)
		a.answerBackfillWaiters(b.view.rel.ID, err)
	} else {
		ctx.Logger().Info("view backfilled", "view", b.view.rel.Name, "from", b.from, "frontier", a.frontier, "rows_read", b.rowsRead)
		a.answerBackfillWaiters(b.view.rel.ID, nil)
	}
	// NB: handled as if they arrived now (a read naming another view
	// being filled waits again).
	a.replay(ctx, b.readers)
}

// holdReadForBackfill holds a Read of the current state naming a view
// being filled until its backfill ends, and reports whether it did.
func (a *Actor) holdReadForBackfill(m Read, from runtime.ActorID, reply func() runtime.Deferred) bool {
	if m.At != 0 {
		return false // readAt refuses views filled after the pin
	}
	for _, id := range m.Relations {
		if b := a.backfilling(id); b != nil && len(b.readers) < backfillReadersMax {
			b.readers = append(b.readers, parkedMessage{msg: m, from: from, reply: reply()})
			return true
		}
	}
	return false
}

// abandonBackfill removes backfill i from the queue, drops the state it
// wrote and answers the reads and (unless keepWaiters: the view is queued
// again) the syncs waiting for it with why.
func (a *Actor) abandonBackfill(ctx runtime.Context, i int, why error, keepWaiters bool) error {
	b := a.backfills[i]
	a.backfills = append(a.backfills[:i:i], a.backfills[i+1:]...)
	b.view.circuit.DiscardCaches()
	if !keepWaiters {
		a.answerBackfillWaiters(b.view.rel.ID, why)
	}
	a.answerBackfillReaders(b, why)
	if a.openErr == nil {
		if err := a.endStaged(b); err != nil {
			return err
		}
	}
	if b.reader == nil {
		return nil
	}
	b.release()
	ctx.Logger().Info("view backfill abandoned", "view", b.view.rel.Name, "reason", why)
	if a.openErr != nil {
		// The reopen starts from durable state; its install drops what
		// the backfill left (the backfill record says so).
		return nil
	}
	return a.dropState(b.view.rel.ID)
}

// abandonAllBackfills forgets every backfill (the shard is poisoned): the
// reopened shard queues them again from the catalog.
func (a *Actor) abandonAllBackfills(why error) {
	for _, b := range a.backfills {
		if b.reader != nil {
			b.release()
		}
		a.answerBackfillReaders(b, why)
	}
	a.backfills = nil
	waiters := a.backfillWaiters
	a.backfillWaiters = nil
	for _, w := range waiters {
		w.reply.Reply(why)
	}
}

// answerBackfillReaders answers the reads waiting for b's view, which
// will not be filled: why says why.
func (a *Actor) answerBackfillReaders(b *backfill, why error) {
	readers := b.readers
	b.readers = nil
	for _, p := range readers {
		p.reply.Reply(errcode.Wrap(errcode.ViewBackfillAbandoned, why, "materialized view %s stopped being filled before this read could see it", b.view.rel.Name))
	}
}

// receiveCancelBackfill stops a view's backfill.
func (a *Actor) receiveCancelBackfill(ctx runtime.Context, m CancelBackfill) {
	for i, b := range a.backfills {
		if b.view.rel.ID != m.View {
			continue
		}
		rel := b.view.rel
		why := errcode.New(errcode.QueryCanceled, "the backfill of materialized view %s was canceled", rel.Name)
		if err := a.abandonBackfill(ctx, i, why, false); err != nil {
			ctx.Reply(err)
			return
		}
		a.fail(ctx, rel, why)
		a.scheduleBackfill(ctx)
		break
	}
	ctx.Reply(struct{}{})
}

// awaitBackfills defers the answer to a sync of catalog value until the
// backfills of its views end; it reports false when none runs.
func (a *Actor) awaitBackfills(ctx runtime.Context, value control.SnapshotValue) bool {
	var views []catalog.ID
	for _, r := range value.Relations {
		if r.Relation.Kind == catalog.KindMaterializedView && a.backfilling(r.Relation.ID) != nil {
			views = append(views, r.Relation.ID)
		}
	}
	if len(views) == 0 {
		return false
	}
	if len(a.backfillWaiters) >= backfillWaitersMax {
		ctx.Reply(errcode.New(errcode.ShardUnavailable, "%d statements are already waiting for view backfills on this shard", len(a.backfillWaiters)))
		return true
	}
	a.backfillWaiters = append(a.backfillWaiters, backfillWaiter{reply: ctx.Defer(), views: views})
	return true
}

// answerBackfillWaiters records that view's backfill ended (err nil: the
// view is installed): a waiter whose views have all ended is answered,
// and one whose view failed gets err.
func (a *Actor) answerBackfillWaiters(view catalog.ID, err error) {
	kept := a.backfillWaiters[:0]
	for _, w := range a.backfillWaiters {
		left := w.views[:0]
		hit := false
		for _, id := range w.views {
			if id == view {
				hit = true
				continue
			}
			left = append(left, id)
		}
		w.views = left
		switch {
		case hit && err != nil:
			w.reply.Reply(err)
		case len(left) == 0:
			w.reply.Reply(Synced{Version: a.snap.Version})
		default:
			kept = append(kept, w)
		}
	}
	clear(a.backfillWaiters[len(kept):])
	a.backfillWaiters = kept
}

// backfillStatuses are the status lines of the views being backfilled.
func (a *Actor) backfillStatuses() []ViewStatus {
	out := make([]ViewStatus, 0, len(a.backfills))
	for i, b := range a.backfills {
		state := "queued"
		rows := b.rowsRead
		switch {
		case b.scanned:
			state = "catching up"
		case b.remote != nil && b.reader == nil:
			state, rows = "copying inputs", b.remote.staged
		case b.remote != nil && b.remote.stream && !b.remote.done:
			// Fed as they arrive (exportstream.go): rows counts those fed.
			state = "copying inputs"
		case b.reader != nil || i == 0:
			state = "reading inputs"
		}
		out = append(out, ViewStatus{View: b.view.rel.ID, Name: b.view.rel.Name, Backfill: state, BackfillRowsRead: rows,
			BackfillPercent: a.backfillPercent(b)})
	}
	return out
}

// backfillPercent estimates how much of b's pinned inputs its chunks have
// fed, without counting them: each input's rows are stored bucket after
// bucket, so the bucket of the key its scan resumes at says how far into
// that input it is (rows spread evenly over the buckets by their hash).
//
//	2 inputs, the second resumed at a key of bucket 1024 → (1 + 1024/4096) / 2 = 62.5%
func (a *Actor) backfillPercent(b *backfill) float64 {
	n := len(b.view.sources)
	switch {
	case b.scanned || n == 0:
		return 100
	case b.reader == nil:
		return 0
	}
	done := float64(b.source)
	if b.resume != nil && b.source < n {
		if prefix, _, err := a.sourceRows(b.view.sources[b.source]); err == nil && len(b.resume) >= len(prefix)+partition.BucketBytes {
			if bucket, ok := partition.ReadBucket(b.resume[len(prefix):]); ok {
				done += float64(bucket) / partition.Buckets
			}
		}
	}
	return 100 * done / float64(n)
}

// retryBackfills re-runs the catalog sync, which queues again the views
// whose backfill failed on storage (backfillRetryEvery after the failure).
type retryBackfills struct{}

// backfillRetryEvery spaces the retries of backfills failed by storage.
// Simulation range: fixed.
const backfillRetryEvery = time.Second

// storageFault reports whether err is the store's (unavailable, an I/O
// failure), not the view's: its backfill is retried, within its attempts.
func storageFault(err error) bool {
	return errcode.Has(err, errcode.ShardUnavailable) || errcode.Has(err, errcode.DurableObjectStoreIOFailure)
}

func (a *Actor) retryBackfillsLater(ctx runtime.Context) {
	if a.backfillRetrying {
		return
	}
	a.backfillRetrying = true
	ctx.After(backfillRetryEvery, retryBackfills{})
}

func (a *Actor) receiveRetryBackfills(ctx runtime.Context) {
	a.backfillRetrying = false
	if a.snap == nil {
		return
	}
	if _, err := a.syncCatalog(ctx, a.snap); err != nil {
		ctx.Logger().Error("retrying failed view backfills", "err", err)
		if storageFault(err) {
			a.retryBackfillsLater(ctx)
		}
	}
}
