package engine

import (
	"context"

	rsql "github.com/rockstream/rockstream/ivm/sql"
)

// Read-modify-write statements (UPDATE, DELETE, INSERT ... ON CONFLICT)
// in implicit transactions take the engine's implicit-write lock from
// before they read until their transaction commits or rolls back. Two
// autocommit `UPDATE t SET n = n + 1 WHERE id = 1` from different sessions
// then never both read the same old row and overwrite each other's update
// (a lost update): the second one reads the first one's commit, as
// PostgreSQL's READ COMMITTED re-reads a row updated concurrently. There
// is one lock, so implicit transactions cannot deadlock on it; explicit
// transaction blocks do not take it (they may span client round trips).

// newImplicitWriteLock makes the lock (a one-slot channel, so waiting
// honours statement timeouts and cancels).
func newImplicitWriteLock() chan struct{} { return make(chan struct{}, 1) }

// readModifyWrite reports whether st reads the rows it writes.
func readModifyWrite(st rsql.Statement) bool {
	switch x := st.(type) {
	case *rsql.Update, *rsql.Delete, *rsql.Truncate:
		return true
	case *rsql.Insert:
		return x.OnConflict != nil
	}
	return false
}

// lockImplicitWrite takes the lock for st when the session's transaction
// is implicit and st reads what it writes.
func (s *session) lockImplicitWrite(ctx context.Context, st rsql.Statement) error {
	if s.txn == nil || !s.txnImplicit || s.holdsWriteLock || !readModifyWrite(st) {
		return nil
	}
	select {
	case s.e.implicitWrites <- struct{}{}:
		s.holdsWriteLock = true
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// unlockImplicitWrite releases the lock at the end of the transaction.
func (s *session) unlockImplicitWrite() {
	if s.holdsWriteLock {
		s.holdsWriteLock = false
		<-s.e.implicitWrites
	}
}
