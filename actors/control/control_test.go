package control

import (
	"log/slog"
	"math/rand/v2"
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
	if tr.Snapshot.Version != 1 || tr.Changed.ID == (catalog.ID{}) {
		t.Fatalf("create: %+v", tr)
	}
	_, err := ask(t, a, ctx, CreateRelation{Relation: table("t")})
	wantState(t, err, "42P07")
	r := mustAsk(t, a, ctx, CreateRelation{Relation: table("t"), IfNotExists: true})
	if r.Notice == "" || r.Snapshot.Version != 1 {
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
	snap := ctx.reply.(*Snapshot)
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
