package engine

import (
	"context"

	"github.com/rockstream/rockstream/errcode"
)

// Savepoints (SAVEPOINT / ROLLBACK TO SAVEPOINT / RELEASE SAVEPOINT) act on
// the open transaction's pending writes, which the session actor keeps
// (actors/session savepoint.go). The gateway keeps the names and their
// stack discipline; the actor keeps one mark per savepoint, by depth.

// Savepoint implements gateway.SavepointSession.
func (s *session) Savepoint(ctx context.Context) error {
	_, err := s.mark(ctx)
	return err
}

// RollbackToSavepoint implements gateway.SavepointSession.
func (s *session) RollbackToSavepoint(ctx context.Context, depth int) error {
	if err := s.checkDepth(depth); err != nil {
		return err
	}
	if err := s.rollbackTo(ctx, depth); err != nil {
		return err
	}
	return s.undoRestarts(ctx, s.txn, depth)
}

// ReleaseSavepoint implements gateway.SavepointSession.
func (s *session) ReleaseSavepoint(ctx context.Context, depth int) error {
	if err := s.checkDepth(depth); err != nil {
		return err
	}
	if err := s.release(ctx, depth); err != nil {
		return err
	}
	// Restarts made inside the released savepoints now belong to the
	// enclosing one.
	for i := range s.txn.restarts {
		s.txn.restarts[i].depth = min(s.txn.restarts[i].depth, depth-1)
	}
	return nil
}

func (s *session) checkDepth(depth int) error {
	if s.txn == nil || depth < 1 || depth > s.txn.marks {
		return errcode.New(errcode.InternalError, "internal: savepoint %d does not exist in the engine's transaction", depth)
	}
	return nil
}
