package control

import (
	"log/slog"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

type testCtx struct{ reply runtime.Message }

func (c *testCtx) Self() runtime.ActorID                                { return ActorID }
func (c *testCtx) From() runtime.ActorID                                { return "" }
func (c *testCtx) Send(runtime.ActorID, runtime.Message)                {}
func (c *testCtx) Reply(m runtime.Message)                              { c.reply = m }
func (c *testCtx) After(time.Duration, runtime.Message) runtime.TimerID { return 0 }
func (c *testCtx) Defer() runtime.Deferred                              { return nil }
func (c *testCtx) CancelTimer(runtime.TimerID)                          {}
func (c *testCtx) Now() time.Time                                       { return time.Unix(0, 0) }
func (c *testCtx) Rand(string) *rand.Rand                               { return rand.New(rand.NewPCG(1, 2)) }
func (c *testCtx) Store() objstore.Store                                { return nil }
func (c *testCtx) Logger() *slog.Logger                                 { return slog.New(slog.DiscardHandler) }
func (c *testCtx) Spawn(runtime.ActorID, runtime.Factory)               {}
func (c *testCtx) Stop(runtime.ActorID)                                 {}

func start(store kv.Store) (*Actor, *testCtx) {
	a := New(Config{OpenStore: func(runtime.Context) (kv.Store, error) { return store, nil }})().(*Actor)
	ctx := &testCtx{}
	a.Receive(ctx, runtime.Started{})
	return a, ctx
}

func ask(t *testing.T, a *Actor, ctx *testCtx, m runtime.Message) (DDLResult, error) {
	t.Helper()
	ctx.reply = nil
	a.Receive(ctx, m)
	if err, ok := ctx.reply.(error); ok {
		return DDLResult{}, err
	}
	return ctx.reply.(DDLResult), nil
}

func mustAsk(t *testing.T, a *Actor, ctx *testCtx, m runtime.Message) DDLResult {
	t.Helper()
	r, err := ask(t, a, ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantState(t *testing.T, err error, state string) {
	t.Helper()
	e, ok := errcode.As(err)
	if !ok || e.State() != state {
		t.Fatalf("error %v, want SQLSTATE %s", err, state)
	}
}

// TestCatalogDDL covers create/replace/drop (RESTRICT and CASCADE)/add
// column and that everything survives a restart of the actor.
func TestCatalogDDL(t *testing.T) {
	store := kv.NewMemory()
	a, ctx := start(store)
	table := func(name string) *catalog.Relation {
		return &catalog.Relation{Kind: catalog.KindTable, Name: name, PrimaryKey: []int{0}, Columns: []catalog.Column{{Name: "id", Type: types.TInt4, NotNull: true}}}
	}
	tr := mustAsk(t, a, ctx, CreateRelation{Relation: table("t")})
	if tr.Version != 1 || tr.Changed.ID == (catalog.ID{}) {
		t.Fatalf("create: %+v", tr)
	}
	_, err := ask(t, a, ctx, CreateRelation{Relation: table("t")})
	wantState(t, err, "42P07")
	r := mustAsk(t, a, ctx, CreateRelation{Relation: table("t"), IfNotExists: true})
	if r.Notice == "" || r.Version != 1 {
		t.Fatalf("IF NOT EXISTS: %+v", r)
	}
	mv := mustAsk(t, a, ctx, CreateRelation{Relation: &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "mv", SQL: "SELECT id FROM t"}, Deps: []catalog.ID{tr.Changed.ID}})
	mustAsk(t, a, ctx, CreateRelation{Relation: &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "mv2", SQL: "SELECT id FROM mv"}, Deps: []catalog.ID{mv.Changed.ID}})
	_, err = ask(t, a, ctx, DropRelation{Name: "t", Kind: catalog.KindTable})
	wantState(t, err, "2BP01")
	_, err = ask(t, a, ctx, DropRelation{Name: "mv", Kind: catalog.KindTable})
	wantState(t, err, "42809")
	mustAsk(t, a, ctx, AddColumn{Table: "t", Column: catalog.Column{Name: "note", Type: types.TText}})
	_, err = ask(t, a, ctx, AddColumn{Table: "t", Column: catalog.Column{Name: "x", Type: types.TText, NotNull: true}})
	wantState(t, err, "0A000")

	// Restart: the catalog is read back.
	a, ctx = start(store)
	a.Receive(ctx, GetSnapshot{})
	value := ctx.reply.(SnapshotValue)
	snap := SnapshotOf(value)
	// A caller that holds the current version is told so, not sent it.
	a.Receive(ctx, GetSnapshot{Known: value.Version})
	if u, ok := ctx.reply.(SnapshotUnchanged); !ok || u.Version != value.Version {
		t.Fatalf("GetSnapshot{Known: current}: %#v", ctx.reply)
	}
	if again := SnapshotOf(snap.Value()); !reflect.DeepEqual(again.Value(), value) {
		t.Fatalf("SnapshotOf(Value()) differs:\n%+v\n%+v", again.Value(), value)
	}
	if len(snap.Relations()) != 3 {
		t.Fatalf("after restart: %d relations", len(snap.Relations()))
	}
	rel, ok := snap.LookupRelation([]string{"public", "t"})
	if !ok || len(rel.Columns) != 2 {
		t.Fatalf("t after restart: %+v", rel)
	}
	d := mustAsk(t, a, ctx, DropRelation{Name: "t", Kind: catalog.KindTable, Cascade: true})
	if len(d.Dropped) != 3 || d.Dropped[0].Name != "mv2" || d.Dropped[2].Name != "t" {
		t.Fatalf("cascade order: %v", names(d.Dropped))
	}
	// New ids never reuse old ones, even after a restart.
	a, ctx = start(store)
	n := mustAsk(t, a, ctx, CreateRelation{Relation: table("t")})
	if ObjectNumber(n.Changed.ID) <= ObjectNumber(mv.Changed.ID) {
		t.Fatalf("id %d reused", ObjectNumber(n.Changed.ID))
	}
	_, err = ask(t, a, ctx, DropRelation{Name: "nope", Kind: catalog.KindTable})
	wantState(t, err, "42P01")
}

func names(rs []*catalog.Relation) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// TestSequenceDurableAcrossCrash: values handed out before a crash (the
// actor's memory lost, only what Apply made durable kept) are never
// handed out again, for plain, negative and cycling sequences, and after
// setval and RESTART.
func TestSequenceDurableAcrossCrash(t *testing.T) {
	store := kv.NewMemory()
	a, ctx := start(store)
	seq := func(name string, s catalog.Sequence) {
		mustAsk(t, a, ctx, CreateRelation{Relation: &catalog.Relation{Kind: catalog.KindSequence, Name: name, Columns: catalog.SequenceColumns(), Sequence: &s}})
	}
	seq("up", catalog.Sequence{Type: types.TInt8, Start: 1, Increment: 1, Min: 1, Max: 1 << 40, Cache: 1})
	seq("down", catalog.Sequence{Type: types.TInt8, Start: -1, Increment: -3, Min: -1 << 40, Max: -1, Cache: 1})
	op := func(m SequenceOp) (int64, error) {
		ctx.reply = nil
		a.Receive(ctx, m)
		if err, ok := ctx.reply.(error); ok {
			return 0, err
		}
		return ctx.reply.(SequenceValue).Value, nil
	}
	next := func(name string) int64 {
		v, err := op(SequenceOp{Name: name, Op: SeqNextVal})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	seen := map[string]map[int64]bool{"up": {}, "down": {}}
	rng := rand.New(rand.NewPCG(7, 7))
	for round := 0; round < 30; round++ {
		for _, name := range []string{"up", "down"} {
			for i := rng.IntN(70); i > 0; i-- {
				v := next(name)
				if seen[name][v] {
					t.Fatalf("round %d: %s returned %d twice", round, name, v)
				}
				seen[name][v] = true
			}
		}
		if round == 10 {
			// setval moves the sequence; values after it continue from there.
			if _, err := op(SequenceOp{Name: "up", Op: SeqSetVal, Value: 1 << 30, IsCalled: true}); err != nil {
				t.Fatal(err)
			}
		}
		a, ctx = start(store) // crash: only durable state survives
	}
	if v := next("up"); v <= 1<<30 {
		t.Fatalf("after setval and crashes nextval = %d", v)
	}
	_, err := op(SequenceOp{Name: "up", Op: SeqSetVal, Value: 0, IsCalled: true})
	wantState(t, err, "22003")
	_, err = op(SequenceOp{Name: "nope", Op: SeqNextVal})
	wantState(t, err, "42P01")

	// A non-cycling sequence ends with 2200H, also after a crash.
	seq("tiny", catalog.Sequence{Type: types.TInt2, Start: 1, Increment: 1, Min: 1, Max: 3, Cache: 1})
	for want := int64(1); want <= 3; want++ {
		if v := next("tiny"); v != want {
			t.Fatalf("tiny: %d, want %d", v, want)
		}
	}
	_, err = op(SequenceOp{Name: "tiny", Op: SeqNextVal})
	wantState(t, err, "2200H")
	a, ctx = start(store)
	_, err = op(SequenceOp{Name: "tiny", Op: SeqNextVal})
	wantState(t, err, "2200H")
	// RESTART is durable.
	if _, err := op(SequenceOp{Name: "tiny", Op: SeqRestart}); err != nil {
		t.Fatal(err)
	}
	a, ctx = start(store)
	if v := next("tiny"); v != 1 {
		t.Fatalf("after RESTART and a crash: %d", v)
	}
	// DROP removes the durable value too: nothing is left under its key.
	r := mustAsk(t, a, ctx, DropRelation{Name: "tiny", Kind: catalog.KindSequence})
	if _, ok, _ := store.Get(sequenceStateKey(r.Dropped[0].ID)); ok {
		t.Fatal("dropped sequence's value is still stored")
	}
}
