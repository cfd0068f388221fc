package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/runtime/real"
	"github.com/rockstream/rockstream/slate"
	"github.com/rockstream/rockstream/slate/objstore"
)

// Config configures an embedded engine.
type Config struct {
	// Store is the object store holding every database of this process.
	Store objstore.Store
	// Logger receives the engine's logs (nil: slog.Default()).
	Logger *slog.Logger
	// Storage tunes the slate databases.
	Storage storage.Options
	// StorageTickInterval is how often the actors run slate's background
	// work (WAL/memtable flush, compaction, GC). Default 100ms.
	StorageTickInterval time.Duration
	// StepBytesMax bounds the bytes of deltas one evaluation step may
	// hold: a view's backfill or maintenance step, an ad-hoc query (0: no
	// bound). Serve derives it from --memory-budget (stepBytesMax); a
	// step beyond it fails with 53200 (RS-5502) instead of growing.
	StepBytesMax int64
	// SubscriberQueueUpdatesMax bounds each SUBSCRIBE's queue of updates
	// (actors/subscriber; 0: subscriber.QueueUpdatesMaxDefault). Tests
	// shrink it to make the queue fill.
	SubscriberQueueUpdatesMax int
	// Shards is the number of shards a new store is laid out over (0:
	// one): the table shard and the view shards (actors/shard/
	// placement.go), each an actor with its own goroutine and database
	// under shards/<id>. A store keeps the layout it was created with.
	Shards int
	// PartitionTables lays a new store out with its tables partitioned
	// (experimental): the first half of the shards store the rows of
	// tables with a primary key by their key's bucket and take commits,
	// with epochs from the control plane; the others run the views. A
	// store keeps the layout it was created with.
	PartitionTables bool
	// ExchangeStages (experimental) plans new materialized views for the
	// exchanges between their operators: a view whose operators are
	// co-partitioned by a subset of their keys (GROUP BY a, b over rows
	// placed by a), or that joins a VALUES list, is spread over the view
	// shards too (dist.StageKeys). Views created with it keep their
	// placement when it is off.
	ExchangeStages bool
	// rangeSeeksAlways: shard.Config.RangeSeeksAlways (tests).
	rangeSeeksAlways bool
	// backfillRows: shard.Config.BackfillRows (tests).
	backfillRows bool
	// Clock is the engine's time source: the actors' clock (the epochs'
	// times, which materialized views' temporal filters run at) and
	// statements' now(). nil is the wall clock; tests drive time with it.
	Clock func() time.Time
}

// Engine is an embedded RockStream: one control plane and one shard in this
// process. It implements gateway.Engine.
type Engine struct {
	cfg   Config
	rt    *real.Runtime
	log   *slog.Logger
	ready atomic.Bool
	// fenced, once set, says why this process lost its storage to a newer
	// writer: terminal, reported by /readyz.
	fenced atomic.Pointer[string]

	mu       sync.Mutex
	sessions int
	nextSess uint64
	// byPID are the open sessions by their gateway process id
	// (pg_stat_activity's wait events, pg_cancel_backend's permission).
	byPID map[uint32]*session
	// gateway is the pgwire server serving this engine (nil: none, e.g.
	// an engine driven directly by tests): pg_stat_activity,
	// pg_cancel_backend and pg_terminate_backend act through it.
	gateway atomic.Pointer[gateway.Server]
	metrics Metrics
	// epochs remembers when recent epochs were committed (freshness.go).
	epochs epochClock
	// router addresses the shards by the bucket map (route.go); set
	// before any session exists and never changed.
	router shard.Router
	// queryMemory is the memory the running ad-hoc queries share
	// (querymemory.go); nil without Config.StepBytesMax.
	queryMemory *queryMemory
	// evalWorkers run ad-hoc evaluations (cancel.go).
	evalWorkers evalWorkers
	// catalog caches the newest catalog snapshot (catalogcache.go).
	catalog atomic.Pointer[control.Snapshot]

	// cdc holds the running POSTGRES sources (pgcdc.go), which live
	// outside the actor runtime: their goroutines hold network
	// connections.
	cdcMu sync.Mutex
	cdc   map[catalog.ID]*cdcSource
	// sinks are the running KAFKA sinks (kafka_sink.go), under cdcMu.
	sinks map[catalog.ID]*runningSink
}

// Metrics are process-wide counters for /metrics.
type Metrics struct {
	Commits      atomic.Uint64
	CommitErrors atomic.Uint64
	Queries      atomic.Uint64
	RowsWritten  atomic.Uint64
	// QueriesRunning counts statement evaluations in progress, including
	// ones whose statement was cancelled and that have not yet reached
	// their next interruption point.
	QueriesRunning atomic.Int64
}

// Open starts the actors, loads the catalog and hydrates every view.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StorageTickInterval <= 0 {
		cfg.StorageTickInterval = 100 * time.Millisecond
	}
	e := &Engine{cfg: cfg, log: cfg.Logger}
	if cfg.StepBytesMax > 0 {
		e.queryMemory = &queryMemory{limitBytes: cfg.StepBytesMax}
	}
	e.rt = real.New(real.Options{Store: cfg.Store, Logger: cfg.Logger, Now: cfg.Clock})
	openWith := func(path string, opts storage.Options) func(runtime.Context) (kv.Store, error) {
		return func(actx runtime.Context) (kv.Store, error) {
			return storage.Open(ctx, actx.Store(), path, opts)
		}
	}
	if err := e.rt.Spawn("embedded", control.ActorID, control.New(control.Config{OpenStore: openWith("control", cfg.Storage), TickEvery: cfg.StorageTickInterval, Shards: max(1, cfg.Shards), PartitionTables: cfg.PartitionTables})); err != nil {
		return nil, err
	}
	// The detector before the shards: they report row-lock waits to it.
	if err := e.rt.Spawn("embedded", shard.DetectorID, shard.NewDetector()); err != nil {
		return nil, err
	}
	snap, err := e.snapshot(ctx)
	if err != nil {
		e.Close(ctx)
		return nil, err
	}
	// NB: the shards share what one shard's database would get (the
	// memory budget assumes the control DB and one shard's), so the
	// budget holds whatever the layout.
	perShard := shardStorage(cfg.Storage, len(snap.BucketMap().Shards()))
	open := func(path string, slot int) func(runtime.Context) (kv.Store, error) {
		o := perShard
		o.PoolSlot = slot
		return openWith(path, o)
	}
	if err := e.spawnShards(snap, open); err != nil {
		e.Close(ctx)
		return nil, err
	}
	// NB: in the background: views whose backfill a restart interrupted
	// fill in chunks while the server serves (and can drop them).
	if err := e.syncShards(ctx, snap, true); err != nil {
		e.Close(ctx)
		return nil, err
	}
	if err := e.startSources(ctx, snap); err != nil {
		e.Close(ctx)
		return nil, err
	}
	e.ready.Store(true)
	return e, nil
}

// shardStorageBytesMin is the least block cache a shard's database gets
// when a budget is split over many shards.
const shardStorageBytesMin = 1 << 20

// shardStorage is each shard's storage options when shards shards share
// opts, the options of a single shard's database: their memtables and
// unflushed bytes share opts' budgets in one pool (slate.MemoryPool: the
// shard taking the commits grows into what the others leave unused, where
// an even split flushed it at half the size), each shard's slot set by
// its opener (PoolSlot); block caches are split evenly (at least
// shardStorageBytesMin each). Zero (the storage default) stays zero.
func shardStorage(opts storage.Options, shards int) storage.Options {
	if shards <= 1 {
		return opts
	}
	if opts.MemtableBytesMax > 0 && opts.UnflushedBytesMax > 0 {
		opts.Pool = slate.NewMemoryPool(opts.MemtableBytesMax, opts.UnflushedBytesMax, shards)
	}
	if opts.BlockCacheBytes > 0 {
		opts.BlockCacheBytes = max(opts.BlockCacheBytes/int64(shards), shardStorageBytesMin)
	}
	return opts
}

// Ready reports whether the catalog is loaded and every view hydrated.
func (e *Engine) Ready() bool { return e.ready.Load() }

// Unready says why the engine cannot serve ("" when it can): still
// recovering, or fenced by a newer writer of its storage (terminal).
func (e *Engine) Unready() string {
	if why := e.fenced.Load(); why != nil {
		return *why
	}
	if !e.ready.Load() {
		return "recovering: catalog or views not hydrated yet"
	}
	return ""
}

// Close stops the actors (flushing storage).
func (e *Engine) Close(ctx context.Context) error {
	e.ready.Store(false)
	// The sources commit through the runtime: they stop first.
	e.stopPostgresSources()
	e.stopSinks()
	defer e.evalWorkers.close()
	return e.rt.Shutdown(ctx)
}

// Metrics returns the process counters.
func (e *Engine) Metrics() *Metrics { return &e.metrics }

// Status returns the shards' status (views, frontier, counters) as one:
// every shard's views, the table shard's last epoch, the view shard's
// frontier (the epoch every view reflects), the counters summed.
func (e *Engine) Status(ctx context.Context) (shard.Status, error) {
	return e.status(ctx, shard.GetStatus{})
}

// viewStates is Status without the views' row counts (GetStatus), for a
// caller that asks only what state the views are in.
func (e *Engine) viewStates(ctx context.Context) (shard.Status, error) {
	return e.status(ctx, shard.GetStatus{NoRowCounts: true})
}

func (e *Engine) status(ctx context.Context, ask shard.GetStatus) (shard.Status, error) {
	all, err := e.shardStatuses(ctx, ask)
	if err != nil {
		return shard.Status{}, err
	}
	var out shard.Status
	viewShards := shard.ViewShardsOf(e.router.Map())
	for i, st := range all {
		id := partition.ShardID(st.Shard)
		for j := range st.Views {
			st.Views[j].Frontier = st.Frontier
		}
		if i == 0 {
			out = st
			continue
		}
		out.Ready = out.Ready && st.Ready
		out.LastEpoch = max(out.LastEpoch, st.LastEpoch)
		if slices.Contains(viewShards, id) {
			// The epoch every view reflects: the lowest view shard's.
			if id == viewShards[0] {
				out.Frontier = st.Frontier
			}
			out.Frontier = min(out.Frontier, st.Frontier)
		}
		out.CatalogVer = min(out.CatalogVer, st.CatalogVer)
		out.Views = mergeViewStatus(out.Views, st.Views)
		if out.LastError == "" {
			out.LastError = st.LastError
		}
		out.Commits += st.Commits
		out.CommitSyncs += st.CommitSyncs
		out.EpochSteps += st.EpochSteps
		out.StepNanos = max(out.StepNanos, st.StepNanos)
		out.StateWrites += st.StateWrites
		out.ViewRebuilds += st.ViewRebuilds
		out.CatalogFetches += st.CatalogFetches
		out.BackfillChunks += st.BackfillChunks
		out.BackfillColumnarRows += st.BackfillColumnarRows
		out.BackfillIngests += st.BackfillIngests
		out.BackfillRowsStaged += st.BackfillRowsStaged
		out.ReadRows += st.ReadRows
	}
	return out, nil
}

// mergeViewStatus adds a shard's view lines to those gathered so far: a
// view spread over the view shards (shard.IsSpread) has a line on each,
// which add up to one: its rows and state summed, its frontier the
// lowest, the first error or backfill phase any part reports.
func mergeViewStatus(into, more []shard.ViewStatus) []shard.ViewStatus {
	for _, v := range more {
		i := slices.IndexFunc(into, func(u shard.ViewStatus) bool { return u.View == v.View })
		if i < 0 {
			into = append(into, v)
			continue
		}
		u := &into[i]
		u.Rows += v.Rows
		u.StateRows += v.StateRows
		u.StateBytes += v.StateBytes
		u.BackfillRowsRead += v.BackfillRowsRead
		u.Frontier = min(u.Frontier, v.Frontier)
		if u.Error == "" {
			u.Error = v.Error
		}
		if u.Failed == "" {
			u.Failed, u.FailedCode = v.Failed, v.FailedCode
		}
		if u.Backfill == "" {
			u.Backfill, u.BackfillPercent = v.Backfill, v.BackfillPercent
		} else if v.Backfill != "" {
			// A spread view's fill is as far as its slowest part's.
			u.BackfillPercent = min(u.BackfillPercent, v.BackfillPercent)
		}
		if v.LagNanos > u.LagNanos {
			// The view is as fresh as its stalest part.
			u.LagNanos, u.Behind = v.LagNanos, v.Behind
		}
		if len(u.Nodes) == len(v.Nodes) {
			// The same circuit on every shard: its operators' counts add up.
			nodes := slices.Clone(u.Nodes)
			for j, n := range v.Nodes {
				nodes[j].RowsIn += n.RowsIn
				nodes[j].RowsOut += n.RowsOut
				nodes[j].StateRows += n.StateRows
				nodes[j].StateBytes += n.StateBytes
				nodes[j].StepNanos += n.StepNanos
				nodes[j].Steps = max(nodes[j].Steps, n.Steps)
				nodes[j].RowsMaterialized += n.RowsMaterialized
				nodes[j].Recent.Steps = max(nodes[j].Recent.Steps, n.Recent.Steps)
				nodes[j].Recent.RowsIn += n.Recent.RowsIn
				nodes[j].Recent.RowsOut += n.Recent.RowsOut
				nodes[j].Recent.StepNanos += n.Recent.StepNanos
			}
			u.Nodes = nodes
		}
	}
	return into
}

// ActorBusy is the time each actor spent handling messages (real.Runtime
// BusyTimes), shards and the control plane by id; sessions, subscription
// edges and sources, of which there are many and short-lived, summed by
// kind ("session", "subscriber", "source"), counting live actors only.
func (e *Engine) ActorBusy() []real.ActorBusy {
	var out []real.ActorBusy
	for _, b := range e.rt.BusyTimes() {
		id := b.ID
		if kind, _, ok := strings.Cut(string(id), "/"); ok && kind != "shard" {
			id = runtime.ActorID(kind)
		}
		if n := len(out); n > 0 && out[n-1].ID == id {
			out[n-1].Busy += b.Busy
			out[n-1].Store += b.Store
			continue
		}
		out = append(out, real.ActorBusy{ID: id, Busy: b.Busy, Store: b.Store})
	}
	return out
}

// ShardStatuses is every shard's own status, in shard order.
func (e *Engine) ShardStatuses(ctx context.Context) ([]shard.Status, error) {
	return e.shardStatuses(ctx, shard.GetStatus{})
}

func (e *Engine) shardStatuses(ctx context.Context, ask shard.GetStatus) ([]shard.Status, error) {
	var out []shard.Status
	for _, id := range e.router.Shards() {
		m, err := e.ask(ctx, e.router.ActorOf(id), ask)
		if err != nil {
			return nil, err
		}
		out = append(out, m.(shard.Status))
	}
	e.setFreshness(out, time.Now())
	return out, nil
}

// Snapshot returns the current catalog.
func (e *Engine) Snapshot(ctx context.Context) (*control.Snapshot, error) { return e.snapshot(ctx) }

// ask sends a request to an actor and turns an error reply into an error.
func (e *Engine) ask(ctx context.Context, to runtime.ActorID, msg runtime.Message) (runtime.Message, error) {
	reply, err := e.rt.Ask(ctx, to, msg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errcode.Wrap(errcode.QueryCanceled, err, "canceling statement due to user request")
		}
		return nil, errcode.Wrap(errcode.ShardUnavailable, err, "%s did not answer", to)
	}
	if err, ok := reply.(error); ok {
		if errcode.Has(err, errcode.ShardFenceLost) && e.fenced.Load() == nil {
			why := fmt.Sprintf("fenced: a newer writer owns this server's storage (%s); stop this server", to)
			if e.fenced.CompareAndSwap(nil, &why) {
				e.log.Error("storage fenced by a newer writer: this server can no longer commit; stop it", "actor", to, "err", err)
			}
		}
		return nil, err
	}
	return reply, nil
}

// detachedAskTimeout bounds an askDetached, so a stopping engine cannot
// hang a session's Close.
const detachedAskTimeout = 10 * time.Second

// askDetached asks for a clean-up that must happen even when the client
// canceled the statement it belongs to (releasing a snapshot or row
// locks, ending a lock wait): not under the statement's context, bounded,
// and logged (what says what failed) rather than returned, since the
// statement's outcome is already decided.
func (e *Engine) askDetached(to runtime.ActorID, msg runtime.Message, what string) {
	ctx, cancel := context.WithTimeout(context.Background(), detachedAskTimeout)
	defer cancel()
	if _, err := e.ask(ctx, to, msg); err != nil {
		e.log.Error(what, "err", err)
	}
}

// NewSession implements gateway.Engine.
func (e *Engine) NewSession(ctx context.Context, info gateway.SessionInfo) (gateway.Session, error) {
	if !e.Ready() {
		return nil, errcode.New(errcode.ShardUnavailable, "the database is starting up")
	}
	if info.Database != "" && info.Database != defaultNamespace && info.Database != info.User {
		// Namespaces other than default are not yet provisioned (spec §5.2).
		return nil, errcode.New(errcode.UndefinedDatabase, "database %q does not exist", info.Database).
			WithDetail("this server has the namespace %q", defaultNamespace)
	}
	e.mu.Lock()
	e.sessions++
	e.nextSess++
	id := e.nextSess
	s := &session{e: e, id: id, info: info, actor: sessionactor.ActorOf(id)}
	if info.ProcessID != 0 {
		if e.byPID == nil {
			e.byPID = map[uint32]*session{}
		}
		e.byPID[info.ProcessID] = s
	}
	e.mu.Unlock()
	if err := e.rt.Spawn("embedded", s.actor, sessionactor.New(sessionactor.Config{Session: id, Backend: info.ProcessID, Router: e.router})); err != nil {
		e.sessionClosed(s)
		return nil, errcode.Wrap(errcode.InternalError, err, "starting the session actor")
	}
	return s, nil
}

const defaultNamespace = "default"

func (e *Engine) sessionClosed(s *session) {
	e.mu.Lock()
	if e.byPID[s.info.ProcessID] == s {
		delete(e.byPID, s.info.ProcessID)
	}
	e.sessions--
	e.mu.Unlock()
}

func (e *Engine) String() string { return fmt.Sprintf("engine(%d sessions)", e.sessions) }

// now is the engine's clock (Config.Clock).
func (e *Engine) now() time.Time {
	if e.cfg.Clock != nil {
		return e.cfg.Clock()
	}
	return time.Now()
}
