package system

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
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
)

// viewDefs are the materialized views the workload maintains.
//
//lint:immutable fixed workload definition, never written.
var viewDefs = []struct{ name, sql string }{
	{"g", "SELECT v, count(*) AS n, sum(k) AS s, max(c) AS m FROM t1 GROUP BY v"},
	{"j", "SELECT t1.k, t1.v, t2.w FROM t1 JOIN t2 ON t1.k = t2.k WHERE t2.w > 2"},
	{"jg", "SELECT t2.w, count(*) AS n, sum(t1.v) AS s FROM t1 JOIN t2 ON t1.k = t2.k GROUP BY t2.w"},
}

// Options configure one run.
type Options struct {
	Seed uint64
	// Config overrides the configuration drawn from the seed.
	Config *sim.Config
	// Plant turns on a planted bug (the build tag plants AckBeforeDurable).
	Plant Bug
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
}

// ackNoWait is the planted bug: Apply returns before the batch is durable.
type ackNoWait struct{ *storage.KV }

func (k ackNoWait) Apply(b *kv.WriteBatch) error { return k.ApplyNoWait(b) }

// Sync is the same bug on the shard's group-commit path: the shared sync
// that acknowledges commits returns without making them durable.
func (k ackNoWait) Sync() error { return nil }

type runner struct {
	s     *sim.Sim
	rnd   *rand.Rand
	log   strings.Builder
	snap  *control.Snapshot
	t1    *catalog.Relation
	t2    *catalog.Relation
	views []*catalog.Relation
	model *model
	// last is the last status seen (monotonicity checker).
	last     shard.Status
	maxAcked uint64
	reads    int
	healed   bool
	// timedOut: the last ask timed out (virtual time).
	timedOut bool
	// failures counts consecutive failed requests to an up process.
	failures int
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

// failed records a failed request and lets time pass.
func (r *runner) failed() error {
	if r.timedOut {
		// Slow (a long open over a slow store), not broken: wait.
		r.timedOut = false
	} else if r.s.ProcessUp(processName) {
		r.failures++
		if r.failures >= supervisorFailuresMax {
			r.logf("supervisor: restarting the process after %d failures", r.failures)
			r.failures = 0
			r.s.Crash(processName)
			r.s.Restart(processName)
		}
	}
	return r.s.RunFor(5 * time.Millisecond)
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(&r.log, "%8v ", r.s.Now())
	fmt.Fprintf(&r.log, format, args...)
	r.log.WriteByte('\n')
}

// Run simulates the embedded database under faults and checks it.
func Run(opts Options) Outcome {
	s := sim.New(sim.Options{Seed: opts.Seed, Config: opts.Config, AskTimeout: 20 * time.Second})
	r := &runner{s: s, rnd: s.Rand("system"), model: newModel()}
	plant := opts.Plant
	if plantAckBeforeDurable {
		plant = AckBeforeDurable
	}
	out := Outcome{Header: s.Describe() + fmt.Sprintf("system: planted bug=%s\n", plant)}
	err := r.run(plant)
	out.Err = err
	out.TraceHash = s.TraceHash()
	out.Stats = s.Stats()
	out.Acked, out.Unknown, out.Reads = r.model.acked, r.model.unknown, r.reads
	out.Log = r.log.String()
	return out
}

func (r *runner) run(plant Bug) error {
	s := r.s
	memtable := int64(4<<10) << r.rnd.IntN(5) // 4..64 KiB: flushes happen
	tick := time.Duration(1+r.rnd.IntN(200)) * time.Millisecond
	r.logf("memtable=%d tick=%v", memtable, tick)
	open := func(path string, bug Bug) func(runtime.Context) (kv.Store, error) {
		return func(ctx runtime.Context) (kv.Store, error) {
			db, err := storage.Open(context.Background(), ctx.Store(), path, storage.Options{MemtableBytesMax: memtable})
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
	if err := s.Spawn(processName, control.ActorID, control.New(control.Config{OpenStore: open("control", NoBug), TickEvery: tick})); err != nil {
		return err
	}
	if err := s.Spawn(processName, shard.ActorID, shard.New(shard.Config{
		OpenStore: open("shards/0", plant), Planner: engine.Planner(), TickEvery: tick,
		LogEntriesPerStepMax: 1 + r.rnd.IntN(64),
	})); err != nil {
		return err
	}
	if err := r.setup(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	end := s.Now() + safetyDuration
	for s.Now() < end && r.model.nextID <= commitsMax {
		if err := s.Err(); err != nil {
			return err
		}
		if !s.ProcessUp(processName) {
			if err := s.RunFor(5 * time.Millisecond); err != nil {
				return err
			}
			continue
		}
		epoch, acked := r.commitOne()
		if !acked {
			if err := r.failed(); err != nil {
				return err
			}
			continue
		}
		r.failures = 0
		if !r.healed && r.rnd.IntN(8) == 0 {
			// Crash right after an acknowledgement (the window where a
			// commit acknowledged before it was durable is lost), restart
			// a little later.
			r.logf("driver: crash after commit epoch %d", epoch)
			s.Crash(processName)
			if err := s.RunFor(time.Duration(r.rnd.IntN(20)) * time.Millisecond); err != nil {
				return err
			}
			s.Restart(processName)
			continue
		}
		if !r.healed && r.rnd.IntN(8) == 0 {
			// Crash right after an acknowledgement (the window where a
			// commit acknowledged before it was durable is lost), restart
			// a little later.
			r.logf("driver: crash after commit epoch %d", epoch)
			s.Crash(processName)
			if err := s.RunFor(time.Duration(r.rnd.IntN(20)) * time.Millisecond); err != nil {
				return err
			}
			s.Restart(processName)
			continue
		}
		if r.rnd.IntN(3) == 0 {
			if err := r.readCheck(epoch, false); err != nil {
				return err
			}
		}
		if r.rnd.IntN(4) == 0 {
			if err := r.statusCheck(); errors.Is(err, errChecker) {
				return err
			}
		}
	}
	// Liveness phase: faults off, the process up; everything acknowledged
	// must be readable and every view must match its query.
	r.heal()
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
		} else if err := r.readCheck(r.maxAcked, true); err == nil {
			return nil
		} else if errors.Is(err, errChecker) {
			return err
		} else {
			lastErr = err
		}
		r.logf("final read failed: %v", lastErr)
		if err := r.failed(); err != nil {
			return err
		}
	}
	return fmt.Errorf("liveness: no successful final read after %d attempts: %w", finalAttemptsMax, lastErr)
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
	for _, def := range viewDefs {
		steps = append(steps, func() control.CreateRelation {
			v, err := compileView(r.snap, def.sql)
			if err != nil {
				// INVARIANT: the fixed view definitions compile.
				panic(fmt.Sprintf("view %s: %v", def.name, err))
			}
			rel := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: def.name, SQL: def.sql}
			for _, c := range v.Columns {
				rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type})
			}
			var deps []catalog.ID
			for _, t := range []*catalog.Relation{r.t1, r.t2} {
				if strings.Contains(def.sql, t.Name) {
					deps = append(deps, t.ID)
				}
			}
			return control.CreateRelation{IfNotExists: true, Relation: rel, Deps: deps}
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
		return r.failed()
	}
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
			_, err = r.ask(shard.ActorID, shard.SyncCatalog{Snapshot: r.snap})
		}
		if err == nil {
			break
		}
		if err := retry("sync", err); err != nil {
			return err
		}
	}
	if r.t1 == nil || r.t2 == nil || len(r.views) != len(viewDefs) {
		return fmt.Errorf("catalog incomplete after setup: %d views", len(r.views))
	}
	r.logf("setup done: catalog version %d", r.snap.Version)
	return nil
}

// refresh reads the catalog snapshot and finds the workload's relations.
func (r *runner) refresh() error {
	reply, err := r.ask(control.ActorID, control.GetSnapshot{})
	if err != nil {
		return err
	}
	r.snap = reply.(*control.Snapshot)
	r.views = nil
	for _, rel := range r.snap.Relations() {
		switch rel.Name {
		case "t1":
			r.t1 = rel
		case "t2":
			r.t2 = rel
		}
	}
	for _, def := range viewDefs {
		for _, rel := range r.snap.Relations() {
			if rel.Name == def.name {
				r.views = append(r.views, rel)
			}
		}
	}
	return nil
}
