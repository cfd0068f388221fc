package slate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rockstream/rockstream/sim"
	"github.com/rockstream/rockstream/slate/objstore"
)

type simCrash struct{}

// TestUnderSimulatorFaults drives slate through the simulator's faulty store
// (transient errors, ambiguous writes applied or lost, crash-after-write,
// stale LISTs) for many seeds. After every crash the database is reopened
// and must hold exactly the model state at its recovered seq, which is at
// least every acknowledged seq. Reads that succeed must be right.
func TestUnderSimulatorFaults(t *testing.T) {
	const seeds = 40
	for seed := uint64(1); seed <= seeds; seed++ {
		runFaultSeed(t, seed)
	}
}

func runFaultSeed(t *testing.T, seed uint64) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(seed, 0x5eed))
	cfg := sim.DrawFaultConfig(rand.New(rand.NewPCG(seed, 1)))
	// Turn the dials up so every fault happens in a short run.
	cfg.TransientProbability = max(cfg.TransientProbability, 0.03)
	cfg.AmbiguousProbability = max(cfg.AmbiguousProbability, 0.03)
	cfg.AmbiguousAppliedFraction = 0.5
	cfg.CrashAfterWriteProbability = max(cfg.CrashAfterWriteProbability, 0.01)
	cfg.StaleListProbability = max(cfg.StaleListProbability, 0.1)
	cfg.StaleListWindow = max(cfg.StaleListWindow, 3)
	inner := objstore.NewMemory()
	fs := sim.NewFaultyStore(inner, rand.New(rand.NewPCG(seed, 2)), cfg)
	fs.SetCrashHook(func() { panic(simCrash{}) })
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("SEED=%d (%s): %s", seed, cfg, fmt.Sprintf(format, args...))
	}
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MemtableBytesMax = 512
	opts.L0CompactionTrigger = 2
	opts.SizeTierMinRuns = 2
	opts.CompactionCheckpointLifetime = time.Minute
	m := &model{states: []modelState{{}}}
	acked := uint64(0)
	var d *DB
	// do runs f, turning a crash-after-write panic into crashed=true.
	do := func(f func() error) (err error, crashed bool) {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(simCrash); !ok {
					panic(r)
				}
				crashed = true
			}
		}()
		return f(), false
	}
	reopen := func() {
		d = nil
		for attempt := 0; attempt < 50 && d == nil; attempt++ {
			clock.advance(time.Second)
			var db *DB
			err, crashed := do(func() error {
				var err error
				db, err = Open(ctx, fs, "db", opts)
				return err
			})
			if err == nil && !crashed {
				d = db
			}
		}
		if d == nil {
			fail("could not reopen in 50 attempts")
		}
		recovered := d.LastSeq()
		if recovered < acked {
			fail("recovered seq %d < acknowledged %d", recovered, acked)
		}
		if recovered >= uint64(len(m.states)) {
			fail("recovered seq %d beyond any write (%d)", recovered, len(m.states)-1)
		}
		m.truncate(recovered)
		fs.SetFaultsEnabled(false)
		got := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
		fs.SetFaultsEnabled(true)
		if want := render(m.last()); got != want {
			fail("after recovery at seq %d: %q, want %q", recovered, got, want)
		}
		acked = recovered // what is recovered is durable now
	}
	reopen()
	keys := []string{"a", "b", "c", "d"}
	for step := 0; step < 250; step++ {
		var err error
		var crashed bool
		switch op := rnd.IntN(10); {
		case op < 5:
			var b Batch
			var ops []modelOp
			for i := rnd.IntN(3); i >= 0; i-- {
				k := keys[rnd.IntN(len(keys))]
				switch rnd.IntN(3) {
				case 0:
					b.Put([]byte(k), i64(int64(step)))
					ops = append(ops, modelOp{KindValue, k, int64(step)})
				case 1:
					b.Delete([]byte(k))
					ops = append(ops, modelOp{KindTombstone, k, 0})
				default:
					b.Merge([]byte(k), i64(1))
					ops = append(ops, modelOp{KindMerge, k, 1})
				}
			}
			durable := rnd.IntN(2) == 0
			before := d.LastSeq()
			err, crashed = do(func() error {
				_, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: durable})
				return err
			})
			// NB: a crash inside Write's WAL flush unwinds past its return,
			// so "applied" is read from the DB, not from Write's result.
			seq := d.LastSeq()
			if seq != before {
				m.apply(ops)
				if seq != uint64(len(m.states)-1) {
					fail("seq %d, model %d", seq, len(m.states)-1)
				}
			}
			if err == nil && !crashed && durable {
				acked = max(acked, seq)
			}
		case op < 6:
			err, crashed = do(func() error { return d.FlushWAL(ctx) })
			if err == nil && !crashed {
				acked = max(acked, d.LastSeq())
			}
		case op < 7:
			clock.advance(time.Second)
			err, crashed = do(func() error { return d.FlushMemtable(ctx) })
		case op < 8:
			clock.advance(time.Second)
			err, crashed = do(func() error { _, err := d.Compact(ctx); return err })
		case op < 9:
			clock.advance(time.Minute)
			err, crashed = do(func() error { _, err := d.GC(ctx, clock.now()); return err })
		default:
			k := keys[rnd.IntN(len(keys))]
			var v []byte
			var ok bool
			err, crashed = do(func() error {
				var err error
				v, ok, err = d.Get(ctx, []byte(k), ReadOptions{})
				return err
			})
			if err == nil && !crashed {
				want, wantOK := m.last()[k]
				if ok != wantOK || (ok && bytesToI64(v) != want) {
					fail("get %q = %d %v, want %d %v", k, bytesToI64(v), ok, want, wantOK)
				}
			}
		}
		// DurableSeq is a promise too: everything at or below it survives.
		acked = max(acked, d.DurableSeq())
		if err != nil && errors.Is(err, ErrFenced) {
			fail("single writer fenced at step %d: %v", step, err)
		}
		if errors.Is(err, ErrCorrupt) {
			fail("corruption at step %d: %v", step, err)
		}
		if crashed || (err != nil && rnd.IntN(3) == 0) {
			reopen()
		}
	}
	// Liveness: faults healed, everything flushes and converges.
	fs.SetFaultsEnabled(false)
	if err := d.FlushWAL(ctx); err != nil {
		fail("healed flush: %v", err)
	}
	acked = d.LastSeq()
	reopen()
	if d.LastSeq() != acked {
		fail("healed reopen lost writes: %d != %d", d.LastSeq(), acked)
	}
}
