package shard

import (
	"context"
	"errors"
	"testing"

	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// slateHarness is a harness over slate on an object store that outlives
// restarts; stats reads the current database's counters.
func slateHarness(t *testing.T) (*harness, func() *storage.KV) {
	h, _ := newHarness(t)
	var cur *storage.KV
	h.open = slateOpener(t, func(db *storage.KV) { cur = db })
	return h, func() *storage.KV { return cur }
}

// slateOpener opens the shard's slate on one in-memory object store that
// outlives restarts (each open fences the previous writer); opened, if
// set, sees each database opened.
func slateOpener(t *testing.T, opened func(*storage.KV)) func() kv.Store {
	objects := objstore.NewMemory()
	return func() kv.Store {
		db, err := storage.Open(context.Background(), objects, "shards/0", storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if opened != nil {
			opened(db)
		}
		return db
	}
}

// TestGroupCommit: commits that queue up while the shard is busy share ONE
// durable WAL write; none is answered before it, each gets its own epoch in
// arrival order, and a read arriving in between first makes them durable.
func TestGroupCommit(t *testing.T) {
	h, db := slateHarness(t)
	h.start()
	h.drain()
	walBefore := db().DB().Stats().WALObjectsWritten
	h.ctx.deferred = nil
	for k := int64(1); k <= 3; k++ {
		h.ctx.reply = nil
		h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{k, int64(k)}, MustNotExist: true}}})
		if h.ctx.reply != nil {
			t.Fatalf("commit %d answered before it was durable: %v", k, h.ctx.reply)
		}
	}
	// An empty commit waits too: its epoch (3) is not durable yet.
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version})
	if len(h.ctx.deferred) != 0 {
		t.Fatalf("answered before the flush: %v", h.ctx.deferred)
	}
	if got := db().DB().Stats().WALObjectsWritten - walBefore; got != 0 {
		t.Fatalf("%d WAL objects written before the flush", got)
	}
	h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
	want := []uint64{1, 2, 3, 3}
	if len(h.ctx.deferred) != len(want) {
		t.Fatalf("replies after flush: %v", h.ctx.deferred)
	}
	for i, r := range h.ctx.deferred {
		if c, ok := r.(Committed); !ok || c.Epoch != want[i] {
			t.Fatalf("reply %d = %v, want epoch %d", i, r, want[i])
		}
	}
	if got := db().DB().Stats().WALObjectsWritten - walBefore; got != 1 {
		t.Fatalf("%d WAL objects for 3 commits, want 1 (group commit)", got)
	}
	if st := h.actor.stats; st.Commits != 3 || st.CommitSyncs != 1 {
		t.Fatalf("commits %d in %d syncs, want 3 in 1", st.Commits, st.CommitSyncs)
	}

	// A read behind a pending commit waits for the group's sync and is
	// served after it (no dirty reads, no sync of its own).
	h.ctx.deferred = nil
	walBefore = db().DB().Stats().WALObjectsWritten
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(9), int64(9)}, MustNotExist: true}}})
	h.actor.Receive(h.ctx, Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{h.table.ID}})
	if len(h.ctx.deferred) != 0 {
		t.Fatalf("read answered before the pending commit was durable: %v", h.ctx.deferred)
	}
	h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
	if len(h.ctx.deferred) != 2 || h.ctx.deferred[0].(Committed).Epoch != 4 {
		t.Fatalf("want the commit answered, then the read: %v", h.ctx.deferred)
	}
	res := h.ctx.deferred[1].(ReadResult)
	if got := db().DB().Stats().WALObjectsWritten - walBefore; got != 1 {
		t.Fatalf("%d WAL objects for a commit and a read behind it, want 1", got)
	}
	if n := len(res.Batches[0].Rows); n != 4 {
		t.Fatalf("read sees %d rows, want 4", n)
	}
	// The queued flush finds nothing left to do.
	syncs := h.actor.stats.CommitSyncs
	h.drain()
	if h.actor.stats.CommitSyncs != syncs {
		t.Fatal("a second sync for an already durable group")
	}
}

// TestGroupCommitCrash: commits applied but never flushed are never
// answered and a restart sees none of them; acknowledged ones survive.
func TestGroupCommitCrash(t *testing.T) {
	h, _ := slateHarness(t)
	h.start()
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(1), int64(1)}, MustNotExist: true}}})
	h.ctx.deferred = nil
	for k := int64(2); k <= 3; k++ {
		h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{k, int64(k)}, MustNotExist: true}}})
	}
	// Crash: the flush timer dies with the process.
	h.ctx.self = nil
	if len(h.ctx.deferred) != 0 {
		t.Fatalf("unflushed commits answered: %v", h.ctx.deferred)
	}
	h.start()
	st := h.ask(GetStatus{}).(Status)
	if st.LastEpoch != 1 {
		t.Fatalf("last epoch after crash %d, want 1 (only the acknowledged commit)", st.LastEpoch)
	}
	res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{h.table.ID}}).(ReadResult)
	if n := len(res.Batches[0].Rows); n != 1 {
		t.Fatalf("%d rows after crash, want 1", n)
	}
}

// TestGroupCommitWithStep: an epoch step due while commits are pending runs
// before their sync, so ONE WAL write covers the commits and the step, and
// a read of the view afterwards needs no second sync.
func TestGroupCommitWithStep(t *testing.T) {
	h, db := slateHarness(t)
	h.start()
	h.drain()
	view := h.actor.views[0].rel.ID
	walBefore := db().DB().Stats().WALObjectsWritten
	h.ctx.deferred = nil
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(5), int64(50)}, MustNotExist: true}}})
	if len(h.ctx.deferred) != 0 {
		t.Fatal("answered before durable")
	}
	h.deliver(func(m runtime.Message) bool { _, ok := m.(epochTick); return ok })
	if len(h.ctx.deferred) != 1 || h.ctx.deferred[0].(Committed).Epoch != 1 {
		t.Fatalf("commit not answered by the step's sync: %v", h.ctx.deferred)
	}
	if got := h.view(view); got[5] != 50 || len(got) != 1 {
		t.Fatalf("view: %v", got)
	}
	h.drain()
	if got := db().DB().Stats().WALObjectsWritten - walBefore; got != 1 {
		t.Fatalf("%d WAL objects for a commit, its step and a read, want 1", got)
	}
}

// failingKV fails ApplyNoWait while *fail is set.
type failingKV struct {
	*storage.KV
	fail *bool
}

func (f failingKV) ApplyNoWait(b *kv.WriteBatch) error {
	if *f.fail {
		return errors.New("injected write failure")
	}
	return f.KV.ApplyNoWait(b)
}

// TestGroupCommitPoisonedBehindPending: a commit whose write fails poisons
// the shard while an earlier commit is still pending; the pending one must
// be answered with an error (its rows were only in memory), never with
// success after the shard reopened on durable state.
func TestGroupCommitPoisonedBehindPending(t *testing.T) {
	h, _ := slateHarness(t)
	fail := false
	inner := h.open
	h.open = func() kv.Store { return failingKV{KV: inner().(*storage.KV), fail: &fail} }
	h.start()
	h.drain()
	h.ctx.deferred = nil
	write := func(k int64) Commit {
		return Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{k, k}, MustNotExist: true}}}
	}
	h.actor.Receive(h.ctx, write(1)) // pending
	fail = true
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, write(2))
	if _, ok := h.ctx.reply.(error); !ok {
		t.Fatalf("failed write answered %v, want an error", h.ctx.reply)
	}
	fail = false
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, write(3)) // reopens the shard
	if len(h.ctx.deferred) == 0 {
		t.Fatal("the pending commit was not answered when the shard was poisoned")
	}
	if _, ok := h.ctx.deferred[0].(error); !ok {
		t.Fatalf("the pending commit of a poisoned shard answered %v, want an error", h.ctx.deferred[0])
	}
}
