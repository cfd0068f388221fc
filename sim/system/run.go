package system

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/shard/sqlplan"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/actors/wire"
	"github.com/rockstream/rockstream/faults"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
	"github.com/rockstream/rockstream/slate"
)

// Run sizes: small so one seed costs tens of milliseconds.
const (
	processName = "embedded"
	// safetyDuration is the virtual time of the faulty phase.
	safetyDuration = 1500 * time.Millisecond
	// setupAttemptsMax bounds the DDL retries while faults are on.
	setupAttemptsMax = 400
	// setupFaultyAttemptsMax: past it, setup continues with faults off.
	setupFaultyAttemptsMax = 200
	// finalAttemptsMax bounds the liveness phase's read retries.
	finalAttemptsMax = 50
	// valueDomain keeps GROUP BY groups few so retractions hit shared groups.
	valueDomain = 4
	// commitsMax bounds a run's transactions (the checks read whole tables).
	commitsMax = 80
	// finalReadWait bounds the virtual time the final read may take.
	finalReadWait = 30 * time.Second
)

// viewDefs are the materialized views the workload maintains.
//
//lint:immutable fixed workload definition, never written.
var viewDefs = []viewDef{
	{"g", "SELECT v, count(*) AS n, sum(k) AS s, max(c) AS m FROM t1 GROUP BY v"},
	{"j", "SELECT t1.k, t1.v, t2.w FROM t1 JOIN t2 ON t1.k = t2.k WHERE t2.w > 2"},
	{"jg", "SELECT t2.w, count(*) AS n, sum(t1.v) AS s FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY t2.w"},
	{"gv", "SELECT region, count(*) AS n, sum(q) AS s, max(id) AS m FROM gen GROUP BY region"},
	// Counts only: the Aggregate's linear path (decoded group cache, merge
	// operands resolved by slate) under crashes and discarded epochs.
	{"gc", "SELECT c, count(*) AS n, count(v) AS nv FROM t1 GROUP BY c"},
	// The transactional clients' hot rows (txn.go): every increment moves
	// a row from one balance group to the next, so each commit retracts.
	{"ag", "SELECT bal, count(*) AS n, max(w) AS m FROM acct GROUP BY bal"},
}

// temporalTickMin is the least interval of the table shard's tick epochs
// in a run (shard.Config.TemporalTickEvery: this plus the storage tick,
// 100ms..300ms): each is a durable write, and faster ticks would keep the
// table shard busy with them under the store's simulated latency.
const temporalTickMin = 100 * time.Millisecond

// temporalViewSQL is a view with a temporal filter over t1 (temporalView):
// row k's time is base (the table shard's clock when the view is
// created) plus 100ms per key and 500ms per v, so rows arrive about as
// their times pass, some in the future; each is in the view from its time
// for 2s.
const temporalViewSQL = "SELECT k, v FROM t1 WHERE %[1]s + k * interval '100 milliseconds' + v * interval '500 milliseconds' > now() - interval '2 seconds' AND %[1]s + k * interval '100 milliseconds' + v * interval '500 milliseconds' <= now()"

// temporalView is the workload's temporal view: rows enter and leave it
// as the (skewed) clock passes their times, by tick epochs as well as
// commits, under crashes and replays; every read checks it against its
// query at the read epoch's time.
func (r *runner) temporalView() viewDef {
	base := "timestamptz '" + r.temporalBase.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
	return viewDef{"tw", fmt.Sprintf(temporalViewSQL, base)}
}

// spreadViewDefs are added to viewDefs over three shards or more, where
// the views run on two view shards: a view reading views of both (one of
// them compiled into it, shard.Inlined).
//
//lint:immutable fixed workload definition, never written.
var spreadViewDefs = []viewDef{
	{"vv", "SELECT j.k, j.w, g.n FROM j JOIN g ON j.v = g.v"},
}

// workloadViews are the views setup creates.
func (r *runner) workloadViews() []viewDef {
	views := append([]viewDef(nil), viewDefs...)
	if r.temporal {
		views = append(views, r.temporalView())
	}
	if r.shards >= 3 {
		return append(views, spreadViewDefs...)
	}
	return views
}

// lateViewDefs: one of them may be created while data flows (backfilled
// from the tables while commits keep arriving).
//
//lint:immutable fixed workload definition, never written.
var lateViewDefs = []viewDef{
	{"late_agg", "SELECT t2.c, count(*) AS n, sum(t1.v) AS s, min(t2.w) AS lo FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY t2.c"},
	{"late_filter", "SELECT k, v FROM t1 WHERE v > 1"},
}

// viewDef is a materialized view of the workload.
type viewDef struct{ name, sql string }

func (d *viewDef) String() string {
	if d == nil {
		return "none"
	}
	return d.name
}

// Options configure one run.
type Options struct {
	Seed uint64
	// Config overrides the configuration drawn from the seed.
	Config *sim.Config
	// Plant turns on a planted bug (the build tag plants AckBeforeDurable).
	Plant Bug
	// DrawShards lays the store out over 1 to 8 shards drawn from the
	// seed (else one): TestSystemShards.
	DrawShards bool
	// NoTemporalView leaves the temporal view out of every run (else
	// half have it), for the exchange plants' tests: its tick epochs give
	// a lost epoch's number to a new epoch within a few hundred
	// milliseconds, which closes the window in which the checker sees a
	// view shard ahead of the table shard, and make a view shard sent
	// collected entries trip the export's assertion before the exchange's.
	NoTemporalView bool
}

// Bug is a planted bug the checkers must catch.
type Bug uint8

const (
	// NoBug: the real system.
	NoBug Bug = iota
	// AckBeforeDurable: the shard's store acknowledges Apply before the
	// WAL is durable.
	AckBeforeDurable
	// TornCommit: the shard's store applies a batch as two durable
	// writes, so a crash between them leaves a commit half-applied.
	TornCommit
)

func (b Bug) String() string {
	switch b {
	case AckBeforeDurable:
		return "ack-before-durable"
	case TornCommit:
		return "torn-commit"
	}
	return "none"
}

// tornApply is the TornCommit bug: two durable writes per batch.
type tornApply struct{ *storage.KV }

func (k tornApply) Apply(b *kv.WriteBatch) error {
	half := len(b.Ops) / 2
	if half == 0 {
		return k.KV.Apply(b)
	}
	if err := k.KV.Apply(&kv.WriteBatch{Ops: b.Ops[:half]}); err != nil {
		return err
	}
	return k.KV.Apply(&kv.WriteBatch{Ops: b.Ops[half:]})
}

// ApplyNoWait tears the batch the same way on the shard's group-commit path
// (the first half made durable on its own).
func (k tornApply) ApplyNoWait(b *kv.WriteBatch) error {
	half := len(b.Ops) / 2
	if half == 0 {
		return k.KV.ApplyNoWait(b)
	}
	if err := k.KV.Apply(&kv.WriteBatch{Ops: b.Ops[:half]}); err != nil {
		return err
	}
	return k.KV.ApplyNoWait(&kv.WriteBatch{Ops: b.Ops[half:]})
}

// Outcome is one run's result.
type Outcome struct {
	Header    string
	TraceHash uint64
	Err       error
	Log       string
	Stats     sim.Stats
	// Acked, Unknown count commits by outcome; Reads counts checked reads.
	Acked, Unknown, Reads int
	// Coverage is which faults and buggify sites the run exercised.
	Coverage Coverage
}

// ackNoWait is the planted bug: Apply returns before the batch is durable.
type ackNoWait struct{ *storage.KV }

func (k ackNoWait) Apply(b *kv.WriteBatch) error { return k.ApplyNoWait(b) }

// Sync is the same bug on the shard's group-commit path: the shared sync
// that acknowledges commits returns without making them durable.
func (k ackNoWait) Sync() error { return nil }

type runner struct {
	s   *sim.Sim
	rnd *rand.Rand
	// layoutDrawn: Options.DrawShards; shards: how many the run has
	// (drawShards).
	layoutDrawn bool
	shards      int
	log         strings.Builder
	snap        *control.Snapshot
	t1          *catalog.Relation
	t2          *catalog.Relation
	acct        *catalog.Relation
	views       []*catalog.Relation
	model       *model
	hist        history
	// sessions are the concurrent clients.
	sessions []*session
	// maxAcked is the highest acknowledged epoch; frontier the highest
	// frontier any read or status showed; lastEpoch the highest LastEpoch.
	maxAcked, frontier, lastEpoch uint64
	reads                         int
	healed, stopping              bool
	// timedOut: the last blocking ask timed out (virtual time).
	timedOut bool
	// failures counts consecutive failed requests to an up process.
	failures int
	// replyLoss is the chance a client loses a reply (its connection
	// drops: faults.NetworkDrop on the client link); replyDelayMean delays
	// every reply (faults.NetworkDelay).
	replyLoss      float64
	replyDelayMean time.Duration
	// overload: many sessions, no think time.
	overload bool
	// newShard makes shard id's actor; router addresses the shards by
	// the bucket map, set when they are spawned (ensureShards).
	newShard func(id partition.ShardID) runtime.Factory
	router   shard.Router
	spawned  bool
	// lateView is the view created while data flows (nil: none this run).
	lateView *viewDef
	// temporal: the run has the temporal view, whose times start at
	// temporalBase, the table shard's clock when it was created
	// (temporalView).
	temporal, noTemporal bool
	temporalBase         time.Time
	lateAt               time.Duration
	lateDone             bool
	cover                Coverage
	src                  sourceState
	// txns are the transactional clients' transactions (txn.go).
	txns txnModel
}

// session is one client connection: at most one request in flight, its
// own commits' epochs increasing, its reads after its own last commit.
type session struct {
	id   int
	busy bool
	// last is the session's acknowledged commit of the highest epoch.
	last     *commitRec
	thinkMax time.Duration
	// conn is the session's connection to its session actor (txn.go),
	// txn the transaction it runs there (nil: none).
	conn *txnConn
	txn  *txnRec
}

// supervisorFailuresMax: after this many consecutive failures of an up
// process (e.g. a store that failed to open answers its error until
// reopened), the driver restarts the process, as a supervisor restarts an
// engine whose Open failed.
const supervisorFailuresMax = 5

func (r *runner) heal() {
	if !r.healed {
		r.healed = true
		r.s.Heal()
		r.logf("heal")
	}
}

// failed records a failed request; past supervisorFailuresMax per session
// in a row on an up process, the supervisor restarts it.
func (r *runner) failed() {
	if r.timedOut {
		// Slow (a long open over a slow store), not broken: wait.
		r.timedOut = false
		return
	}
	if r.s.ProcessUp(processName) {
		r.failures++
		limit := supervisorFailuresMax
		if !r.healed {
			// The sessions' requests fail together.
			limit *= max(1, len(r.sessions))
		}
		if r.failures >= limit {
			r.logf("supervisor: restarting the process after %d failures", r.failures)
			r.cover.scenario("supervisor_restart")
			r.failures = 0
			r.s.Crash(processName)
			r.s.Restart(processName)
		}
	}
}

// failedWait is failed plus a pause, for the driver's blocking loops.
func (r *runner) failedWait() error {
	r.failed()
	return r.s.RunFor(5 * time.Millisecond)
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(&r.log, "%8v ", r.s.Now())
	fmt.Fprintf(&r.log, format, args...)
	r.log.WriteByte('\n')
}

// drawShards draws how many shards the run lays its store out over.
func (r *runner) drawShards() int {
	// Shards: 1 (a quarter of the seeds), or 2 to 8 (the table shard and
	// one to seven view shards fed by the exchange, spread views over all
	// of them), small counts the most often. Drawn from streams of their
	// own, so the other draws of a seed are as before.
	shards := 1
	if rs := r.s.Rand("system/shards"); r.layoutDrawn && rs.IntN(4) != 0 {
		shards = 2 + rs.IntN(2)
		// A third of the 3-shard runs get a third view shard (views
		// spread over three; drawn from a stream of its own).
		if shards == 3 && r.s.Rand("system/shards4").IntN(3) == 0 {
			shards = 4
			// And a third of those 5 to 8 shards.
			if rs8 := r.s.Rand("system/shards8"); rs8.IntN(3) == 0 {
				shards = 5 + rs8.IntN(4)
			}
		}
	}
	return shards
}

// Run simulates the embedded database under faults and checks it.
func Run(opts Options) Outcome {
	// Every message crosses the wire codec (issue 16): no actor shares
	// memory with another, and a message that is not a value fails the run.
	s := sim.New(sim.Options{Seed: opts.Seed, Config: opts.Config, AskTimeout: 20 * time.Second, Codec: wire.Standard()})
	r := &runner{s: s, rnd: s.Rand("system"), model: newModel(), layoutDrawn: opts.DrawShards, noTemporal: opts.NoTemporalView}
	plant := opts.Plant
	if plantAckBeforeDurable {
		plant = AckBeforeDurable
	}
	r.shards = r.drawShards()
	out := Outcome{Header: s.Describe() + fmt.Sprintf("system: planted bug=%s shards=%d\n", plant, r.shards)}
	err := r.run(plant)
	out.Err = err
	out.TraceHash = s.TraceHash()
	out.Stats = s.Stats()
	out.Acked, out.Unknown, out.Reads = r.model.acked, r.model.unknown, r.reads
	out.Log = r.log.String()
	r.cover.collect(s)
	out.Coverage = r.cover
	return out
}

func (r *runner) run(plant Bug) error {
	s := r.s
	memtable := int64(4<<10) << r.rnd.IntN(5) // 4..64 KiB: flushes happen
	tick := time.Duration(1+r.rnd.IntN(200)) * time.Millisecond
	r.overload = r.rnd.IntN(4) == 0
	n := 1 + r.rnd.IntN(4)
	if r.overload {
		n = 8 + r.rnd.IntN(5)
	}
	for i := range n {
		ss := &session{id: i + 1, thinkMax: time.Duration(1+r.rnd.IntN(30)) * time.Millisecond}
		if r.overload {
			ss.thinkMax = time.Millisecond
		}
		r.sessions = append(r.sessions, ss)
	}
	if r.rnd.IntN(3) != 0 {
		r.replyLoss = faults.MustLookup(faults.NetworkDrop).Param("probability").Draw(r.rnd)
	}
	r.replyDelayMean = time.Duration(faults.MustLookup(faults.NetworkDelay).Param("mean").Draw(r.rnd) * float64(time.Millisecond))
	if r.rnd.IntN(2) == 0 {
		r.lateView = &lateViewDefs[r.rnd.IntN(len(lateViewDefs))]
		r.lateAt = time.Duration(r.rnd.Int64N(int64(safetyDuration)))
	}
	// Half the runs have the temporal view (its own stream: the draw
	// shifts no other), whose tick epochs change the run's timeline.
	r.temporal = s.Rand("system/temporal").IntN(2) == 0 && !r.noTemporal
	if r.temporal {
		r.cover.scenario("temporal_view_run")
	}
	if r.overload {
		r.cover.scenario("overload_run")
	}
	r.cover.scenario(fmt.Sprintf("sessions_%02d", n))
	r.drawSource()
	r.logf("source rate=%d/s tick=%v rows_per_commit<=%d", r.src.rate, r.src.tick, r.src.perCommit)
	r.logf("memtable=%d tick=%v sessions=%d overload=%t reply_loss=%.3f reply_delay_mean=%v late_view=%v at %v",
		memtable, tick, n, r.overload, r.replyLoss, r.replyDelayMean, r.lateView, r.lateAt)
	// NB: several shards share their memtables' budget as the engine's
	// do (slate.MemoryPool), with unflushed bytes of four memtables; one
	// shard's runs are as before.
	var pool *slate.MemoryPool
	if r.shards > 1 {
		pool = slate.NewMemoryPool(memtable, 4*memtable, r.shards)
	}
	open := func(path string, slot int, bug Bug) func(runtime.Context) (kv.Store, error) {
		return func(ctx runtime.Context) (kv.Store, error) {
			opts := storage.Options{MemtableBytesMax: memtable}
			if pool != nil && slot >= 0 {
				opts.Pool, opts.PoolSlot = pool, slot
			}
			db, err := storage.Open(context.Background(), ctx.Store(), path, opts)
			if err != nil {
				return nil, err
			}
			switch bug {
			case AckBeforeDurable:
				return ackNoWait{db}, nil
			case TornCommit:
				return tornApply{db}, nil
			}
			return db, nil
		}
	}
	if err := s.AddProcess(processName, sim.ProcessOptions{Crashable: true}); err != nil {
		return err
	}
	shards := r.shards
	r.logf("shards=%d", shards)
	if err := s.Spawn(processName, control.ActorID, control.New(control.Config{OpenStore: open("control", -1, NoBug), TickEvery: tick, Shards: shards})); err != nil {
		return err
	}
	// The deadlock detector the shards report row-lock waits to (the
	// session actors' transactions wait for each other's rows, txn.go).
	if err := s.Spawn(processName, shard.DetectorID, shard.NewDetector()); err != nil {
		return err
	}
	logEntriesPerStepMax := 1 + r.rnd.IntN(64)
	// NB: its own stream, so the draw shifts none of the run's others.
	backfillRowsPerChunkMax := 1 + s.Rand("system/backfill").IntN(256)
	// The exchange's log margin: small, so the table shard collects its
	// delta log within a run (its own stream).
	logMargin := 1 + s.Rand("system/logmargin").Uint64N(16)
	r.logf("log_entries_per_step<=%d backfill_rows_per_chunk<=%d exchange_log_margin=%d", logEntriesPerStepMax, backfillRowsPerChunkMax, logMargin)
	// The shards are spawned once the bucket map is known (the first
	// catalog snapshot carries it: ensureShards).
	r.newShard = func(id partition.ShardID) runtime.Factory {
		return shard.New(shard.Config{
			ID: id, OpenStore: open(fmt.Sprintf("shards/%d", id), int(id), plant), Planner: sqlplan.Planner{}, TickEvery: tick, TemporalTickEvery: temporalTickMin + tick,
			LogEntriesPerStepMax: logEntriesPerStepMax, BackfillRowsPerChunkMax: backfillRowsPerChunkMax, ExchangeLogMargin: logMargin,
		})
	}
	if err := r.setup(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	start := s.Now()
	end := start + safetyDuration
	for _, ss := range r.sessions {
		r.schedule(ss, time.Duration(r.rnd.Int64N(int64(ss.thinkMax))))
	}
	for s.Now() < end && r.model.nextID <= commitsMax {
		if err := s.RunFor(10 * time.Millisecond); err != nil {
			return err
		}
		if r.lateView != nil && !r.lateDone && s.Now() >= start+r.lateAt {
			if err := r.createLateView(); err != nil {
				return err
			}
		}
		if s.ProcessUp(processName) && r.rnd.IntN(8) == 0 {
			if err := r.statusCheck(); errors.Is(err, errChecker) {
				return err
			}
		}
	}
	// Liveness phase: faults off, the process up; the sessions finish what
	// they have in flight, then everything acknowledged must be readable
	// and every view must match its query.
	r.stopping = true
	r.heal()
	if err := s.RunUntil(func() bool {
		for _, ss := range r.sessions {
			if ss.busy {
				return false
			}
		}
		return true
	}, time.Minute); err != nil {
		return fmt.Errorf("liveness: sessions still busy: %w", err)
	}
	if r.lateView != nil && !r.lateDone {
		if err := r.createLateView(); err != nil {
			return err
		}
	}
	// Give the generator time to commit after healing (its rows are due
	// at its rate from its restart).
	if err := s.RunFor(time.Second); err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < finalAttemptsMax; attempt++ {
		if err := s.Err(); err != nil {
			return err
		}
		if err := r.statusCheck(); err != nil {
			if errors.Is(err, errChecker) {
				return err
			}
			lastErr = err
		} else if err := r.finalRead(); err == nil {
			if err := r.sourceProgress(); err != nil {
				if attempt+1 < finalAttemptsMax {
					// The generator resumes at its rate once the shard
					// answers: give it time, then read again.
					lastErr = err
					if err := s.RunFor(500 * time.Millisecond); err != nil {
						return err
					}
					continue
				}
				return err
			}
			return r.hist.check()
		} else if errors.Is(err, errChecker) {
			return err
		} else {
			lastErr = err
		}
		r.logf("final read failed: %v", lastErr)
		if err := r.failedWait(); err != nil {
			return err
		}
	}
	return fmt.Errorf("liveness: no successful final read after %d attempts: %w", finalAttemptsMax, lastErr)
}

// schedule runs the session's next action after d.
func (r *runner) schedule(ss *session, d time.Duration) {
	ss.busy = true
	r.s.At(d, func() { r.act(ss) })
}

// think is a session's pause between requests.
func (r *runner) think(ss *session) time.Duration {
	return time.Duration(r.rnd.Int64N(int64(ss.thinkMax)))
}

// reply delivers a reply to the client after the client link's delay,
// or loses it (the connection dropped; the client never learns the outcome).
func (r *runner) reply(handle func(lost bool)) {
	lost := !r.healed && r.replyLoss > 0 && r.rnd.Float64() < r.replyLoss
	if lost {
		r.cover.scenario("client_reply_lost")
	}
	d := time.Duration(0)
	if r.replyDelayMean > 0 {
		d = time.Duration(r.rnd.ExpFloat64() * float64(r.replyDelayMean))
		r.cover.scenario("client_reply_delayed")
	}
	r.s.At(d, func() { handle(lost) })
}

// act issues the session's next request, or ends the session.
func (r *runner) act(ss *session) {
	if r.stopping || r.s.Err() != nil || r.model.nextID > commitsMax {
		ss.busy = false
		return
	}
	// Like the engine's session, every statement starts from the current
	// catalog snapshot (a snapshot never outlives its process: the
	// control plane's versions restart with it).
	// NB: asked with the version the driver holds, as the engine caches
	// its catalog (engine/catalogcache.go): an unchanged catalog is not
	// sent again.
	known := r.snap.Version
	r.askAsync(control.ActorID, control.GetSnapshot{Known: known}, func(reply runtime.Message, err error) {
		if err != nil {
			r.schedule(ss, r.think(ss)+5*time.Millisecond)
			return
		}
		var snap *control.Snapshot
		switch m := reply.(type) {
		case control.SnapshotUnchanged:
			if m.Version != r.snap.Version {
				// Another session's answer replaced r.snap meanwhile:
				// ask again.
				r.schedule(ss, 0)
				return
			}
			snap = r.snap
		case control.SnapshotValue:
			snap = control.SnapshotOf(m)
		}
		if snap.Version > r.snap.Version {
			r.snap = snap
		}
		t1, t2, gen, acct, views := relationsOf(snap)
		if t1 == nil || t2 == nil || gen == nil || acct == nil {
			r.s.Fail(fmt.Errorf("%w: catalog version %d lost the workload's tables", errChecker, snap.Version))
			return
		}
		switch x := r.rnd.IntN(10); {
		case x < 3:
			r.commitOne(ss, snap, t1, t2)
		case x < 8 && r.txns.next <= txnsMax:
			r.txnOne(ss, snap, acct)
		case x < 8:
			r.commitOne(ss, snap, t1, t2)
		default:
			q := readReq{snap: snap, t1: t1, t2: t2, gen: gen, acct: acct, views: views, floor: r.frontier, call: int64(r.s.Now())}
			r.asyncRead(ss, q, x >= 8)
		}
	})
}

// relationsOf finds the workload's relations in a catalog snapshot.
func relationsOf(snap *control.Snapshot) (t1, t2, gen, acct *catalog.Relation, views []*catalog.Relation) {
	for _, rel := range snap.Relations() {
		switch {
		case rel.Name == "t1":
			t1 = rel
		case rel.Name == "t2":
			t2 = rel
		case rel.Name == "gen":
			gen = rel
		case rel.Name == "acct":
			acct = rel
		case rel.Kind == catalog.KindMaterializedView:
			views = append(views, rel)
		}
	}
	return t1, t2, gen, acct, views
}

// ask completes an async request: the reply or an error (an error reply,
// the actor gone, or the reply lost on the client link).
func (r *runner) askAsync(to runtime.ActorID, msg runtime.Message, done func(runtime.Message, error)) {
	r.s.AskAsync(to, msg, func(reply runtime.Message, err error) {
		if err == nil {
			if e, ok := reply.(error); ok {
				err = e
			}
		}
		r.reply(func(lost bool) {
			if err == nil && lost {
				err = errReplyLost
			}
			if err != nil {
				r.failed()
				done(nil, err)
				return
			}
			r.failures = 0
			done(reply, nil)
		})
	})
}

// errReplyLost: the client's connection dropped before the reply.
var errReplyLost = errors.New("reply lost (client connection dropped)")

// commitOne issues one transaction; its reply records the outcome.
func (r *runner) commitOne(ss *session, snap *control.Snapshot, t1, t2 *catalog.Relation) {
	m := r.model
	c := &commitRec{id: m.nextID, session: ss.id, v: int64(r.rnd.IntN(valueDomain)), w: int64(r.rnd.IntN(2 * valueDomain)),
		floor: r.maxAcked, call: int64(r.s.Now()), presentMin: noPresence}
	m.nextID++
	m.commits = append(m.commits, c)
	if len(m.touchable) > 0 && r.rnd.IntN(2) == 0 {
		i := r.rnd.IntN(len(m.touchable))
		target := m.touchable[i]
		m.touchable = append(m.touchable[:i], m.touchable[i+1:]...)
		c.touch = &touch{target: target, delete: r.rnd.IntN(3) == 0, v: int64(r.rnd.IntN(valueDomain)), w: int64(r.rnd.IntN(2 * valueDomain))}
	}
	writes := []shard.RowWrite{
		{Table: t1.ID, Key: types.Row{c.id}, Row: c.rowT1(), MustNotExist: true},
		{Table: t2.ID, Key: types.Row{c.id}, Row: c.rowT2(), MustNotExist: true},
	}
	ops := []int{
		r.hist.write(ss.id, linKey{1, c.id}, c.rowT1(), c.call),
		r.hist.write(ss.id, linKey{2, c.id}, c.rowT2(), c.call),
	}
	if t := c.touch; t != nil {
		var row1, row2 types.Row
		if !t.delete {
			row1, row2 = types.Row{t.target, t.v, c.id}, types.Row{t.target, t.w, c.id}
		}
		writes = append(writes,
			shard.RowWrite{Table: t1.ID, Key: types.Row{t.target}, Row: row1},
			shard.RowWrite{Table: t2.ID, Key: types.Row{t.target}, Row: row2})
		ops = append(ops, r.hist.write(ss.id, linKey{1, t.target}, row1, c.call), r.hist.write(ss.id, linKey{2, t.target}, row2, c.call))
	}
	owner, routed := r.router.OwnerOfWrites(snap, writes)
	if !routed {
		panic("sim/system: a commit's writes span shards")
	}
	r.askAsync(r.router.ActorOf(owner), shard.Commit{CatalogVersion: snap.Version, Writes: writes}, func(reply runtime.Message, err error) {
		if err != nil {
			c.state = unknown
			m.unknown++
			r.cover.scenario("commit_unknown")
			r.logf("s%d commit %d (touch %+v): unknown: %v", ss.id, c.id, c.touch, err)
			r.schedule(ss, r.think(ss)+5*time.Millisecond)
			return
		}
		c.state, c.epoch = acked, reply.(shard.Committed).Epoch
		m.acked++
		r.cover.scenario("commit_acked")
		if c.touch != nil {
			r.cover.scenario("commit_acked_with_update_or_delete")
		}
		r.logf("s%d commit %d (touch %+v): epoch %d", ss.id, c.id, c.touch, c.epoch)
		for _, op := range ops {
			r.hist.finish(op, int64(r.s.Now()))
		}
		if err := c.checkAck(); err != nil {
			r.s.Fail(err)
			return
		}
		if ss.last != nil && c.epoch <= ss.last.epoch {
			r.s.Fail(fmt.Errorf("%w: session %d: commit %d acknowledged epoch %d, not after its previous commit's epoch %d", errChecker, ss.id, c.id, c.epoch, ss.last.epoch))
			return
		}
		ss.last = c
		r.maxAcked = max(r.maxAcked, c.epoch)
		m.touchable = append(m.touchable, c.id)
		if !r.healed && r.rnd.IntN(8*len(r.sessions)) == 0 {
			// Crash right after an acknowledgement (the window where a
			// commit acknowledged before it was durable is lost), restart
			// a little later.
			r.logf("driver: crash after commit epoch %d", c.epoch)
			r.cover.scenario("crash_after_ack")
			r.s.Crash(processName)
			r.s.At(time.Duration(r.rnd.IntN(20))*time.Millisecond, func() { r.s.Restart(processName) })
		}
		r.schedule(ss, r.think(ss))
	})
}

// asyncRead reads both tables and every view: a linearizable read
// (MinEpoch = the highest acknowledged epoch) or a session read
// (MinEpoch = the session's own last commit: read-your-writes).
func (r *runner) asyncRead(ss *session, q readReq, linearizable bool) {
	q.session, q.kind = ss.id, "linearizable"
	q.minEpoch = r.maxAcked
	if !linearizable {
		q.kind, q.minEpoch, q.call = "session", 0, 0
		if ss.last != nil {
			q.minEpoch, q.call = ss.last.epoch, ss.last.call
		}
	}
	r.readAsync(q, func(reply runtime.Message, err error) {
		if err != nil {
			r.logf("s%d read at %d: %v", ss.id, q.minEpoch, err)
			r.schedule(ss, r.think(ss)+5*time.Millisecond)
			return
		}
		if err := r.checkRead(q, reply.(shard.ReadResult)); err != nil {
			r.s.Fail(err)
			return
		}
		r.schedule(ss, r.think(ss))
	})
}

// readAsync sends read q: to the one shard serving its relations, or, over
// several shards, the views to the view shard first and then the tables
// to the table shard as of the view shard's frontier (as the session actor
// reads them), composed into one result in q.msg's order.
func (r *runner) readAsync(q readReq, done func(runtime.Message, error)) {
	m := q.msg()
	if len(r.router.Shards()) == 1 {
		r.askAsync(r.home(), m, done)
		return
	}
	tables, views := m.Relations[:4], m.Relations[4:]
	if r.viewsSpread(q.snap, views) {
		r.readSpread(m, done)
		return
	}
	// The view shard must show every commit the table shard's reads show
	// when the read begins (acknowledged or not): GetEpoch first.
	r.askAsync(r.home(), shard.GetEpoch{}, func(reply runtime.Message, err error) {
		if err != nil {
			done(nil, err)
			return
		}
		r.readViewsThenTables(m, tables, views, max(m.MinEpoch, reply.(shard.Committed).Epoch), done)
	})
}

// viewsSpread reports whether views run on more than one view shard
// (some on others than the rest, or one spread over all of them).
func (r *runner) viewsSpread(snap *control.Snapshot, views []catalog.ID) bool {
	for _, id := range views {
		if r.router.ReadHomeOf(snap, id) == shard.SpreadShards || shard.HomeOf(snap, r.router.Map(), id) != shard.HomeOf(snap, r.router.Map(), views[0]) {
			return true
		}
	}
	return false
}

// readSpread is readAsync over several view shards, as the session actor
// reads them: a snapshot opened on the table shard, whose pins the view
// shards take at its epoch, read shard by shard, then released.
func (r *runner) readSpread(m shard.Read, done func(runtime.Message, error)) {
	r.askAsync(r.home(), shard.OpenSnapshot{CatalogVersion: m.CatalogVersion}, func(reply runtime.Message, err error) {
		if err != nil {
			done(nil, err)
			return
		}
		opened := reply.(shard.SnapshotOpened)
		release := func() { r.askAsync(r.home(), shard.ReleaseSnapshot{ID: opened.ID}, func(runtime.Message, error) {}) }
		homes := make([][]partition.ShardID, len(m.Relations))
		for i, id := range m.Relations {
			homes[i] = r.router.ShardsOfHome(r.router.ReadHomeOf(r.snap, id))
		}
		out := make([]zset.Batch, len(m.Relations))
		// The views' shards are at the epoch, at its time; a shard
		// behind it (tables only) reports an earlier one.
		var at types.TimestampTZ
		var next func(shards []partition.ShardID)
		next = func(shards []partition.ShardID) {
			if len(shards) == 0 {
				release()
				done(shard.ReadResult{Frontier: opened.Epoch, FrontierTime: at, Batches: out}, nil)
				return
			}
			var ids []catalog.ID
			var slots []int
			for i, h := range homes {
				if slices.Contains(h, shards[0]) {
					ids, slots = append(ids, m.Relations[i]), append(slots, i)
				}
			}
			if len(ids) == 0 {
				next(shards[1:])
				return
			}
			r.askAsync(r.router.ActorOf(shards[0]), shard.Read{CatalogVersion: m.CatalogVersion, Relations: ids, At: opened.ID, PinEpoch: opened.Epoch}, func(reply runtime.Message, err error) {
				if err != nil {
					release()
					done(nil, err)
					return
				}
				for k, b := range reply.(shard.ReadResult).Batches {
					// A spread view's parts add up (placement.go).
					out[slots[k]].AddBatch(b, 1)
				}
				at = max(at, reply.(shard.ReadResult).FrontierTime)
				next(shards[1:])
			})
		}
		next(r.router.Shards())
	})
}

// readViewsThenTables is readAsync over several shards once the epoch the
// views must reach is known.
func (r *runner) readViewsThenTables(m shard.Read, tables, views []catalog.ID, minEpoch uint64, done func(runtime.Message, error)) {
	r.askAsync(r.router.ActorOf(shard.ViewShardOf(r.router.Map())), shard.Read{CatalogVersion: m.CatalogVersion, Relations: views, MinEpoch: minEpoch}, func(reply runtime.Message, err error) {
		if err != nil {
			done(nil, err)
			return
		}
		vr := reply.(shard.ReadResult)
		r.askAsync(r.home(), shard.Read{CatalogVersion: m.CatalogVersion, Relations: tables, AtEpoch: true, Epoch: vr.Frontier}, func(reply runtime.Message, err error) {
			if err != nil {
				done(nil, err)
				return
			}
			tr := reply.(shard.ReadResult)
			done(shard.ReadResult{Frontier: vr.Frontier, FrontierTime: vr.FrontierTime, Batches: append(tr.Batches, vr.Batches...)}, nil)
		})
	})
}

// readReq is one read and what it may be checked against.
type readReq struct {
	session  int
	snap     *control.Snapshot
	views    []*catalog.Relation
	t1, t2   *catalog.Relation
	gen      *catalog.Relation
	acct     *catalog.Relation
	minEpoch uint64
	// floor is the highest frontier seen before the read was issued.
	floor uint64
	// call starts the read's linearizability window.
	call int64
	kind string
}

func (q readReq) msg() shard.Read {
	rels := []catalog.ID{q.t1.ID, q.t2.ID, q.gen.ID, q.acct.ID}
	for _, v := range q.views {
		rels = append(rels, v.ID)
	}
	return shard.Read{CatalogVersion: q.snap.Version, Relations: rels, MinEpoch: q.minEpoch}
}

// finalReq is the read after healing, at the highest acknowledged epoch.
func (r *runner) finalReq() readReq {
	return readReq{snap: r.snap, views: append([]*catalog.Relation(nil), r.views...), t1: r.t1, t2: r.t2, gen: r.src.rel, acct: r.acct,
		floor: r.frontier, call: int64(r.s.Now()), kind: "final", minEpoch: r.maxAcked}
}

// checkRead checks one read: read-your-writes and frontier monotonicity,
// the tables against the model, every view against its query run over the
// same tables, and records the rows for the linearizability check.
func (r *runner) checkRead(q readReq, res shard.ReadResult) error {
	r.reads++
	r.cover.scenario(q.kind + "_read")
	r.logf("s%d %s read MinEpoch %d: frontier %d", q.session, q.kind, q.minEpoch, res.Frontier)
	if res.Frontier < q.minEpoch {
		return fmt.Errorf("%w: %s read with MinEpoch %d answered at frontier %d (read-your-writes)", errChecker, q.kind, q.minEpoch, res.Frontier)
	}
	if res.Frontier < q.floor {
		return fmt.Errorf("%w: read frontier %d behind a frontier seen before it was issued (%d)", errChecker, res.Frontier, q.floor)
	}
	r.frontier = max(r.frontier, res.Frontier)
	got1, err := rowsByKey("t1", res.Batches[0])
	if err != nil {
		return err
	}
	got2, err := rowsByKey("t2", res.Batches[1])
	if err != nil {
		return err
	}
	if err := r.model.checkTables(res.Frontier, got1, got2); err != nil {
		return fmt.Errorf("%s read at frontier %d: %w", q.kind, res.Frontier, err)
	}
	if err := r.checkSource(res.Frontier, res.Batches[2]); err != nil {
		return fmt.Errorf("%s read at frontier %d: %w", q.kind, res.Frontier, err)
	}
	acct, err := rowsByKey("acct", res.Batches[3])
	if err != nil {
		return err
	}
	inputs := map[catalog.ID]zset.Batch{q.t1.ID: res.Batches[0], q.t2.ID: res.Batches[1], q.gen.ID: res.Batches[2], q.acct.ID: res.Batches[3]}
	for i, v := range q.views {
		// A view over views is checked against the views read with it.
		inputs[v.ID] = zset.Consolidate(res.Batches[4+i])
	}
	for i, v := range q.views {
		if err := checkView(q.snap, v, inputs, res.Batches[4+i], res.FrontierTime); err != nil {
			return fmt.Errorf("%s read at frontier %d: %w", q.kind, res.Frontier, err)
		}
	}
	now := int64(r.s.Now())
	for id := int64(1); id < r.model.nextID; id++ {
		r.hist.read(q.session, linKey{1, id}, got1[id], q.call, now)
		r.hist.read(q.session, linKey{2, id}, got2[id], q.call, now)
	}
	return r.checkAcctRead(q, acct, now)
}

// finalRead reads at the highest acknowledged epoch after healing.
func (r *runner) finalRead() error {
	if err := r.refresh(); err != nil {
		return err
	}
	q := r.finalReq()
	var reply runtime.Message
	var err error
	answered := false
	r.readAsync(q, func(m runtime.Message, e error) { reply, err, answered = m, e, true })
	if rerr := r.s.RunUntil(func() bool { return answered }, finalReadWait); rerr != nil {
		return rerr
	}
	if err != nil {
		return err
	}
	if want := len(r.workloadViews()) + btoi(r.lateView != nil); len(q.views) != want {
		return fmt.Errorf("%w: %d views in the catalog after healing, want %d", errChecker, len(q.views), want)
	}
	return r.checkRead(q, reply.(shard.ReadResult))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// statusCheck: LastEpoch and Frontier never go backwards (across crashes),
// the frontier never passes the last epoch, and no acknowledged epoch is
// above the durable last epoch.
func (r *runner) statusCheck() error {
	floorEpoch, floorFrontier, acked := r.lastEpoch, r.frontier, r.maxAcked
	// The view shards first: their last epochs are what the exchange
	// delivered, never past the table shard's, asked after them.
	var viewStatuses []shard.Status
	if len(r.router.Shards()) > 1 {
		for _, id := range shard.ViewShardsOf(r.router.Map()) {
			reply, err := r.ask(r.router.ActorOf(id), shard.GetStatus{})
			if err != nil {
				return err
			}
			viewStatuses = append(viewStatuses, reply.(shard.Status))
		}
	}
	reply, err := r.ask(r.home(), shard.GetStatus{})
	if err != nil {
		return err
	}
	st := reply.(shard.Status)
	if st.CatalogFetches > 0 {
		r.cover.scenario("shard_fetched_catalog")
	}
	for i, vs := range viewStatuses {
		if vs.LastEpoch > st.LastEpoch {
			return fmt.Errorf("%w: view shard %d's last epoch %d is past the table shard's %d", errChecker, vs.Shard, vs.LastEpoch, st.LastEpoch)
		}
		// The views' frontier: the lowest view shard's (every read's
		// epoch is at most each view shard's frontier once answered).
		if i == 0 {
			st.Frontier = vs.Frontier
		}
		st.Frontier = min(st.Frontier, vs.Frontier)
	}
	switch {
	case st.LastEpoch < floorEpoch:
		return fmt.Errorf("%w: shard LastEpoch went backwards: %d after %d", errChecker, st.LastEpoch, floorEpoch)
	case st.LastEpoch < acked:
		return fmt.Errorf("%w: shard LastEpoch %d below acknowledged epoch %d", errChecker, st.LastEpoch, acked)
	case st.Frontier < floorFrontier:
		return fmt.Errorf("%w: shard frontier went backwards: %d after %d", errChecker, st.Frontier, floorFrontier)
	case st.Frontier > st.LastEpoch:
		return fmt.Errorf("%w: shard frontier %d ahead of its last epoch %d", errChecker, st.Frontier, st.LastEpoch)
	}
	r.lastEpoch, r.frontier = max(r.lastEpoch, st.LastEpoch), max(r.frontier, st.Frontier)
	return nil
}

// ensureShards spawns the shards of the catalog's bucket map the first
// time a snapshot is known; later snapshots must carry the same map (no
// migration runs here).
func (r *runner) ensureShards() error {
	m := r.snap.BucketMap()
	if r.spawned {
		if got, want := m.Encode(), r.router.Map().Encode(); string(got) != string(want) {
			return fmt.Errorf("%w: the bucket map changed from version %d to %d without a migration", errChecker, r.router.Map().Version, m.Version)
		}
		return nil
	}
	if err := shard.CheckServable(m); err != nil {
		return err
	}
	r.router = shard.NewRouter(m)
	for _, id := range r.router.Shards() {
		if err := r.s.Spawn(processName, r.router.ActorOf(id), r.newShard(id)); err != nil {
			return err
		}
	}
	r.spawned = true
	return nil
}

// home is the shard serving whole-relation requests.
func (r *runner) home() runtime.ActorID { return r.router.TableActor() }

// syncShards makes every shard run r.snap.
func (r *runner) syncShards() error {
	for _, id := range r.router.Shards() {
		if _, err := r.ask(r.router.ActorOf(id), shard.SyncCatalog{Catalog: r.snap.Value()}); err != nil {
			return err
		}
	}
	return nil
}

// errChecker marks checker violations (as opposed to unavailability).
var errChecker = errors.New("checker")

func (r *runner) ask(to runtime.ActorID, msg runtime.Message) (runtime.Message, error) {
	reply, err := r.s.Ask(context.Background(), to, msg)
	if err != nil {
		r.timedOut = errors.Is(err, sim.ErrAskTimeout)
		return nil, err
	}
	if e, ok := reply.(error); ok {
		return nil, e
	}
	return reply, nil
}

// setup creates the tables and views (retrying through faults, as a
// client would with IF NOT EXISTS) and syncs the shard.
func (r *runner) setup() error {
	col := func(name string, notNull bool) catalog.Column {
		return catalog.Column{Name: name, Type: types.TInt8, NotNull: notNull}
	}
	steps := []func() control.CreateRelation{
		func() control.CreateRelation {
			return control.CreateRelation{IfNotExists: true, Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "t1", PrimaryKey: []int{0},
				Columns: []catalog.Column{col("k", true), col("v", false), col("c", false)}}}
		},
		func() control.CreateRelation {
			return control.CreateRelation{IfNotExists: true, Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "t2", PrimaryKey: []int{0},
				Columns: []catalog.Column{col("k", true), col("w", false), col("c", false)}}}
		},
	}
	steps = append(steps, acctDDL, seqDDL, r.sourceDDL)
	for _, def := range r.workloadViews() {
		steps = append(steps, func() control.CreateRelation {
			if def.name == "tw" {
				// The temporal view's times start at the clock when it is
				// created (the first attempt's: a retry names the same).
				if r.temporalBase.IsZero() {
					r.temporalBase = r.s.ProcessNow(processName)
				}
				def = r.temporalView()
			}
			return r.viewDDL(def)
		})
	}
	attempts := 0
	retry := func(what string, err error) error {
		attempts++
		r.logf("setup %s: %v", what, err)
		if attempts == setupFaultyAttemptsMax {
			// The nemesis is too aggressive for DDL to finish (the control
			// DB open alone takes several store round trips): end the
			// safety phase early so the run still checks the workload.
			r.logf("setup: healing early after %d attempts", attempts)
			r.heal()
		}
		if attempts > setupAttemptsMax {
			return fmt.Errorf("%s: gave up after %d attempts: %w", what, attempts, err)
		}
		return r.failedWait()
	}
	if err := r.ddl(steps, retry); err != nil {
		return err
	}
	if r.t1 == nil || r.t2 == nil || r.acct == nil || r.src.rel == nil || len(r.views) != len(r.workloadViews()) {
		return fmt.Errorf("catalog incomplete after setup: %d views", len(r.views))
	}
	if err := r.seedAcct(retry); err != nil {
		return err
	}
	if err := r.spawnSource(); err != nil {
		return err
	}
	r.logf("setup done: catalog version %d", r.snap.Version)
	return nil
}

// viewDDL is the CreateRelation of a workload view.
func (r *runner) viewDDL(def viewDef) control.CreateRelation {
	rec := &catalog.Recorder{Base: r.snap}
	v, err := compileView(rec, def.sql)
	if err != nil {
		// INVARIANT: the fixed view definitions compile.
		panic(fmt.Sprintf("view %s: %v", def.name, err))
	}
	rel := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: def.name, SQL: def.sql, Refs: rec.Refs, Temporal: v.Temporal()}
	for _, c := range v.Columns {
		rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type})
	}
	// Placed as the engine places it (on the view shard of the views it
	// reads, else the one running the fewest).
	_, spreadable := dist.SpreadKeys(v.Plan)
	rel.Placement = shard.PlaceView(r.snap, r.router.Map(), rel, spreadable)
	switch {
	case shard.IsSpread(rel):
		r.logf("view %s spread over the shards", def.name)
	case r.shards > 1:
		r.logf("view %s placed on shard %d", def.name, int(rel.Placement)-1)
	}
	return control.CreateRelation{IfNotExists: true, Relation: rel, Deps: catalog.RefIDs(rec.Refs)}
}

// ddl runs DDL steps in order, then syncs the shard's catalog, calling
// retry after each failure (retry ends the attempt with its error).
func (r *runner) ddl(steps []func() control.CreateRelation, retry func(what string, err error) error) error {
	for i := 0; i < len(steps); {
		if err := r.refresh(); err != nil {
			if err := retry("snapshot", err); err != nil {
				return err
			}
			continue
		}
		if _, err := r.ask(control.ActorID, steps[i]()); err != nil {
			if err := retry(fmt.Sprintf("ddl %d", i), err); err != nil {
				return err
			}
			continue
		}
		i++
	}
	for {
		err := r.refresh()
		if err == nil {
			err = r.syncShards()
		}
		if err == nil {
			return nil
		}
		if err := retry("sync", err); err != nil {
			return err
		}
	}
}

// lateAttemptsMax bounds one try at the late view's DDL while faults are
// on; the driver tries again after healing.
const lateAttemptsMax = 20

// createLateView creates the late view while the sessions keep committing
// (the blocking asks run the simulation, sessions included).
func (r *runner) createLateView() error {
	attempts := 0
	err := r.ddl([]func() control.CreateRelation{func() control.CreateRelation { return r.viewDDL(*r.lateView) }},
		func(what string, err error) error {
			attempts++
			r.logf("late view %s: %s: %v", r.lateView.name, what, err)
			if attempts >= lateAttemptsMax && !r.healed || attempts >= setupAttemptsMax {
				return err
			}
			return r.failedWait()
		})
	if errors.Is(err, errChecker) || r.s.Err() != nil {
		return errors.Join(err, r.s.Err())
	}
	if err != nil {
		if r.healed {
			return fmt.Errorf("liveness: late view: %w", err)
		}
		r.lateAt += 50 * time.Millisecond
		return nil
	}
	r.lateDone = true
	r.cover.scenario("late_view_created")
	if r.healed {
		r.cover.scenario("late_view_created_after_heal")
	}
	r.logf("late view %s created: catalog version %d", r.lateView.name, r.snap.Version)
	return nil
}

// refresh reads the catalog snapshot and finds the workload's relations.
func (r *runner) refresh() error {
	reply, err := r.ask(control.ActorID, control.GetSnapshot{})
	if err != nil {
		return err
	}
	r.snap = control.SnapshotOf(reply.(control.SnapshotValue))
	if err := r.ensureShards(); err != nil {
		return err
	}
	r.views = nil
	for _, rel := range r.snap.Relations() {
		switch {
		case rel.Name == "t1":
			r.t1 = rel
		case rel.Name == "t2":
			r.t2 = rel
		case rel.Name == "gen":
			r.src.rel = rel
		case rel.Name == "acct":
			r.acct = rel
		case rel.Kind == catalog.KindMaterializedView:
			r.views = append(r.views, rel)
		}
	}
	return nil
}
