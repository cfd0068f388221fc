package shard

import (
	"testing"
	"time"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// TestStepsGoOnPastAFullMailbox: a shard whose mailbox is at its bound
// (timers and requests filling it) still steps its views over every
// commit. Its step is queued by a send to itself, which a full mailbox
// drops; with the step marked queued, none was queued again and the views
// stopped for good (found by TestSystemShards: a view shard flooded by
// exchange frames). The storage tick queues it anew (rearmStep).
func TestStepsGoOnPastAFullMailbox(t *testing.T) {
	cfg := sim.Config{NemesisInterval: time.Hour, MailboxMessagesMax: 2, Store: sim.FaultConfig{LatencyBase: time.Millisecond}}
	s := sim.New(sim.Options{Seed: 1, Config: &cfg})
	snap, table, _ := testSnapshot(t)
	if err := s.AddProcess("p", sim.ProcessOptions{}); err != nil {
		t.Fatal(err)
	}
	a := spawnSumShard(t, s, snap, table, time.Millisecond)
	// Commits three at a time, with the storage tick every millisecond:
	// the mailbox (bound 2) is full when a commit queues the step.
	committed := 0
	var last uint64
	for round := 0; round < 200; round++ {
		for i := 0; i < 3; i++ {
			k := int64(round*3 + i)
			w := RowWrite{Table: table.ID, Row: types.Row{k, int64(1)}, Key: types.Row{k}}
			s.AskAsync(ActorOf(0), Commit{CatalogVersion: snap.Version, Writes: []RowWrite{w}}, func(reply runtime.Message, err error) {
				if c, ok := reply.(Committed); ok && err == nil {
					committed++
					last = max(last, c.Epoch)
				}
			})
		}
		if err := s.RunFor(time.Duration(round%3) * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RunFor(time.Second); err != nil {
		t.Fatal(err)
	}
	if committed == 0 {
		t.Fatal("no commit got through")
	}
	if err := s.RunUntil(func() bool { return a().frontier >= last }, 10*time.Second); err != nil || a().frontier < last {
		t.Fatalf("the view stopped at epoch %d of %d (%d commits): %v", a().frontier, last, committed, err)
	}
}
