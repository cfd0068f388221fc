package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/actors/wire"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// world is one simulated process with the real shard and deadlock
// detector, a catalog with one keyed table, and session actors, every
// message through the wire codec.
type world struct {
	t     *testing.T
	s     *sim.Sim
	snap  *control.Snapshot
	table catalog.Relation
}

func newWorld(t *testing.T, seed uint64) *world { return newSlowWorld(t, seed, 0) }

// newSlowWorld is newWorld with every object-store call taking
// storeLatency (the shard's commits take at least that).
func newSlowWorld(t *testing.T, seed uint64, storeLatency time.Duration) *world {
	t.Helper()
	codec, err := wire.NewCodec(wire.Messages()...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.QuietConfig()
	cfg.Store.LatencyBase = storeLatency
	s := sim.New(sim.Options{Seed: seed, Config: &cfg, Codec: codec, AskTimeout: time.Hour})
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt8},
	}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table)
	if err := s.AddProcess("p", sim.ProcessOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Spawn("p", shard.DetectorID, shard.NewDetector()); err != nil {
		t.Fatal(err)
	}
	if err := s.Spawn("p", shard.ActorOf(0), shard.New(shard.Config{
		OpenStore: func(ctx runtime.Context) (kv.Store, error) {
			return storage.Open(context.Background(), ctx.Store(), "shards/0", storage.Options{})
		},
	})); err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, s: s, snap: snap, table: *table}
	if _, err := w.ask(shard.ActorOf(0), shard.SyncCatalog{Catalog: snap.Value()}); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) spawnSession(id uint64) runtime.ActorID {
	w.t.Helper()
	a := session.ActorOf(id)
	if err := w.s.Spawn("p", a, session.New(session.Config{Session: id, Router: shard.NewRouter(w.snap.BucketMap())})); err != nil {
		w.t.Fatal(err)
	}
	return a
}

// ask asks and returns an error reply as the error.
func (w *world) ask(to runtime.ActorID, msg runtime.Message) (runtime.Message, error) {
	w.t.Helper()
	m, err := w.s.Ask(context.Background(), to, msg)
	if err != nil {
		return nil, err
	}
	if e, ok := m.(error); ok {
		return nil, e
	}
	return m, nil
}

func (w *world) must(to runtime.ActorID, msg runtime.Message) runtime.Message {
	w.t.Helper()
	m, err := w.ask(to, msg)
	if err != nil {
		w.t.Fatalf("%T to %s: %v", msg, to, err)
	}
	return m
}

// async asks without waiting; the returned func runs the simulation
// until the reply and returns it.
func (w *world) async(to runtime.ActorID, msg runtime.Message) func() (runtime.Message, error) {
	var reply runtime.Message
	var rerr error
	done := false
	w.s.AskAsync(to, msg, func(m runtime.Message, err error) {
		reply, rerr, done = m, err, true
		if e, ok := m.(error); ok && err == nil {
			reply, rerr = nil, e
		}
	})
	return func() (runtime.Message, error) {
		w.t.Helper()
		if err := w.s.RunUntil(func() bool { return done }, time.Minute); err != nil {
			w.t.Fatal(err)
		}
		return reply, rerr
	}
}

// settle runs the simulation a little (a request's messages delivered).
func (w *world) settle() {
	w.t.Helper()
	if err := w.s.RunFor(50 * time.Millisecond); err != nil {
		w.t.Fatal(err)
	}
}

func row(k, v int64) types.Row { return types.Row{k, v} }
func key(k int64) types.Row    { return types.Row{k} }

// write commits k=v in its own transaction of session a.
func (w *world) write(a runtime.ActorID, k, v int64) uint64 {
	w.t.Helper()
	w.must(a, session.Begin{})
	w.must(a, session.Statement{CatalogVersion: 1, Data: true, WaitForOwn: true})
	w.must(a, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(k)}, Lock: true})
	w.must(a, session.Set{Table: w.table, Keys: []types.Row{key(k)}, Rows: []types.Row{row(k, v)}})
	return w.must(a, session.Commit{CatalogVersion: 1}).(session.Committed).Epoch
}

// TestCanceledLockWaitFailsOnlyThatRequest: a Lookup waiting for a row
// lock another transaction holds fails with 57014 once canceled; the
// session's later requests get their own answers (the shard's answer to
// the canceled wait is not taken for theirs), and after the holder
// commits the waiter's next lock is granted with the holder's row.
func TestCanceledLockWaitFailsOnlyThatRequest(t *testing.T) {
	w := newWorld(t, 1)
	a, b := w.spawnSession(1), w.spawnSession(2)
	w.write(a, 1, 10)

	w.must(a, session.Begin{})
	w.must(a, session.Statement{CatalogVersion: 1, Data: true})
	w.must(a, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Lock: true})
	w.must(a, session.Set{Table: w.table, Keys: []types.Row{key(1)}, Rows: []types.Row{row(1, 11)}})

	w.must(b, session.Begin{})
	w.must(b, session.Statement{CatalogVersion: 1, Data: true})
	wait := w.async(b, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Read: []types.Row{row(1, 10)}, Lock: true})
	w.settle()
	if st := w.must(b, session.GetState{}).(session.State); st.Locks != 0 {
		t.Fatalf("b holds %d locks while it waits", st.Locks)
	}
	// Queued behind the waiting Lookup: answered after it.
	rollback := w.async(b, session.Rollback{})
	w.must(b, session.CancelWait{})
	if _, err := wait(); !errcode.Has(err, errcode.QueryCanceled) {
		t.Fatalf("the canceled wait answered %v, want 57014", err)
	}
	if m, err := rollback(); err != nil || m != (session.Done{}) {
		t.Fatalf("rollback after the canceled wait: %v %v", m, err)
	}

	// b waits again, a commits: b's lock is granted and the row it read
	// (10) is stale: READ COMMITTED runs the statement again.
	w.must(b, session.Begin{})
	w.must(b, session.Statement{CatalogVersion: 1, Data: true})
	wait = w.async(b, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Read: []types.Row{row(1, 10)}, Lock: true})
	w.settle()
	if m := w.must(a, session.Commit{CatalogVersion: 1}).(session.Committed); m.Epoch == 0 {
		t.Fatalf("a's commit: %+v", m)
	}
	m, err := wait()
	if err != nil || !m.(session.LookupResult).Stale {
		t.Fatalf("b's lookup after a committed: %+v %v, want Stale", m, err)
	}
	// Run again with the row as now committed.
	m = w.must(b, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Read: []types.Row{row(1, 11)}, Lock: true})
	if got := m.(session.LookupResult).Rows; len(got) != 1 || got[0][1] != int64(11) {
		t.Fatalf("b's re-run lookup: %v", got)
	}
	w.must(b, session.Set{Table: w.table, Keys: []types.Row{key(1)}, Rows: []types.Row{row(1, 12)}})
	w.must(b, session.Commit{CatalogVersion: 1})
	res := w.must(a, session.Read{CatalogVersion: 1, Relations: []catalog.ID{w.table.ID}}).(session.ReadResult)
	if len(res.Batches[0].Rows) != 1 || res.Batches[0].Rows[0][1] != int64(12) {
		t.Fatalf("after both commits: %v", res.Batches[0])
	}
}

// TestLockTimeoutIs55P03: a wait longer than the statement's lock_timeout
// fails with 55P03 and leaves the transaction usable for ROLLBACK.
func TestLockTimeoutIs55P03(t *testing.T) {
	w := newWorld(t, 2)
	a, b := w.spawnSession(1), w.spawnSession(2)
	w.must(a, session.Begin{})
	w.must(a, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Lock: true})
	w.must(b, session.Begin{})
	w.must(b, session.Statement{CatalogVersion: 1, Data: true, LockTimeout: 20 * time.Millisecond})
	_, err := w.async(b, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Lock: true})()
	if !errcode.Has(err, errcode.LockTimeout) {
		t.Fatalf("the wait past lock_timeout answered %v, want 55P03", err)
	}
	w.must(b, session.Rollback{})
	w.must(a, session.Rollback{})
	// The lock is free again.
	w.must(b, session.Begin{})
	w.must(b, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Lock: true})
}

// TestRepeatableReadPinsItsSnapshot: a REPEATABLE READ transaction reads
// the state as of its first statement, plus its own writes; changing a row
// committed after its snapshot fails with 40001.
func TestRepeatableReadPinsItsSnapshot(t *testing.T) {
	w := newWorld(t, 3)
	rr, other := w.spawnSession(1), w.spawnSession(2)
	w.write(other, 1, 10)
	w.must(rr, session.Begin{Isolation: session.RepeatableRead})
	w.must(rr, session.Statement{CatalogVersion: 1, Data: true, WaitForOwn: true})
	if st := w.must(rr, session.GetState{}).(session.State); st.Snapshot == 0 {
		t.Fatal("no snapshot pinned at the first data statement")
	}
	read := func() []types.Row {
		return w.must(rr, session.Read{CatalogVersion: 1, Relations: []catalog.ID{w.table.ID}}).(session.ReadResult).Batches[0].Rows
	}
	if got := read(); len(got) != 1 || got[0][1] != int64(10) {
		t.Fatalf("first read: %v", got)
	}
	w.write(other, 1, 20)
	w.write(other, 2, 5)
	w.must(rr, session.Statement{CatalogVersion: 1, Data: true, WaitForOwn: true})
	if got := read(); len(got) != 1 || got[0][1] != int64(10) {
		t.Fatalf("second read of the REPEATABLE READ transaction: %v, want only (1,10)", got)
	}
	_, err := w.ask(rr, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1)}, Read: []types.Row{row(1, 10)}, Lock: true})
	if !errcode.Has(err, errcode.ConcurrentUpdate) {
		t.Fatalf("updating a row committed after the snapshot: %v, want 40001", err)
	}
	w.must(rr, session.Rollback{})
	// READ COMMITTED sees the newest state.
	w.must(rr, session.Begin{})
	w.must(rr, session.Statement{CatalogVersion: 1, Data: true, WaitForOwn: true})
	if got := read(); len(got) != 2 {
		t.Fatalf("READ COMMITTED read: %v", got)
	}
}

// TestSavepointRollbackUndoesLaterWrites: writes after a savepoint are
// gone after ROLLBACK TO it, earlier ones commit.
func TestSavepointRollbackUndoesLaterWrites(t *testing.T) {
	w := newWorld(t, 4)
	a := w.spawnSession(1)
	w.must(a, session.Begin{})
	w.must(a, session.Lookup{CatalogVersion: 1, Table: w.table, Keys: []types.Row{key(1), key(2)}})
	w.must(a, session.Set{Table: w.table, Keys: []types.Row{key(1)}, Rows: []types.Row{row(1, 1)}})
	w.must(a, session.Savepoint{})
	w.must(a, session.Set{Table: w.table, Keys: []types.Row{key(2)}, Rows: []types.Row{row(2, 2)}})
	w.must(a, session.Set{Table: w.table, Keys: []types.Row{key(1)}, Rows: []types.Row{row(1, 9)}})
	w.must(a, session.RollbackTo{Depth: 1})
	w.must(a, session.Release{Depth: 1})
	if c := w.must(a, session.Commit{CatalogVersion: 1}).(session.Committed); c.Rows != 1 {
		t.Fatalf("commit wrote %d rows, want 1", c.Rows)
	}
	res := w.must(a, session.Read{CatalogVersion: 1, Relations: []catalog.ID{w.table.ID}}).(session.ReadResult)
	if got := res.Batches[0].Rows; len(got) != 1 || got[0][1] != int64(1) {
		t.Fatalf("committed: %v, want only (1,1)", got)
	}
}
