package engine

import (
	"context"
	"errors"
	"github.com/rockstream/rockstream/runtime"
	"sort"
	"strconv"
	"time"

	"github.com/rockstream/rockstream/actors/shard"
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
//	UPDATE: read snapshot → keys to change → LockRows (the shard queues
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

// statementRetriesMax bounds how often one statement runs again because
// rows it matched changed while it waited for their locks (each re-run
// holds the locks it got, so progress is normal; the bound turns a
// pathological livelock into an error).
const statementRetriesMax = 100

// errStaleRead makes Execute run an UPDATE or DELETE again: a row it read
// was changed by a transaction that committed while this one waited.
var errStaleRead = errors.New("engine: row changed while waiting for its lock") //lint:immutable sentinel error

// lockRows takes the locks of keys (primary keys of rel) for s's
// transaction in the shard that stores the rows (actors/shard rowlock.go),
// waiting there while another transaction holds one. It reports whether
// it had to wait for any key (the rows may have changed since s read
// them).
func (s *session) lockRows(ctx context.Context, rel *catalog.Relation, keys []types.Row) (waited bool, err error) {
	ks := make([]string, 0, len(keys))
	for _, k := range keys {
		// NB: a key the transaction holds already is not asked for again
		// (a statement run again after a wait asks for the same keys).
		if k := encodePK(rel, k); !s.holdsLock(rel, k) {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	for len(ks) > 0 {
		n := min(len(ks), shard.LockKeysPerRequestMax)
		w, err := s.lockKeys(ctx, rel, ks[:n])
		if err != nil {
			return waited, err
		}
		waited = waited || w
		ks = ks[n:]
	}
	return waited, nil
}

// lockKeylessTable takes the lock of a whole table without a primary key
// (its rows have no key to lock one by one) for an implicit transaction's
// UPDATE or DELETE, before the statement reads: two autocommit
// read-modify-writes of the table then run one after the other instead of
// the second failing at COMMIT with RS-2008. Explicit transactions do not
// take it (they may hold it across client round trips); their changes to
// such tables are checked at COMMIT, as before.
func (s *session) lockKeylessTable(ctx context.Context, rel *catalog.Relation) error {
	if s.txn == nil || !s.txnImplicit || rel.Kind != catalog.KindTable || rel.InsertOnly || len(rel.PrimaryKey) > 0 || s.holdsLock(rel, "") {
		return nil
	}
	_, err := s.lockKeys(ctx, rel, []string{""})
	return err
}

// lockKeys is one LockRows request. A statement timeout, cancel or
// lock_timeout while it waits takes the wait out of the shard's queue
// (CancelLockWait); locks it got stay held until the transaction ends, as
// in PostgreSQL.
func (s *session) lockKeys(ctx context.Context, rel *catalog.Relation, keys []string) (bool, error) {
	if s.lockTxn == 0 {
		s.lockTxn = shard.TxnID(s.e.nextTxn.Add(1))
	}
	lctx, cancel := ctx, context.CancelFunc(func() {})
	if d := s.lockTimeout(); d > 0 {
		lctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	m, err := s.e.ask(lctx, s.e.lockShard(), shard.LockRows{Txn: s.lockTxn, Session: s.id, Table: rel.ID, Keys: keys})
	if err == nil {
		if s.locksHeld == nil {
			s.locksHeld = map[heldLock]struct{}{}
		}
		for _, k := range keys {
			s.locksHeld[heldLock{table: rel.ID, key: k}] = struct{}{}
		}
		return m.(shard.RowsLocked).Waited, nil
	}
	if lctx.Err() != nil {
		s.cancelLockWait()
		if ctx.Err() == nil {
			return false, errcode.New(errcode.LockTimeout, "canceling statement due to lock timeout")
		}
		return false, context.Cause(ctx)
	}
	return false, err
}

// heldLock is a row lock the session's transaction was granted.
type heldLock struct {
	table catalog.ID
	key   string
}

// holdsLock reports whether the transaction was granted the lock of key.
// Granted locks stay the transaction's until it ends (a 40P01, cancel or
// timeout ends only a wait).
func (s *session) holdsLock(rel *catalog.Relation, key string) bool {
	_, ok := s.locksHeld[heldLock{table: rel.ID, key: key}]
	return ok
}

// endLockTxn forgets the transaction's row locks on the session's side
// and returns its id (0: it took none).
func (s *session) endLockTxn() shard.TxnID {
	txn := s.lockTxn
	s.lockTxn = 0
	clear(s.locksHeld)
	return txn
}

// lockTimeout is the session's lock_timeout (0: none).
func (s *session) lockTimeout() time.Duration {
	if s.settings == nil {
		return 0
	}
	v, ok := s.settings.Get("lock_timeout")
	if !ok {
		return 0
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// cancelLockWait ends the transaction's wait in the shard.
func (s *session) cancelLockWait() {
	s.e.askDetached(s.e.lockShard(), shard.CancelLockWait{Txn: s.lockTxn}, "canceling a row-lock wait")
}

// unlockRows releases every row lock of s's transaction: it rolled back,
// committed nothing, failed to commit, or its session closed. (A commit
// with writes releases them itself once durable: Commit.Txn.)
func (s *session) unlockRows() {
	txn := s.endLockTxn()
	if txn == 0 {
		return
	}
	s.e.askDetached(s.e.lockShard(), shard.UnlockRows{Txn: txn}, "releasing row locks")
}

// lockShard is the shard holding the row locks of the rows it stores.
// NB: with one shard (shard.CheckServable refuses a map over several) the
// home shard stores every row; with many, each key's lock belongs to the
// owner of its bucket (Router.OwnerOfKey), and a transaction's unlock and
// cancel go to every shard it locked on (issue D2).
func (e *Engine) lockShard() runtime.ActorID { return e.homeShard() }

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
