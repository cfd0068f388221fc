package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// lockHarness runs a shard (over slate, so commits are group-committed)
// and a deadlock detector, each on a synchronous test context, and carries
// the messages between them until both are idle. Deterministic: one
// goroutine, messages delivered in the order they were sent.
type lockHarness struct {
	*harness
	detector    *Detector
	detectorCtx *testCtx
	wal         func() int64
}

func newLockHarness(t *testing.T) *lockHarness {
	h, db := slateHarness(t)
	h.start()
	h.drain()
	h.ctx.answers = nil
	return &lockHarness{harness: h, detector: NewDetector()().(*Detector), detectorCtx: &testCtx{id: DetectorID},
		wal: func() int64 { return db().DB().Stats().WALObjectsWritten }}
}

// send delivers m to the shard under tag, then runs both actors until
// idle (group-commit flushes stay queued: deliverFlush runs them).
func (h *lockHarness) send(tag string, m runtime.Message) {
	h.ctx.tag = tag
	h.actor.Receive(h.ctx, m)
	h.ctx.tag = ""
	h.pump()
}

func (h *lockHarness) pump() {
	for len(h.ctx.out) > 0 || len(h.detectorCtx.out) > 0 {
		h.forward(h.ctx, DetectorID, func(m runtime.Message) { h.detector.Receive(h.detectorCtx, m) })
		h.forward(h.detectorCtx, ActorOf(0), func(m runtime.Message) { h.actor.Receive(h.ctx, m) })
	}
}

// forward delivers the messages from's actor sent, which must all be for
// actor to.
func (h *lockHarness) forward(from *testCtx, to runtime.ActorID, deliver func(runtime.Message)) {
	for len(from.out) > 0 {
		e := from.out[0]
		from.out = from.out[1:]
		if e.to != to {
			h.t.Fatalf("%s sent %T to %s", from.Self(), e.msg, e.to)
		}
		deliver(e.msg)
	}
}

// deliverFlush runs the queued group-commit flush.
func (h *lockHarness) deliverFlush() {
	h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
	h.pump()
}

// took returns (and forgets) the answers given so far, as "tag:reply".
func (h *lockHarness) took() []string {
	var out []string
	for _, a := range h.ctx.answers {
		switch m := a.msg.(type) {
		case RowsLocked:
			out = append(out, fmt.Sprintf("%s:locked(waited=%v)", a.tag, m.Waited))
		case error:
			var e *errcode.Error
			if errors.As(m, &e) {
				out = append(out, fmt.Sprintf("%s:%s", a.tag, e.State()))
			} else {
				out = append(out, fmt.Sprintf("%s:%v", a.tag, m))
			}
		default:
			out = append(out, a.tag+":"+strings.TrimPrefix(fmt.Sprintf("%T", m), "shard."))
		}
	}
	h.ctx.answers = nil
	return out
}

func (h *lockHarness) expect(want ...string) {
	h.t.Helper()
	if got := h.took(); fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Fatalf("answers %v, want %v", got, want)
	}
}

func (h *lockHarness) lock(tag string, txn TxnID, keys ...string) {
	h.send(tag, LockRows{Txn: txn, Session: uint64(txn) * 100, Table: h.table.ID, Keys: keys})
}

// TestRowLockQueue: a held key queues later requests in arrival order;
// each release passes the lock to the first in the queue; a request takes
// its keys in key order and is answered once it has all of them; a
// canceled wait leaves the queue at once.
func TestRowLockQueue(t *testing.T) {
	h := newLockHarness(t)
	h.lock("t1", 1, "a")
	h.expect("t1:locked(waited=false)")
	h.lock("t2", 2, "a")
	h.lock("t3", 3, "b", "0", "a") // takes 0, then queues for a
	h.expect()
	if got, rest := h.actor.locks.holderOf(h.table.ID, "0"), h.actor.locks.holderOf(h.table.ID, "b"); got != 3 || rest != 0 {
		t.Fatalf("0 held by %d, b by %d; want 3 and nobody (keys are taken in order up to the first held one)", got, rest)
	}
	if e := h.detector.edges; e[2].Holder != 1 || e[3].Holder != 1 {
		t.Fatalf("detector edges %v, want 2→1 and 3→1", e)
	}
	h.send("u1", UnlockRows{Txn: 1})
	h.expect("t2:locked(waited=true)", "u1:RowsUnlocked")
	if e := h.detector.edges; len(e) != 1 || e[3].Holder != 2 {
		t.Fatalf("detector edges %v after the release, want only 3→2", e)
	}
	h.lock("t2again", 2, "a") // already its own
	h.expect("t2again:locked(waited=false)")

	// A canceled wait is answered (57014) and leaves the queue.
	h.lock("t4", 4, "a")
	h.send("c4", CancelLockWait{Txn: 4})
	h.expect("t4:57014", "c4:LockWaitCanceled")
	// A new request of a transaction still waiting (its cancel was lost)
	// ends the old wait first.
	h.lock("t5", 5, "a")
	h.lock("t5again", 5, "a")
	h.expect("t5:57014")
	h.send("c5", CancelLockWait{Txn: 5})
	h.expect("t5again:57014", "c5:LockWaitCanceled")
	h.send("u2", UnlockRows{Txn: 2})
	h.expect("t3:locked(waited=true)", "u2:RowsUnlocked")
	h.send("u3", UnlockRows{Txn: 3})
	h.expect("u3:RowsUnlocked")
	if len(h.actor.locks.locks) != 0 || len(h.actor.locks.txns) != 0 || len(h.detector.edges) != 0 {
		t.Fatalf("left behind: locks %v, txns %v, edges %v", h.actor.locks.locks, h.actor.locks.txns, h.detector.edges)
	}
}

// TestRowLockReleasedOnlyWhenDurable: a commit's locks pass to the next
// transaction only after the commit's write batch is durable (the shared
// group-commit sync), never while it is applied in memory only.
func TestRowLockReleasedOnlyWhenDurable(t *testing.T) {
	h := newLockHarness(t)
	key := "k1" // opaque to the lock table
	h.lock("t1", 1, key)
	h.expect("t1:locked(waited=false)")
	wal := h.wal()
	h.send("commit1", Commit{CatalogVersion: h.snap.Version, Txn: 1, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(1), int64(5)}, MustNotExist: true}}})
	h.lock("t2", 2, key) // arrives while the commit is pending
	h.expect()
	if got := h.wal() - wal; got != 0 {
		t.Fatalf("%d WAL objects written before the flush: a lock request forced a sync", got)
	}
	var durableAtGrant uint64
	h.ctx.onAnswer = func(a answer) {
		if a.tag == "t2" {
			durableAtGrant = h.actor.durableEpoch
		}
	}
	h.deliverFlush()
	h.expect("t2:locked(waited=true)", "commit1:Committed")
	if durableAtGrant != 1 || h.wal()-wal != 1 {
		t.Fatalf("lock granted with durable epoch %d (want 1, the commit's) after %d WAL writes", durableAtGrant, h.wal()-wal)
	}

	// A commit that fails releases its locks too (the transaction is over).
	h.send("commit2", Commit{CatalogVersion: h.snap.Version, Txn: 2, Writes: []RowWrite{{Table: h.table.ID, Row: types.Row{int64(1), int64(6)}, MustNotExist: true}}})
	h.expect("commit2:23505")
	if got := h.actor.locks.holderOf(h.table.ID, key); got != 0 {
		t.Fatalf("lock held by %d after its transaction's commit failed", got)
	}
}

// TestRowLockDeadlock: the wait that closes a cycle is answered with
// 40P01 through the detector, naming both sessions; the other waiter gets
// the lock once the victim rolls back; a detector report about a wait
// that already ended breaks nothing.
func TestRowLockDeadlock(t *testing.T) {
	h := newLockHarness(t)
	h.lock("a1", 1, "a")
	h.lock("b2", 2, "b")
	h.expect("a1:locked(waited=false)", "b2:locked(waited=false)")
	h.lock("b1", 1, "b")
	h.expect()
	h.lock("a2", 2, "a") // closes 2 → 1 → 2
	h.expect("a2:40P01")
	var victim *errcode.Error
	for _, a := range h.ctx.deferred {
		if e, ok := a.(*errcode.Error); ok {
			victim = e
		}
	}
	if victim == nil || victim.Detail != "Process 200 waits for a row of a table locked by process 100, which waits for this one." {
		t.Fatalf("deadlock error %+v", victim)
	}
	h.send("r2", UnlockRows{Txn: 2})
	h.expect("b1:locked(waited=true)", "r2:RowsUnlocked")

	// A stale report: txn 3 waited (wait w) but was granted since.
	h.lock("c1", 1, "c")
	h.lock("c3", 3, "c")
	w := h.actor.locks.txns[3].wait.id
	h.send("u1", UnlockRows{Txn: 1})
	h.expect("c1:locked(waited=false)", "c3:locked(waited=true)", "u1:RowsUnlocked")
	h.send("stale", BreakDeadlock{Cycle: []WaitFor{{Waiter: 3, Holder: 1, Shard: ActorOf(0), Wait: w}}})
	h.expect()
	if got := h.actor.locks.holderOf(h.table.ID, "c"); got != 3 {
		t.Fatalf("c held by %d after a stale deadlock report, want 3", got)
	}
}

// TestRowLockLostReportRecovered: a wait-for report lost on the way to the
// detector (sends are at most once) is sent again by the periodic report,
// so the deadlock it closes is still found.
func TestRowLockLostReportRecovered(t *testing.T) {
	h := newLockHarness(t)
	h.lock("a1", 1, "a")
	h.lock("b2", 2, "b")
	h.lock("b1", 1, "b")
	h.ctx.tag = "a2"
	h.actor.Receive(h.ctx, LockRows{Txn: 2, Session: 200, Table: h.table.ID, Keys: []string{"a"}})
	h.ctx.tag = ""
	h.ctx.out = nil // the edge 2 → 1 is lost
	h.pump()
	h.expect("a1:locked(waited=false)", "b2:locked(waited=false)")
	// One report (each schedules the next while waits remain).
	delivered := false
	h.deliver(func(m runtime.Message) bool {
		_, ok := m.(reportWaits)
		ok, delivered = ok && !delivered, delivered || ok
		return ok
	})
	h.pump()
	h.expect("a2:40P01")
	h.send("r2", UnlockRows{Txn: 2})
	h.expect("b1:locked(waited=true)", "r2:RowsUnlocked")
}
