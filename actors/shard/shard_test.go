package shard

import (
	"bytes"
	"fmt"
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
	return ActorID
}
func (c *testCtx) From() runtime.ActorID { return "" }
func (c *testCtx) Send(to runtime.ActorID, m runtime.Message) {
	if to == c.Self() {
		c.self = append(c.self, m)
		return
	}
	c.out = append(c.out, envelope{to: to, msg: m})
}
func (c *testCtx) Reply(m runtime.Message) { c.reply = m; c.answered(c.tag, m) }
func (c *testCtx) Defer() runtime.Deferred { return testDeferred{c: c, tag: c.tag} }

// After queues the group-commit flush and the row-lock wait report like
// self-sends (other timers are not delivered).
func (c *testCtx) After(_ time.Duration, m runtime.Message) runtime.TimerID {
	switch m.(type) {
	case flushCommits, reportWaits:
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
	open  func() kv.Store
	snap  *control.Snapshot
	table *catalog.Relation
	ctx   *testCtx
	actor *Actor
	// planner plans views (nil: sumPlanner).
	planner Planner
}

func (h *harness) start() {
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
	h.ask(SyncCatalog{Snapshot: h.snap})
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
	if h.ctx.reply == nil {
		// A deferred (group-commit) reply: deliver the queued flush.
		h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
	}
	if err, ok := h.ctx.reply.(error); ok {
		h.t.Fatalf("%T: %v", m, err)
	}
	return h.ctx.reply
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
	res := h.ask(Read{Snapshot: h.snap, Relations: []catalog.ID{id}}).(ReadResult)
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
		return h.ask(Commit{Snapshot: h.snap, Writes: writes}).(Committed).Epoch
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
	h.actor.Receive(h.ctx, Commit{Snapshot: h.snap, Writes: []RowWrite{{Table: h.table.ID, Row: row(1, 99), MustNotExist: true}}})
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
	res := h.ask(Read{Snapshot: h.snap, Relations: []catalog.ID{view}, MinEpoch: 3}).(ReadResult)
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

// TestOlderCatalogDropsUnknownViewState (sim seed 11): a shard that adopts,
// after a restart, a catalog older than a view whose state it stores does
// not maintain that view, so it must not keep the state either: when the
// newer catalog comes back, the view is backfilled afresh instead of being
// re-installed from state that missed the epochs in between.
func TestOlderCatalogDropsUnknownViewState(t *testing.T) {
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
		h.ask(Commit{Snapshot: h.snap, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
		h.drain()
	}
	commit(1, 10)
	if got := h.view(view); got[1] != 10 || len(got) != 1 {
		t.Fatalf("view before restart: %v", got)
	}
	// Restart on the older catalog, which does not have the view, and
	// write while it is not maintained.
	h.snap = older
	h.start()
	commit(1, 20)
	commit(2, 5)
	// The newer catalog arrives again.
	h.snap = newer
	h.ask(SyncCatalog{Snapshot: newer})
	h.drain()
	if got := h.view(view); got[1] != 20 || got[2] != 5 || len(got) != 2 {
		t.Fatalf("view after the older catalog came and went: %v, want map[1:20 2:5]", got)
	}
}

// TestDropViewLeavesNoState: a view that leaves the catalog takes every key
// of its state with it (operator state, indexes, view output rows and
// errors, statistics), so nothing leaks and nothing stale can be read back
// if a view of the same id is installed again.
func TestDropViewLeavesNoState(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	h.ask(Commit{Snapshot: h.snap, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(10)}}}})
	h.drain()
	if got := h.view(view); got[1] != 10 {
		t.Fatalf("view before the drop: %v", got)
	}
	h.snap = control.NewSnapshot(catalog.NamespaceID{}, 2, h.table)
	h.ask(SyncCatalog{Snapshot: h.snap})
	var left []string
	for _, ns := range []byte{kv.PrefixOpState, kv.PrefixOpIndex, kv.PrefixViewOutput} {
		err := kv.ScanPrefix(h.store, []byte{ns}, func(k, _ []byte) error {
			if !bytes.HasPrefix(k, tablePrefix(h.table.ID)) {
				left = append(left, fmt.Sprintf("%x", k))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(left) > 0 {
		t.Fatalf("the dropped view left %d keys, e.g. %s", len(left), left[0])
	}
}
