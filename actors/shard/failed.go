package shard

import (
	"fmt"
	"sort"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// A materialized view whose circuit cannot be built from its stored
// definition (the planner refuses it: e.g. a store written by an older
// build that let a relation it reads be dropped, or let inline views form
// a cycle) is FAILED: it is not maintained, its state is dropped (it
// misses epochs), reads of it answer RS-1514 with the reason, and every
// other view keeps running — one broken view never keeps a shard, or a
// server, from starting. Views reading a failed view fail with it. A
// failed view is retried at every catalog sync, so DROP removes it and
// RECOMPILE (a new plan) or a recovered input brings it back, backfilled.
// A view also fails when a step of it is refused for memory (RS-5502:
// its backfill, in backfillbound.go, or its maintenance, failMaintained)
// or its backfill used up its attempts; its retries are the backfill's
// bounded attempts.
//
//	           build fails                     sync: build succeeds
//	absent ──────────────────► failed ─────────────────────────────► backfilled
//	   ▲                         │
//	   └──── dropped ────────────┘

// viewFailure is why a view failed.
type viewFailure struct {
	reason string
	// code is the RS code of the error that failed it (its cause's own
	// code, e.g. RS-5502 for a backfill out of memory), so that CREATE
	// MATERIALIZED VIEW answers with that code's SQLSTATE.
	code string
}

// fail records that view rel could not be built or backfilled.
func (a *Actor) fail(ctx runtime.Context, rel *catalog.Relation, err error) {
	f := viewFailure{reason: err.Error(), code: errcode.InternalError.ID}
	if e, ok := errcode.As(err); ok {
		f.code = e.Code.ID
	}
	if a.failed[rel.ID] != f {
		ctx.Logger().Error("materialized view failed: it is not maintained until it is recompiled or dropped", "view", rel.Name, "reason", f.reason)
	}
	if a.failed == nil {
		a.failed = map[catalog.ID]viewFailure{}
	}
	a.failed[rel.ID] = f
}

// failMaintained fails installed view v, whose maintenance step was
// refused with cause, and every installed view reading it (they would miss
// its deltas): each leaves the installed views and its state is dropped,
// so a later sync backfills it afresh (within its bound, backfillbound.go)
// or leaves it failed until it is dropped.
func (a *Actor) failMaintained(ctx runtime.Context, v *installedView, cause error) error {
	failing := map[catalog.ID]bool{v.rel.ID: true}
	kept := a.views[:0:0]
	var failed []*installedView
	// NB: views are in creation (= dependency) order, so a view's inputs
	// are decided before it.
	for _, w := range a.views {
		reads := failing[w.rel.ID]
		for _, s := range w.sources {
			reads = reads || failing[s]
		}
		if !reads {
			kept = append(kept, w)
			continue
		}
		failing[w.rel.ID] = true
		failed = append(failed, w)
	}
	a.views = kept
	for _, w := range failed {
		err := cause
		if w != v {
			err = errcode.New(errcode.ViewBuildFailed, "it reads materialized view %s, which failed: %s", v.rel.Name, cause.Error())
		} else if e, ok := errcode.As(cause); ok {
			err = errcode.New(e.Code, "its maintenance was refused: %s", e.Message)
		}
		a.fail(ctx, w.rel, err)
		if err := a.dropState(w.rel.ID); err != nil {
			return err
		}
	}
	return nil
}

// forgetFailed forgets failed views that left snap.
func (a *Actor) forgetFailed(snap *control.Snapshot) {
	var gone []catalog.ID
	//lint:maprange collected ids are only deleted; order cannot matter.
	for id := range a.failed {
		if rel, ok := snap.RelationByID(id); !ok || rel.Kind != catalog.KindMaterializedView {
			gone = append(gone, id)
		}
	}
	for _, id := range gone {
		delete(a.failed, id)
	}
}

// adoptRecompiled compares the installed views with snap: a view whose
// plan changed (RECOMPILE), and every installed view reading one, is to be
// rebuilt from its inputs; a view that only changed otherwise (a rename)
// adopts its new catalog record.
func (a *Actor) adoptRecompiled(snap *control.Snapshot) map[catalog.ID]bool {
	rebuild := map[catalog.ID]bool{}
	for i, v := range a.views {
		rel, ok := snap.RelationByID(v.rel.ID)
		if !ok || rel.Kind != catalog.KindMaterializedView {
			continue // dropped after the step
		}
		reads := false
		for _, s := range v.sources {
			reads = reads || rebuild[s]
		}
		if rel.Plan != v.rel.Plan || reads {
			rebuild[rel.ID] = true
			continue
		}
		if rel != v.rel {
			// NB: a copy, so a sync that fails restores the old list as it
			// was.
			adopted := *v
			adopted.rel = rel
			a.views[i] = &adopted
		}
	}
	return rebuild
}

// failedStatuses are the status lines of the failed views, in creation
// order.
func (a *Actor) failedStatuses() []ViewStatus {
	var out []ViewStatus
	if a.snap == nil {
		return nil
	}
	for _, rel := range a.snap.Relations() {
		// NB: a failed view retried (queued again) shows as backfilling.
		if f, ok := a.failed[rel.ID]; ok && a.backfilling(rel.ID) == nil {
			out = append(out, ViewStatus{View: rel.ID, Name: rel.Name, Failed: f.reason, FailedCode: f.code})
		}
	}
	return out
}

// unexpected handles a message the shard has no transition for. An error
// arriving as a message is a reply nobody waits for (whoever sent it
// answered a message that wanted no answer): it is logged and dropped,
// never answered, or two actors would trade errors forever. Anything else
// is answered with an error naming it.
func (a *Actor) unexpected(ctx runtime.Context, msg runtime.Message) {
	ctx.Logger().Error("shard: unexpected message", "type", fmt.Sprintf("%T", msg), "from", ctx.From())
	if _, isErr := msg.(error); isErr || ctx.From() == ctx.Self() {
		return
	}
	ctx.Reply(errcode.New(errcode.InternalError, "shard: unexpected message %T", msg))
}

// sortViewStatuses orders status lines by view creation.
func sortViewStatuses(views []ViewStatus) {
	sort.SliceStable(views, func(i, j int) bool { return objectNumber(views[i].View) < objectNumber(views[j].View) })
}
