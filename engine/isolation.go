package engine

import (
	"context"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/types"
)

// Isolation levels, as PostgreSQL 15 defines them (transaction-iso.html):
//
//	READ COMMITTED   every statement reads the committed state as of its
//	                 start (plus the transaction's own writes). An UPDATE or
//	                 DELETE of a row another open transaction changed waits
//	                 for it, then runs again on the newest data (rowlock.go).
//	REPEATABLE READ  the transaction's first statement (not BEGIN) pins one
//	                 shard snapshot (shard.OpenSnapshot) that every later
//	                 read of the transaction uses: tables and materialized
//	                 views as of the same epoch, plus its own writes. An
//	                 UPDATE or DELETE of a row changed by a transaction that
//	                 committed after the snapshot fails with 40001 (RS-2290)
//	                 — after waiting for the row's lock if that transaction
//	                 is still open, and succeeding if it rolls back.
//
// Views read in a REPEATABLE READ transaction are brought up to the last
// committed epoch when the snapshot is pinned (so they are as fresh as the
// tables and include the session's earlier commits); like in READ
// COMMITTED, they never include the transaction's own uncommitted writes.

// repeatable reports whether t runs at REPEATABLE READ.
func (t *txnState) repeatable() bool { return t != nil && t.isolation == gateway.RepeatableRead }

// pinSnapshot takes a REPEATABLE READ transaction's snapshot at its first
// statement that reads or writes data.
func (s *session) pinSnapshot(ctx context.Context, snap *control.Snapshot, st rsql.Statement) error {
	t := s.txn
	if !t.repeatable() || t.snapshotID != 0 {
		return nil
	}
	switch st.(type) {
	case *rsql.Query, *rsql.Insert, *rsql.Update, *rsql.Delete, *rsql.Truncate:
	default:
		return nil
	}
	m, err := s.e.ask(ctx, s.e.homeShard(), shard.OpenSnapshot{CatalogVersion: snap.Version})
	if err != nil {
		return err
	}
	t.snapshotID = m.(shard.SnapshotOpened).ID
	return nil
}

// releaseSnapshot unpins an ended transaction's snapshot.
func (s *session) releaseSnapshot(t *txnState) {
	if t == nil || t.snapshotID == 0 {
		return
	}
	id := t.snapshotID
	t.snapshotID = 0
	s.e.askDetached(s.e.homeShard(), shard.ReleaseSnapshot{ID: id}, "releasing a transaction snapshot")
}

// readAt is the pinned snapshot reads of the session's transaction use (0:
// the newest committed state).
func (s *session) readAt() uint64 {
	if s.txn == nil {
		return 0
	}
	return s.txn.snapshotID
}

// concurrentUpdate is REPEATABLE READ's error for a row changed (deleted)
// by a transaction that committed after the snapshot.
func concurrentUpdate(deleted bool) error {
	what := "update"
	if deleted {
		what = "delete"
	}
	return errcode.New(errcode.ConcurrentUpdate, "could not serialize access due to concurrent %s", what)
}

// unseen reports, per key, whether the transaction has not looked the row
// up before.
func (w *writer) unseen(keys []types.Row) []bool {
	out := make([]bool, len(keys))
	for i, k := range keys {
		_, seen := w.tw.rows[encodePK(w.rel, k)]
		out[i] = !seen
	}
	return out
}

// conflictsVisible is REPEATABLE READ's rule for INSERT ... ON CONFLICT:
// a conflicting row (looked up at the newest state by current) must be
// the one the transaction's snapshot holds; one committed after the
// snapshot fails with 40001, as in PostgreSQL, rather than being skipped
// or updated from a state the transaction cannot see. unseen (nil: no
// check) marks the keys current looked up in this statement.
func (w *writer) conflictsVisible(ctx context.Context, keys []types.Row, unseen []bool) error {
	var check []types.Row
	var latest []types.Row
	for i, k := range keys {
		if unseen == nil || !unseen[i] {
			continue
		}
		if p := w.tw.rows[encodePK(w.rel, k)]; p != nil && p.row != nil && !p.changed {
			check = append(check, k)
			latest = append(latest, p.row)
		}
	}
	if len(check) == 0 {
		return nil
	}
	to, err := w.s.e.shardOfKeys(w.rel, check)
	if err != nil {
		return err
	}
	m, err := w.s.e.ask(ctx, to, shard.Lookup{CatalogVersion: w.snap.Version, Table: w.rel.ID, Keys: check, At: w.s.readAt()})
	if err != nil {
		return err
	}
	for i, r := range m.(shard.LookupResult).Rows {
		if !sameRow(w.rel, r, latest[i]) {
			return concurrentUpdate(false)
		}
	}
	return nil
}
