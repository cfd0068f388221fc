package engine

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
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
//	UPDATE: read snapshot → keys to change → lock each key (wait) →
//	   rows still as read? ── yes ──▶ apply, hold locks until COMMIT/ROLLBACK
//	                       └─ no ───▶ undo the statement, run it again
//
// A wait that would close a cycle of waiting transactions fails at once
// with 40P01 (deadlock detected), as PostgreSQL's detector would after
// deadlock_timeout. The commit-time check of what a transaction read
// (RS-2008) stays as the backstop for writers that take no row lock
// (COPY, INSERT).

// statementRetriesMax bounds how often one statement runs again because
// rows it matched changed while it waited for their locks (each re-run
// holds the locks it got, so progress is normal; the bound turns a
// pathological livelock into an error).
const statementRetriesMax = 100

// errStaleRead makes Execute run an UPDATE or DELETE again: a row it read
// was changed by a transaction that committed while this one waited.
var errStaleRead = errors.New("engine: row changed while waiting for its lock") //lint:immutable sentinel error

type rowLockKey struct {
	table catalog.ID
	key   string
}

// rowLocks is the engine's table of row locks held by open transactions.
type rowLocks struct {
	mu    sync.Mutex
	owner map[rowLockKey]*session
	wake  map[rowLockKey]chan struct{}
	waits map[*session]rowLockKey
}

func newRowLocks() *rowLocks {
	return &rowLocks{owner: map[rowLockKey]*session{}, wake: map[rowLockKey]chan struct{}{}, waits: map[*session]rowLockKey{}}
}

// lockRows takes the locks of keys (primary keys of rel) for s, in key
// order, waiting for other transactions to end. It reports whether it had
// to wait for any key (the rows may have changed since s read them).
func (s *session) lockRows(ctx context.Context, rel *catalog.Relation, keys []types.Row) (waited bool, err error) {
	ks := make([]string, 0, len(keys))
	for _, k := range keys {
		ks = append(ks, encodePK(rel, k))
	}
	sort.Strings(ks)
	l := s.e.rowLocks
	for i, k := range ks {
		if i > 0 && k == ks[i-1] {
			continue
		}
		w, err := l.acquire(ctx, s, rowLockKey{table: rel.ID, key: k})
		if err != nil {
			return waited, err
		}
		waited = waited || w
	}
	return waited, nil
}

func (l *rowLocks) acquire(ctx context.Context, s *session, k rowLockKey) (waited bool, err error) {
	for {
		l.mu.Lock()
		holder := l.owner[k]
		if holder == nil || holder == s {
			if holder == nil {
				l.owner[k] = s
				s.rowLocksHeld = append(s.rowLocksHeld, k)
			}
			l.mu.Unlock()
			return waited, nil
		}
		// Deadlock: does the holder (transitively) wait for s?
		for cur, steps := holder, 0; cur != nil && steps <= len(l.waits); steps++ {
			wk, waiting := l.waits[cur]
			if !waiting {
				break
			}
			cur = l.owner[wk]
			if cur == s {
				l.mu.Unlock()
				return waited, errcode.New(errcode.DeadlockDetected, "deadlock detected").
					WithDetail("Process %d waits for a row of a table locked by process %d, which waits for this one.", s.id, holder.id)
			}
		}
		ch := l.wake[k]
		if ch == nil {
			ch = make(chan struct{})
			l.wake[k] = ch
		}
		l.waits[s] = k
		l.mu.Unlock()
		waited = true
		select {
		case <-ch:
			l.mu.Lock()
			delete(l.waits, s)
			l.mu.Unlock()
		case <-ctx.Done():
			l.mu.Lock()
			delete(l.waits, s)
			l.mu.Unlock()
			return waited, context.Cause(ctx)
		}
	}
}

// unlockRows releases every row lock of s (its transaction ended; the
// commit, if any, is durable and readable).
func (s *session) unlockRows() {
	if len(s.rowLocksHeld) == 0 {
		return
	}
	l := s.e.rowLocks
	l.mu.Lock()
	for _, k := range s.rowLocksHeld {
		if l.owner[k] == s {
			delete(l.owner, k)
			if ch := l.wake[k]; ch != nil {
				close(ch)
				delete(l.wake, k)
			}
		}
	}
	l.mu.Unlock()
	s.rowLocksHeld = s.rowLocksHeld[:0]
}

// sameRow reports whether two rows of rel hold the same values.
func sameRow(rel *catalog.Relation, a, b types.Row) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	var ba, bb []byte
	for i, c := range rel.Columns {
		if i >= len(a) {
			break
		}
		ba = keyenc.EncodeColumn(ba[:0], c.Type, a[i], keyenc.Asc)
		bb = keyenc.EncodeColumn(bb[:0], c.Type, b[i], keyenc.Asc)
		if string(ba) != string(bb) {
			return false
		}
	}
	return true
}

// retryStale runs an UPDATE or DELETE, running it again (its changes
// undone) while it finds rows changed under it as it waited for their
// locks.
func (s *session) retryStale(run func() (gateway.Cursor, error)) (gateway.Cursor, error) {
	if s.txn == nil {
		s.txn = newTxn(false)
	}
	for attempt := 0; ; attempt++ {
		s.txn.mark()
		depth := len(s.txn.marks)
		cur, err := run()
		if errors.Is(err, errStaleRead) {
			s.txn.rollbackTo(depth)
			s.txn.release(depth)
			if attempt >= statementRetriesMax {
				return nil, errcode.New(errcode.RowLockRetriesExhausted, "could not serialize access due to concurrent update")
			}
			continue
		}
		s.txn.release(depth)
		return cur, err
	}
}
