package session

import (
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// Row locks give UPDATE and DELETE PostgreSQL's READ COMMITTED behaviour
// between concurrent transactions: a statement that is about to change a
// row another open transaction changed waits until that transaction ends,
// then runs again on the newest committed data (PostgreSQL re-checks just
// the changed rows; re-running the statement is the same for the
// single-row updates this is for, e.g. pgbench's). So two clients adding
// to the same balance both succeed, in some order, instead of one failing
// at COMMIT with 40001.
//
//	UPDATE: read snapshot → keys to change → Lookup{Lock} → LockRows (the shard queues
//	   the request while another transaction holds a key) →
//	   rows still as read? ── yes ──▶ apply, hold locks until COMMIT/ROLLBACK
//	                       └─ no ───▶ undo the statement, run it again
//
// The locks live in the shard that stores the rows (actors/shard), held by
// the transaction's id: a COMMIT with writes releases them with its
// Commit message once the commit is durable, ROLLBACK, an empty COMMIT and
// a closing session with UnlockRows. Autocommit statements take the same
// path (an implicit transaction is a transaction); INSERT ... ON CONFLICT
// locks the keys it inserts before it looks them up, and an implicit
// transaction's UPDATE or DELETE of a table without a primary key locks
// the whole table before it reads.
//
// A wait that closes a cycle of waiting transactions fails with 40P01
// (deadlock detected), as PostgreSQL's detector would after
// deadlock_timeout: the shard reports every wait to the deadlock detector
// actor, which finds the cycle. The commit-time check of what a
// transaction read (RS-2008) stays as the backstop for writers that take
// no row lock (COPY, INSERT) and for locks a restarted shard forgot.

// lockTable answers LockTable: an implicit transaction's UPDATE or DELETE
// of a table without a primary key locks the whole table before it
// reads, so two autocommit read-modify-writes of it run one after the
// other instead of the second failing at COMMIT with RS-2008. Explicit
// transactions do not take it (they may hold it across client round
// trips); their changes to such tables are checked at COMMIT.
func (a *Actor) lockTable(ctx runtime.Context, m LockTable) {
	rel := &m.Table
	if _, held := a.locksHeld[heldLock{table: rel.ID}]; a.txn == nil || !a.txn.implicit || rel.Kind != catalog.KindTable || rel.InsertOnly || len(rel.PrimaryKey) > 0 || held {
		a.finish(Done{})
		return
	}
	a.lockKeys(ctx, rel, []string{""}, func(ctx runtime.Context) { a.finish(Done{}) })
}

// lockKeys takes the locks of keys (sorted, not held yet) for the
// transaction, LockKeysPerRequestMax per LockRows request, then runs next.
// A wait ended by CancelWait or lock_timeout fails the request; locks
// granted stay held until the transaction ends, as in PostgreSQL.
func (a *Actor) lockKeys(ctx runtime.Context, rel *catalog.Relation, keys []string, next then) {
	if len(keys) == 0 {
		next(ctx)
		return
	}
	if a.lockTxn == 0 {
		a.txnSerial++
		a.lockTxn = shard.TxnID(a.cfg.Session<<txnSerialBits | a.txnSerial&(1<<txnSerialBits-1))
	}
	n := min(len(keys), shard.LockKeysPerRequestMax)
	batch, rest := keys[:n], keys[n:]
	var timer runtime.TimerID
	onReply := func(ctx runtime.Context, reply runtime.Message) {
		a.lockWait = 0
		ctx.CancelTimer(timer)
		timedOut := a.lockTimedOut
		a.lockTimedOut = false
		if err, ok := reply.(error); ok {
			if timedOut && errcode.Has(err, errcode.QueryCanceled) {
				err = errcode.New(errcode.LockTimeout, "canceling statement due to lock timeout")
			}
			a.finish(err)
			return
		}
		for _, k := range batch {
			a.locksHeld[heldLock{table: rel.ID, key: k}] = struct{}{}
		}
		a.lockKeys(ctx, rel, rest, next)
	}
	// send asks for the batch; sent again when no answer came within
	// shardReplyTimeout (the request or its reply was lost).
	var send func(ctx runtime.Context)
	send = func(ctx runtime.Context) {
		id := a.ask(ctx, a.lockShard(), shard.LockRows{Txn: a.lockTxn, Session: a.backend(), Table: rel.ID, Keys: batch}, onReply)
		p := a.asks[id]
		p.resend = send
		a.asks[id] = p
		a.lockWait = id
	}
	send(ctx)
	a.lockWaitSerial++
	if d := a.stmt.LockTimeout; d > 0 {
		timer = ctx.After(d, lockTimeoutFired{wait: a.lockWaitSerial})
	}
}

// endLockTxn forgets the transaction's row locks on the session's side
// and returns its id (0: it took none).
func (a *Actor) endLockTxn() shard.TxnID {
	id := a.lockTxn
	a.lockTxn = 0
	clear(a.locksHeld)
	return id
}

// unlockRows releases every row lock of the transaction: it rolled back,
// committed nothing, failed to commit, or its session closed. (A commit
// with writes releases them itself once durable: Commit.Txn.)
func (a *Actor) unlockRows(ctx runtime.Context) {
	if id := a.endLockTxn(); id != 0 {
		a.send(ctx, a.lockShard(), shard.UnlockRows{Txn: id})
	}
}

// backend is the process id deadlock reports name the session by.
func (a *Actor) backend() uint64 {
	if a.cfg.Backend != 0 {
		return uint64(a.cfg.Backend)
	}
	return a.cfg.Session
}
