package control

import (
	"bytes"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
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

// TestBucketMapBootstrap: the control DB gets a bucket map at bootstrap,
// every snapshot carries it (across the value form too), and a restart
// configured for another number of shards keeps the stored map (moving
// buckets is a migration, not a restart).
func TestBucketMapBootstrap(t *testing.T) {
	bucketMapOf := func(a *Actor, ctx *testCtx) partition.Map {
		t.Helper()
		a.Receive(ctx, GetSnapshot{})
		v, ok := ctx.reply.(SnapshotValue)
		if !ok {
			t.Fatalf("GetSnapshot: %#v", ctx.reply)
		}
		return SnapshotOf(v).BucketMap()
	}
	store := kv.NewMemory()
	a, ctx := start(store)
	m := bucketMapOf(a, ctx)
	if !m.Valid() || m.Version != 1 || !slices.Equal(m.Shards(), []partition.ShardID{0}) {
		t.Fatalf("bucket map at bootstrap: version %d over %v", m.Version, m.Shards())
	}
	for b := range partition.Bucket(partition.Buckets) {
		if m.Owner(b) != 0 {
			t.Fatalf("bucket %d owned by shard %d with one shard", b, m.Owner(b))
		}
	}
	stored, _, _ := store.Get(bucketMapKey())
	if !bytes.Equal(stored, m.Encode()) {
		t.Fatalf("stored bucket map differs from the published one")
	}
	mustAsk(t, a, ctx, CreateRelation{Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "t", Columns: []catalog.Column{{Name: "a", Type: types.TInt4}}}})
	if got := bucketMapOf(a, ctx); !bytes.Equal(got.Encode(), m.Encode()) {
		t.Fatalf("the snapshot after a DDL carries another bucket map")
	}
	again := New(Config{Shards: 3, OpenStore: func(runtime.Context) (kv.Store, error) { return store, nil }})().(*Actor)
	again.Receive(ctx, runtime.Started{})
	if m2 := bucketMapOf(again, ctx); !bytes.Equal(m2.Encode(), m.Encode()) {
		t.Fatalf("a restart with 3 configured shards changed the stored map to %v", m2.Shards())
	}
	fresh := New(Config{Shards: 3, OpenStore: func(runtime.Context) (kv.Store, error) { return kv.NewMemory(), nil }})().(*Actor)
	fresh.Receive(ctx, runtime.Started{})
	if m3 := bucketMapOf(fresh, ctx); !slices.Equal(m3.Shards(), []partition.ShardID{0, 1, 2}) {
		t.Fatalf("a new control DB configured for 3 shards has a map over %v", m3.Shards())
	}
	if err := store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: bucketMapKey(), Value: []byte{1, 2}}}}); err != nil {
		t.Fatal(err)
	}
	broken := New(Config{OpenStore: func(runtime.Context) (kv.Store, error) { return store, nil }})().(*Actor)
	broken.Receive(ctx, runtime.Started{})
	if e, ok := errcode.As(broken.loadErr); !ok || e.Code != CatalogCorrupt {
		t.Fatalf("a damaged bucket map record loads with %v", broken.loadErr)
	}
}
