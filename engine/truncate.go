package engine

import (
	"context"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// TRUNCATE deletes every row of each table in the statement's transaction
// (so ROLLBACK undoes it and views follow it). RESTART IDENTITY also
// restarts the sequences owned by the tables' columns (serial, identity,
// OWNED BY). Sequences are not transactional in RockStream, so the restart
// happens at once (the transaction's own nextval calls see it, as in
// PostgreSQL) and the transaction remembers each sequence's previous
// state: ROLLBACK, or ROLLBACK TO a savepoint set before the TRUNCATE,
// puts it back, unless other sessions have since moved the sequence past
// that state (a value is never handed out twice).

// seqRestart is a sequence restarted by TRUNCATE ... RESTART IDENTITY.
type seqRestart struct {
	seq   *catalog.Relation
	prior control.SequenceState
	// depth is the number of savepoints open when it was restarted.
	depth int
}

func (s *session) truncate(ctx context.Context, snap *control.Snapshot, st *rsql.Truncate, env *expr.Env) (gateway.Cursor, error) {
	for _, d := range st.Deletes {
		// NB: no row locks: a TRUNCATE would lock every row; the
		// commit-time check of what it read guards it instead.
		if _, err := s.delete(ctx, snap, d, env, false); err != nil {
			return nil, err
		}
	}
	if st.RestartIdentity {
		if err := s.restartOwnedSequences(ctx, snap, st); err != nil {
			return nil, err
		}
	}
	return &rowsCursor{tag: "TRUNCATE TABLE"}, nil
}

func (s *session) restartOwnedSequences(ctx context.Context, snap *control.Snapshot, st *rsql.Truncate) error {
	tables := map[catalog.ID]bool{}
	for _, d := range st.Deletes {
		tables[d.Table.ID] = true
	}
	var owned []*catalog.Relation
	for _, r := range snap.Relations() {
		if r.Kind == catalog.KindSequence && r.Sequence != nil && tables[r.Sequence.OwnedBy] {
			owned = append(owned, r)
		}
	}
	if len(owned) == 0 {
		return nil
	}
	m, err := s.e.ask(ctx, control.ActorID, control.GetSequenceStates{})
	if err != nil {
		return err
	}
	states := m.(control.SequenceStates)
	for _, seq := range owned {
		prior, ok := states[seq.ID]
		if !ok {
			return errcode.New(errcode.InternalError, "sequence %q has no state", seq.Name)
		}
		if _, err := s.e.ask(ctx, control.ActorID, control.SequenceOp{ID: seq.ID, Op: control.SeqRestart}); err != nil {
			return err
		}
		s.txn.restarts = append(s.txn.restarts, seqRestart{seq: seq, prior: prior, depth: s.txn.marks})
	}
	return nil
}

// undoRestarts puts back the sequences restarted while more than depth
// savepoints were open (depth 0: all of them), newest first.
func (s *session) undoRestarts(ctx context.Context, t *txnState, depth int) error {
	if t == nil {
		return nil
	}
	keep := 0
	for keep < len(t.restarts) && t.restarts[keep].depth < depth {
		keep++
	}
	undo := t.restarts[keep:]
	t.restarts = t.restarts[:keep]
	if len(undo) == 0 {
		return nil
	}
	m, err := s.e.ask(ctx, control.ActorID, control.GetSequenceStates{})
	if err != nil {
		return err
	}
	states := m.(control.SequenceStates)
	for i := len(undo) - 1; i >= 0; i-- {
		r := undo[i]
		cur, ok := states[r.seq.ID]
		if !ok {
			continue // dropped since
		}
		if movedPast(r.seq.Sequence, cur, r.prior) {
			continue
		}
		if _, err := s.e.ask(ctx, control.ActorID, control.SequenceOp{ID: r.seq.ID, Op: control.SeqSetVal, Value: r.prior.Last, IsCalled: r.prior.Called}); err != nil {
			return err
		}
		states[r.seq.ID] = r.prior
	}
	return nil
}

// movedPast reports whether a sequence's current state is beyond prior in
// its direction: putting prior back could then hand out a value again.
func movedPast(seq *catalog.Sequence, cur, prior control.SequenceState) bool {
	if seq == nil {
		return true
	}
	if seq.Increment > 0 {
		return cur.Last > prior.Last || (cur.Last == prior.Last && cur.Called && !prior.Called)
	}
	return cur.Last < prior.Last || (cur.Last == prior.Last && cur.Called && !prior.Called)
}
