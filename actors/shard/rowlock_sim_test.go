package shard

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// lockSimOutcome is what one simulated run of the row-lock workload did.
type lockSimOutcome struct {
	commits, failedCommits, deadlocks, waits int
	trace                                    uint64
}

// runLockSim runs sessions that each lock two of three keys, one request
// at a time and in random order (so cycles are common), then commit a
// write (releasing the locks with the Commit) or, answered 40P01, roll
// back. The shard (over slate: group commit) and the deadlock detector run
// in the simulator. Checked after every step: no transaction's lock is
// released while its commit is not durable, and no key is granted while
// another live transaction holds it; at the end every session finished
// (no lost wakeup, every deadlock broken).
func runLockSim(t *testing.T, seed uint64) lockSimOutcome {
	const sessions, txnsPerSession = 4, 8
	keys := []string{"a", "b", "c"}
	// NB: the safety phase (invariants are checked after every step), so
	// the seed's store faults apply too: a commit may fail (the shard
	// poisons and reopens its store), which must release its locks as well.
	s := sim.New(sim.Options{Seed: seed})
	snap, table, _ := testSnapshot(t)
	if err := s.AddProcess("p", sim.ProcessOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Spawn("p", DetectorID, NewDetector()); err != nil {
		t.Fatal(err)
	}
	shardOf := spawnSumShard(t, s, snap, table, 0)
	var out lockSimOutcome
	// holder is the model's view of who holds each key; ended marks the
	// transactions that sent their Commit or UnlockRows.
	holder := map[string]TxnID{}
	ended := map[TxnID]bool{}
	s.Invariant("locks released only when the commit is durable", func() error {
		for _, p := range shardOf().pending {
			if p.txn != 0 && shardOf().locks.txns[p.txn] == nil {
				return fmt.Errorf("txn %d lost its locks with its commit not durable", p.txn)
			}
		}
		return nil
	})
	rnd := s.Rand("rowlock")
	var nextTxn TxnID
	finished := 0
	var run func(session, n int)
	run = func(session, n int) {
		if n == txnsPerSession {
			finished++
			return
		}
		nextTxn++
		txn := nextTxn
		first := rnd.IntN(len(keys))
		second := (first + 1 + rnd.IntN(len(keys)-1)) % len(keys)
		wanted := []string{keys[first], keys[second]}
		next := func() {
			s.At(time.Duration(rnd.IntN(3))*time.Millisecond, func() { run(session, n+1) })
		}
		end := func(m runtime.Message) {
			ended[txn] = true
			s.AskAsync(ActorOf(0), m, func(reply runtime.Message, err error) {
				if err == nil {
					if e, isErr := reply.(error); isErr {
						err = e
					}
				}
				var e *errcode.Error
				switch {
				case err == nil:
					if _, ok := reply.(Committed); ok {
						out.commits++
					}
				case errors.As(err, &e) && e.Code == errcode.ShardUnavailable:
					out.failedCommits++ // an injected store fault
				default:
					s.Fail(fmt.Errorf("txn %d ending: %w", txn, err))
					return
				}
				next()
			})
		}
		var lock func(i int)
		lock = func(i int) {
			if i == len(wanted) {
				w := RowWrite{Table: table.ID, Row: types.Row{int64(first), int64(txn)}, Key: types.Row{int64(first)}}
				end(Commit{CatalogVersion: snap.Version, Txn: txn, Writes: []RowWrite{w}})
				return
			}
			k := wanted[i]
			s.AskAsync(ActorOf(0), LockRows{Txn: txn, Session: uint64(session), Table: table.ID, Keys: []string{k}}, func(reply runtime.Message, err error) {
				var e *errcode.Error
				switch r := reply.(type) {
				case RowsLocked:
					if h := holder[k]; h != 0 && h != txn && !ended[h] {
						s.Fail(fmt.Errorf("key %s granted to txn %d while txn %d holds it", k, txn, h))
						return
					}
					holder[k] = txn
					if r.Waited {
						out.waits++
					}
					lock(i + 1)
				case error:
					if errors.As(r, &e) && e.State() == "40P01" {
						out.deadlocks++
						end(UnlockRows{Txn: txn})
						return
					}
					s.Fail(fmt.Errorf("txn %d locking %s: %v", txn, k, r))
				default:
					s.Fail(fmt.Errorf("txn %d locking %s: %v %v", txn, k, reply, err))
				}
			})
		}
		lock(0)
	}
	for i := 0; i < sessions; i++ {
		run(i, 0)
	}
	for limit := s.Now() + time.Minute; finished < sessions; {
		err := s.RunFor(10 * time.Millisecond)
		if err == nil && s.Now() > limit {
			err = errors.New("sessions did not finish")
		}
		if err != nil {
			t.Fatalf("%s\nseed %d: %v (finished %d of %d sessions, %+v)", s.Describe(), seed, err, finished, sessions, out)
		}
	}
	if len(shardOf().locks.locks) != 0 || len(shardOf().locks.txns) != 0 {
		t.Fatalf("seed %d: locks left behind: %v %v", seed, shardOf().locks.locks, shardOf().locks.txns)
	}
	out.trace = s.TraceHash()
	return out
}

// TestRowLocksUnderSim runs the row-lock workload over several seeds: it
// must finish with its invariants holding, exercise waits and deadlocks,
// and replay identically from its seed.
func TestRowLocksUnderSim(t *testing.T) {
	var total lockSimOutcome
	for seed := uint64(1); seed <= 12; seed++ {
		o := runLockSim(t, seed)
		if again := runLockSim(t, seed); again != o {
			t.Fatalf("seed %d ran twice: %+v then %+v (not deterministic)", seed, o, again)
		}
		total.commits += o.commits
		total.failedCommits += o.failedCommits
		total.deadlocks += o.deadlocks
		total.waits += o.waits
	}
	if total.commits == 0 || total.deadlocks == 0 || total.waits == 0 {
		t.Fatalf("the workload exercised too little: %+v", total)
	}
	t.Logf("12 seeds: %d commits (%d failed by store faults), %d waits, %d deadlocks", total.commits, total.failedCommits, total.waits, total.deadlocks)
}

// spawnSumShard spawns shard 0 over slate in process p of s (added by the
// caller) with the sum view's planner (sumPlanner) and storage ticks every
// tickEvery (0: none), and syncs snap's catalog into it; it returns the
// shard's current instance (a restart makes a new one).
func spawnSumShard(t *testing.T, s *sim.Sim, snap *control.Snapshot, table *catalog.Relation, tickEvery time.Duration) func() *Actor {
	t.Helper()
	var a *Actor
	factory := New(Config{
		OpenStore: func(ctx runtime.Context) (kv.Store, error) {
			return storage.Open(context.Background(), ctx.Store(), "shards/0", storage.Options{})
		},
		Planner:   sumPlanner{table: table},
		TickEvery: tickEvery,
	})
	if err := s.Spawn("p", ActorOf(0), func() runtime.Actor { a = factory().(*Actor); return a }); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		reply, err := s.Ask(context.Background(), ActorOf(0), SyncCatalog{Catalog: snap.Value()})
		if _, ok := reply.(Synced); ok && err == nil {
			break
		}
		if attempt == 100 {
			t.Fatalf("seed %d: the shard never synced its catalog: %v %v", s.Seed(), reply, err)
		}
		if err := s.RunFor(10 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	return func() *Actor { return a }
}
