package shard

import (
	"fmt"

	"github.com/rockstream/rockstream/runtime"
)

// Deadlock detection.
//
// Every shard reports its wait-for edges (WaitFor, WaitEnded) to ONE
// detector actor, which keeps the graph of waiting transactions. A
// transaction waits for at most one lock at a time (a session runs one
// statement at a time, and a statement's LockRows waits for one key at a
// time), so the graph has at most one edge out of each transaction and a
// cycle is found by following edges from the new edge's holder. When a
// new edge closes a cycle, the detector asks the waiter's shard to fail
// that wait with 40P01 (BreakDeadlock): the transaction that closed the
// cycle is the one rolled back, as with the check PostgreSQL's backend
// runs when its own wait passes deadlock_timeout.
//
//	shard ── WaitFor(w→h) ──▶ detector: edges[w] = h; follow h → … → w?
//	shard ── WaitEnded(w) ──▶ detector: delete edges[w]
//	shard ◀─ BreakDeadlock(cycle) ── detector (when the walk returns to w)
//
// Why a detector and not wound-wait: wound-wait aborts a younger holder
// whenever an older transaction waits for it, cycle or not, so
// pgbench-like contention on one hot row would abort transactions
// PostgreSQL lets wait, and "wounding" a holder that sits idle in an
// explicit transaction needs an asynchronous abort of another session.
// A detector answers 40P01 exactly when PostgreSQL does (a real cycle),
// and with one graph for every shard it finds cycles that span shards,
// which no single shard can see.
//
// The detector's graph lags the shards (messages are in flight). A
// reported cycle is checked again by the victim's shard against its own
// edges (BreakDeadlock lists the cycle), so a wait that was granted or
// canceled meanwhile is not failed; with many shards, an edge of another
// shard that ended in flight can still fail a transaction that was not
// deadlocked — an abort, never a wrong result, and rare because the edges
// of a real cycle never end by themselves.
//
// NB: edges are sent at most once (runtime.Context.Send). While waits
// last, each shard sends all its edges again every waitReportEvery, so a
// lost WaitFor delays its cycle's detection by that much; a lost WaitEnded
// leaves a stale edge that the victim shard's check refuses.

// DetectorID is the deadlock detector's actor id in an embedded process.
const DetectorID runtime.ActorID = "deadlock/0"

// detectorEdgesMax bounds the graph (STYLE.md 10): one edge per waiting
// transaction, so it is the number of transactions that can wait at once.
// Past it new edges are not recorded and their waits are not checked for
// cycles (they still end by timeout or cancel); the bound is far above the
// number of sessions a process accepts.
const detectorEdgesMax = 1 << 20

// Detector is the deadlock-detector actor.
type Detector struct {
	edges map[TxnID]WaitFor
}

// NewDetector returns a detector factory.
func NewDetector() runtime.Factory {
	return func() runtime.Actor { return &Detector{edges: map[TxnID]WaitFor{}} }
}

// Receive implements runtime.Actor.
func (d *Detector) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case runtime.Started, runtime.Stopping:
	case WaitFor:
		if _, known := d.edges[m.Waiter]; !known && len(d.edges) >= detectorEdgesMax {
			ctx.Logger().Warn("deadlock detector graph full: a wait is not checked for cycles", "edges", len(d.edges))
			return
		}
		d.edges[m.Waiter] = m
		if cycle := d.cycleFrom(m); cycle != nil {
			ctx.Send(m.Shard, BreakDeadlock{Cycle: cycle})
		}
	case WaitEnded:
		if e, ok := d.edges[m.Waiter]; ok && e.Wait == m.Wait {
			delete(d.edges, m.Waiter)
		}
	default:
		panic(fmt.Sprintf("deadlock detector: unexpected message %T", msg))
	}
}

// cycleFrom returns the cycle that edge e closes (e first), or nil.
func (d *Detector) cycleFrom(e WaitFor) []WaitFor {
	cycle := []WaitFor{e}
	cur := e.Holder
	for steps := 0; steps <= len(d.edges); steps++ {
		if cur == e.Waiter {
			return cycle
		}
		next, waiting := d.edges[cur]
		if !waiting {
			return nil
		}
		cycle = append(cycle, next)
		cur = next.Holder
	}
	return nil
}
