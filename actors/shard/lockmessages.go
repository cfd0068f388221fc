package shard

import (
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// TxnID names a transaction in the row-lock table of every shard it locks
// rows on. The gateway numbers transactions; 0 is "no transaction" (a
// Commit without row locks, e.g. a source connector's).
type TxnID uint64

// Row-lock messages (rowlock.go). All are plain values: ids, keys and
// strings, so they can cross a process boundary.
type (
	// LockRows takes the exclusive locks of Keys (encoded primary keys of
	// Table, as the shard stores them; "" names the whole table, for
	// tables without a primary key) for Txn, in key order. The reply is
	// deferred while a key is held by another transaction: RowsLocked
	// once every key is Txn's, or an error — 40P01 when the wait closed a
	// cycle of waiting transactions (deadlock.go), 57014 when the wait was
	// canceled (CancelLockWait) or superseded.
	LockRows struct {
		Txn TxnID
		// Session is the waiting session's process id, named in a
		// deadlock's detail as PostgreSQL names backends.
		Session uint64
		Table   catalog.ID
		Keys    []string
	}
	// RowsLocked answers LockRows: every key is now the transaction's.
	// Waited reports whether it had to wait for another transaction (the
	// rows may have changed since the caller read them).
	RowsLocked struct{ Waited bool }

	// UnlockRows releases every row lock of Txn and ends its wait, if
	// any: the transaction rolled back, committed nothing, or its session
	// closed. A transaction that commits writes releases its locks with
	// the Commit instead (Commit.Txn), once the commit is durable. →
	// RowsUnlocked.
	UnlockRows struct{ Txn TxnID }
	// RowsUnlocked answers UnlockRows.
	RowsUnlocked struct{}

	// CancelLockWait ends Txn's wait for a lock, if it still waits: its
	// statement was canceled or timed out, so nobody hears the LockRows
	// reply any more. Locks already granted stay held until the
	// transaction ends. → LockWaitCanceled.
	CancelLockWait struct{ Txn TxnID }
	// LockWaitCanceled answers CancelLockWait.
	LockWaitCanceled struct{}
)

// Deadlock-detector messages (deadlock.go), sent without replies.
type (
	// WaitFor reports a wait-for edge: Waiter waits (wait number Wait of
	// Shard) for a lock Holder holds. A later WaitFor of the same waiter
	// replaces its edge (the lock passed to another holder).
	WaitFor struct {
		Waiter, Holder TxnID
		Shard          runtime.ActorID
		Wait           uint64
	}
	// WaitEnded removes Waiter's edge of wait Wait (granted, canceled or
	// broken).
	WaitEnded struct {
		Waiter TxnID
		Wait   uint64
	}
	// BreakDeadlock asks Shard to fail the wait that closed a cycle with
	// 40P01. Cycle lists the cycle's edges, the victim's first; the shard
	// checks its own edges are still current before it acts, so an edge
	// that ended while the message was in flight breaks nothing.
	BreakDeadlock struct{ Cycle []WaitFor }
)
