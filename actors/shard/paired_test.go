package shard

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// TestPairedAssertionAckPastDurable: the write side of the commit pairing
// fires when a reply would acknowledge an epoch that no sync covered (a bug
// injected by hand: a pending reply naming an epoch past the last one).
func TestPairedAssertionAckPastDurable(t *testing.T) {
	h, _ := slateHarness(t)
	h.start()
	h.drain()
	h.actor.Receive(h.ctx, Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(1), int64(1)}, MustNotExist: true}}})
	if len(h.actor.pending) != 1 {
		t.Fatalf("%d pending commits, want 1", len(h.actor.pending))
	}
	h.actor.pending[0].msg = Committed{Epoch: h.actor.lastEpoch + 1}
	defer func() {
		f, ok := recover().(*assert.Failure)
		if !ok || !strings.Contains(f.Message, "acknowledging epoch") {
			t.Fatalf("recovered %v, want the ack-past-durable assertion", f)
		}
	}()
	h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
	t.Fatal("acknowledged an epoch past the durable one without an assertion")
}

// TestPairedAssertionLogGapAtOpen: the read side of the pairing: an open
// that reads back a last epoch whose delta-log entry is missing (a torn
// write) reports corruption instead of serving.
func TestPairedAssertionLogGapAtOpen(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(1), int64(1)}, MustNotExist: true}}})
	// Crash before the epoch step ran (the step is a queued self-message
	// that dies with the process), and lose the log entry.
	if err := h.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: logKey(1), Delete: true}}}); err != nil {
		t.Fatal(err)
	}
	h.ctx = &testCtx{}
	h.actor = New(Config{
		OpenStore: func(runtime.Context) (kv.Store, error) { return h.store, nil },
		Planner:   sumPlanner{table: h.table},
	})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
	if h.actor.openErr == nil || !strings.Contains(h.actor.openErr.Error(), "missing at open") {
		t.Fatalf("open error %v, want the missing delta-log entry", h.actor.openErr)
	}
}
