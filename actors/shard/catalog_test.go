package shard

import (
	"errors"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// TestBehindShardParksAndFetches: messages naming a newer catalog than the
// shard's wait for it, in arrival order (a Read behind a parked Commit
// waits too, and sees it); the shard asks the control plane once, asks
// again when the answer fails or is lost, and serves them once the catalog
// arrives.
func TestBehindShardParksAndFetches(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	newer := control.SnapshotOf(h.snap.Value())
	newer.Version = h.snap.Version + 1
	h.control = newer
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Commit{CatalogVersion: newer.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(10)}}}})
	h.actor.Receive(h.ctx, Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{h.table.ID}})
	if h.ctx.reply != nil || len(h.ctx.deferred) != 0 {
		t.Fatalf("a behind shard answered before it had the catalog: %#v", h.ctx.reply)
	}
	if len(h.ctx.toControl) != 1 {
		t.Fatalf("%d catalog fetches for two parked messages, want 1", len(h.ctx.toControl))
	}
	if m := h.ctx.toControl[0].(control.GetSnapshot); m.Known != h.snap.Version {
		t.Fatalf("fetch says it knows version %d, the shard runs %d", m.Known, h.snap.Version)
	}
	// The control plane fails (still loading): the retry timer asks again.
	h.ctx.toControl = nil
	h.actor.Receive(h.ctx, errors.New("control: catalog not loaded"))
	h.actor.Receive(h.ctx, catalogFetchTick{Ask: h.actor.catalog.ask})
	if len(h.ctx.toControl) != 1 {
		t.Fatalf("%d fetches after the retry timer, want 1", len(h.ctx.toControl))
	}
	h.answerFetches()
	h.deliver(func(runtime.Message) bool { return true })
	if len(h.ctx.deferred) != 2 {
		t.Fatalf("%d answers after the catalog arrived, want 2: %#v", len(h.ctx.deferred), h.ctx.deferred)
	}
	if c, ok := h.ctx.deferred[0].(Committed); !ok || c.Epoch != 1 {
		t.Fatalf("first answer %#v, want the commit's", h.ctx.deferred[0])
	}
	res, ok := h.ctx.deferred[1].(ReadResult)
	if !ok || len(res.Batches) != 1 || len(res.Batches[0].Rows) != 1 {
		t.Fatalf("the read parked behind the commit answered %#v, want the committed row", h.ctx.deferred[1])
	}
	if v := h.actor.snap.Version; v != newer.Version {
		t.Fatalf("shard runs catalog %d, want %d", v, newer.Version)
	}
}

// TestCatalogFetchGivesUp: a catalog version the control plane never
// provides fails the parked messages after catalogFetchAttemptsMax asks
// (their senders retry), instead of holding them forever.
func TestCatalogFetchGivesUp(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Read{CatalogVersion: h.snap.Version + 5, Relations: []catalog.ID{h.table.ID}})
	for i := 0; i < 2*catalogFetchAttemptsMax && len(h.ctx.deferred) == 0; i++ {
		h.answerFetches() // the control plane is at h.snap: unchanged
		h.actor.Receive(h.ctx, catalogFetchTick{Ask: h.actor.catalog.ask})
	}
	if len(h.ctx.deferred) != 1 {
		t.Fatalf("the parked read was never answered")
	}
	err, _ := h.ctx.deferred[0].(error)
	if e, ok := errcode.As(err); !ok || e.Code != errcode.ShardUnavailable {
		t.Fatalf("the parked read got %#v, want ShardUnavailable", h.ctx.deferred[0])
	}
	if len(h.actor.catalog.parked) != 0 || h.actor.catalog.asking {
		t.Fatal("the shard still waits after giving up")
	}
}

// TestPoisonedShardFailsParkedAndIgnoresCatalogAnswers: a poisoned shard
// answers the requests waiting for a catalog (as it answers every request),
// and never answers the control plane's catalog answer (an error sent back
// to the control actor would be a message it does not handle).
func TestPoisonedShardFailsParkedAndIgnoresCatalogAnswers(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Read{CatalogVersion: h.snap.Version + 1, Relations: []catalog.ID{h.table.ID}})
	h.actor.poison(errors.New("disk gone"))
	if len(h.ctx.deferred) != 1 {
		t.Fatalf("the parked read was not answered when the shard was poisoned")
	}
	if _, ok := h.ctx.deferred[0].(error); !ok {
		t.Fatalf("the parked read got %#v, want an error", h.ctx.deferred[0])
	}
	h.actor.reopen.at = h.ctx.now.Add(time.Hour) // no reopen during this test
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, h.snap.Value())
	h.actor.Receive(h.ctx, errors.New("control: not loaded"))
	if h.ctx.reply != nil {
		t.Fatalf("a poisoned shard answered the control plane's catalog answer with %#v", h.ctx.reply)
	}
}
