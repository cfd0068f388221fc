package shard

import (
	"github.com/rockstream/rockstream/errcode"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// testCtx is a synchronous runtime.Context: replies are recorded, self-sends
// queue up so a test can deliver them (or drop them, as a crash would).
type testCtx struct {
	store objstore.Store
	reply runtime.Message
	self  []runtime.Message
	now   time.Time
	// deferred are the deferred replies in the order they were sent.
	deferred []runtime.Message
	// id is the actor the context is for ("": the shard).
	id runtime.ActorID
	// out are the messages sent to other actors, in order.
	out []envelope
	// tag names the message being delivered: its replies, immediate or
	// deferred, are recorded in answers under it (and onAnswer, if set,
	// sees each as it is sent).
	tag      string
	answers  []answer
	onAnswer func(answer)
	// toControl are the catalog fetches sent to the control plane.
	toControl []runtime.Message
}

// envelope is a message sent to another actor.
type envelope struct {
	to  runtime.ActorID
	msg runtime.Message
}

// answer is a reply to the message delivered under tag.
type answer struct {
	tag string
	msg runtime.Message
}

func (c *testCtx) answered(tag string, m runtime.Message) {
	a := answer{tag: tag, msg: m}
	c.answers = append(c.answers, a)
	if c.onAnswer != nil {
		c.onAnswer(a)
	}
}

func (c *testCtx) Self() runtime.ActorID {
	if c.id != "" {
		return c.id
	}
	return ActorOf(0)
}
func (c *testCtx) From() runtime.ActorID { return "" }
func (c *testCtx) Send(to runtime.ActorID, m runtime.Message) {
	switch to {
	case c.Self():
		c.self = append(c.self, m)
	case control.ActorID:
		c.toControl = append(c.toControl, m)
	default:
		c.out = append(c.out, envelope{to: to, msg: m})
	}
}
func (c *testCtx) Reply(m runtime.Message) { c.reply = m; c.answered(c.tag, m) }
func (c *testCtx) Defer() runtime.Deferred { return testDeferred{c: c, tag: c.tag} }

// After queues the group-commit flush, the row-lock wait report and the
// backfill chunks like self-sends (other timers are not delivered).
func (c *testCtx) After(_ time.Duration, m runtime.Message) runtime.TimerID {
	switch m.(type) {
	case flushCommits, reportWaits, backfillChunk:
		c.self = append(c.self, m)
	}
	return 0
}
func (c *testCtx) CancelTimer(runtime.TimerID)            {}
func (c *testCtx) Now() time.Time                         { c.now = c.now.Add(time.Millisecond); return c.now }
func (c *testCtx) Rand(string) *rand.Rand                 { return rand.New(rand.NewPCG(1, 2)) }
func (c *testCtx) Store() objstore.Store                  { return c.store }
func (c *testCtx) Logger() *slog.Logger                   { return slog.New(slog.DiscardHandler) }
func (c *testCtx) Spawn(runtime.ActorID, runtime.Factory) {}
func (c *testCtx) Stop(runtime.ActorID)                   {}

// sumPlanner plans every view as SELECT k, sum(v), count(*) FROM t GROUP BY k.
type sumPlanner struct{ table *catalog.Relation }

func (p sumPlanner) PlanView(b *circuit.Builder, _ catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	src := b.Source(SourceID(p.table.ID), Schema(p.table))
	agg := b.Aggregate(src, op.AggregateSpec{
		GroupBy: []int{0},
		Calls: []op.AggregateCall{
			{Func: op.AggSum, Arg: testexpr.Col{Index: 1, T: types.TInt4}, Name: "s"},
			{Func: op.AggCountStar, Name: "n"},
		},
	})
	b.Sink(ViewID(view.ID), agg)
	return PlannedView{Sources: []catalog.ID{p.table.ID}}, nil
}

func (sumPlanner) ColumnDefault(catalog.Column) (types.Datum, error) { return nil, nil }

// memKV is a durable-by-construction kv.Store (the test's "slate").
type harness struct {
	t     *testing.T
	store kv.Store
	// open, when set, opens the store at every (re)start, e.g. slate over
	// an object store that outlives the "process".
	open func() kv.Store
	snap *control.Snapshot
	// control, when set, is the control plane's current catalog, which
	// answers the shard's catalog fetches (default: snap).
	control *control.Snapshot
	table   *catalog.Relation
	ctx     *testCtx
	actor   *Actor
	// planner plans views (nil: sumPlanner).
	planner Planner
}

func (h *harness) start() {
	h.boot()
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	// NB: the sync waited for its views' backfills; its deferred answer
	// is not one the test asked for.
	h.ctx.deferred = nil
}

// boot (re)starts the shard without pushing it a catalog.
func (h *harness) boot() {
	h.ctx = &testCtx{store: objstore.NewMemory()}
	if h.open != nil {
		h.store = h.open()
	}
	planner := h.planner
	if planner == nil {
		planner = sumPlanner{table: h.table}
	}
	h.actor = New(Config{
		OpenStore: func(runtime.Context) (kv.Store, error) { return h.store, nil },
		Planner:   planner,
	})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
}

type testDeferred struct {
	c   *testCtx
	tag string
}

func (d testDeferred) Reply(m runtime.Message) {
	d.c.reply = m
	d.c.deferred = append(d.c.deferred, m)
	d.c.answered(d.tag, m)
}

func (h *harness) ask(m runtime.Message) runtime.Message {
	h.t.Helper()
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, m)
	h.answerFetches()
	if h.ctx.reply == nil {
		// A deferred reply: deliver the queued flush (group commit) and
		// the backfill chunks (a sync waits for its views' backfills).
		h.deliver(func(m runtime.Message) bool {
			switch m.(type) {
			case flushCommits, backfillChunk:
				return true
			}
			return false
		})
	}
	if err, ok := h.ctx.reply.(error); ok {
		h.t.Fatalf("%T: %v", m, err)
	}
	return h.ctx.reply
}

// answerFetches answers the shard's catalog fetches as the control plane
// would: with its current catalog.
func (h *harness) answerFetches() {
	for len(h.ctx.toControl) > 0 {
		m := h.ctx.toControl[0].(control.GetSnapshot)
		h.ctx.toControl = h.ctx.toControl[1:]
		current := h.control
		if current == nil {
			current = h.snap
		}
		if m.Known == current.Version {
			h.actor.Receive(h.ctx, control.SnapshotUnchanged{Version: current.Version})
		} else {
			h.actor.Receive(h.ctx, current.Value())
		}
	}
}

// deliver delivers (and dequeues) the queued self-messages that match.
func (h *harness) deliver(match func(runtime.Message) bool) {
	var rest []runtime.Message
	for len(h.ctx.self) > 0 {
		m := h.ctx.self[0]
		h.ctx.self = h.ctx.self[1:]
		if match(m) {
			h.actor.Receive(h.ctx, m)
		} else {
			rest = append(rest, m)
		}
	}
	h.ctx.self = append(rest, h.ctx.self...)
}

// drain delivers the queued self-messages (the epoch step).
func (h *harness) drain() {
	for len(h.ctx.self) > 0 {
		m := h.ctx.self[0]
		h.ctx.self = h.ctx.self[1:]
		h.actor.Receive(h.ctx, m)
	}
}

func (h *harness) view(id catalog.ID) map[int64]int64 {
	h.t.Helper()
	res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{id}}).(ReadResult)
	out := map[int64]int64{}
	b := zset.Consolidate(res.Batches[0])
	for i, r := range b.Rows {
		if b.Weights[i] != 1 {
			h.t.Fatalf("view row %v has weight %d", r, b.Weights[i])
		}
		out[r[0].(int64)] = r[1].(int64)
	}
	return out
}

func newHarness(t *testing.T) (*harness, catalog.ID) {
	snap, table, view := testSnapshot(t)
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table}
	return h, view
}

// TestCommitMaintainRecover: commits are durable before the reply, views
// follow, and a crash between a commit and its epoch step replays the log
// exactly once.
func TestCommitMaintainRecover(t *testing.T) {
	h, view := newHarness(t)
	testCommitMaintainRecover(t, h, view)
}

// TestCommitMaintainRecoverSlate runs the same story on slate over an
// object store: each restart reopens the database (fencing the old writer)
// and sees only what was made durable.
func TestCommitMaintainRecoverSlate(t *testing.T) {
	h, view := newHarness(t)
	h.open = slateOpener(t, nil)
	testCommitMaintainRecover(t, h, view)
}

func testCommitMaintainRecover(t *testing.T, h *harness, view catalog.ID) {
	h.start()
	commit := func(writes ...RowWrite) uint64 {
		return h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes}).(Committed).Epoch
	}
	row := func(k, v int64) types.Row { return types.Row{k, v} }
	e1 := commit(RowWrite{Table: h.table.ID, Row: row(1, 10), MustNotExist: true}, RowWrite{Table: h.table.ID, Row: row(2, 5), MustNotExist: true})
	if e1 != 1 {
		t.Fatalf("first epoch %d", e1)
	}
	h.drain()
	if got := h.view(view); got[1] != 10 || got[2] != 5 || len(got) != 2 {
		t.Fatalf("view after epoch 1: %v", got)
	}
	// A duplicate plain INSERT fails with 23505 and changes nothing.
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: row(1, 99), MustNotExist: true}}})
	if err, ok := h.ctx.reply.(error); !ok || !containsState(err, "23505") {
		t.Fatalf("duplicate insert: %v", h.ctx.reply)
	}
	// Update key 1 (same group: retraction and insertion), delete key 2.
	commit(RowWrite{Table: h.table.ID, Key: types.Row{int64(1)}, Row: row(1, 7)})
	commit(RowWrite{Table: h.table.ID, Key: types.Row{int64(2)}})
	// Crash before the epoch step ran: drop the queued tick and restart.
	h.ctx.self = nil
	h.start()
	// A read waits for (runs) the pending maintenance: read-your-writes.
	res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view}, MinEpoch: 3}).(ReadResult)
	if res.Frontier != 3 {
		t.Fatalf("frontier after recovery %d, want 3", res.Frontier)
	}
	if got := h.view(view); got[1] != 7 || len(got) != 1 {
		t.Fatalf("view after recovery: %v", got)
	}
	// Restarting again recomputes nothing: the state is read back.
	h.start()
	if got := h.view(view); got[1] != 7 || len(got) != 1 {
		t.Fatalf("view after clean restart: %v", got)
	}
	st := h.ask(GetStatus{}).(Status)
	if st.Frontier != 3 || st.LastEpoch != 3 || len(st.Views) != 1 || st.Views[0].Rows != 1 {
		t.Fatalf("status: %+v", st)
	}
	// Without row counts: the same, the view's rows not counted.
	st = h.ask(GetStatus{NoRowCounts: true}).(Status)
	if st.Frontier != 3 || len(st.Views) != 1 || st.Views[0].Rows != 0 || st.Views[0].Error != "" {
		t.Fatalf("status without row counts: %+v", st)
	}
}

func containsState(err error, state string) bool {
	type stater interface{ State() string }
	s, ok := err.(stater)
	return ok && s.State() == state
}

func testSnapshot(t *testing.T) (*control.Snapshot, *catalog.Relation, catalog.ID) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, view)
	return snap, table, view.ID
}

// TestOlderCatalogNeverDropsViewState: a catalog OLDER than the shard's
// (a delayed push, a sender holding an old version) never drops state,
// neither while the shard runs nor after a restart, when the shard has no
// catalog in memory: the durable catalog floor makes it fetch a current
// one instead of adopting the stale one. Only a newer catalog that lacks
// a view drops it.
func TestOlderCatalogNeverDropsViewState(t *testing.T) {
	// A namespace other than the default: markers hold only object ids.
	ns := catalog.NamespaceID{7}
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	viewRel := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}
	newer := control.NewSnapshot(ns, 1, table, viewRel)
	older := control.NewSnapshot(ns, 0, table)
	view := viewRel.ID
	h := &harness{t: t, store: kv.NewMemory(), snap: newer, table: table}
	h.start()
	commit := func(k, v int64) {
		h.ask(Commit{CatalogVersion: newer.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
		h.drain()
	}
	commit(1, 10)
	if got := h.view(view); got[1] != 10 || len(got) != 1 {
		t.Fatalf("view before the stale push: %v", got)
	}
	synced := func(m runtime.Message) uint64 {
		t.Helper()
		s, ok := m.(Synced)
		if !ok {
			t.Fatalf("SyncCatalog answered %#v", m)
		}
		return s.Version
	}
	// While running: the older catalog is ignored.
	if v := synced(h.ask(SyncCatalog{Catalog: older.Value()})); v != newer.Version {
		t.Fatalf("stale push: shard runs catalog %d, want %d", v, newer.Version)
	}
	commit(1, 20)
	// After a restart the stale push comes first, while the control plane
	// does not answer yet: the view's state must still be there.
	h.control = newer
	h.boot()
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: older.Value()})
	if h.ctx.reply != nil {
		t.Fatalf("a restarted shard answered a push below its catalog floor without fetching: %#v", h.ctx.reply)
	}
	if len(h.ctx.toControl) != 1 {
		t.Fatalf("a restarted shard offered an older catalog sent %d catalog fetches, want 1", len(h.ctx.toControl))
	}
	if _, ok, err := h.store.Get(viewMarkerKey(view)); err != nil || !ok {
		t.Fatalf("the view's state was dropped on a stale catalog (marker present %t, err %v)", ok, err)
	}
	h.answerFetches()
	if v := synced(h.ctx.reply); v != newer.Version {
		t.Fatalf("after the fetch: shard runs catalog %d, want %d", v, newer.Version)
	}
	commit(2, 5)
	if got := h.view(view); got[1] != 20 || got[2] != 5 || len(got) != 2 {
		t.Fatalf("view after the stale push and a restart: %v, want map[1:20 2:5]", got)
	}
	if st := h.ask(GetStatus{}).(Status); st.ViewRebuilds != 0 {
		t.Fatalf("the view was rebuilt %d times", st.ViewRebuilds)
	}
	// A NEWER catalog without the view drops it.
	h.snap = control.NewSnapshot(ns, 2, table)
	if v := synced(h.ask(SyncCatalog{Catalog: h.snap.Value()})); v != 2 {
		t.Fatalf("newer push: shard runs catalog %d, want 2", v)
	}
	if _, ok, _ := h.store.Get(viewMarkerKey(view)); ok {
		t.Fatal("a newer catalog without the view kept its state")
	}
}

// TestDropViewLeavesNoState: a view that leaves the catalog takes every key
// of its state with it (operator state, indexes, view output rows and
// errors, statistics), so nothing leaks and nothing stale can be read back
// if a view of the same id is installed again.
func TestDropViewLeavesNoState(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(10)}}}})
	h.drain()
	if got := h.view(view); got[1] != 10 {
		t.Fatalf("view before the drop: %v", got)
	}
	h.snap = control.NewSnapshot(catalog.NamespaceID{}, 2, h.table)
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	if left := leftViewKeys(t, h, view); len(left) > 0 {
		t.Fatalf("the dropped view left %d keys, e.g. %s", len(left), left[0])
	}
}

// TestSourceCommitMustContinueItsOffset: a source commit naming the offset
// it continues (SourceOffset.From) is refused with RS-1040 when the stored
// offset is another, and writes nothing, so a generator that lost track of
// a commit never writes its rows twice.
func TestSourceCommitMustContinueItsOffset(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	src := h.table.ID
	commit := func(k int64, from, to uint64) runtime.Message {
		return h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{k, int64(1)}, MustNotExist: true}},
			Offset: &SourceOffset{Source: src, Offset: to, From: from, FromSet: true}})
	}
	if r, ok := commit(1, 0, 5).(Committed); !ok {
		t.Fatalf("first commit: %v", r)
	}
	// The same commit again (its reply was lost and the source retried).
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(2), int64(1)}, MustNotExist: true}},
		Offset: &SourceOffset{Source: src, Offset: 5, From: 0, FromSet: true}})
	err, ok := h.ctx.reply.(error)
	if !ok || !errcode.Has(err, errcode.SourceOffsetMoved) {
		t.Fatalf("a commit continuing a stale offset: %v, want RS-1040", err)
	}
	if got := h.ask(GetSourceOffset{Source: src}).(SourceOffset).Offset; got != 5 {
		t.Fatalf("offset after the refused commit: %d, want 5", got)
	}
	if r, ok := commit(2, 5, 9).(Committed); !ok {
		t.Fatalf("commit continuing the stored offset: %v", r)
	}
}

// TestStepTxnSizedByRows: a step's Txn is sized for its input rows at the
// writes per row of the last step that had rows, not only by the last
// step's batch: a commit to a table no view reads (a small step) used to
// leave the next large step a Txn grown by doubling.
func TestStepTxnSizedByRows(t *testing.T) {
	snap, table, _ := testSnapshot(t)
	plain := &catalog.Relation{Kind: catalog.KindTable, Name: "plain", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	var rels []*catalog.Relation
	for _, r := range snap.Value().Relations {
		rel := r.Relation
		rels = append(rels, &rel)
	}
	rels = append(rels, plain)
	h := &harness{t: t, store: kv.NewMemory(), snap: control.NewSnapshot(catalog.NamespaceID{}, 1, rels...), table: table}
	h.start()
	commit := func(id catalog.ID, rows int) {
		var writes []RowWrite
		for k := int64(0); k < int64(rows); k++ {
			writes = append(writes, RowWrite{Table: id, Key: types.Row{k}, Row: types.Row{k, k}})
		}
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes})
		h.drain()
	}
	commit(table.ID, 10)
	perTen := h.actor.lastStepWrites
	commit(plain.ID, 10)
	if small := h.actor.lastStepWrites; small >= perTen {
		t.Fatalf("a step over a table no view reads wrote %d, the view's step %d", small, perTen)
	}
	if got := h.actor.stepWritesHint(40); got != 4*perTen {
		t.Fatalf("a step of 40 rows reserves %d writes, want %d (4 times a step of 10)", got, 4*perTen)
	}
}
