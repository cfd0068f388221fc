package shard

import (
	"fmt"
	"sort"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// Row locks.
//
// The shard that stores a row holds its lock: one exclusive lock per
// (table, primary key), held by a transaction id from the LockRows that
// took it until the transaction ends. Waits queue in the shard, never in
// Receive: a LockRows that meets a held key is parked with a deferred
// reply in that key's FIFO queue, and answered when the lock passes to it
// (and every later key of the request is taken), or with an error.
//
//	LockRows ─▶ key free? ── yes ─▶ take it, next key ─▶ all taken ─▶ RowsLocked
//	              │ no
//	              ▼
//	        queue behind the holder, WaitFor ─▶ detector (deadlock.go)
//	              │
//	   ┌──────────┼──────────────────┬─────────────────────┐
//	holder ends  CancelLockWait   BreakDeadlock          UnlockRows of the
//	(lock passes  (57014)          (40P01: the wait       waiter itself
//	 to the first                   closed a cycle)
//	 in the queue)
//
// Release ordering (STYLE.md 11): a transaction that wrote rows releases
// its locks with its Commit (Commit.Txn), and only once that commit's
// batch is durable — in receiveCommit when the write was durable on
// return, else in flushPending after the shared sync. A waiter granted the
// lock then reads the committed rows from durable state, so a crash can
// never take back a row version another transaction already built on.
// UnlockRows (rollback, empty commit, session closed) is not a Commit, so
// beforeMessage makes every pending commit durable before it is handled.
//
// The lock table is memory only: a restarted shard starts empty. The
// commit-time check of what each transaction read (RowWrite.CheckBase,
// RS-2008) still refuses a transaction whose lock was lost that way, so a
// lost lock never loses an update; it can only fail a transaction.

// LockKeysPerRequestMax bounds the keys of one LockRows (STYLE.md 10): a
// statement changing more rows locks them in several requests. It matches
// the largest statement the session buffers in one go.
const LockKeysPerRequestMax = 1 << 16

// waitReportEvery is how often the shard reports its waits to the
// detector again while any wait lasts, so a report lost on the way (sends
// are at most once) delays a deadlock's detection by this much instead of
// leaving it to a timeout. One second, PostgreSQL's deadlock_timeout.
// Simulation range: fixed (a wait's outcome does not depend on it).
const waitReportEvery = time.Second

// reportWaits is the timer that sends every current wait-for edge again.
type reportWaits struct{}

// lockKey is one row's lock: a table and an encoded primary key ("" for
// the whole table of a table without a primary key).
type lockKey struct {
	table catalog.ID
	key   string
}

// rowLock is a held lock and the transactions queued for it.
// INVARIANT: holder != 0; a queued transaction waits for exactly this key.
type rowLock struct {
	holder TxnID
	queue  []TxnID
}

// txnLocks is one transaction's part of the table.
type txnLocks struct {
	session uint64
	held    []lockKey
	wait    *lockWait // nil while the transaction does not wait
}

// lockWait is a LockRows that is not answered yet.
type lockWait struct {
	id     uint64
	table  catalog.ID
	keys   []string // sorted, without duplicates
	next   int      // keys[:next] are taken
	waited bool
	reply  runtime.Deferred
}

// lockTable is the shard's row-lock table.
type lockTable struct {
	locks map[lockKey]*rowLock
	txns  map[TxnID]*txnLocks
	// nextWait numbers waits, so a detector's report about an ended wait
	// is recognised as stale.
	nextWait uint64
	// detector receives this shard's wait-for edges.
	detector runtime.ActorID
	// reportScheduled is set while a reportWaits timer is pending.
	reportScheduled bool
	// failed are transactions whose Commit or UnlockRows was answered
	// with an error outside a Receive's reach of the detector (a parked
	// message failed by a poisoned store); the next message releases
	// their locks.
	failed []TxnID
}

func newLockTable(detector runtime.ActorID) lockTable {
	return lockTable{locks: map[lockKey]*rowLock{}, txns: map[TxnID]*txnLocks{}, detector: detector}
}

// receiveLock handles the row-lock messages; it reports whether msg was
// one. They touch no stored state, so they are served even while the
// shard's storage is poisoned: a failed store must not strand waiters.
func (a *Actor) receiveLock(ctx runtime.Context, msg runtime.Message) bool {
	switch m := msg.(type) {
	case LockRows:
		a.locks.lock(ctx, m)
	case UnlockRows:
		assert.That(len(a.pending) == 0, "unlocking rows of txn %d with %d commits not durable", m.Txn, len(a.pending))
		a.locks.release(ctx, m.Txn)
		ctx.Reply(RowsUnlocked{})
	case CancelLockWait:
		if t := a.locks.txns[m.Txn]; t != nil && t.wait != nil {
			a.locks.endWait(ctx, m.Txn, t, errcode.New(errcode.QueryCanceled, "canceling statement due to user request"))
		}
		ctx.Reply(LockWaitCanceled{})
	case BreakDeadlock:
		a.locks.breakDeadlock(ctx, m)
	case reportWaits:
		a.locks.reportScheduled = false
		a.locks.reportAll(ctx)
	default:
		return false
	}
	return true
}

// transactionFailed notes that msg, a Commit or UnlockRows answered with
// an error without being handled, ended its transaction.
func (l *lockTable) transactionFailed(msg runtime.Message) {
	switch m := msg.(type) {
	case Commit:
		l.failed = append(l.failed, m.Txn)
	case UnlockRows:
		l.failed = append(l.failed, m.Txn)
	}
}

// releaseFailed releases the locks of the transactions noted by
// transactionFailed.
func (l *lockTable) releaseFailed(ctx runtime.Context) {
	failed := l.failed
	l.failed = nil
	for _, id := range failed {
		l.release(ctx, id)
	}
}

// lock starts (or completes at once) a LockRows.
func (l *lockTable) lock(ctx runtime.Context, m LockRows) {
	if m.Txn == 0 || len(m.Keys) > LockKeysPerRequestMax {
		ctx.Reply(errcode.New(errcode.InternalError, "row lock request for transaction %d with %d keys (at most %d)", m.Txn, len(m.Keys), LockKeysPerRequestMax))
		return
	}
	t := l.txns[m.Txn]
	if t == nil {
		t = &txnLocks{session: m.Session}
		l.txns[m.Txn] = t
	}
	if t.wait != nil {
		// A session waits for one request at a time; an older wait still
		// here lost its CancelLockWait, and nobody hears its reply.
		l.endWait(ctx, m.Txn, t, errcode.New(errcode.QueryCanceled, "canceling statement due to user request"))
		l.txns[m.Txn] = t // endWait drops a transaction that holds nothing
	}
	keys := append([]string(nil), m.Keys...)
	sort.Strings(keys)
	keys = dedupSorted(keys)
	l.nextWait++
	t.wait = &lockWait{id: l.nextWait, table: m.Table, keys: keys}
	if l.advance(ctx, m.Txn, t) {
		t.wait = nil
		ctx.Reply(RowsLocked{})
		if plantLockBeforeDurable {
			// The planted bug (plant_on.go): the locks go as soon as
			// they are granted.
			l.release(ctx, m.Txn)
		}
		return
	}
	t.wait.reply = ctx.Defer()
}

// advance takes t's wanted keys in order until one is held by another
// transaction (then t queues for it and reports the edge). It reports
// whether every key is taken.
func (l *lockTable) advance(ctx runtime.Context, id TxnID, t *txnLocks) bool {
	w := t.wait
	for ; w.next < len(w.keys); w.next++ {
		k := lockKey{table: w.table, key: w.keys[w.next]}
		rl := l.locks[k]
		if rl == nil {
			l.locks[k] = &rowLock{holder: id}
			t.held = append(t.held, k)
			continue
		}
		if rl.holder == id {
			continue
		}
		rl.queue = append(rl.queue, id)
		w.waited = true
		ctx.Send(l.detector, WaitFor{Waiter: id, Holder: rl.holder, Shard: ctx.Self(), Wait: w.id})
		l.scheduleReport(ctx)
		return false
	}
	return true
}

// release ends transaction id in the table: its wait, if any, fails, and
// each of its locks passes to the first transaction queued for it.
func (l *lockTable) release(ctx runtime.Context, id TxnID) {
	t := l.txns[id]
	if t == nil {
		return
	}
	if t.wait != nil {
		l.endWait(ctx, id, t, errcode.New(errcode.QueryCanceled, "canceling statement due to user request"))
	}
	delete(l.txns, id)
	for _, k := range t.held {
		rl := l.locks[k]
		assert.That(rl != nil && rl.holder == id, "txn %d releases lock %v it does not hold", id, k)
		if len(rl.queue) == 0 {
			delete(l.locks, k)
			continue
		}
		next := rl.queue[0]
		rl.queue = rl.queue[1:]
		rl.holder = next
		nt := l.txns[next]
		assert.That(nt != nil && nt.wait != nil && nt.wait.keys[nt.wait.next] == k.key, "txn %d queued for %v is not waiting for it", next, k)
		nt.held = append(nt.held, k)
		nt.wait.next++
		ctx.Send(l.detector, WaitEnded{Waiter: next, Wait: nt.wait.id})
		for _, q := range rl.queue {
			// The rest of the queue now waits for the new holder.
			ctx.Send(l.detector, WaitFor{Waiter: q, Holder: next, Shard: ctx.Self(), Wait: l.txns[q].wait.id})
		}
		if l.advance(ctx, next, nt) {
			w := nt.wait
			nt.wait = nil
			w.reply.Reply(RowsLocked{Waited: w.waited})
		}
	}
}

// endWait takes t out of the queue it waits in and answers its LockRows
// with err.
func (l *lockTable) endWait(ctx runtime.Context, id TxnID, t *txnLocks, err error) {
	w := t.wait
	t.wait = nil
	k := lockKey{table: w.table, key: w.keys[w.next]}
	rl := l.locks[k]
	assert.That(rl != nil, "txn %d waits for lock %v nobody holds", id, k)
	for i, q := range rl.queue {
		if q == id {
			rl.queue = append(rl.queue[:i], rl.queue[i+1:]...)
			break
		}
	}
	ctx.Send(l.detector, WaitEnded{Waiter: id, Wait: w.id})
	if w.reply != nil {
		w.reply.Reply(err)
	}
	if len(t.held) == 0 {
		delete(l.txns, id)
	}
}

// breakDeadlock fails the victim's wait (the cycle's first edge) with
// 40P01 if every edge of the cycle that lives on this shard is still
// current.
func (l *lockTable) breakDeadlock(ctx runtime.Context, m BreakDeadlock) {
	if len(m.Cycle) == 0 {
		return
	}
	for _, e := range m.Cycle {
		if e.Shard != ctx.Self() {
			continue
		}
		t := l.txns[e.Waiter]
		if t == nil || t.wait == nil || t.wait.id != e.Wait || t.wait.reply == nil {
			return // the wait ended while the report was in flight
		}
		rl := l.locks[lockKey{table: t.wait.table, key: t.wait.keys[t.wait.next]}]
		if rl == nil || rl.holder != e.Holder {
			return
		}
	}
	victim := m.Cycle[0]
	if victim.Shard != ctx.Self() {
		return
	}
	t := l.txns[victim.Waiter]
	holder := uint64(0)
	if h := l.txns[victim.Holder]; h != nil {
		holder = h.session
	}
	l.endWait(ctx, victim.Waiter, t, errcode.New(errcode.DeadlockDetected, "deadlock detected").
		WithDetail("Process %d waits for a row of a table locked by process %d, which waits for this one.", t.session, holder))
}

// scheduleReport arms the reportWaits timer if it is not pending.
func (l *lockTable) scheduleReport(ctx runtime.Context) {
	if !l.reportScheduled {
		l.reportScheduled = true
		ctx.After(waitReportEvery, reportWaits{})
	}
}

// reportAll sends the edge of every current wait again (in transaction
// order, so runs replay), and keeps reporting while waits remain.
func (l *lockTable) reportAll(ctx runtime.Context) {
	var waiting []TxnID
	for id, t := range l.txns { //lint:maprange sorted below
		if t.wait != nil && t.wait.reply != nil {
			waiting = append(waiting, id)
		}
	}
	if len(waiting) == 0 {
		return
	}
	sort.Slice(waiting, func(i, j int) bool { return waiting[i] < waiting[j] })
	for _, id := range waiting {
		w := l.txns[id].wait
		rl := l.locks[lockKey{table: w.table, key: w.keys[w.next]}]
		ctx.Send(l.detector, WaitFor{Waiter: id, Holder: rl.holder, Shard: ctx.Self(), Wait: w.id})
	}
	l.scheduleReport(ctx)
}

// holderOf reports who holds a lock (0: nobody), for tests and status.
func (l *lockTable) holderOf(table catalog.ID, key string) TxnID {
	if rl := l.locks[lockKey{table: table, key: key}]; rl != nil {
		return rl.holder
	}
	return 0
}

func (k lockKey) String() string { return fmt.Sprintf("%s/%x", k.table, k.key) }

func dedupSorted(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i > 0 && v == s[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}
