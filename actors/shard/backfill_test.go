package shard

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// backfillHarness starts a shard with table t holding rows k = 1..rows
// (v = k) and no view, and returns it with the catalog that adds view v.
func backfillHarness(t *testing.T, slate bool, rows int) (*harness, *control.Snapshot, catalog.ID) {
	withView, table, view := testSnapshot(t)
	h := &harness{t: t, store: kv.NewMemory(), table: table}
	if slate {
		h.open = slateOpener(t, nil)
	}
	h.snap = control.NewSnapshot(catalog.NamespaceID{}, 1, table)
	h.start()
	var writes []RowWrite
	for k := 1; k <= rows; k++ {
		writes = append(writes, RowWrite{Table: table.ID, Key: types.Row{int64(k)}, Row: types.Row{int64(k), int64(k)}})
	}
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes})
	h.drain()
	// The view's catalog is a newer version of the same objects.
	next := control.SnapshotOf(withView.Value())
	next.Version = 2
	return h, next, view
}

// deliverOne delivers the first queued self-message that matches and
// reports whether there was one.
func (h *harness) deliverOne(match func(runtime.Message) bool) bool {
	for i, m := range h.ctx.self {
		if match(m) {
			h.ctx.self = append(h.ctx.self[:i:i], h.ctx.self[i+1:]...)
			h.actor.Receive(h.ctx, m)
			return true
		}
	}
	return false
}

func isChunk(m runtime.Message) bool { _, ok := m.(backfillChunk); return ok }

func isStepOrFlush(m runtime.Message) bool {
	switch m.(type) {
	case epochTick, flushCommits:
		return true
	}
	return false
}

// commitNow commits writes without letting a backfill chunk run, and
// fails the test unless the commit is answered (durable) right away.
func (h *harness) commitNow(writes ...RowWrite) {
	h.t.Helper()
	h.ctx.reply = nil
	h.ctx.tag = "commit"
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: writes})
	for h.ctx.reply == nil && h.deliverOne(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok }) {
	}
	h.ctx.tag = ""
	if _, ok := h.ctx.reply.(Committed); !ok {
		h.t.Fatalf("commit during a backfill answered %#v, want Committed", h.ctx.reply)
	}
}

// syncAnswers are the answers to the SyncCatalog delivered under tag "sync".
func (h *harness) syncAnswers() []runtime.Message {
	var out []runtime.Message
	for _, a := range h.ctx.answers {
		if a.tag == "sync" {
			out = append(out, a.msg)
		}
	}
	return out
}

// leftViewKeys lists the keys of view's state in the store: what its
// circuit owns (storedState), its buffered backfill deltas and its marker
// (not its backfill attempt record, which goes with DROP).
func leftViewKeys(t *testing.T, h *harness, view catalog.ID) []string {
	t.Helper()
	var left []string
	for k := range storedState(t, h.store, objectNumber(view)) { //lint:maprange collected, then sorted
		left = append(left, fmt.Sprintf("%x", k))
	}
	sort.Strings(left)
	for _, prefix := range [][]byte{backfillDeltaPrefix(view), viewMarkerKey(view)} {
		err := kv.ScanPrefix(h.store, prefix, func(k, _ []byte) error {
			left = append(left, fmt.Sprintf("%x", k))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return left
}

// TestBackfillServesCommitsBetweenChunks: a view's backfill runs in
// chunks; between them the shard answers commits (to the view's own
// input, rows already fed and rows not yet fed), reads and epoch steps,
// and the SyncCatalog is answered only once the view is complete. The
// view then equals its query over the table as it is at the end, on the
// in-memory store (copied snapshot) and on slate (pinned snapshot).
func TestBackfillServesCommitsBetweenChunks(t *testing.T) {
	for _, slate := range []bool{false, true} {
		t.Run(fmt.Sprintf("slate=%t", slate), func(t *testing.T) {
			const rows = 40
			h, next, view := backfillHarness(t, slate, rows)
			h.actor.cfg.BackfillRowsPerChunkMax = 3
			model := map[int64]int64{}
			for k := int64(1); k <= rows; k++ {
				model[k] = k
			}
			h.snap = next
			h.ctx.tag = "sync"
			h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value()})
			h.ctx.tag = ""
			write := func(k int64, v *int64) RowWrite {
				if v == nil {
					delete(model, k)
					return RowWrite{Table: h.table.ID, Key: types.Row{k}}
				}
				model[k] = *v
				return RowWrite{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, *v}}
			}
			val := func(v int64) *int64 { return &v }
			chunks := 0
			for i := int64(0); len(h.syncAnswers()) == 0; i++ {
				if !h.deliverOne(isChunk) {
					t.Fatalf("the sync is unanswered and no backfill chunk is queued (after %d chunks)", chunks)
				}
				chunks++
				if len(h.syncAnswers()) != 0 {
					break
				}
				// Between chunks: change a row from the front (fed) and
				// one from the back (not fed yet), delete one, insert one.
				front, back := 1+i%rows, rows-i%rows
				h.commitNow(write(front, val(100+i)), write(back, val(200+i)))
				if i%3 == 0 {
					h.commitNow(write(1+(7*i)%rows, nil))
				}
				h.commitNow(write(rows+1+i, val(i)))
				// Epoch steps run meanwhile (the view's deltas are
				// buffered), as do reads of the table.
				for h.deliverOne(isStepOrFlush) {
				}
				res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{h.table.ID}}).(ReadResult)
				if got := len(res.Batches[0].Rows); got != len(model) {
					t.Fatalf("table read between chunks has %d rows, want %d", got, len(model))
				}
				if i == 1 {
					// A read of the view waits for its fill.
					h.ctx.tag = "viewread"
					h.actor.Receive(h.ctx, Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view}})
					// A probe from the same sender waits behind it: Probed
					// first would tell the session the read was lost.
					h.ctx.tag = "probe"
					h.actor.Receive(h.ctx, Probe{})
					h.ctx.tag = ""
				}
				if i == 2 {
					st := h.ask(GetStatus{}).(Status)
					if len(st.Views) != 1 || st.Views[0].Backfill == "" {
						t.Fatalf("status during the backfill: %+v, want the view backfilling", st.Views)
					}
				}
			}
			if chunks < rows/3 {
				t.Fatalf("the backfill of %d rows took %d chunks of at most 3 rows", rows, chunks)
			}
			if a := h.syncAnswers(); len(a) != 1 {
				t.Fatalf("sync answered %d times: %#v", len(a), a)
			} else if _, ok := a[0].(Synced); !ok {
				t.Fatalf("sync answered %#v, want Synced", a[0])
			}
			var viewReads []runtime.Message
			for _, a := range h.ctx.answers {
				if a.tag == "viewread" {
					viewReads = append(viewReads, a.msg)
				}
			}
			if len(viewReads) != 1 {
				t.Fatalf("the read held for the fill got %d answers, want 1", len(viewReads))
			}
			order := ""
			for _, a := range h.ctx.answers {
				if a.tag == "viewread" || a.tag == "probe" {
					order += a.tag + " "
				}
			}
			if order != "viewread probe " {
				t.Fatalf("answers to the held read and the probe after it: %q, want the read's first", order)
			}
			if res, ok := viewReads[0].(ReadResult); !ok || len(res.Batches[0].Rows) != len(model) {
				t.Fatalf("the read held for the fill got %#v, want the filled view's %d rows", viewReads[0], len(model))
			}
			h.drain()
			got := h.view(view)
			if len(got) != len(model) {
				t.Fatalf("view has %d groups, table %d: %v", len(got), len(model), got)
			}
			for k, v := range model {
				if got[k] != v {
					t.Fatalf("view group %d = %d, table has %d", k, got[k], v)
				}
			}
			// The view is maintained from now on.
			h.commitNow(write(1, val(-5)))
			h.drain()
			if got := h.view(view); got[1] != -5 {
				t.Fatalf("view after the backfill: group 1 = %d, want -5", got[1])
			}
			for _, prefix := range [][]byte{backfillKey(view), backfillDeltaPrefix(view)} {
				_ = kv.ScanPrefix(h.store, prefix, func(k, _ []byte) error {
					t.Fatalf("backfill key %x left after the view was installed", k)
					return nil
				})
			}
		})
	}
}

// TestCancelBackfill: CancelBackfill stops a running backfill at once:
// the waiting sync gets 57014, the partial state is dropped, the view is
// failed until the catalog drops it, and a view created again backfills
// from scratch.
func TestCancelBackfill(t *testing.T) {
	h, next, view := backfillHarness(t, true, 30)
	h.actor.cfg.BackfillRowsPerChunkMax = 2
	h.snap = next
	h.ctx.tag = "sync"
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value()})
	h.ctx.tag = ""
	for range 3 {
		if !h.deliverOne(isChunk) {
			t.Fatal("no backfill chunk queued")
		}
	}
	if len(leftViewKeys(t, h, view)) == 0 {
		t.Fatal("three chunks wrote no state: the test would not show the drop")
	}
	if r := h.ask(CancelBackfill{View: view}); r != struct{}{} {
		t.Fatalf("CancelBackfill answered %#v", r)
	}
	a := h.syncAnswers()
	if len(a) != 1 {
		t.Fatalf("the waiting sync got %d answers, want 1", len(a))
	}
	if e, ok := errcode.As(a[0].(error)); !ok || e.Code != errcode.QueryCanceled {
		t.Fatalf("the waiting sync got %#v, want 57014", a[0])
	}
	h.drain() // a chunk still queued finds nothing to do
	if left := leftViewKeys(t, h, view); len(left) > 0 {
		t.Fatalf("the canceled backfill left %d keys, e.g. %s", len(left), left[0])
	}
	for _, ask := range []GetStatus{{}, {NoRowCounts: true}} {
		if st := h.ask(ask).(Status); len(st.Views) != 1 || st.Views[0].Failed == "" {
			t.Fatalf("status (%+v) after the cancel: %+v, want the view failed", ask, st.Views)
		}
	}
	// The catalog drops it; created again (a new object), it backfills.
	_, table, _ := testSnapshot(t)
	table.ID = h.table.ID
	h.snap = control.NewSnapshot(catalog.NamespaceID{}, 3, h.table)
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	if _, ok, err := h.store.Get(backfillKey(view)); err != nil || ok {
		t.Fatalf("the canceled view's attempt record outlived its DROP (%v, %v)", ok, err)
	}
	again := control.SnapshotOf(next.Value())
	again.Version = 4
	h.snap = again
	h.ask(SyncCatalog{Catalog: again.Value()})
	if got := h.view(view); len(got) != 30 || got[7] != 7 {
		t.Fatalf("the view created again: %v", got)
	}
}

// TestBackfillRestartsAfterCrash: a crash in the middle of a backfill
// leaves partial state and the backfill record; the restarted shard
// answers a Background sync at once (a server listens while views
// backfill), serves commits, drops the partial state and fills the view
// again, exactly once.
func TestBackfillRestartsAfterCrash(t *testing.T) {
	h, next, view := backfillHarness(t, true, 30)
	h.actor.cfg.BackfillRowsPerChunkMax = 2
	h.snap = next
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value()})
	for range 4 {
		h.deliverOne(isChunk)
	}
	// Make the partial state durable, as later writes would, then crash.
	h.commitNow(RowWrite{Table: h.table.ID, Key: types.Row{int64(3)}, Row: types.Row{int64(3), int64(33)}})
	if _, ok, err := h.store.Get(backfillKey(view)); err != nil || !ok {
		t.Fatalf("no backfill record after four chunks (err %v)", err)
	}
	h.ctx.self = nil
	h.boot()
	h.actor.cfg.BackfillRowsPerChunkMax = 2
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value(), Background: true})
	if _, ok := h.ctx.reply.(Synced); !ok {
		t.Fatalf("a Background sync answered %#v, want Synced at once", h.ctx.reply)
	}
	h.deliverOne(isChunk)
	h.commitNow(RowWrite{Table: h.table.ID, Key: types.Row{int64(30)}, Row: types.Row{int64(30), int64(300)}})
	h.drain()
	got := h.view(view)
	for k := int64(1); k <= 30; k++ {
		want := k
		switch k {
		case 3:
			want = 33
		case 30:
			want = 300
		}
		if got[k] != want {
			t.Fatalf("view after the restarted backfill: group %d = %d, want %d (view %v)", k, got[k], want, got)
		}
	}
	if len(got) != 30 {
		t.Fatalf("view after the restarted backfill has %d groups, want 30: %v", len(got), got)
	}
}

// TestBackfillChunkRefusedForMemoryIsRetriedSmaller: a chunk whose step
// the memory bound refuses (RS-5502) is retried with fewer rows instead of
// failing the view, so a backfill fails for memory only when one row's
// work is beyond the bound.
func TestBackfillChunkRefusedForMemoryIsRetriedSmaller(t *testing.T) {
	const rows = 200
	h, next, view := backfillHarness(t, false, rows)
	h.actor.cfg.StepBytesMax = 4 << 10
	h.snap = next
	h.ctx.tag = "sync"
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value()})
	h.ctx.tag = ""
	if !h.deliverOne(isChunk) {
		t.Fatal("no backfill chunk queued")
	}
	// The next chunk would feed every row at once: far beyond 4 KiB.
	h.actor.backfills[0].rowsPerChunk = 4 * rows
	for len(h.syncAnswers()) == 0 && h.deliverOne(isChunk) {
	}
	if st := h.ask(GetStatus{}).(Status); len(st.Views) != 1 || st.Views[0].Failed != "" || st.Views[0].Backfill != "" {
		t.Fatalf("status after the backfill: %+v, want the view running", st.Views)
	}
	got := h.view(view)
	for k := int64(1); k <= rows; k++ {
		if got[k] != k {
			t.Fatalf("view group %d = %d, want %d", k, got[k], k)
		}
	}
}

// TestNextChunkRows: a backfill's chunks scale toward the aimed time,
// at most doubling and at least halving, within [1, the maximum].
func TestNextChunkRows(t *testing.T) {
	for _, c := range []struct {
		rows int
		took time.Duration
		want int
	}{
		{1, 0, 2},                            // no time passed (simulation): double
		{512, backfillChunkAim, 512},         // on the aim: kept
		{512, backfillChunkAim * 4 / 5, 640}, // a little under: scaled up
		{512, backfillChunkAim / 10, 1024},   // far under: doubled only
		{512, backfillChunkAim * 5 / 4, 409}, // a little over: scaled down
		{512, 10 * backfillChunkTarget, 256}, // far over: halved only
		{1, time.Second, 1},                  // never below one row
		{4000, time.Microsecond, 4096},       // never above the maximum
	} {
		if got := nextChunkRows(c.rows, c.took, 4096); got != c.want {
			t.Errorf("nextChunkRows(%d, %v) = %d, want %d", c.rows, c.took, got, c.want)
		}
	}
}

// TestBackfillHoldsViewStateInMemory: while a backfill feeds the pinned
// rows, the view's state stays in memory (no key of its circuit's state
// reaches the store), and is written to the store before the buffered
// deltas are fed; a backfill whose held state outgrows its bound, or whose
// writes mostly add keys (each of the view's groups is one row, so every
// write adds one: judged over a small window here), writes it out and goes
// on writing through. Over slate, which ingests sorted runs, holding always
// pays: the state that outgrows its bound is ingested (spilled) and held
// on over the store, and the state is written in ingests only. Either way
// the view equals its query over the table at the end, with commits
// between the chunks.
func TestBackfillHoldsViewStateInMemory(t *testing.T) {
	for _, mode := range []string{"held", "bounded", "unpaid"} {
		for _, slate := range []bool{false, true} {
			// bounded: the state is written out before all rows are fed;
			// through: and the rest of the backfill writes through.
			bounded := mode != "held"
			through := bounded && !slate
			t.Run(fmt.Sprintf("%s/slate=%t", mode, slate), func(t *testing.T) {
				const rows = 60
				h, next, view := backfillHarness(t, slate, rows)
				h.actor.cfg.BackfillRowsPerChunkMax = 4
				model := map[int64]int64{}
				for k := int64(1); k <= rows; k++ {
					model[k] = k
				}
				h.snap = next
				h.ctx.tag = "sync"
				h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value()})
				h.ctx.tag = ""
				// stored counts the view's state keys in the store (not its
				// statistics, which are written through).
				stored := func() int {
					n := 0
					for k := range storedState(t, h.store, objectNumber(view)) { //lint:maprange counted
						if k[0] != kv.PrefixShardMeta {
							n++
						}
					}
					return n
				}
				held, wroteThrough, spilled := 0, 0, 0
				for i := int64(0); len(h.syncAnswers()) == 0; i++ {
					if !h.deliverOne(isChunk) {
						t.Fatalf("the sync is unanswered and no backfill chunk is queued")
					}
					if len(h.syncAnswers()) != 0 {
						break
					}
					b := h.actor.backfilling(view)
					if b == nil {
						t.Fatal("no backfill running")
					}
					if b.state != nil {
						b.state.ingestEntriesMin = 1
					}
					switch {
					case b.state == nil:
					case mode == "bounded":
						// The state outgrows its bound after a few chunks.
						b.state.bytesMax = 400
					case mode == "unpaid":
						b.state.judgeOps = 16
					}
					if !b.scanned && b.state != nil && !b.state.flush {
						held++
						if b.state.spilled {
							spilled++
						} else if n := stored(); n != 0 {
							t.Fatalf("after chunk %d the store holds %d keys of the view's state, want none while it is held", i, n)
						}
					}
					if !b.scanned && b.state == nil {
						wroteThrough++
					}
					front, back := 1+i%rows, rows-i%rows
					for _, w := range []RowWrite{
						{Table: h.table.ID, Key: types.Row{front}, Row: types.Row{front, 100 + i}},
						{Table: h.table.ID, Key: types.Row{back}, Row: types.Row{back, 200 + i}},
					} {
						model[w.Key[0].(int64)] = w.Row[1].(int64)
						h.commitNow(w)
					}
					for h.deliverOne(isStepOrFlush) {
					}
				}
				if held == 0 {
					t.Fatal("no chunk held the view's state in memory")
				}
				if through && wroteThrough == 0 {
					t.Fatalf("%s: no chunk wrote through", mode)
				}
				if !through && wroteThrough != 0 {
					t.Fatalf("%s: %d chunks wrote through, want none", mode, wroteThrough)
				}
				if slate && mode == "bounded" && spilled == 0 {
					t.Fatal("bounded: no chunk held the state over the store after ingesting part of it")
				}
				if ingests := h.actor.stats.BackfillIngests; slate != (ingests > 0) {
					t.Fatalf("%d ingests of held state, want them over slate only", ingests)
				}
				h.drain()
				got := h.view(view)
				if len(got) != len(model) {
					t.Fatalf("view has %d groups, table %d: %v", len(got), len(model), got)
				}
				for k, v := range model {
					if got[k] != v {
						t.Fatalf("view group %d = %d, table has %d", k, got[k], v)
					}
				}
			})
		}
	}
}
