package system

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/shard/sqlplan"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// The cost model's throughput runs (sim.CPUModel): the real control
// plane, shards, exchange and view circuits in the simulator, with no
// faults, every actor's reported work charged in virtual time on a
// bounded number of cores, and a client actor streaming insert batches
// into one table as a COPY does. The virtual time until the view shows
// the last batch is what the layout would take on that many cores, if
// the work cost what the model says (calibrated from profiles of `rockstream
// bench nexmark`, see TestCostModel):
//
//	client ──Commit{batch i}──► table shard (commit rows) ──frames──► view shard(s) (log rows, step rows)
//	  ingest rows per batch      one at a time, like COPY rounds
//
// Test-only: Project runs from the tests (cost_test.go).

// ProjectOptions is one throughput run.
type ProjectOptions struct {
	// Shards lays the store out over this many shards (1: everything on
	// one); Cores is the process's (both at least 1).
	Shards, Cores int
	// Spread makes the view one the shards can spread (a GROUP BY of the
	// table's column: every view shard maintains its share), else one
	// that runs whole on one view shard (a global aggregate).
	Spread bool
	// Batches of BatchRows rows each, committed one after the other.
	Batches, BatchRows int
	// PerUnit is the modelled CPU time of each kind of work.
	PerUnit [runtime.WorkKinds]time.Duration
	// StoreLatency is every object-store call's (a durable write is one
	// put: a local fsync, or an S3 PUT).
	StoreLatency time.Duration
}

// Projection is what a throughput run took.
type Projection struct {
	// Elapsed is the virtual time from the first batch until the view
	// shows the last one.
	Elapsed time.Duration
	// CPU is the model's CPU accounting (busy time, work by kind).
	CPU sim.CPUStats
	// StoreCalls counts the object-store calls of the run.
	StoreCalls int
}

// costViews are the throughput runs' views over t1 (k, v, c): v takes
// costGroups values, so a spread view's groups hash evenly.
const (
	costSpreadView = "SELECT v, count(*) AS n, sum(c) AS s FROM t1 GROUP BY v"
	costWholeView  = "SELECT count(*) AS n, sum(c) AS s FROM t1"
	costGroups     = 4096
)

// Project runs one throughput run of the cost model.
func Project(o ProjectOptions) (Projection, error) {
	if o.Shards < 1 || o.Cores < 1 || o.Batches < 1 || o.BatchRows < 1 {
		return Projection{}, fmt.Errorf("project: shards, cores, batches and rows must be at least 1: %+v", o)
	}
	cfg := sim.Config{NemesisInterval: time.Hour, MailboxMessagesMax: 1 << 16, Store: sim.FaultConfig{LatencyBase: o.StoreLatency}}
	s := sim.New(sim.Options{Seed: 1, Config: &cfg, AskTimeout: time.Hour, CPU: &sim.CPUModel{Cores: o.Cores, PerUnit: o.PerUnit}})
	s.Heal()
	r := &runner{s: s, rnd: s.Rand("cost"), model: newModel(), shards: o.Shards}
	open := func(path string) func(runtime.Context) (kv.Store, error) {
		return func(ctx runtime.Context) (kv.Store, error) {
			return storage.Open(context.Background(), ctx.Store(), path, storage.Options{})
		}
	}
	if err := s.AddProcess(processName, sim.ProcessOptions{}); err != nil {
		return Projection{}, err
	}
	if err := s.Spawn(processName, control.ActorID, control.New(control.Config{OpenStore: open("control"), TickEvery: 10 * time.Millisecond, Shards: o.Shards})); err != nil {
		return Projection{}, err
	}
	if err := s.Spawn(processName, shard.DetectorID, shard.NewDetector()); err != nil {
		return Projection{}, err
	}
	r.newShard = func(id partition.ShardID) runtime.Factory {
		return shard.New(shard.Config{ID: id, OpenStore: open(fmt.Sprintf("shards/%d", id)), Planner: sqlplan.Planner{}, TickEvery: 10 * time.Millisecond})
	}
	col := func(name string) catalog.Column { return catalog.Column{Name: name, Type: types.TInt8, NotNull: true} }
	view := viewDef{"cv", costWholeView}
	if o.Spread {
		view.sql = costSpreadView
	}
	fail := func(what string, err error) error { return fmt.Errorf("project: %s: %w", what, err) }
	err := r.ddl([]func() control.CreateRelation{
		func() control.CreateRelation {
			return control.CreateRelation{IfNotExists: true, Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "t1", PrimaryKey: []int{0},
				Columns: []catalog.Column{col("k"), col("v"), col("c")}}}
		},
		func() control.CreateRelation { return r.viewDDL(view) },
	}, fail)
	if err != nil {
		return Projection{}, err
	}
	if len(r.views) != 1 || r.t1 == nil {
		return Projection{}, fmt.Errorf("project: catalog incomplete: %d views", len(r.views))
	}
	if o.Spread != shard.IsSpread(r.views[0]) && o.Shards >= 2 {
		return Projection{}, fmt.Errorf("project: view %q spread=%t, want %t", view.sql, shard.IsSpread(r.views[0]), o.Spread)
	}
	client := &costClient{table: r.t1.ID, version: r.snap.Version, to: r.router.TableActor(), batches: o.Batches, rows: o.BatchRows,
		rnd: rand.New(rand.NewPCG(1, 2))}
	if err := s.Spawn(processName, costClientID, func() runtime.Actor { return client }); err != nil {
		return Projection{}, err
	}
	before := s.CPUStats(processName)
	calls := s.Store(processName).Stats().Calls
	start := s.Now()
	// NB: AskAsync's callback runs when the reply leaves its actor, after
	// the work charged to the Receive that sent it (a blocking Ask ends
	// when that Receive starts).
	ask := func(to runtime.ActorID, msg runtime.Message) (runtime.Message, error) {
		var reply runtime.Message
		var err error
		done := false
		s.AskAsync(to, msg, func(m runtime.Message, e error) { reply, err, done = m, e, true })
		if e := s.RunUntil(func() bool { return done }, time.Hour); e != nil {
			return nil, e
		}
		if e, ok := reply.(error); ok && err == nil {
			err = e
		}
		return reply, err
	}
	if _, err := ask(costClientID, costGo{}); err != nil {
		return Projection{}, fail("client", err)
	}
	if client.err != nil {
		return Projection{}, fail("commit", client.err)
	}
	// The view shows the last batch once every shard running it is there.
	homes := []partition.ShardID{r.router.ReadHomeOf(r.snap, r.views[0].ID)}
	if homes[0] == shard.SpreadShards {
		homes = r.router.ShardsOfHome(shard.SpreadShards)
	}
	for _, h := range homes {
		reply, err := ask(r.router.ActorOf(h), shard.Read{CatalogVersion: r.snap.Version, Relations: []catalog.ID{r.views[0].ID}, MinEpoch: client.last})
		if err != nil {
			return Projection{}, fail("read", err)
		}
		if f := reply.(shard.ReadResult).Frontier; f < client.last {
			return Projection{}, fmt.Errorf("project: shard %d read at %d, before the last batch's epoch %d", h, f, client.last)
		}
	}
	after := s.CPUStats(processName)
	p := Projection{Elapsed: s.Now() - start, CPU: after, StoreCalls: s.Store(processName).Stats().Calls - calls}
	p.CPU.Busy -= before.Busy
	p.CPU.Waits -= before.Waits
	for w := range p.CPU.Units {
		p.CPU.Units[w] -= before.Units[w]
	}
	return p, nil
}

// costClientID is the throughput runs' client.
const costClientID runtime.ActorID = "cost/client"

// costGo starts the client; the Ask's reply comes after the last commit.
type costGo struct{}

// costClient streams batches of new rows into a table, one commit at a
// time, as a COPY client does round after round; each batch's rows are
// charged as ingest work (decoding them) before its commit is sent.
type costClient struct {
	table         catalog.ID
	version       uint64
	to            runtime.ActorID
	batches, rows int
	rnd           *rand.Rand
	next          int64
	sent          int
	last          uint64
	err           error
	done          runtime.Deferred
}

func (c *costClient) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case costGo:
		c.done = ctx.Defer()
		c.send(ctx)
	case shard.Committed:
		c.last = m.Epoch
		c.send(ctx)
	case error:
		c.err = m
		c.done.Reply(costGo{})
	}
}

func (c *costClient) send(ctx runtime.Context) {
	if c.sent == c.batches {
		c.done.Reply(costGo{})
		return
	}
	c.sent++
	runtime.Report(ctx, runtime.WorkIngestRow, c.rows)
	writes := make([]shard.RowWrite, c.rows)
	for i := range writes {
		c.next++
		writes[i] = shard.RowWrite{Table: c.table, Key: types.Row{c.next}, Row: types.Row{c.next, c.rnd.Int64N(costGroups), c.rnd.Int64N(1000)}, MustNotExist: true}
	}
	ctx.Send(c.to, shard.Commit{CatalogVersion: c.version, Writes: writes})
}
