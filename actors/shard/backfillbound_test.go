package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestBackfillCrashesAreBounded: a view whose backfill took the process
// down (the attempt record stays, as after an out-of-memory kill) is
// retried at the next starts only until it was started
// backfillAttemptsMax times; then the shard starts with the view failed
// (status and reads say why), every other relation serves, a DROP deletes
// the record and the view created again backfills normally.
func TestBackfillCrashesAreBounded(t *testing.T) {
	withView, table, viewID := testSnapshot(t)
	viewRel, _ := withView.RelationByID(viewID)
	ns := catalog.NamespaceID{}
	h := &harness{t: t, open: slateOpener(t, nil), table: table, snap: control.NewSnapshot(ns, 1, table)}
	h.start()
	h.ask(Commit{CatalogVersion: 1, Writes: []RowWrite{{Table: table.ID, Row: types.Row{int64(1), int64(10)}, MustNotExist: true}}})
	h.drain()
	// Each of these starts began the view's backfill and died in it.
	for i := 0; i < backfillAttemptsMax; i++ {
		h.boot()
		if ok, err := h.actor.countBackfillAttempt(h.ctx, viewRel); err != nil || !ok {
			t.Fatalf("attempt %d: began %v, %v", i+1, ok, err)
		}
	}
	h.snap = control.NewSnapshot(ns, 2, table, viewRel)
	h.start()
	st := h.ask(GetStatus{}).(Status)
	if len(st.Views) != 1 || !strings.Contains(st.Views[0].Failed, fmt.Sprintf("failed %d times", backfillAttemptsMax)) || !strings.Contains(st.Views[0].Failed, "stopped during the backfill") {
		t.Fatalf("status after the bound: %+v, want the view failed after backfillAttemptsMax attempts", st.Views)
	}
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Read{CatalogVersion: 2, Relations: []catalog.ID{viewID}})
	if err, ok := h.ctx.reply.(error); !ok || !errcode.Has(err, errcode.ViewBuildFailed) {
		t.Fatalf("reading the failed view: %v, want RS-1514", h.ctx.reply)
	}
	// The table still serves, and the failed view stays failed at a restart.
	if res := h.ask(Read{CatalogVersion: 2, Relations: []catalog.ID{table.ID}}).(ReadResult); res.Batches[0].Len() != 1 {
		t.Fatalf("table read: %v", res.Batches)
	}
	h.start()
	if st := h.ask(GetStatus{}).(Status); len(st.Views) != 1 || st.Views[0].Failed == "" {
		t.Fatalf("status after a restart: %+v, want the view still failed", st.Views)
	}
	// DROP deletes the record; the view created again is backfilled.
	h.snap = control.NewSnapshot(ns, 3, table)
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	if _, ok, err := h.store.Get(backfillKey(viewID)); err != nil || ok {
		t.Fatalf("the backfill record outlived DROP (%v, %v)", ok, err)
	}
	h.snap = control.NewSnapshot(ns, 4, table, viewRel)
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	if got := h.view(viewID); got[1] != 10 || len(got) != 1 {
		t.Fatalf("view created again: %v", got)
	}
	if _, ok, err := h.store.Get(backfillKey(viewID)); err != nil || ok {
		t.Fatalf("a backfill that succeeded left its record (%v, %v)", ok, err)
	}
}

// failingPlanner plans every view as a filter whose predicate fails with
// an error that is not data (as a storage failure inside a step is).
type failingPlanner struct{ table *catalog.Relation }

type failingExpr struct{}

func (failingExpr) Type() types.Type { return types.TBool }
func (failingExpr) Eval(*expr.Env, types.Row) (types.Datum, error) {
	return nil, errors.New("the disk is on fire")
}
func (failingExpr) String() string { return "fails()" }

func (p failingPlanner) PlanView(b *circuit.Builder, _ catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	src := b.Source(SourceID(p.table.ID), Schema(p.table))
	b.Sink(ViewID(view.ID), b.Filter(src, failingExpr{}))
	return PlannedView{Sources: []catalog.ID{p.table.ID}}, nil
}

func (failingPlanner) ColumnDefault(catalog.Column) (types.Datum, error) { return nil, nil }

// TestBackfillErrorsAreBounded: a backfill failing with an error fails
// the view, naming the error (the sync that waited for it finds it in the
// status); the next start retries it, as a transient failure would be,
// only until its attempts are used up: then it stays failed without
// another attempt.
func TestBackfillErrorsAreBounded(t *testing.T) {
	withView, table, viewID := testSnapshot(t)
	viewRel, _ := withView.RelationByID(viewID)
	ns := catalog.NamespaceID{}
	h := &harness{t: t, open: slateOpener(t, nil), table: table, snap: control.NewSnapshot(ns, 1, table), planner: failingPlanner{table: table}}
	h.start()
	h.ask(Commit{CatalogVersion: 1, Writes: []RowWrite{{Table: table.ID, Row: types.Row{int64(1), int64(10)}, MustNotExist: true}}})
	h.drain()
	snap := control.NewSnapshot(ns, 2, table, viewRel)
	h.snap = snap
	attempts := func() uint64 {
		t.Helper()
		r, err := h.actor.backfillRecordOf(viewRel)
		if err != nil {
			t.Fatal(err)
		}
		return r.attempts
	}
	for i := 1; i <= backfillAttemptsMax+1; i++ {
		if i > 1 {
			h.boot()
		}
		if _, ok := h.ask(SyncCatalog{Catalog: snap.Value()}).(Synced); !ok {
			t.Fatalf("sync %d: %#v, want Synced", i, h.ctx.reply)
		}
		st := h.ask(GetStatus{}).(Status)
		if len(st.Views) != 1 || !strings.Contains(st.Views[0].Failed, "the disk is on fire") {
			t.Fatalf("status after attempt %d: %+v, want the view failed with the backfill's error", i, st.Views)
		}
		if got, want := attempts(), uint64(min(i, backfillAttemptsMax)); got != want {
			t.Fatalf("after start %d the record counts %d attempts, want %d", i, got, want)
		}
	}
}
