package system

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/sim"
)

// Transactional clients (issue 16): a client session runs its
// transactions through its own session actor (actors/session), spawned in
// the database process as "session/<n>", with exactly the requests the
// pgwire engine sends (Begin → Statement → Read / Lookup{Lock} / Set /
// Savepoint / RollbackTo / Release → Commit or Rollback), over a few hot
// rows of table acct(k, bal, w), so row-lock waits, stale re-runs and
// deadlocks happen:
//
//	increment   UPDATE acct SET bal = bal + 1, w = id WHERE k = a
//	            (statement savepoint; READ COMMITTED re-runs it when the
//	            row changed while it waited for the lock, REPEATABLE READ
//	            fails with 40001)
//	transfer    two increments, a then b: two transfers in opposite
//	            orders deadlock (40P01)
//	upsert      INSERT ... ON CONFLICT (k) DO UPDATE SET bal = bal + 1:
//	            lock, look up, set
//	repeat      REPEATABLE READ: read a and b, think, read them again
//	            (the same rows: the pinned snapshot), maybe increment a
//	savepoint   an increment, SAVEPOINT, a poisoned change, ROLLBACK TO
//	rollback    a poisoned change, ROLLBACK
//
// Every change is an increment by one of a row whose w is the writer's
// transaction id, so row values are unique and a row's bal counts the
// increments applied to it. A poisoned change writes a negative bal that
// must never be seen.
//
// Checkers (besides the reads, model and views of run.go, which read acct
// too):
//   - porcupine per key (lin.go): a committed transaction's change of a
//     row is a compare-and-set from the row it looked up under the lock to
//     its new row, from that lookup's issue to the commit's reply (an
//     unknown commit never returns); READ COMMITTED reads are reads from
//     issue to reply, REPEATABLE READ reads are reads within the window of
//     the snapshot's pin;
//   - no lost update: after healing, each row's bal lies between its
//     acknowledged increments and those plus its unknown ones;
//   - REPEATABLE READ repeatability: a second read shows the first's rows;
//   - a lookup under the lock returns the row the statement read unless it
//     says Stale (READ COMMITTED) or fails with 40001 (REPEATABLE READ);
//   - savepoints and rollbacks: no poisoned row is ever read, and a lookup
//     after ROLLBACK TO no longer sees the undone change;
//   - 40P01 only for real cycles: when a wait fails with deadlock
//     detected, the transactions' lock holds and waits as the clients saw
//     them admit a cycle through it at some instant of the wait.
//
// Each writing transaction first takes nextval('seq') from the control
// plane, as the engine evaluates nextval in an INSERT: outside any transaction (never
// rolled back), so not through the session actor. Its checker: a value is
// never returned twice, and a value returned after another was returned
// is larger (across crashes: the sequence's durable log-ahead).

// Transactional workload sizes.
const (
	// txnsMax bounds a run's transactions (porcupine's per-key histories
	// stay small).
	txnsMax = 80
	// hotKeysMin..hotKeysMax is how many acct rows the transactions
	// fight over (drawn per run): few, so waits and deadlocks are common.
	hotKeysMin, hotKeysMax = 2, 3
	// staleRetriesMax bounds one statement's re-runs after a stale row
	// (the engine's statementRetriesMax).
	staleRetriesMax = 100
)

// acctTable is the table id the porcupine keys of acct use.
const acctTable = 3

// acctDDL creates acct(k, bal, w).
func acctDDL() control.CreateRelation {
	col := func(name string, notNull bool) catalog.Column {
		return catalog.Column{Name: name, Type: types.TInt8, NotNull: notNull}
	}
	return control.CreateRelation{IfNotExists: true, Relation: &catalog.Relation{Kind: catalog.KindTable, Name: "acct", PrimaryKey: []int{0},
		Columns: []catalog.Column{col("k", true), col("bal", false), col("w", false)}}}
}

type txnKind uint8

const (
	txnIncrement txnKind = iota
	txnTransfer
	txnUpsert
	txnRepeat
	txnSavepoint
	txnRollback
	txnKinds
)

func (k txnKind) String() string {
	return [...]string{"increment", "transfer", "upsert", "repeat", "savepoint", "rollback"}[k]
}

// seedAcct inserts the hot rows but the last, (k, 0, 0), before the
// clients start (retried through faults; a retry writes the same rows),
// so increments find rows to change and upserts both insert and update.
func (r *runner) seedAcct(retry func(what string, err error) error) error {
	r.ensureTxns()
	var writes []shard.RowWrite
	for k := int64(1); k < r.txns.hotKeys; k++ {
		writes = append(writes, shard.RowWrite{Table: r.acct.ID, Key: types.Row{k}, Row: types.Row{k, int64(0), int64(0)}})
	}
	call := int64(r.s.Now())
	for {
		reply, err := r.ask(r.home(), shard.Commit{CatalogVersion: r.snap.Version, Writes: writes})
		if err != nil {
			if err := retry("seed acct", err); err != nil {
				return err
			}
			continue
		}
		r.maxAcked = max(r.maxAcked, reply.(shard.Committed).Epoch)
		for _, w := range writes {
			op := r.hist.write(0, linKey{acctTable, w.Key[0].(int64)}, w.Row, call)
			r.hist.finish(op, int64(r.s.Now()))
		}
		return nil
	}
}

// seqDDL creates the sequence the upserts draw from.
func seqDDL() control.CreateRelation {
	return control.CreateRelation{IfNotExists: true, Relation: &catalog.Relation{Kind: catalog.KindSequence, Name: "seq", Columns: catalog.SequenceColumns(),
		Sequence: &catalog.Sequence{Type: types.TInt8, Start: 1, Increment: 1, Min: 1, Max: math.MaxInt64, Cache: 1}}}
}

// nextval takes the sequence's next value, checks it, then runs next (also
// when the value is lost: the statement then failed, nextval consumed it
// or not).
func (r *runner) nextval(next func(ok bool)) {
	floor := r.txns.seqMax
	r.askAsync(control.ActorID, control.SequenceOp{Name: "seq", Op: control.SeqNextVal}, func(reply runtime.Message, err error) {
		if err != nil {
			r.logf("nextval: %v", err)
			next(false)
			return
		}
		v := reply.(control.SequenceValue).Value
		switch {
		case r.txns.seqSeen[v]:
			r.s.Fail(fmt.Errorf("%w: nextval returned %d twice", errChecker, v))
			return
		case v <= floor:
			r.s.Fail(fmt.Errorf("%w: nextval returned %d after %d had been returned", errChecker, v, floor))
			return
		}
		r.logf("nextval %d", v)
		r.txns.seqSeen[v] = true
		r.txns.seqMax = max(r.txns.seqMax, v)
		r.cover.scenario("sequence_nextval")
		next(true)
	})
}

// txnModel is the transactional clients' shared state.
type txnModel struct {
	// next numbers transactions from 1 (their w values); conns numbers
	// connections (session actors).
	next, conns int64
	hotKeys     int64
	// acked and unknown count increments per key by commit outcome.
	acked, unknown map[int64]int
	// lastAckedAt is when an increment of the key was last acknowledged.
	lastAckedAt map[int64]int64
	// locks are every transaction's lock holds and waits as the clients
	// saw them (the 40P01 check).
	locks []*lockSpan
	// zombies are session actors of dropped connections not stopped yet
	// (the process was down).
	zombies []runtime.ActorID
	// seqMax is the largest nextval returned, seqSeen every one.
	seqMax  int64
	seqSeen map[int64]bool
}

// lockSpan is one lock a transaction held or waited for, from the issue
// of the Lookup that asked for it to the reply that ended it (never: not
// yet). Holds start at the issue and end when the transaction's end was
// answered, so they are never shorter than the real hold.
type lockSpan struct {
	txn      *txnRec
	key      int64
	wait     bool
	from, to int64
}

// txnConn is one client connection: a session actor.
type txnConn struct {
	id      int64
	actor   runtime.ActorID
	crashes int
	dropped bool
}

// txnWrite is one buffered row change: old is the row the transaction
// looked up under the lock (at call), new what it wrote.
type txnWrite struct {
	key      int64
	old, new types.Row
	call     int64
}

type txnRec struct {
	id       int64
	ss       *session
	conn     *txnConn
	kind     txnKind
	iso      sessionactor.Isolation
	implicit bool
	snap     *control.Snapshot
	acct     *catalog.Relation
	// log is the buffered changes in order; marks the savepoint stack
	// (positions in log).
	log   []txnWrite
	marks []int
	// pinCall, pinReturn bound a REPEATABLE READ snapshot's pin (0: not
	// yet); firstRead are the rows the transaction's first read showed.
	pinCall, pinReturn int64
	firstRead          map[int64]types.Row
	// held: keys granted (Lookup{Lock} answered); holds their spans.
	held  map[int64]bool
	holds []*lockSpan
	// ending: Commit or Rollback sent.
	ending bool
	stale  int
	// lockTimeout is the statements' lock_timeout (0: none); cancelAfter,
	// when set, cancels a lock wait still running that long after its
	// lookup was sent (CancelWait, as a canceled statement does).
	lockTimeout, cancelAfter time.Duration
}

// ensureTxns draws the run's transactional parameters once.
func (r *runner) ensureTxns() {
	if r.txns.acked == nil {
		r.txns = txnModel{next: 1, hotKeys: int64(hotKeysMin + r.rnd.IntN(hotKeysMax-hotKeysMin+1)),
			acked: map[int64]int{}, unknown: map[int64]int{}, lastAckedAt: map[int64]int64{}, seqSeen: map[int64]bool{}}
	}
}

// connOf returns the session's connection, opening one (a new session
// actor) when it has none or the last one dropped or died with the process.
func (r *runner) connOf(ss *session) (*txnConn, error) {
	crashes := r.s.Stats().Crashes
	if c := ss.conn; c != nil && !c.dropped && c.crashes == crashes {
		return c, nil
	}
	if c := ss.conn; c != nil && !c.dropped {
		// The process crashed under it: the connection died with it.
		c.dropped = true
		r.txns.zombies = append(r.txns.zombies, c.actor)
	}
	r.stopZombies()
	r.txns.conns++
	c := &txnConn{id: r.txns.conns, actor: sessionactor.ActorOf(uint64(r.txns.conns)), crashes: crashes}
	if err := r.s.Spawn(processName, c.actor, r.newSession(c.id)); err != nil {
		return nil, err
	}
	ss.conn = c
	return c, nil
}

// newSession is connection id's session actor, as the engine spawns one
// per pgwire connection.
func (r *runner) newSession(id int64) runtime.Factory {
	return sessionactor.New(sessionactor.Config{Session: uint64(id), Router: r.router})
}

// stopZombies stops the session actors of dropped connections (a
// restarted process re-created them idle).
func (r *runner) stopZombies() {
	if !r.s.ProcessUp(processName) {
		return
	}
	for _, id := range r.txns.zombies {
		_ = r.s.Stop(id) // NB: gone already is fine
	}
	r.txns.zombies = nil
}

// drop closes a connection as the engine does when its client goes away:
// the open transaction is rolled back (its locks released), then the
// session actor stops. The client never hears the outcome.
func (r *runner) drop(t *txnRec) {
	c := t.conn
	if c.dropped {
		return
	}
	c.dropped = true
	r.s.AskAsync(c.actor, sessionactor.Rollback{}, func(runtime.Message, error) {
		r.endHolds(t)
		if r.s.ProcessUp(processName) {
			if err := r.s.Stop(c.actor); err != nil {
				r.txns.zombies = append(r.txns.zombies, c.actor)
			}
		} else {
			r.txns.zombies = append(r.txns.zombies, c.actor)
		}
	})
}

// txnOne runs one transaction of a drawn kind on the session's connection.
func (r *runner) txnOne(ss *session, snap *control.Snapshot, acct *catalog.Relation) {
	r.ensureTxns()
	conn, err := r.connOf(ss)
	if err != nil {
		r.s.Fail(err)
		return
	}
	kind := txnKind(r.rnd.IntN(int(txnKinds) + 2))
	if kind >= txnKinds {
		// Transfers are drawn three times as often: two of them in
		// opposite orders are what deadlocks.
		kind = txnTransfer
	}
	t := &txnRec{id: r.txns.next, ss: ss, conn: conn, kind: kind, snap: snap, acct: acct, held: map[int64]bool{}}
	r.txns.next++
	if r.rnd.IntN(5) < 2 {
		t.iso = sessionactor.RepeatableRead
	}
	switch t.kind {
	case txnRepeat:
		t.iso = sessionactor.RepeatableRead
	case txnIncrement, txnUpsert:
		t.implicit = r.rnd.IntN(3) == 0
	}
	a := r.hotKey()
	b := a%r.txns.hotKeys + 1 + int64(r.rnd.IntN(int(r.txns.hotKeys-1)))
	if b > r.txns.hotKeys {
		b -= r.txns.hotKeys
	}
	r.logf("s%d txn %d %s iso=%d implicit=%t keys %d,%d on %s", ss.id, t.id, t.kind, t.iso, t.implicit, a, b, conn.actor)
	r.cover.scenario("txn_" + t.kind.String())
	if t.iso == sessionactor.RepeatableRead {
		r.cover.scenario("txn_repeatable_read")
	}
	switch r.rnd.IntN(8) {
	case 0:
		t.lockTimeout = time.Duration(1+r.rnd.IntN(50)) * time.Millisecond
	case 1:
		t.cancelAfter = time.Duration(1+r.rnd.IntN(50)) * time.Millisecond
	}
	if t.iso == sessionactor.RepeatableRead {
		// NB: the snapshot is pinned at the first data statement; the
		// window starts at BEGIN so it holds wherever the session pins.
		t.pinCall = int64(r.s.Now())
	}
	r.req(t, sessionactor.Begin{Isolation: t.iso, Implicit: t.implicit}, func(runtime.Message) {
		if t.kind != txnRepeat {
			// The transaction's first statement takes a value of the
			// sequence (INSERT INTO audit VALUES (nextval('seq'))).
			r.nextval(func(ok bool) {
				if !ok {
					t.ending = true
					r.req(t, sessionactor.Rollback{}, func(runtime.Message) { r.endTxn(t) })
					return
				}
				r.txnBody(t, a, b)
			})
			return
		}
		r.txnBody(t, a, b)
	})
}

// txnBody runs the statements of t's kind over keys a and b, then ends t.
func (r *runner) txnBody(t *txnRec, a, b int64) {
	ss := t.ss
	{
		switch t.kind {
		case txnIncrement:
			r.increment(t, a, func() { r.commit(t) })
		case txnTransfer:
			r.increment(t, a, func() {
				r.s.At(r.think(ss), func() { r.increment(t, b, func() { r.commit(t) }) })
			})
		case txnUpsert:
			r.upsert(t, a, func() { r.commit(t) })
		case txnRepeat:
			r.repeatRead(t, a, b)
		case txnSavepoint:
			// The poisoned change goes to a row the transaction did not
			// touch before the savepoint, or to the one it just
			// incremented (the savepoint then restores its own change).
			target := b
			if r.rnd.IntN(2) == 0 {
				target = a
			}
			r.increment(t, a, func() { r.savepointRollback(t, target) })
		case txnRollback:
			r.statement(t, func() {
				r.lockLookup(t, sessionactor.Lookup{Keys: []types.Row{{b}}}, func(res sessionactor.LookupResult) {
					r.set(t, b, res.Rows[0], r.poison(t, b), func() {
						t.ending = true
						r.req(t, sessionactor.Rollback{}, func(runtime.Message) {
							r.cover.scenario("txn_rolled_back")
							r.endTxn(t)
						})
					})
				})
			})
		}
	}
}

// hotKey draws one of the hot acct keys.
func (r *runner) hotKey() int64 { return 1 + int64(r.rnd.IntN(int(r.txns.hotKeys))) }

// poison is a change that must never become visible.
func (r *runner) poison(t *txnRec, k int64) types.Row { return types.Row{k, -t.id, t.id} }

// statement starts a statement that reads or writes data.
func (r *runner) statement(t *txnRec, next func()) {
	r.req(t, sessionactor.Statement{CatalogVersion: t.snap.Version, Data: true, LockTimeout: t.lockTimeout, WaitForOwn: true}, func(runtime.Message) { next() })
}

// readRows reads acct's rows under keys as the statement sees them: by
// primary key, or (a scan: one time in three) the whole table.
func (r *runner) readRows(t *txnRec, keys []int64, next func(map[int64]types.Row)) {
	pk := make([]types.Row, len(keys))
	for i, k := range keys {
		pk[i] = types.Row{k}
	}
	m := sessionactor.Read{CatalogVersion: t.snap.Version, Points: []sessionactor.PointRead{{Relation: *t.acct, Keys: pk}}}
	if r.rnd.IntN(3) == 0 {
		m = sessionactor.Read{CatalogVersion: t.snap.Version, Relations: []catalog.ID{t.acct.ID}}
		r.cover.scenario("txn_table_scan")
	}
	call := int64(r.s.Now())
	r.req(t, m, func(reply runtime.Message) {
		res := reply.(sessionactor.ReadResult)
		if len(res.Batches) != 1 {
			r.s.Fail(fmt.Errorf("%w: txn %d: a read of one point set returned %d batches", errChecker, t.id, len(res.Batches)))
			return
		}
		rows, err := rowsByKey("acct", res.Batches[0])
		if err != nil {
			r.s.Fail(err)
			return
		}
		now := int64(r.s.Now())
		own := t.written()
		for _, k := range keys {
			if err := checkNotPoisoned(k, rows[k], t); err != nil {
				r.s.Fail(err)
				return
			}
			if _, mine := own[k]; mine {
				continue // the transaction's own change, not committed state
			}
			if t.iso == sessionactor.RepeatableRead {
				if t.pinReturn == 0 {
					t.pinReturn = now
				}
				r.hist.read(t.ss.id, linKey{acctTable, k}, rows[k], t.pinCall, t.pinReturn)
			} else {
				r.hist.read(t.ss.id, linKey{acctTable, k}, rows[k], call, now)
			}
		}
		next(rows)
	})
}

// checkNotPoisoned: a poisoned change (rolled back) is never read, except
// by the transaction that made it before it undid it.
func checkNotPoisoned(k int64, row types.Row, t *txnRec) error {
	if row == nil || row[1] == nil || row[1].(int64) >= 0 {
		return nil
	}
	if t != nil {
		if w, ok := t.written()[k]; ok && rowValue(w.new) == rowValue(row) {
			return nil
		}
	}
	return fmt.Errorf("%w: acct row %v was written by a change that was rolled back (ROLLBACK or ROLLBACK TO SAVEPOINT)", errChecker, row)
}

// lockLookup sends a Lookup with Lock of acct keys, recording the lock
// spans; next gets the reply.
func (r *runner) lockLookup(t *txnRec, m sessionactor.Lookup, next func(sessionactor.LookupResult)) {
	m.CatalogVersion, m.Table, m.Lock = t.snap.Version, *t.acct, true
	call := int64(r.s.Now())
	var waits []*lockSpan
	for _, k := range m.Keys {
		key := k[0].(int64)
		if t.held[key] {
			continue
		}
		if r.heldByOther(t, key) {
			r.cover.scenario("row_lock_wait")
		}
		w := &lockSpan{txn: t, key: key, wait: true, from: call, to: never}
		h := &lockSpan{txn: t, key: key, from: call, to: never}
		waits = append(waits, w)
		t.holds = append(t.holds, h)
		r.txns.locks = append(r.txns.locks, w, h)
	}
	outstanding := true
	if t.cancelAfter > 0 && len(waits) > 0 {
		conn := t.conn
		r.s.At(t.cancelAfter, func() {
			// NB: only while the client still waits for this lookup: the
			// session then runs it or has answered it, and runs nothing
			// else, so the cancel cannot hit a later request.
			if outstanding && !conn.dropped {
				r.s.AskAsync(conn.actor, sessionactor.CancelWait{}, func(runtime.Message, error) {})
			}
		})
	}
	r.reqErr(t, m, func(reply runtime.Message, err error) bool {
		outstanding = false
		now := int64(r.s.Now())
		for _, w := range waits {
			w.to = now
		}
		if err != nil {
			if errcode.Has(err, errcode.DeadlockDetected) {
				if cerr := r.checkDeadlock(t, waits, now); cerr != nil {
					r.s.Fail(cerr)
				}
			}
			return false
		}
		for _, w := range waits {
			t.held[w.key] = true
		}
		res := reply.(sessionactor.LookupResult)
		if len(res.Rows) != len(m.Keys) && !res.Stale {
			r.s.Fail(fmt.Errorf("%w: txn %d: lookup of %d keys returned %d rows", errChecker, t.id, len(m.Keys), len(res.Rows)))
			return true
		}
		for i, row := range res.Rows {
			if err := checkNotPoisoned(m.Keys[i][0].(int64), row, t); err != nil {
				r.s.Fail(err)
				return true
			}
		}
		next(res)
		return true
	})
}

// heldByOther reports whether another open transaction holds key for
// certain (its lookup was answered and it has not asked to end).
func (r *runner) heldByOther(t *txnRec, key int64) bool {
	for _, ss := range r.sessions {
		if o := ss.txn; o != nil && o != t && !o.ending && o.held[key] {
			return true
		}
	}
	return false
}

// increment is UPDATE acct SET bal = bal + 1, w = id WHERE k = key, run as
// the engine runs it: a statement savepoint, the read, the lookup under
// the row's lock with the row read, the change; a stale row re-runs it.
func (r *runner) increment(t *txnRec, key int64, next func()) {
	r.statement(t, func() {
		r.savepoint(t, func(depth int) {
			r.readRows(t, []int64{key}, func(rows map[int64]types.Row) {
				read := rows[key]
				if read == nil {
					// No row: the UPDATE changes nothing.
					r.release(t, depth, next)
					return
				}
				r.lockLookup(t, sessionactor.Lookup{Keys: []types.Row{{key}}, Read: []types.Row{read}}, func(res sessionactor.LookupResult) {
					if res.Stale {
						if t.iso == sessionactor.RepeatableRead {
							r.s.Fail(fmt.Errorf("%w: txn %d: a REPEATABLE READ lookup answered Stale instead of failing with 40001", errChecker, t.id))
							return
						}
						t.stale++
						r.cover.scenario("stale_row_rerun")
						if t.stale > staleRetriesMax {
							r.s.Fail(fmt.Errorf("%w: txn %d: a statement found its row stale %d times", errChecker, t.id, t.stale))
							return
						}
						r.rollbackTo(t, depth, func() {
							r.release(t, depth, func() { r.increment(t, key, next) })
						})
						return
					}
					cur := res.Rows[0]
					if rowValue(cur) != rowValue(read) {
						r.s.Fail(fmt.Errorf("%w: txn %d (%s, isolation %d): the row changed from %v to %v while it waited for its lock, and the lookup neither said Stale nor failed with 40001",
							errChecker, t.id, t.kind, t.iso, read, cur))
						return
					}
					r.set(t, key, cur, types.Row{key, cur[1].(int64) + 1, t.id}, func() { r.release(t, depth, next) })
				})
			})
		})
	})
}

// upsert is INSERT INTO acct VALUES (key, 1, id) ON CONFLICT (k) DO UPDATE
// SET bal = acct.bal + 1, w = id: lock the key, look it up, set.
func (r *runner) upsert(t *txnRec, key int64, next func()) {
	r.statement(t, func() {
		r.lockLookup(t, sessionactor.Lookup{Keys: []types.Row{{key}}, CheckVisible: t.iso == sessionactor.RepeatableRead}, func(res sessionactor.LookupResult) {
			cur := res.Rows[0]
			row := types.Row{key, int64(1), t.id}
			if cur != nil {
				row = types.Row{key, cur[1].(int64) + 1, t.id}
				r.cover.scenario("upsert_conflict_update")
			} else {
				r.cover.scenario("upsert_insert")
			}
			r.set(t, key, cur, row, next)
		})
	})
}

// repeatRead reads a and b twice in one REPEATABLE READ transaction: the
// second read must show the first's rows whatever committed in between.
func (r *runner) repeatRead(t *txnRec, a, b int64) {
	keys := []int64{a, b}
	r.statement(t, func() {
		r.readRows(t, keys, func(first map[int64]types.Row) {
			t.firstRead = first
			r.readEverything(t, func(firstAll string) {
				r.s.At(r.think(t.ss)+time.Duration(r.rnd.IntN(20))*time.Millisecond, func() {
					r.statement(t, func() {
						r.readRows(t, keys, func(second map[int64]types.Row) {
							r.readEverything(t, func(secondAll string) {
								if firstAll != secondAll {
									r.s.Fail(fmt.Errorf("%w: txn %d: REPEATABLE READ read the tables and views as\n%s\nthen in a later statement as\n%s", errChecker, t.id, firstAll, secondAll))
									return
								}
								for _, k := range keys {
									if rowValue(first[k]) != rowValue(second[k]) {
										r.s.Fail(fmt.Errorf("%w: txn %d: REPEATABLE READ read acct[%d] as %v, then as %v in a later statement (not its snapshot)", errChecker, t.id, k, first[k], second[k]))
										return
									}
									if r.txns.lastAckedAt[k] > t.pinReturn {
										r.cover.scenario("rr_snapshot_pinned")
									}
								}
								if r.rnd.IntN(2) == 0 {
									r.increment(t, a, func() { r.commit(t) })
									return
								}
								r.commit(t)
							})
						})
					})
				})
			})
		})
	})
}

// readEverything reads, in one statement of t, the tables and every view
// of t's catalog (over one shard or several, as the session actor reads
// them): each view must equal its query over the tables of the same read,
// and next gets the whole read as text, for a REPEATABLE READ
// transaction's next statement to show again.
func (r *runner) readEverything(t *txnRec, next func(string)) {
	if r.t1 == nil || r.t2 == nil || r.src.rel == nil {
		next("")
		return
	}
	ids := []catalog.ID{r.t1.ID, r.t2.ID, r.src.rel.ID, t.acct.ID}
	var views []*catalog.Relation
	for _, v := range r.views {
		if _, ok := t.snap.RelationByID(v.ID); ok {
			views = append(views, v)
			ids = append(ids, v.ID)
		}
	}
	homes := make([]partition.ShardID, len(ids))
	for i, id := range ids {
		homes[i] = r.router.ReadHomeOf(t.snap, id)
	}
	r.req(t, sessionactor.Read{CatalogVersion: t.snap.Version, Relations: ids, Homes: homes}, func(reply runtime.Message) {
		res := reply.(sessionactor.ReadResult)
		inputs := map[catalog.ID]zset.Batch{}
		var text strings.Builder
		for i, id := range ids {
			b := zset.Consolidate(res.Batches[i])
			inputs[id] = b // a view over views is checked against them
			fmt.Fprintf(&text, "%s: %s\n", id, b)
		}
		for i, v := range views {
			if v.Temporal {
				// NB: a session's read does not report its epoch's time,
				// which a temporal view's reference needs; the runner's
				// reads (checkRead) check it.
				continue
			}
			if err := checkView(t.snap, v, inputs, res.Batches[4+i], 0); err != nil {
				r.s.Fail(fmt.Errorf("txn %d (iso %d) read of tables and views: %w", t.id, t.iso, err))
				return
			}
		}
		r.cover.scenario("txn_read_tables_and_views")
		next(text.String())
	})
}

// savepointRollback makes a poisoned change to key after a savepoint,
// rolls back to it, checks the transaction sees the row as before the
// savepoint again, and commits.
func (r *runner) savepointRollback(t *txnRec, key int64) {
	r.savepoint(t, func(depth int) {
		r.statement(t, func() {
			r.lockLookup(t, sessionactor.Lookup{Keys: []types.Row{{key}}}, func(res sessionactor.LookupResult) {
				before := res.Rows[0]
				r.set(t, key, before, r.poison(t, key), func() {
					r.rollbackTo(t, depth, func() {
						r.statement(t, func() {
							r.lockLookup(t, sessionactor.Lookup{Keys: []types.Row{{key}}}, func(after sessionactor.LookupResult) {
								// NB: the row is locked, so only the
								// transaction itself could have changed it.
								if rowValue(after.Rows[0]) != rowValue(before) {
									r.s.Fail(fmt.Errorf("%w: txn %d: after ROLLBACK TO SAVEPOINT it sees acct[%d] as %v, not as before the savepoint (%v)", errChecker, t.id, key, after.Rows[0], before))
									return
								}
								r.cover.scenario("savepoint_rollback")
								if r.rnd.IntN(2) == 0 {
									r.release(t, depth, func() { r.commit(t) })
									return
								}
								r.commit(t)
							})
						})
					})
				})
			})
		})
	})
}

// savepoint pushes a savepoint; next gets its depth.
func (r *runner) savepoint(t *txnRec, next func(depth int)) {
	r.req(t, sessionactor.Savepoint{}, func(runtime.Message) {
		t.marks = append(t.marks, len(t.log))
		next(len(t.marks))
	})
}

// rollbackTo restores savepoint depth (kept).
func (r *runner) rollbackTo(t *txnRec, depth int, next func()) {
	r.req(t, sessionactor.RollbackTo{Depth: depth}, func(runtime.Message) {
		t.log = t.log[:t.marks[depth-1]]
		t.marks = t.marks[:depth]
		next()
	})
}

// release drops savepoint depth and later ones, keeping their changes.
func (r *runner) release(t *txnRec, depth int, next func()) {
	r.req(t, sessionactor.Release{Depth: depth}, func(runtime.Message) {
		t.marks = t.marks[:depth-1]
		next()
	})
}

// set changes acct's row under key from old (looked up under the lock) to
// row.
func (r *runner) set(t *txnRec, key int64, old, row types.Row, next func()) {
	call := int64(r.s.Now())
	r.req(t, sessionactor.Set{Table: *t.acct, Keys: []types.Row{{key}}, Rows: []types.Row{row}}, func(runtime.Message) {
		t.log = append(t.log, txnWrite{key: key, old: old, new: row, call: call})
		next()
	})
}

// written folds the buffered changes by key: the first old, the last new.
func (t *txnRec) written() map[int64]txnWrite {
	out := map[int64]txnWrite{}
	for _, w := range t.log {
		if prev, ok := out[w.key]; ok {
			prev.new = w.new
			out[w.key] = prev
			continue
		}
		out[w.key] = w
	}
	return out
}

// writtenKeys lists the changed keys in first-change order.
func (t *txnRec) writtenKeys() []int64 {
	var keys []int64
	seen := map[int64]bool{}
	for _, w := range t.log {
		if !seen[w.key] {
			seen[w.key] = true
			keys = append(keys, w.key)
		}
	}
	return keys
}

// commit ends the transaction with Commit and records its changes.
func (r *runner) commit(t *txnRec) {
	t.ending = true
	r.reqErr(t, sessionactor.Commit{CatalogVersion: t.snap.Version}, func(reply runtime.Message, err error) bool {
		writes := t.written()
		keys := t.writtenKeys()
		now := int64(r.s.Now())
		switch {
		case err == nil:
			r.cover.scenario("txn_commit_acked")
			epoch := reply.(sessionactor.Committed).Epoch
			r.logf("s%d txn %d committed at epoch %d: %d rows", t.ss.id, t.id, epoch, len(keys))
			for _, k := range keys {
				w := writes[k]
				r.hist.cas(t.ss.id, linKey{acctTable, k}, w.old, w.new, w.call, now)
				r.txns.acked[k]++
				r.txns.lastAckedAt[k] = now
			}
			if epoch > 0 {
				r.maxAcked = max(r.maxAcked, epoch)
			}
			r.endTxn(t)
			return true
		case definiteAbort(err) && len(keys) > 0:
			// Every change was looked up under its row lock, held to the
			// commit, and nothing else writes acct: the rows are still as
			// looked up, so the commit's check of them cannot fail.
			r.s.Fail(fmt.Errorf("%w: txn %d (%s, isolation %d) was refused at commit (%v) although it held the row locks of every row it changed since it looked them up: another transaction changed a row under its lock",
				errChecker, t.id, t.kind, t.iso, err))
			return true
		default:
			r.cover.scenario("txn_commit_unknown")
			r.logf("s%d txn %d commit unknown: %v", t.ss.id, t.id, err)
			for _, k := range keys {
				w := writes[k]
				r.hist.cas(t.ss.id, linKey{acctTable, k}, w.old, w.new, w.call, never)
				r.txns.unknown[k]++
			}
			return false
		}
	})
}

// definiteAbort reports whether a Commit's error means it applied nothing.
func definiteAbort(err error) bool {
	e, ok := errcode.As(err)
	if !ok {
		return false
	}
	switch e.State() {
	case "40001", "40P01", "23505":
		return true
	}
	return false
}

// statementError reports whether err is the statement's own error (the
// transaction is aborted, the connection stays) rather than the
// connection's or the process's.
func statementError(err error) bool {
	if errors.Is(err, errReplyLost) || errors.Is(err, runtime.ErrActorGone) || errors.Is(err, sim.ErrAskTimeout) {
		return false
	}
	e, ok := errcode.As(err)
	if !ok || len(e.State()) != 5 {
		return false
	}
	switch e.State() {
	case "40001", "40P01", "55P03", "57014", "23505", "25P01", "25P02":
		return true
	}
	return false
}

// req sends a request of t's transaction to its session actor; next runs
// on success. A failure ends the transaction (reqErr).
func (r *runner) req(t *txnRec, msg runtime.Message, next func(runtime.Message)) {
	r.reqErr(t, msg, func(reply runtime.Message, err error) bool {
		if err != nil {
			return false
		}
		next(reply)
		return true
	})
}

// reqErr sends msg; handle sees the reply or error and reports whether it
// took care of the transaction. An error it leaves ends the transaction:
// a statement's error rolls it back on the same connection; any other
// (the reply lost, the process gone) drops the connection, which rolls
// it back in the session.
func (r *runner) reqErr(t *txnRec, msg runtime.Message, handle func(runtime.Message, error) bool) {
	if t.conn.dropped || t.conn.crashes != r.s.Stats().Crashes {
		r.txnFailed(t, msg, errConnDied)
		return
	}
	t.ss.txn = t
	r.s.AskAsync(t.conn.actor, msg, func(reply runtime.Message, err error) {
		if err == nil {
			if e, ok := reply.(error); ok {
				err = e
			}
		}
		r.reply(func(lost bool) {
			if err == nil && lost {
				err = errReplyLost
			}
			if r.s.Err() != nil {
				return
			}
			if handle(reply, err) {
				if err == nil {
					r.failures = 0
				}
				return
			}
			if err != nil {
				r.txnFailed(t, msg, err)
			}
		})
	})
}

// errConnDied: the process crashed since the connection opened, so the
// connection (and its transaction) died with it.
var errConnDied = errors.New("the connection died with the database process")

// txnFailed ends t after err answered msg.
func (r *runner) txnFailed(t *txnRec, msg runtime.Message, err error) {
	r.logf("s%d txn %d %T: %v", t.ss.id, t.id, msg, err)
	if e, ok := errcode.As(err); ok {
		r.cover.scenario("txn_error_" + e.State())
	}
	_, committing := msg.(sessionactor.Commit)
	_, rollingBack := msg.(sessionactor.Rollback)
	if !statementError(err) || rollingBack {
		if !errors.Is(err, errConnDied) {
			r.failed()
		}
		r.drop(t)
		r.finishTxn(t, 5*time.Millisecond)
		return
	}
	if _, ok := msg.(sessionactor.Lookup); ok && t.iso == sessionactor.ReadCommitted && errcode.Has(err, errcode.ConcurrentUpdate) {
		r.s.Fail(fmt.Errorf("%w: txn %d: a READ COMMITTED lookup under the row lock failed with %v (it must wait and re-run)", errChecker, t.id, err))
		return
	}
	switch {
	case t.iso == sessionactor.RepeatableRead && errcode.Has(err, errcode.ConcurrentUpdate):
		r.cover.scenario("rr_update_40001")
	case errcode.Has(err, errcode.LockTimeout):
		r.cover.scenario("lock_timeout_55P03")
	case errcode.Has(err, errcode.QueryCanceled):
		r.cover.scenario("lock_wait_canceled_57014")
	}
	if committing {
		// The session ended the transaction with the failed commit; a
		// ROLLBACK after it is harmless, as after a failed COMMIT in
		// PostgreSQL.
		r.endHolds(t)
	}
	t.ending = true
	r.req(t, sessionactor.Rollback{}, func(runtime.Message) { r.endTxn(t) })
}

// endTxn finishes a transaction whose end was answered; now and then it
// checks the session holds nothing of it any more.
func (r *runner) endTxn(t *txnRec) {
	r.endHolds(t)
	if r.rnd.IntN(4) == 0 {
		// NB: asked directly (no client link faults): GetState is answered
		// at once, and the session runs nothing else before the client's
		// next request.
		r.s.AskAsync(t.conn.actor, sessionactor.GetState{}, func(reply runtime.Message, err error) {
			if err != nil || r.s.Err() != nil {
				return // the process died meanwhile
			}
			if st, ok := reply.(sessionactor.State); ok && (st.InTransaction || st.Locks > 0 || st.Savepoints > 0 || st.Rows > 0) {
				r.s.Fail(fmt.Errorf("%w: txn %d ended, but its session still reports %+v", errChecker, t.id, st))
			}
		})
	}
	r.finishTxn(t, 0)
}

// finishTxn schedules the session's next action.
func (r *runner) finishTxn(t *txnRec, extra time.Duration) {
	if t.ss.txn == t {
		t.ss.txn = nil
	}
	r.schedule(t.ss, r.think(t.ss)+extra)
}

// endHolds closes t's lock holds now (its end was answered).
func (r *runner) endHolds(t *txnRec) {
	now := int64(r.s.Now())
	for _, h := range t.holds {
		if h.to == never {
			h.to = now
		}
	}
	t.held = map[int64]bool{}
}

// checkDeadlock: t's wait (waits, ended at now) failed with 40P01, so at
// some instant of it the clients' view of holds and waits must admit a
// cycle of waiting transactions through t.
func (r *runner) checkDeadlock(t *txnRec, waits []*lockSpan, now int64) error {
	r.cover.scenario("deadlock_40P01")
	if len(waits) == 0 {
		return fmt.Errorf("%w: txn %d: 40P01 for a lookup that waited for no lock it did not hold", errChecker, t.id)
	}
	from := waits[0].from
	instants := []int64{from}
	for _, s := range r.txns.locks {
		if s.from > from && s.from <= now {
			instants = append(instants, s.from)
		}
	}
	for _, at := range instants {
		if r.cycleAt(t, at) {
			r.cover.scenario("deadlock_cycle_confirmed")
			return nil
		}
	}
	return fmt.Errorf("%w: txn %d failed with 40P01 (deadlock detected) but no cycle of waiting transactions through it existed during its wait [%d, %d]", errChecker, t.id, from, now)
}

// cycleAt reports whether, at instant at, t reaches itself by wait-for
// edges: A waits for key k and B (not A) holds k.
func (r *runner) cycleAt(t *txnRec, at int64) bool {
	active := func(s *lockSpan) bool { return s.from <= at && at <= s.to }
	seen := map[*txnRec]bool{}
	var reach func(a *txnRec) bool
	reach = func(a *txnRec) bool {
		for _, w := range r.txns.locks {
			if w.txn != a || !w.wait || !active(w) {
				continue
			}
			for _, h := range r.txns.locks {
				if h.wait || h.key != w.key || h.txn == a || !active(h) {
					continue
				}
				if h.txn == t {
					return true
				}
				if !seen[h.txn] {
					seen[h.txn] = true
					if reach(h.txn) {
						return true
					}
				}
			}
		}
		return false
	}
	return reach(t)
}

// checkAcctRead checks a shard read of acct: no poisoned row, every row
// recorded for porcupine, and after healing no lost update.
func (r *runner) checkAcctRead(q readReq, rows map[int64]types.Row, now int64) error {
	r.ensureTxns()
	for _, k := range sortedKeys(rows) {
		if k < 1 || k > r.txns.hotKeys {
			return fmt.Errorf("%w: acct has a row under key %d, outside the hot keys 1..%d", errChecker, k, r.txns.hotKeys)
		}
		if err := checkNotPoisoned(k, rows[k], nil); err != nil {
			return err
		}
	}
	for k := int64(1); k <= r.txns.hotKeys; k++ {
		r.hist.read(q.session, linKey{acctTable, k}, rows[k], q.call, now)
	}
	if q.kind != "final" {
		return nil
	}
	for k := int64(1); k <= r.txns.hotKeys; k++ {
		bal := int64(0)
		if row := rows[k]; row != nil {
			bal = row[1].(int64)
		}
		lo, hi := int64(r.txns.acked[k]), int64(r.txns.acked[k]+r.txns.unknown[k])
		if bal < lo || bal > hi {
			return fmt.Errorf("%w: acct[%d] has bal %d after %d acknowledged and %d unknown increments (lost or phantom update)", errChecker, k, bal, lo, hi-lo)
		}
	}
	return nil
}
