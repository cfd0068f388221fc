package shard

import (
	"bytes"
	"encoding/binary"
	"github.com/rockstream/rockstream/buggify"
	"sort"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Config configures the shard actor.
type Config struct {
	// ID is the shard this actor serves (its actor is ActorOf(ID)); it
	// writes only rows of the buckets the bucket map gives it.
	ID partition.ShardID
	// OpenStore opens the shard DB on Started. Apply must be durable on
	// return: Commit acknowledges after it.
	OpenStore func(ctx runtime.Context) (kv.Store, error)
	Planner   Planner
	// LogEntriesPerStepMax bounds how many log entries one epoch step
	// consumes, so one step's batch stays bounded under a backlog; the rest
	// wait for the next step. Simulation range: 1..64.
	LogEntriesPerStepMax int
	// ExchangeLogMargin is how many epochs behind the lowest view shard's
	// frontier the table shard keeps its delta log (readAtEpoch: a
	// statement reading tables as of a view's frontier). 0: 1024.
	// Simulation range: 1..16, so the log is collected within a run.
	ExchangeLogMargin uint64
	// HistoryDeletesPerStepMax bounds how many expired change-history
	// entries (history.go) one epoch step deletes over all views, so a
	// shard back from a long stop never makes one step's batch unboundedly
	// large; the rest expire over the next steps. Simulation range: 1..256.
	HistoryDeletesPerStepMax int
	// TickEvery is how often the shard runs its store's background work
	// (stores that implement Ticker); 0 disables it. Simulation range:
	// 1ms..1s.
	TickEvery time.Duration
	// BackfillRowsPerChunkMax bounds the input rows one backfill chunk
	// feeds a view's circuit (backfill.go), so a chunk's batch and its
	// time holding the shard stay bounded; chunks adapt below it to
	// backfillChunkTarget. Simulation range: 1..256.
	BackfillRowsPerChunkMax int
	// DeadlockDetector receives the shard's row-lock wait-for edges
	// (deadlock.go); empty means DetectorID.
	DeadlockDetector runtime.ActorID
	// StepBytesMax bounds the bytes one view's circuit step may hold in
	// deltas (op.StepMemory; 0: no bound): a backfill or maintenance step
	// beyond it fails with RS-5502 (53200) instead of exhausting memory.
	// Simulation range: 0 only: the whole-system checker compares every
	// view with its query, which a view failed for memory has no answer
	// for; the bound is exercised by the engine's and the binary's tests.
	StepBytesMax int64
	// RangeSeeksAlways makes range reads seek to their ranges in each
	// bucket even of tables too small for it to pay (keyrange.go), so
	// tests on small tables take the path of large ones. Simulation
	// range: false.
	RangeSeeksAlways bool
	// BackfillRows makes backfills decode every input into rows, also
	// those a view's circuit steps columnar (backfill.go), and write the
	// view's state to the store in every chunk instead of holding it in
	// memory (backfillstate.go), so tests can compare the two paths.
	// Simulation range: false.
	BackfillRows bool
	// TemporalTickEvery is how often the table shard writes a tick epoch
	// while a view with a temporal filter exists (epochtime.go): at most
	// the delay between a row's time and its leaving such a view. 0:
	// temporalTickEvery (1s). Simulation range: 100ms plus the storage
	// tick (101ms..300ms), so rows expire many times within a run.
	TemporalTickEvery time.Duration
	// Control is the control-plane actor the shard fetches catalogs from
	// when a message names a newer one than it has (catalog.go); default
	// control.ActorID.
	Control runtime.ActorID
}

// Ticker is implemented by stores with background work driven by the owner.
type Ticker interface {
	Tick(now time.Time) error
}

// storageTick runs the store's background work.
type storageTick struct{}

const logEntriesPerStepDefault = 256

type installedView struct {
	rel     *catalog.Relation
	circuit *circuit.Circuit
	sources []catalog.ID
	// constants are the view's constant relations, fed once at backfill.
	constants map[circuit.SourceID]zset.Batch
	// widths is each source's column count when the view was planned, so
	// rows of a table widened later by ADD COLUMN are trimmed to it.
	widths map[catalog.ID]int
	// history is the view's change history state (history.go).
	history viewHistory
	// spread is this shard's part of a view spread over the shards
	// (placement.go); nil for a view maintained whole here.
	spread *spreadPart
	// temporal: the circuit has a temporal filter, so it steps as time
	// passes even with no input (epochtime.go).
	temporal bool
	// upper is the upper stage's state of a staged view on its home
	// (stages.go).
	upper *upperStage
}

// Actor is the shard actor.
type Actor struct {
	cfg       Config
	store     kv.Store
	ready     bool
	openErr   error
	snap      *control.Snapshot
	lastEpoch uint64
	frontier  uint64
	// lastEpochTime is the time of the last epoch, frontierTime the
	// frontier's: the time its views' temporal filters were stepped at
	// (epochtime.go). INVARIANT: frontierTime <= lastEpochTime on the
	// table shard.
	lastEpochTime, frontierTime types.TimestampTZ
	// commitMarks are the tables' watermarks on the commit side (table
	// shard), stepMarks as of the frontier (every shard), and
	// pendingMarks the commit being built's (watermark.go).
	commitMarks  map[catalog.ObjectID]commitWatermark
	stepMarks    map[op.WatermarkSource]types.TimestampTZ
	pendingMarks watermarkBatch
	// absent records the tables' last commits for commits that skip
	// reading keys their lookups found absent (absent.go).
	absent absentProofs
	// temporalTicking: a temporalTick timer is queued (epochtime.go);
	// temporalViews: the catalog temporalOf has a view with a temporal
	// filter.
	temporalTicking, temporalViews bool
	temporalOf                     *control.Snapshot
	// durableFrontier is the highest frontier known durable. Epoch steps
	// are written without waiting.
	// INVARIANT: durableFrontier <= frontier.
	durableFrontier uint64
	// readFloor is the last epoch read back at open: no read is served
	// at a frontier below it. A read may show a frontier whose steps are
	// not durable yet (their epochs are: makeFrontierShowable), so a crash
	// can take back the steps a reader saw but not their epochs; after
	// the restart the shard steps to every epoch it had before serving a
	// read again, and the state it shows is the one it showed before (the
	// steps replay deterministically), never an older one.
	// INVARIANT: a read is served only at a frontier >= readFloor.
	readFloor uint64
	// durableEpoch is the highest source epoch known durable: the last
	// epoch read back at open, or the last epoch at a successful sync.
	// Paired assertions (STYLE.md 9) check it on both sides of the
	// durable boundary: no commit is acknowledged past it (write side) and
	// the epochs read back at open are contiguous (read side).
	// INVARIANT: durableEpoch <= lastEpoch.
	durableEpoch uint64
	// views are installed views in creation (= dependency) order.
	views []*installedView
	// failed are the materialized views of the catalog that could not be
	// built or backfilled (failed.go), with the reason; they are retried
	// at every sync (a backfill only within its bound, backfill.go).
	failed map[catalog.ID]viewFailure
	// subs are the live subscriptions (subscription.go), in subscribe
	// order.
	subs []subscription
	// snapshots are pinned point-in-time readers (snapshot.go).
	snapshots    map[uint64]pinnedSnapshot
	nextSnapshot uint64
	// pins are the view shard's pins not reached yet (pins.go).
	pins []pendingPin
	// backfillRetrying: a retryBackfills timer is queued (backfill.go).
	backfillRetrying bool
	now              func() int64
	stats            Status
	// lastStepWrites is the length of the last epoch step's batch: the
	// next step's Txn reserves that much room (kv.NewTxnSized).
	lastStepWrites int
	// lastStepRows and lastRowStepWrites are the input rows and the
	// batch length of the last step that had input rows
	// (stepWritesHint).
	lastStepRows, lastRowStepWrites int
	// stepScheduled avoids queueing a tick per commit; stepScheduledAt is
	// when it was queued (rearmStep).
	stepScheduled   bool
	stepScheduledAt time.Time
	// codecs caches each relation version's row codec (relations are
	// immutable; ALTER makes a new one).
	codecs map[*catalog.Relation]tableCodec
	// indexes caches the current catalog's maintained indexes by table
	// (index.go); nil when the catalog changes.
	indexes map[catalog.ID][]tableIndex
	// reopen is the recovery of a poisoned shard (reopen.go).
	reopen reopenState
	// ticking is set once the storage tick timer runs (a reopen must not
	// start a second one).
	ticking bool
	// Group commit (groupcommit.go): commits applied but not yet durable,
	// whether a flushCommits timer is queued, and whether the last commit
	// wrote without syncing.
	pending        []pendingCommit
	waiting        []waitingRead
	flushScheduled bool
	commitUnsynced bool
	// upgradePending is set while the store's rows are in an older
	// format, re-keyed by the first catalog sync (upgrade.go).
	upgradePending bool
	// locks is the row-lock table of the rows this shard stores
	// (rowlock.go).
	locks lockTable
	// catalog follows the control plane's catalog by version (catalog.go).
	catalog catalogFetch
	// backfills are the views being filled, in creation order; the first
	// runs (backfill.go). backfillWaiters are the syncs waiting for them.
	backfills         []*backfill
	backfillWaiters   []backfillWaiter
	backfillScheduled bool
	// exchange moves committed deltas to the view shards (exchange.go),
	// and export fills their new views (export.go).
	exchange       exchangeState
	exports        []*export
	exportAttempts uint64
	// seal is a table shard's epochs in a partitioned layout (seal.go).
	seal sealState
	// twopc is its part in transactions on several shards (twophase.go).
	twopc twoPhase
	// stageStreams send the lower stages' outputs of staged views to their
	// home; stageTicking: a stageTick is queued (stages.go).
	stageStreams []stageStream
	stageTicking bool
	// upperStarted: an upper stage started; the reads waiting for it are
	// replayed after the message.
	upperStarted bool
}

// codecOf returns the row codec of a table (or source).
func (a *Actor) codecOf(rel *catalog.Relation) (tableCodec, error) {
	if c, ok := a.codecs[rel]; ok {
		return c, nil
	}
	pads := make([]types.Datum, len(rel.Columns))
	done := make([]bool, len(rel.Columns))
	c := tableCodec{ts: columnTypes(rel), pad: func(i int) (types.Datum, error) {
		col := rel.Columns[i]
		if done[i] || col.Default == "" || a.cfg.Planner == nil {
			return pads[i], nil
		}
		v, err := a.cfg.Planner.ColumnDefault(col)
		if err != nil {
			return nil, err
		}
		pads[i], done[i] = v, true
		return v, nil
	}}
	if a.codecs == nil {
		a.codecs = map[*catalog.Relation]tableCodec{}
	}
	a.codecs[rel] = c
	return c, nil
}

// New returns a shard actor factory.
func New(cfg Config) runtime.Factory {
	if cfg.LogEntriesPerStepMax <= 0 {
		cfg.LogEntriesPerStepMax = logEntriesPerStepDefault
	}
	if cfg.ExchangeLogMargin == 0 {
		cfg.ExchangeLogMargin = exchangeLogReadMargin
	}
	if cfg.BackfillRowsPerChunkMax <= 0 {
		cfg.BackfillRowsPerChunkMax = backfillRowsPerChunkDefault
	}
	if cfg.DeadlockDetector == "" {
		cfg.DeadlockDetector = DetectorID
	}
	if cfg.HistoryDeletesPerStepMax <= 0 {
		cfg.HistoryDeletesPerStepMax = historyDeletesPerStepDefault
	}
	if cfg.Control == "" {
		cfg.Control = control.ActorID
	}
	if cfg.TemporalTickEvery <= 0 {
		cfg.TemporalTickEvery = temporalTickEvery
	}
	return func() runtime.Actor { return &Actor{cfg: cfg, locks: newLockTable(cfg.DeadlockDetector)} }
}

// Receive implements runtime.Actor.
func (a *Actor) Receive(ctx runtime.Context, msg runtime.Message) {
	a.now = func() int64 { return ctx.Now().UnixNano() }
	a.locks.releaseFailed(ctx)
	// A message naming a newer catalog waits for it (catalog.go), before
	// it can observe or change anything.
	if a.parkForCatalog(ctx, msg) {
		return
	}
	if a.beforeMessage(ctx, msg) {
		// NB: a group commit's sync made epochs durable: the exchange
		// sends them now, not with the next message (which could be a
		// storage tick away: found by the cost model, sim/system).
		a.afterMessage(ctx)
		return
	}
	switch msg.(type) {
	case runtime.Started:
		if err := a.open(ctx); err != nil {
			a.openErr = err
			ctx.Logger().Error("shard open failed", "err", err)
			a.retryOpen(ctx, err)
		}
		return
	case runtime.Stopping:
		return
	}
	// The exchange sends what this message made durable (exchange.go).
	defer a.afterMessage(ctx)
	if a.receiveLock(ctx, msg) {
		return
	}
	a.maybeReopen(ctx)
	if a.openErr != nil {
		switch msg.(type) {
		case storageTick:
			// Keep ticking while poisoned: each tick may retry the reopen.
			ctx.After(a.cfg.TickEvery, storageTick{})
			return
		case backfillChunk:
			// The reopen queues the backfills again (poison forgot them).
			a.backfillScheduled = false
			return
		case exchangeTick:
			ctx.After(exchangeResendEvery, exchangeTick{})
			return
		case temporalTick:
			// Keep the timer while poisoned: the reopened shard ticks on.
			ctx.After(a.cfg.TemporalTickEvery, temporalTick{})
			return
		case awaitEpochTick:
			a.exchange.waitTicking = false
			return
		case allocEpochTick:
			// Kept: the reopened shard asks again if still unanswered.
			ctx.After(allocEpochRetryEvery, msg)
			return
		case SealThrough, ExportPaused, ExportStart, exportPauseTick, intentQuery, Decided:
			// NB: a reopen queries its intent in doubt again (loadIntent).
			return
		case sealTick:
			a.exchange.sealTicking = false
			return
		case runtime.Response:
			// The commits waiting for epochs fail with the shard.
			a.failQueuedCommits(ctx, openFailure(a.openErr, "commit was not made durable"))
			return
		case retryBackfills:
			// The reopen syncs the catalog, which queues them again.
			a.backfillRetrying = false
			return
		case stageTick:
			a.stageTicking = false
			return
		case ExchangeFrame, ExchangeAck, ExportChunk, ExportAck, exportTick, PinAt, ReleasePin, StageSubscribe, StageData:
			// NB: a pin asked while poisoned is lost with the state: a read
			// naming it fails with 40001 (pins.go).
			// The sender resends once this shard is back.
			return
		case control.SnapshotValue, control.SnapshotUnchanged, error:
			// NB: the control plane's answer to a catalog fetch is not a
			// request: answering it would send the control actor an error.
			// A reopened shard fetches again if it still needs to.
			return
		}
		if ctx.From() == ctx.Self() {
			// NB: a message the shard sent itself (an epoch tick) waits
			// for no answer; replying would deliver the error back to the
			// shard as a message. The reopen schedules a step itself.
			return
		}
		if c, ok := msg.(Commit); ok {
			// The commit fails, so its transaction is over.
			a.locks.release(ctx, c.Txn)
		}
		ctx.Reply(openFailure(a.openErr, "shard storage failed to open"))
		return
	}
	// Checked again: a reopen just now may have restored an older catalog.
	if a.parkForCatalog(ctx, msg) {
		return
	}
	switch m := msg.(type) {
	case SyncCatalog:
		a.receiveSyncCatalog(ctx, m)
	case control.SnapshotValue, control.SnapshotUnchanged, catalogFetchTick, error:
		// error: the control plane's answer to a catalog fetch.
		a.receiveCatalog(ctx, m)
	case Commit:
		if a.holdForIntent(ctx, m) {
			return
		}
		a.receiveCommit(ctx, m)
	case Prepare:
		a.receivePrepare(ctx, m)
	case Resolve:
		a.receiveResolve(ctx, m)
	case Decide:
		a.receiveDecide(ctx, m)
	case DecisionQuery:
		a.receiveDecisionQuery(ctx, m)
	case Decided:
		a.receiveDecided(ctx, m)
	case intentQuery:
		a.receiveIntentQuery(ctx, m)
	case Read:
		if m.AtEpoch && a.awaitSeal(ctx, m, m.Epoch) {
			return
		}
		if m.At == 0 && a.awaitEpoch(ctx, m, max(m.MinEpoch, a.readFloor)) {
			return
		}
		if a.awaitUpper(ctx, m, m.Relations) {
			return
		}
		if m.At != 0 && a.awaitPin(ctx, m) {
			return
		}
		if a.holdReadForBackfill(m, ctx.From(), ctx.Defer) {
			return
		}
		res, err := a.read(ctx, m)
		if r, ok := res.(ReadResult); ok && err == nil {
			rows := 0
			for _, b := range r.Batches {
				rows += b.Len()
			}
			runtime.Report(ctx, runtime.WorkReadRow, rows)
		}
		ctx.Reply(a.replyOf(res, err))
	case Lookup:
		if a.holdForIntent(ctx, m) {
			return
		}
		// NB: a table that just gained a primary key is re-keyed when its
		// catalog is adopted (rekey.go), which parkForCatalog did before.
		ctx.Reply(a.replyOf(a.lookup(m)))
	case OpenSnapshot:
		if m.ID != 0 && a.awaitSeal(ctx, m, m.Epoch) {
			return
		}
		ctx.Reply(a.replyOf(a.openSnapshot(ctx, m)))
	case ReleaseSnapshot:
		a.releaseSnapshot(ctx, m.ID)
		if !a.isTableShard() {
			// A partitioned layout's session releases every shard's pin.
			a.receiveReleasePin(ctx, ReleasePin(m))
		}
		ctx.Reply(struct{}{})
	case PinViews:
		a.receivePinViews(ctx, m)
	case PinAt:
		a.receivePinAt(ctx, m)
	case ReleasePin:
		a.receiveReleasePin(ctx, m)
	case Probe:
		// Pending group commits were answered first (beforeMessage).
		if a.parkProbe(ctx, m) {
			return
		}
		ctx.Reply(Probed{})
	case GetStatus:
		if a.awaitEpoch(ctx, m, a.readFloor) {
			return
		}
		ctx.Reply(a.status(ctx, m.NoRowCounts))
	case GetEpoch:
		// NB: the last epoch, not the durable one: this shard's reads
		// already show commits that await their sync, and a read of the
		// view shard must not show less than one of them did.
		ctx.Reply(Committed{Epoch: a.lastEpoch})
	case GetSourceOffset:
		n, err := getUint64(a.store, offsetKey(m.Source, m.Partition))
		ctx.Reply(a.replyOf(SourceOffset{Source: m.Source, Partition: m.Partition, Offset: n}, err))
	case Subscribe:
		if a.awaitEpoch(ctx, m, m.MinEpoch) {
			return
		}
		if b := a.backfilling(m.View); b != nil && len(b.readers) < backfillReadersMax {
			// Starts once the view is filled, as a read of it would.
			b.readers = append(b.readers, parkedMessage{msg: m, from: ctx.From(), reply: ctx.Defer()})
			return
		}
		a.receiveSubscribe(ctx, m)
	case SubscriptionCredit:
		a.receiveCredit(ctx, m)
	case Unsubscribe:
		a.unsubscribe(m.Edge)
		ctx.Reply(struct{}{})
	case storageTick:
		a.deferCompactionWhileBackfilling()
		if t, ok := a.store.(Ticker); ok {
			if buggify.Fire(ctx, buggify.ShardExtraStorageTick) { // background work (flush, compaction) at an odd moment, twice
				_ = t.Tick(ctx.Now())
			}
			if err := t.Tick(ctx.Now()); err != nil {
				if errcode.Has(err, errcode.ShardFenceLost) {
					// Terminal (poison): one log line, no more ticks.
					ctx.Logger().Error("shard store fenced by a newer writer; this shard stopped", "err", err)
					a.poison(err)
					return
				}
				ctx.Logger().Error("storage background work failed", "err", err)
			}
		}
		a.rearmStep(ctx)
		ctx.After(a.cfg.TickEvery, storageTick{})
	case epochTick:
		a.epochTick(ctx)
	case temporalTick:
		a.receiveTemporalTick(ctx)
	case retryBackfills:
		a.receiveRetryBackfills(ctx)
	case backfillChunk:
		a.receiveBackfillChunk(ctx)
	case CancelBackfill:
		a.receiveCancelBackfill(ctx, m)
	case runtime.Response:
		a.receiveEpochResponse(ctx, m)
	case allocEpochTick:
		a.receiveAllocEpochTick(ctx, m)
	case SealThrough:
		a.receiveSealThrough(ctx, m)
	case sealTick:
		a.receiveSealTick(ctx)
	case ExchangeFrame:
		a.receiveExchangeFrame(ctx, m)
	case StageSubscribe:
		a.receiveStageSubscribe(ctx, m)
	case StageData:
		a.receiveStageData(ctx, m)
	case stageTick:
		a.receiveStageTick(ctx)
	case ExchangeAck:
		a.receiveExchangeAck(ctx, m, ctx.From())
	case exchangeTick:
		a.receiveExchangeTick(ctx)
	case awaitEpochTick:
		a.receiveAwaitEpochTick(ctx)
	case ExportRequest:
		a.receiveExportRequest(ctx, m, ctx.From())
	case ExportChunk:
		a.receiveExportChunk(ctx, m)
	case ExportPaused:
		a.receiveExportPaused(ctx, m)
	case ExportStart:
		a.receiveExportStart(ctx, m, ctx.From())
	case exportPauseTick:
		a.receiveExportPauseTick(ctx)
	case ExportAck:
		a.receiveExportAck(ctx, m, ctx.From())
	case exportTick:
		a.receiveExportTick(ctx, m)
	default:
		a.unexpected(ctx, msg)
	}
}

func (a *Actor) replyOf(r runtime.Message, err error) runtime.Message {
	if err != nil {
		return err
	}
	return r
}

func (a *Actor) open(ctx runtime.Context) error {
	store, err := a.cfg.OpenStore(ctx)
	if err != nil {
		return err
	}
	a.store = store
	a.dropSnapshots()
	a.exchange.out, a.exchange.logFloor, a.exchange.taken = nil, 0, nil
	// NB: what a view shard of a partitioned layout took is forgotten
	// with the steps over it: the table shards send again from its
	// durable frontier (seal.go exchangeIns).
	a.exchange.in, a.exchange.takenFrom = nil, nil
	a.dropExports()
	if a.upgradePending, err = checkShardFormat(ctx, store); err != nil {
		return err
	}
	if a.lastEpoch, err = getUint64(store, lastEpochKey()); err != nil {
		return err
	}
	a.absent.opened(a.lastEpoch)
	if a.frontier, err = getUint64(store, frontierKey()); err != nil {
		return err
	}
	if a.frontierTime, err = getTime(store, frontierTimeKey()); err != nil {
		return err
	}
	a.lastEpochTime = a.frontierTime
	if err := a.loadWatermarks(store); err != nil {
		return err
	}
	if a.catalog.floor, err = getUint64(store, catalogFloorKey()); err != nil {
		return err
	}
	if _, ok := store.(Ticker); ok && a.cfg.TickEvery > 0 && !a.ticking {
		a.ticking = true
		ctx.After(a.cfg.TickEvery, storageTick{})
	}
	a.durableFrontier = a.frontier
	a.durableEpoch = a.lastEpoch
	a.readFloor = a.lastEpoch
	a.exchange.storedLast = a.lastEpoch
	// A view shard learns its floor from the table shard (reportFrontier).
	a.exchange.floorPending = true
	// A transaction's part in doubt (twophase.go), its seal held at the
	// last epoch read back.
	if err := a.loadIntent(ctx); err != nil {
		return err
	}
	// INVARIANT: the frontier never passes the last assigned epoch.
	if a.frontier > a.lastEpoch {
		return corrupt("frontier %d is past the last source epoch %d", a.frontier, a.lastEpoch)
	}
	// Read side of the commit pairing: every epoch a commit acknowledged
	// and maintenance has not consumed yet has its delta-log entry (the
	// last one: the epochs of a table shard of a partitioned layout are
	// sparse, seal.go, so the next after the frontier may have none).
	if a.lastEpoch > a.frontier {
		for _, e := range []uint64{a.lastEpoch} {
			if v, ok, err := store.Get(logKey(e)); err != nil {
				return err
			} else if !ok {
				return corrupt("delta log entry for epoch %d is missing at open (frontier %d, last %d)", e, a.frontier, a.lastEpoch)
			} else if e == a.lastEpoch {
				// The last epoch's time: new epochs are not earlier.
				at, err := logEntryTime(v)
				if err != nil {
					return err
				}
				a.lastEpochTime = max(a.lastEpochTime, at)
			}
		}
	}
	return nil
}

// Syncer is implemented by stores whose non-waiting writes can be made
// durable on demand.
type Syncer interface {
	Sync() error
}

// makeFrontierDurable makes sure the frontier about to be shown survives a
// crash (spec: frontiers never go backwards).
func (a *Actor) makeFrontierDurable() error {
	// NB: on a view shard the epochs taken from exchange frames are made
	// durable with the steps over them (exchange.go).
	if a.durableFrontier >= a.frontier && (a.isTableShard() || a.durableEpoch >= a.syncedEpoch()) {
		return nil
	}
	if s, ok := a.store.(Syncer); ok {
		if err := s.Sync(); err != nil {
			a.poison(err)
			return errcode.Wrap(errcode.ShardUnavailable, err, "frontier %d could not be made durable", a.frontier)
		}
		a.durableEpoch = a.syncedEpoch()
	}
	a.durableFrontier = a.frontier
	a.exchange.unsynced = 0
	return nil
}

// parkProbe parks a Probe behind the sender's requests that are parked
// here (a read waiting for the exchange's epochs, or for a view being
// filled): Probed means every earlier request of the sender was answered,
// and a session takes a request Probed overtook for lost. A read of a
// view being filled waited longer than a session's reply timeout and was
// then reported lost (RS-3100) although it was only waiting.
func (a *Actor) parkProbe(ctx runtime.Context, m Probe) bool {
	from := ctx.From()
	for _, p := range a.exchange.waitingReads {
		if p.from == from {
			return a.park(ctx, m)
		}
	}
	for _, b := range a.backfills {
		for _, p := range b.readers {
			if p.from == from {
				b.readers = append(b.readers, parkedMessage{msg: m, from: from, reply: ctx.Defer()})
				return true
			}
		}
	}
	// A partitioned layout's waits (seal.go, twophase.go): a read for a
	// seal, requests held by an intent in doubt or waiting to prepare, a
	// commit waiting for its epoch.
	for _, queue := range []*[]parkedMessage{&a.seal.waiting, &a.twopc.held, &a.twopc.preparing} {
		for _, p := range *queue {
			if p.from == from {
				*queue = append(*queue, parkedMessage{msg: m, from: from, reply: ctx.Defer()})
				return true
			}
		}
	}
	for _, q := range a.seal.queue {
		if q.from == from {
			a.seal.probes = append(a.seal.probes, parkedMessage{msg: m, from: from, reply: ctx.Defer()})
			return true
		}
	}
	return false
}

// makeFrontierShowable makes the frontier fit to show a reader: every
// epoch up to it is durable (a sync when the steps ran over epochs a view
// shard took from frames and has not synced yet), and it is not below
// readFloor, which a restart steps back to before any read. The steps
// themselves need no sync: the state they wrote is a function of the
// durable epochs, replayed identically after a crash. One sync per read
// was half the latency of a session that writes and then reads a view,
// and serialised concurrent readers behind each other's syncs.
func (a *Actor) makeFrontierShowable() error {
	if a.frontier < a.readFloor || (a.exchange.floorPending && !a.isTableShard()) {
		return errcode.New(errcode.ShardUnavailable, "the shard is replaying epochs %d to %d after a restart; retry the statement", a.frontier+1, a.readFloor)
	}
	if a.frontier <= a.durableEpoch || !a.isTableShard() {
		// A view shard's epochs are durable on the table shard, which
		// sends them again after a restart of this shard.
		return nil
	}
	return a.makeFrontierDurable()
}

// poison stops the shard after a failed write whose outcome is uncertain:
// every later request answers ShardUnavailable until the shard is reopened
// from durable state (reopen.go), which is always correct.
func (a *Actor) poison(err error) {
	a.openErr = err
	a.ready = false
	// Requests waiting for a catalog get the answer every request gets
	// now (catalog.go).
	a.failParked(openFailure(err, "shard storage failed"))
	a.failWaitingReads(openFailure(err, "shard storage failed"))
	a.abandonAllBackfills(openFailure(err, "shard storage failed during a view backfill"))
	if errcode.Has(err, errcode.ShardFenceLost) {
		// NB: a newer writer owns the store (another process, or an
		// operator's takeover). Reopening would fence it back, and the two
		// would take turns failing each other's commits: a fence is
		// terminal for this writer (slate's rule), so the shard stays
		// unavailable until the process restarts.
		a.reopen.poisoned = false
		return
	}
	if !a.reopen.poisoned {
		a.reopen.poisoned = true
		a.reopen.backoff = reopenBackoffMin
		a.reopen.at = time.Time{} // the next request tries at once
	}
}

// adoptSnapshot makes snap current if it is newer (and not below the
// catalog floor: catalog.go).
func (a *Actor) adoptSnapshot(ctx runtime.Context, snap *control.Snapshot) error {
	if snap == nil || snap.Version < a.catalog.floor || (a.snap != nil && snap.Version <= a.snap.Version) {
		return nil
	}
	_, err := a.syncCatalog(ctx, snap)
	return err
}

// syncCatalog installs new materialized views and drops removed ones.
//
// Order matters for recovery: views whose state is stored are rebuilt first
// (no recomputation), then the delta log above the frontier is applied to
// them, and only then are new views backfilled from the (now current)
// snapshot, so a backfill and the frontier describe the same point.
func (a *Actor) syncCatalog(ctx runtime.Context, snap *control.Snapshot) (runtime.Message, error) {
	if a.snap != nil && snap.Version < a.snap.Version {
		return Synced{Version: a.snap.Version}, nil
	}
	// INVARIANT: no catalog older than one the shard adopted before
	// (durably: the floor) is ever run, so no view's state is dropped
	// because a message was stale (catalog.go).
	assert.That(snap.Version >= a.catalog.floor, "adopting catalog version %d below the floor %d", snap.Version, a.catalog.floor)
	prev := a.snap
	prevViews := append([]*installedView(nil), a.views...)
	// The lower stages of staged views are relations of the shard's own
	// (stages.go).
	snap = a.withStages(snap)
	a.snap = snap
	// NB: row codecs are cached per relation pointer, and a catalog that
	// arrived as a value has all-new pointers: start afresh rather than
	// keep every version's entries (a bounded cache, STYLE.md 10).
	a.codecs, a.indexes = nil, nil
	synced := false
	defer func() {
		if !synced {
			// NB: a failed sync must be retried by the next message that
			// carries this catalog version, so restore the version and the
			// view list; otherwise a view skipped here would silently miss
			// the epochs committed before the retry.
			a.snap, a.views, a.indexes = prev, prevViews, nil
			a.discardCaches()
		}
	}()
	// Rows in an older format are re-keyed before anything reads them.
	if err := a.upgradeRowKeys(ctx, snap); err != nil {
		return nil, err
	}
	if prev != nil {
		for _, rel := range prev.Relations() {
			if _, still := snap.RelationByID(rel.ID); still || (rel.Kind != catalog.KindTable && rel.Kind != catalog.KindSource) {
				continue
			}
			if err := a.dropTable(rel.ID); err != nil {
				return nil, err
			}
		}
	}
	if err := a.rekeyTables(); err != nil {
		return nil, err
	}
	var prevRels []*catalog.Relation
	if prev != nil {
		prevRels = prev.Relations()
	}
	if err := a.syncIndexes(prevRels); err != nil {
		return nil, err
	}
	var fresh []*catalog.Relation
	isFresh := map[catalog.ID]bool{}
	// Installed views that were recompiled (or renamed) since: a new plan
	// is rebuilt from the inputs after the step below, with the views
	// reading it; a new name is adopted.
	rebuild := a.adoptRecompiled(snap)
	if err := a.adoptHistoryWindows(); err != nil {
		return nil, err
	}
	a.forgetFailed(snap)
	// Backfills of views that left the catalog, or changed plan, stop.
	if err := a.adoptBackfills(ctx, snap, rebuild); err != nil {
		return nil, err
	}
	for _, rel := range snap.Relations() {
		if rel.Kind != catalog.KindMaterializedView || a.installed(rel.ID) != nil || !a.placedHere(snap, rel.ID) {
			continue
		}
		if rel.Stages {
			// Its upper stage starts from the lower stages' outputs, not
			// from a backfill.
			if err := a.installUpper(ctx, snap, rel); err != nil {
				return nil, err
			}
			continue
		}
		if a.backfilling(rel.ID) != nil {
			isFresh[rel.ID] = true
			continue
		}
		marker, stored, err := a.store.Get(viewMarkerKey(rel.ID))
		if err != nil {
			return nil, err
		}
		if !stored {
			fresh = append(fresh, rel)
			isFresh[rel.ID] = true
			continue
		}
		v, err := a.build(snap, rel)
		if err != nil {
			// Its state is dropped with the state of every view not
			// installed (dropUnknownViewState): a view that is not
			// maintained misses epochs.
			a.fail(ctx, rel, err)
			continue
		}
		// Its stored state counters, so its status shows them before its
		// first step (a read error is the store's, as the marker's above).
		if err := v.circuit.LoadStateStats(a.store); err != nil {
			return nil, err
		}
		// State written in another format is rebuilt from the inputs
		// (format.go), before any step reads it.
		if reason, foreign := storedStateForeign(marker, v, isFresh); foreign {
			ctx.Logger().Info("view state is in another format: rebuilding the view from its inputs", "view", rel.Name, "reason", reason)
			if err := a.dropState(rel.ID); err != nil {
				return nil, err
			}
			a.stats.ViewRebuilds++
			fresh = append(fresh, rel)
			isFresh[rel.ID] = true
			continue
		}
		if err := a.addView(v); err != nil {
			return nil, err
		}
	}
	if err := a.stepAll(ctx); err != nil {
		return nil, err
	}
	// Drop views that left the catalog, and the state of those rebuilt.
	kept := a.views[:0]
	var dropped []*installedView
	for _, v := range a.views {
		if rel, ok := snap.RelationByID(v.rel.ID); ok && rel.Kind == catalog.KindMaterializedView && !rebuild[v.rel.ID] && a.placedHere(snap, rel.ID) {
			kept = append(kept, v)
		} else {
			dropped = append(dropped, v)
		}
	}
	a.views = kept
	for _, v := range dropped {
		if err := a.dropState(v.rel.ID); err != nil {
			return nil, err
		}
	}
	if err := a.dropUnknownViewState(snap); err != nil {
		return nil, err
	}
	if err := a.dropBackfillRecords(snap); err != nil {
		return nil, err
	}
	for _, v := range dropped {
		if rebuild[v.rel.ID] {
			rel, _ := snap.RelationByID(v.rel.ID)
			fresh = append(fresh, rel)
		}
	}
	if err := a.recordCatalogFloor(snap.Version); err != nil {
		return nil, err
	}
	// Backfilled in creation (= dependency) order, so a view reading a
	// rebuilt view is backfilled from its new output (backfill.go).
	sort.SliceStable(fresh, func(i, j int) bool { return objectNumber(fresh[i].ID) < objectNumber(fresh[j].ID) })
	for _, rel := range fresh {
		a.queueBackfill(ctx, snap, rel)
	}
	a.ready = true
	synced = true
	return Synced{Version: snap.Version}, nil
}

func (a *Actor) addView(v *installedView) error {
	delete(a.failed, v.rel.ID)
	if err := a.loadHistory(v); err != nil {
		return err
	}
	a.views = append(a.views, v)
	sort.SliceStable(a.views, func(i, j int) bool {
		return stepOrder(a.views[i].rel) < stepOrder(a.views[j].rel)
	})
	return nil
}

// stepOrder orders the views of a step: by creation, a staged view's
// lower stages just before it (stages.go).
func stepOrder(rel *catalog.Relation) uint64 {
	if rel.StageOf != nil {
		return 2 * objectNumber(rel.StageOf.View)
	}
	return 2*objectNumber(rel.ID) + 1
}

func (a *Actor) installed(id catalog.ID) *installedView {
	for _, v := range a.views {
		if v.rel.ID == id {
			return v
		}
	}
	return nil
}

func (a *Actor) build(snap *control.Snapshot, rel *catalog.Relation) (*installedView, error) {
	b := circuit.NewBuilder()
	planned, err := a.cfg.Planner.PlanView(b, snap, rel)
	if err != nil {
		return nil, err
	}
	sources := planned.Sources
	env := &expr.Env{StepBytesMax: a.cfg.StepBytesMax}
	if err := rel.ViewEnv(env); err != nil {
		return nil, errcode.Wrap(errcode.InvalidConfiguration, err, "the settings materialized view %s was created with", rel.Name)
	}
	c, err := b.Build(circuit.Config{ID: objectNumber(rel.ID), Env: env, Clock: a.now})
	if err != nil {
		return nil, err
	}
	v := &installedView{rel: rel, circuit: c, sources: sources, constants: planned.Constants, widths: map[catalog.ID]int{}, temporal: c.Temporal()}
	for _, s := range sources {
		src, ok := snap.RelationByID(s)
		if !ok {
			return nil, errcode.New(errcode.UndefinedObject, "view %s reads relation %s, which does not exist", rel.Name, s)
		}
		// NB: a failed view queued for a backfill again (retried) may
		// succeed before this view's backfill starts, which checks again.
		if f, failed := a.failed[s]; failed && a.backfilling(s) == nil {
			return nil, errcode.New(errcode.ViewBuildFailed, "it reads materialized view %s, which failed: %s", src.Name, f.reason)
		}
		// The plan reads the columns the source had when the view was
		// compiled (pinned), not the ones ADD COLUMN added since.
		if p, pinned := rel.PinnedRelation(s); pinned {
			src = p
		}
		v.widths[s] = len(src.Columns)
	}
	if IsSpread(rel) && len(SpreadShardsOf(snap.BucketMap())) > 1 {
		partEnv := &expr.Env{}
		if err := rel.ViewEnv(partEnv); err != nil {
			return nil, err
		}
		part, err := newSpreadPart(snap, rel, planned.SpreadKeys, a.cfg.ID, partEnv)
		if err != nil {
			return nil, err
		}
		v.spread = part
	}
	return v, nil
}

// trim cuts rows of a source widened since the view was planned, and
// keeps only this shard's part of a spread view's inputs.
func (v *installedView) trim(src catalog.ID, b zset.Batch) zset.Batch {
	if v.spread != nil {
		b = v.spread.filter(src, b)
	}
	w, ok := v.widths[src]
	if !ok {
		return b
	}
	out := zset.Batch{Rows: make([]types.Row, len(b.Rows)), Weights: b.Weights}
	for i, r := range b.Rows {
		if len(r) > w {
			r = r[:w]
		}
		out.Rows[i] = r
	}
	return out
}

// dropState deletes every key of a dropped view (scan-and-delete: slate has
// no range delete).
func (a *Actor) dropState(view catalog.ID) error {
	circuitID := objectNumber(view)
	var b kv.WriteBatch
	err := ownedKeys(a.store, circuitID, func(k []byte) {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
	})
	if err != nil {
		return err
	}
	// NB: not the backfill attempt record, which counts across the
	// attempts of one view (backfillbound.go) and goes with DROP.
	b.Ops = append(b.Ops, kv.Op{Key: viewMarkerKey(view), Delete: true})
	err = kv.ScanPrefix(a.store, backfillDeltaPrefix(view), func(k, _ []byte) error {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
		return nil
	})
	if err != nil {
		return err
	}
	if err := a.dropHistory(&b, view); err != nil {
		return err
	}
	sort.SliceStable(b.Ops, func(i, j int) bool { return bytes.Compare(b.Ops[i].Key, b.Ops[j].Key) < 0 })
	b.Ops = dedupOps(b.Ops)
	return a.store.Apply(&b)
}

// dropUnknownViewState drops the stored state of every view that is not a
// materialized view of snap. A shard adopting, after a restart, a catalog
// older than a view whose state it stores does not maintain that view
// while it runs that catalog; keeping the state would let a later catalog
// re-install the view from state that missed those epochs (sim seed 11).
// Dropped, the view is backfilled afresh when it comes back.
func (a *Actor) dropUnknownViewState(snap *control.Snapshot) error {
	prefix := []byte{kv.PrefixShardMeta, metaViewMarker}
	// NB: markers hold only the object part of a view's id (as every
	// shard key does), so views are matched by object.
	known := map[catalog.ObjectID]bool{}
	for _, v := range a.views {
		known[v.rel.ID.Object] = true
	}
	var unknown []catalog.ID
	err := kv.ScanPrefix(a.store, prefix, func(k, _ []byte) error {
		id := catalog.ID{Namespace: snap.Namespace()}
		if len(k) != len(prefix)+len(id.Object) {
			return corrupt("view marker key %x", k)
		}
		copy(id.Object[:], k[len(prefix):])
		if !known[id.Object] {
			unknown = append(unknown, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The partial state of an unfinished backfill (backfill.go) goes too
	// when its view left the catalog; a view still in it drops its own
	// when its backfill starts again.
	records := []byte{kv.PrefixShardMeta, metaBackfill}
	err = kv.ScanPrefix(a.store, records, func(k, _ []byte) error {
		id := catalog.ID{Namespace: snap.Namespace()}
		if len(k) != len(records)+len(id.Object) {
			return corrupt("backfill record key %x", k)
		}
		copy(id.Object[:], k[len(records):])
		if rel, ok := snap.RelationByID(id); (!ok || rel.Kind != catalog.KindMaterializedView) && !known[id.Object] {
			unknown = append(unknown, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range unknown {
		if err := a.dropState(id); err != nil {
			return err
		}
	}
	return nil
}

// dropTable deletes a dropped table's (or source's) rows and offset.
func (a *Actor) dropTable(id catalog.ID) error {
	var b kv.WriteBatch
	err := kv.ScanPrefix(a.store, tablePrefix(id), func(k, _ []byte) error {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
		return nil
	})
	if err != nil {
		return err
	}
	// The offsets of every partition extend the key of partition 0.
	err = kv.ScanPrefix(a.store, offsetKey(id, 0), func(k, _ []byte) error {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
		return nil
	})
	if err != nil {
		return err
	}
	b.Ops = append(b.Ops, kv.Op{Key: rekeyedKey(id), Delete: true})
	sort.SliceStable(b.Ops, func(i, j int) bool { return bytes.Compare(b.Ops[i].Key, b.Ops[j].Key) < 0 })
	return a.store.Apply(&b)
}

// ownedBy reports whether an IVM key (namespace, kind, op id(16), …) belongs
// to circuit circuitID: op ids are arrange.MakeID(circuitID, node).
func ownedBy(k []byte, circuitID uint64) bool {
	if len(k) < 2+16 || k[1] == kindTableRows {
		return false
	}
	if k[0] == kv.PrefixShardMeta && k[1] != 'S' {
		return false
	}
	if k[0] == kv.PrefixViewOutput {
		// NB: view outputs are keyed by view, not by operator:
		// arrange.MakeID(0, view) (circuit.viewArrangement), and a view's
		// number is its circuit's id.
		return binary.BigEndian.Uint64(k[2:10]) == 0 && binary.BigEndian.Uint64(k[10:18]) == circuitID
	}
	return binary.BigEndian.Uint64(k[2:10]) == circuitID
}

// ownedKeys calls fn with every key of r that circuit circuitID owns
// (ownedBy). It seeks from one key kind of each namespace to the next and
// reads only the circuit's range of each: reading every key of the
// namespaces read every table row too (a DROP on a store of 1M rows took
// about 0.2 s).
func ownedKeys(r kv.Reader, circuitID uint64, fn func(k []byte)) error {
	for _, ns := range []byte{kv.PrefixOpState, kv.PrefixOpIndex, kv.PrefixViewOutput, kv.PrefixShardMeta} {
		for kind := 0; kind < 256; kind++ {
			var next []byte
			err := r.Scan([]byte{ns, byte(kind)}, []byte{ns + 1}, func(k, _ []byte) error {
				next = append([]byte(nil), k...)
				return kv.ErrStop
			})
			if err != nil {
				return err
			}
			if len(next) < 2 {
				break // no key of a later kind
			}
			kind = int(next[1])
			prefix := []byte{ns, byte(kind)}
			if ns == kv.PrefixViewOutput {
				prefix = binary.BigEndian.AppendUint64(prefix, 0)
			}
			prefix = binary.BigEndian.AppendUint64(prefix, circuitID)
			err = kv.ScanPrefix(r, prefix, func(k, _ []byte) error {
				if ownedBy(k, circuitID) {
					fn(k)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func dedupOps(ops []kv.Op) []kv.Op {
	out := ops[:0]
	for i, op := range ops {
		if i > 0 && bytes.Equal(op.Key, ops[i-1].Key) {
			out[len(out)-1] = op
			continue
		}
		out = append(out, op)
	}
	return out
}

// snapshotOf reads the current contents of a relation: a table's rows or a
// materialized view's output.
func (a *Actor) snapshotOf(r kv.Reader, id catalog.ID) (zset.Batch, error) {
	rel, ok := a.snap.RelationByID(id)
	if !ok {
		return zset.Batch{}, errcode.New(errcode.UndefinedObject, "relation %s does not exist", id)
	}
	switch rel.Kind {
	case catalog.KindTable, catalog.KindSource:
		codec, err := a.codecOf(rel)
		if err != nil {
			return zset.Batch{}, err
		}
		var out zset.Batch
		err = kv.ScanPrefix(r, tablePrefix(id), func(_, v []byte) error {
			row, err := codec.decode(v)
			if err != nil {
				return err
			}
			out.Add(row, 1)
			return nil
		})
		return out, err
	case catalog.KindMaterializedView:
		if f, failed := a.failed[id]; failed {
			return zset.Batch{}, errcode.New(errcode.ViewBuildFailed, "materialized view %s failed: %s", rel.Name, f.reason)
		}
		if a.backfilling(id) != nil {
			return zset.Batch{}, errcode.New(errcode.ShardUnavailable, "materialized view %s is still being filled from its inputs (backfilling); read it once SHOW VIEW STATUS shows it running", rel.Name)
		}
		if a.installed(id) == nil {
			return zset.Batch{}, errcode.New(errcode.ShardUnavailable, "materialized view %s is not installed on this shard yet", rel.Name)
		}
		return circuit.ReadView(r, ViewID(id))
	}
	return zset.Batch{}, errcode.New(errcode.WrongObjectType, "%s is a %s; it has no stored rows", rel.Name, rel.Kind)
}
