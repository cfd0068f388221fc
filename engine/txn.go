package engine

import (
	"context"
	"errors"

	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// A session's transaction lives in its session actor (actors/session):
// the write buffer and own-writes overlay, savepoints, the REPEATABLE
// READ snapshot pin, row locks and the commit. The connection's goroutine
// binds and evaluates SQL and asks the actor for every step that touches
// that state (req). txnState is what the connection itself needs to know
// of the open transaction to run SQL: its kind and level, how deep its
// savepoint stack is, and the sequences TRUNCATE ... RESTART IDENTITY
// restarted (put back on rollback, truncate.go).
type txnState struct {
	readOnly  bool
	isolation gateway.Isolation
	// marks is the depth of the savepoint stack in the actor (user
	// savepoints and the one a COPY takes to undo itself on failure).
	marks    int
	restarts []seqRestart
	// pinned: a REPEATABLE READ transaction's snapshot was asked for.
	pinned bool
}

// repeatable reports whether t runs at REPEATABLE READ.
func (t *txnState) repeatable() bool { return t != nil && t.isolation == gateway.RepeatableRead }

// actorIsolation maps the gateway's isolation level onto the session
// actor's two (READ UNCOMMITTED runs as READ COMMITTED, SERIALIZABLE as
// REPEATABLE READ).
func actorIsolation(i gateway.Isolation) sessionactor.Isolation {
	if i == gateway.RepeatableRead {
		return sessionactor.RepeatableRead
	}
	return sessionactor.ReadCommitted
}

// req asks the session's actor; a canceled or timed-out statement also
// ends the actor's row-lock wait for it (CancelWait), as PostgreSQL takes
// a canceled backend out of the lock queue.
func (s *session) req(ctx context.Context, msg runtime.Message) (runtime.Message, error) {
	m, err := s.e.ask(ctx, s.actor, msg)
	if err != nil && ctx.Err() != nil {
		s.e.askDetached(s.actor, sessionactor.CancelWait{}, "canceling a row-lock wait")
	}
	return m, err
}

// ensureTxn opens an implicit transaction for a statement run outside one
// (the gateway begins one for every statement; internal callers may not).
func (s *session) ensureTxn(ctx context.Context) error {
	if s.txn != nil {
		return nil
	}
	if _, err := s.req(ctx, sessionactor.Begin{Implicit: true}); err != nil {
		return err
	}
	s.txn, s.txnImplicit = &txnState{}, true
	return nil
}

// mark pushes a savepoint for the running statement (undone with
// rollbackTo, dropped with release); it returns its depth.
func (s *session) mark(ctx context.Context) (int, error) {
	if err := s.ensureTxn(ctx); err != nil {
		return 0, err
	}
	if _, err := s.req(ctx, sessionactor.Savepoint{}); err != nil {
		return 0, err
	}
	s.txn.marks++
	return s.txn.marks, nil
}

// rollbackTo undoes the changes since savepoint depth and keeps it.
func (s *session) rollbackTo(ctx context.Context, depth int) error {
	if _, err := s.req(ctx, sessionactor.RollbackTo{Depth: depth}); err != nil {
		return err
	}
	s.txn.marks = depth
	return nil
}

// release drops savepoint depth and every later one, keeping their changes.
func (s *session) release(ctx context.Context, depth int) error {
	if _, err := s.req(ctx, sessionactor.Release{Depth: depth}); err != nil {
		return err
	}
	s.txn.marks = depth - 1
	return nil
}

// statementRetriesMax bounds how often one statement runs again because
// rows it matched changed while it waited for their locks (each re-run
// holds the locks it got, so progress is normal; the bound turns a
// pathological livelock into an error).
const statementRetriesMax = 100

// errStaleRead makes Execute run an UPDATE or DELETE again: a row it read
// was changed by a transaction that committed while this one waited for
// the row's lock (READ COMMITTED's re-check; actors/session Lookup).
var errStaleRead = errors.New("engine: row changed while waiting for its lock") //lint:immutable sentinel error

// retryStale runs an UPDATE or DELETE, running it again while it finds
// rows changed under it as it waited for their locks. Nothing of the
// failed attempt needs undoing: its changes are sent to the session actor
// only when the statement ends (writer.flush), after the lookup that
// reported the stale row; what that lookup recorded is the rows' newest
// committed state, under locks the transaction now holds.
func (s *session) retryStale(run func() (gateway.Cursor, error)) (gateway.Cursor, error) {
	for attempt := 0; ; attempt++ {
		cur, err := run()
		if !errors.Is(err, errStaleRead) {
			return cur, err
		}
		if attempt >= statementRetriesMax {
			return nil, errcode.New(errcode.RowLockRetriesExhausted, "could not serialize access due to concurrent update")
		}
	}
}

// pkOf is the primary-key values of a row of rel (session.KeyOf).
func pkOf(rel *catalog.Relation, row types.Row) types.Row { return sessionactor.KeyOf(rel, row) }

// encodePK is the encoded primary key rows are named by in a transaction
// (sessionactor.EncodeKey).
func encodePK(rel *catalog.Relation, key types.Row) string { return sessionactor.EncodeKey(rel, key) }
