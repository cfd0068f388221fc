package session

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// ActorOf is the actor id of session id ("session/<id>").
func ActorOf(id uint64) runtime.ActorID {
	return runtime.ActorID(fmt.Sprintf("session/%d", id))
}

// Config configures one session actor.
type Config struct {
	// Session is the session's process id (pg_backend_pid): it names the
	// session in deadlock reports and numbers its transactions.
	Session uint64
	// Backend is the session's pgwire process id (BackendKeyData), which
	// deadlock reports name as PostgreSQL names backends (0: Session).
	Backend uint32
	// Router addresses the shards.
	Router shard.Router
	// Control is the control plane, which owns sequences (0:
	// control.ActorID).
	Control runtime.ActorID
}

// requestsQueuedMax bounds the requests waiting behind the running one
// (STYLE.md 10). A connection has one request in flight; a few more queue
// only when it gave up on one (a canceled statement) and went on with
// ROLLBACK or the next statement. Past the bound a request fails at once.
// Simulation range: 1–16.
const requestsQueuedMax = 16

// txnSerialBits is how many low bits of a TxnID number the session's own
// transactions; the session id fills the bits above, so transaction ids
// of different sessions never collide without shared state.
const txnSerialBits = 32

// Actor is one session's transaction state machine (doc.go).
type Actor struct {
	cfg Config
	txn *txn
	// lastWritten is the epoch of the session's last commit: reads wait
	// for it (read-your-writes).
	lastWritten uint64
	// stmt is the running statement's settings.
	stmt Statement
	// lockTxn names the transaction in the shards' row-lock tables once
	// it took a row lock; 0 before, and after it ended. locksHeld are the
	// locks it was granted.
	lockTxn   shard.TxnID
	txnSerial uint64
	locksHeld map[heldLock]struct{}

	queue   []queued
	running bool
	// asks are the callbacks of the shard requests in flight, by
	// runtime.Request id.
	asks    map[uint64]pendingAsk
	nextAsk uint64
	// lockWait is the id of the LockRows in flight (0: none); lockTimedOut
	// says the lock_timeout timer ended it.
	lockWait     uint64
	lockTimedOut bool
	// lockWaitSerial numbers the row-lock waits (their lock_timeout
	// timers): a wait asked again keeps its number.
	lockWaitSerial uint64
	request        queued
	// recent is the running or last request's all-new Lookup (nil once
	// any other request than Set starts).
	recent *recentLookup
	// currval holds the last nextval/setval value per sequence this
	// session saw; lastSequence is the one lastval() reports.
	currval      map[catalog.ID]int64
	lastSequence catalog.ID
	hasLastval   bool
	// readSnapshot is the snapshot a statement reading several view
	// shards pinned on the table shard (readSpread); 0: none.
	readSnapshot, readSnapshotEpoch uint64
	// stmtSnapshot is the snapshot a READ COMMITTED statement's reads
	// share when they take several requests to the shards (PinReads, or
	// one Read of points and relations); perRead: it is one Read's,
	// released when the next request starts.
	stmtSnapshot, stmtSnapshotEpoch uint64
	stmtSnapshotPerRead             bool
}

// queued is a request and the handle that answers it.
type queued struct {
	msg   runtime.Message
	reply runtime.Deferred
}

// heldLock is a row lock the transaction was granted ("" key: a whole
// table without a primary key).
type heldLock struct {
	table catalog.ID
	key   string
}

// lockTimeoutFired is the lock_timeout timer of row-lock wait number wait
// (Actor.lockWaitSerial).
type lockTimeoutFired struct{ wait uint64 }

// askTimedOut is the timer of shard request ask (shardReplyTimeout).
type askTimedOut struct{ ask uint64 }

// pendingAsk is a shard request in flight: what runs with its reply, its
// timer, and for a row-lock request how to send it again (resend).
type pendingAsk struct {
	then   func(ctx runtime.Context, reply runtime.Message)
	timer  runtime.TimerID
	resend func(ctx runtime.Context)
	// since is when the request was sent. Past the timeout the shard is
	// probed instead for up to patience (probe); to is the shard, probing
	// whether a probe is in flight, commit whether the request is one
	// (askPatiently: its outcome is then unknown).
	patience time.Duration
	to       runtime.ActorID
	since    time.Time
	probing  bool
	commit   bool
}

// shardReplyTimeout bounds the wait for a shard's answer (STYLE.md 10):
// delivery is at most once, so a request or reply can be lost (in
// simulation; in the real runtime when a mailbox overflows). Past it a
// request fails with RS-3100 (a commit's outcome is then unknown, as for
// any lost reply), and a row-lock wait, which may rightly last longer, is
// asked again: a repeated LockRows of the same transaction replaces its
// wait, and is granted at once for keys it holds already. Simulation
// range: 1s–30s.
const shardReplyTimeout = 10 * time.Second

// commitPatienceMax bounds how long a commit waits for a shard that keeps
// answering probes (askPatiently) before its outcome is reported unknown:
// a shard that long on one commit is stuck, not busy.
const commitPatienceMax = 10 * time.Minute

// readPatienceMax is commitPatienceMax for the other requests (reads,
// lookups, snapshots): a shard runs its storage's compaction between
// messages, and on a loaded machine a large one outlasts
// shardReplyTimeout (Nexmark q5 over 2M events: a read failed with RS-3100
// while the shard merged its bid table). Shorter, as a read gives up
// nothing by failing.
const readPatienceMax = 2 * time.Minute

// New returns the factory of a session actor. A session's state is not
// durable: an actor that restarts (its process crashed) starts with no
// transaction, as a reconnecting client does.
func New(cfg Config) runtime.Factory {
	return func() runtime.Actor {
		return &Actor{cfg: cfg, asks: map[uint64]pendingAsk{}, locksHeld: map[heldLock]struct{}{}}
	}
}

// Receive implements runtime.Actor.
func (a *Actor) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case runtime.Started:
		return
	case runtime.Stopping:
		// The connection closed: end the transaction.
		a.endTxn(ctx)
		return
	case runtime.Response:
		p, ok := a.asks[m.ID]
		delete(a.asks, m.ID)
		if !ok {
			return // the answer to a request given up on
		}
		ctx.CancelTimer(p.timer)
		p.then(ctx, m.Msg)
	case askTimedOut:
		p, ok := a.asks[m.ask]
		if !ok {
			return
		}
		delete(a.asks, m.ask)
		if p.resend != nil {
			p.resend(ctx)
			break
		}
		if ctx.Now().Sub(p.since) < p.patience {
			a.probe(ctx, m.ask, p)
			break
		}
		p.then(ctx, errcode.New(errcode.ShardUnavailable, "the shard did not answer within %s", ctx.Now().Sub(p.since).Round(time.Second)))
	case retryRead:
		m.run(ctx)
	case lockTimeoutFired:
		if a.lockWait != 0 && a.lockWaitSerial == m.wait {
			a.lockTimedOut = true
			a.send(ctx, a.lockShard(), shard.CancelLockWait{Txn: a.lockTxn})
		}
	case CancelWait:
		if a.lockWait != 0 {
			a.send(ctx, a.lockShard(), shard.CancelLockWait{Txn: a.lockTxn})
		}
		ctx.Reply(Done{})
	case GetState:
		ctx.Reply(a.state())
	case CurrVal:
		v, ok := a.currval[m.ID]
		ctx.Reply(SequenceCurrent{Value: v, Defined: ok})
	case LastVal:
		ctx.Reply(SequenceCurrent{Value: a.currval[a.lastSequence], Defined: a.hasLastval})
	case Begin, Statement, Read, PinReads, UnpinReads, Lookup, LockTable, Set, Append, Remove, Savepoint, RollbackTo, Release, Commit, Rollback, SequenceOp:
		if len(a.queue) >= requestsQueuedMax {
			ctx.Reply(errcode.New(errcode.InternalError, "session %d has %d requests queued (at most %d)", a.cfg.Session, len(a.queue), requestsQueuedMax))
			return
		}
		a.queue = append(a.queue, queued{msg: m, reply: ctx.Defer()})
	default:
		panic(fmt.Sprintf("session: unexpected message %T", msg))
	}
	a.pump(ctx)
}

// pump starts queued requests while none runs.
func (a *Actor) pump(ctx runtime.Context) {
	for !a.running && len(a.queue) > 0 {
		a.request = a.queue[0]
		a.queue[0] = queued{}
		a.queue = a.queue[1:]
		a.running = true
		a.run(ctx, a.request.msg)
	}
}

// finish answers the running request.
func (a *Actor) finish(reply runtime.Message) {
	if !a.running {
		panic("session: finish without a running request")
	}
	a.running = false
	a.request.reply.Reply(reply)
	a.request = queued{}
}

// ask sends a request to a shard; then runs with its reply (an error
// reply included) in a later Receive. A reply slower than
// shardReplyTimeout is waited for while the shard is busy (probe), up to
// readPatienceMax.
func (a *Actor) ask(ctx runtime.Context, to runtime.ActorID, msg runtime.Message, then func(ctx runtime.Context, reply runtime.Message)) uint64 {
	id := a.askOnce(ctx, to, msg, then)
	p := a.asks[id]
	p.patience, p.to = readPatienceMax, to
	a.asks[id] = p
	return id
}

// askOnce is ask failing at the first shardReplyTimeout (a probe).
func (a *Actor) askOnce(ctx runtime.Context, to runtime.ActorID, msg runtime.Message, then func(ctx runtime.Context, reply runtime.Message)) uint64 {
	a.nextAsk++
	id := a.nextAsk
	a.asks[id] = pendingAsk{then: then, timer: ctx.After(shardReplyTimeout, askTimedOut{ask: id}), since: ctx.Now()}
	ctx.Send(to, runtime.Request{ID: id, Msg: msg})
	return id
}

// askPatiently is ask for a commit: a commit's outcome is unknown once
// its answer is given up on, so a slow answer (a shard busy with a large
// commit on a loaded machine) is waited for as long as the shard shows it
// is working (probe), not failed at shardReplyTimeout.
func (a *Actor) askPatiently(ctx runtime.Context, to runtime.ActorID, msg runtime.Message, then func(ctx runtime.Context, reply runtime.Message)) {
	id := a.askOnce(ctx, to, msg, then)
	p := a.asks[id]
	p.patience, p.to, p.commit = commitPatienceMax, to, true
	a.asks[id] = p
}

// probe keeps waiting for patient request id past a timeout and asks its
// shard for Probed: if that comes first, the request or its answer was
// lost (the shard answers in order) and the outcome is unknown; if the
// probe is not answered either, the shard is still busy and the next
// timeout probes again.
func (a *Actor) probe(ctx runtime.Context, id uint64, p pendingAsk) {
	p.timer = ctx.After(shardReplyTimeout, askTimedOut{ask: id})
	if p.probing {
		a.asks[id] = p
		return
	}
	p.probing = true
	a.asks[id] = p
	a.askOnce(ctx, p.to, shard.Probe{}, func(ctx runtime.Context, reply runtime.Message) {
		q, ok := a.asks[id]
		if !ok {
			return // answered meanwhile
		}
		q.probing = false
		a.asks[id] = q
		if _, failed := reply.(error); failed {
			return // the probe timed out too: still busy
		}
		delete(a.asks, id)
		ctx.CancelTimer(q.timer)
		if !q.commit {
			q.then(ctx, errcode.New(errcode.ShardUnavailable, "the shard answered a later request but not this one: it or its answer was lost"))
			return
		}
		q.then(ctx, errcode.New(errcode.ShardUnavailable, "the shard answered a later request but not this one: it or its answer was lost, and its outcome is unknown"))
	})
}

// send is ask without interest in the reply (releasing locks and
// snapshots: the shard ends them whatever the answer).
func (a *Actor) send(ctx runtime.Context, to runtime.ActorID, msg runtime.Message) {
	a.nextAsk++
	ctx.Send(to, runtime.Request{ID: a.nextAsk, Msg: msg})
}

// then is the shape of the steps that continue a request.
type then = func(ctx runtime.Context)

// orFail runs next with a successful reply, or answers the running
// request with the error.
func (a *Actor) orFail(next func(ctx runtime.Context, reply runtime.Message)) func(runtime.Context, runtime.Message) {
	return func(ctx runtime.Context, reply runtime.Message) {
		if err, ok := reply.(error); ok {
			a.finish(err)
			return
		}
		next(ctx, reply)
	}
}

func (a *Actor) run(ctx runtime.Context, msg runtime.Message) {
	if _, isSet := msg.(Set); !isSet {
		a.recent = nil
	}
	if a.stmtSnapshotPerRead {
		a.releaseStmtSnapshot(ctx)
	}
	switch m := msg.(type) {
	case Begin:
		a.endTxn(ctx)
		a.txn = newTxn(m)
		a.finish(Done{})
	case Statement:
		a.statement(ctx, m)
	case Read:
		a.read(ctx, m)
	case PinReads:
		a.pinReads(ctx, m)
	case UnpinReads:
		a.releaseStmtSnapshot(ctx)
		a.finish(Done{})
	case Lookup:
		a.lookup(ctx, m)
	case LockTable:
		a.lockTable(ctx, m)
	case Set:
		a.set(m)
	case Append:
		a.appendRows(m.Table, m.Rows, false)
	case Remove:
		a.appendRows(m.Table, m.Rows, true)
	case Savepoint:
		a.ensureTxn()
		a.txn.mark()
		a.finish(Done{})
	case RollbackTo:
		if err := a.checkDepth(m.Depth); err != nil {
			a.finish(err)
			return
		}
		a.txn.rollbackTo(m.Depth)
		a.finish(Done{})
	case Release:
		if err := a.checkDepth(m.Depth); err != nil {
			a.finish(err)
			return
		}
		a.txn.release(m.Depth)
		a.finish(Done{})
	case Commit:
		a.commit(ctx, m)
	case Rollback:
		a.endTxn(ctx)
		a.finish(Done{})
	case SequenceOp:
		a.sequenceOp(ctx, m)
	default:
		panic(fmt.Sprintf("session: run of %T", msg))
	}
}

func (a *Actor) state() State {
	st := State{LastWritten: a.lastWritten, Locks: len(a.locksHeld), WaitingForLock: a.lockWait != 0}
	if t := a.txn; t != nil {
		st.InTransaction, st.Isolation, st.Snapshot = true, t.isolation, t.snapshot
		st.Rows, st.Savepoints = t.count, len(t.marks)
	}
	return st
}

// ensureTxn opens an implicit transaction for a statement outside one
// (the gateway begins one for every statement; tests and tools may not).
func (a *Actor) ensureTxn() {
	if a.txn == nil {
		a.txn = newTxn(Begin{Implicit: true})
	}
}

func (a *Actor) checkDepth(depth int) error {
	if a.txn == nil || depth < 1 || depth > len(a.txn.marks) {
		return errcode.New(errcode.InternalError, "internal: savepoint %d does not exist in the session's transaction", depth)
	}
	return nil
}

// home is the table shard: it stores every row, takes every commit and
// pins REPEATABLE READ snapshots (shard/placement.go).
func (a *Actor) home() runtime.ActorID { return a.cfg.Router.TableActor() }

// lockShard is the shard holding the row locks of the rows it stores.
// NB: the table shard stores every row; once tables are partitioned, each
// key's lock belongs to the owner of its bucket, and a transaction's
// unlock and cancel go to every shard it locked on.
func (a *Actor) lockShard() runtime.ActorID { return a.home() }

// readAt is the pinned snapshot the transaction's reads use (0: the
// newest committed state).
func (a *Actor) readAt() uint64 {
	if a.txn == nil {
		return 0
	}
	return a.txn.snapshot
}

// statement records the statement's settings and pins a REPEATABLE READ
// transaction's snapshot at its first statement that reads or writes
// data.
func (a *Actor) statement(ctx runtime.Context, m Statement) {
	a.stmt = m
	t := a.txn
	if !m.Data || !t.repeatable() || t.snapshot != 0 {
		a.finish(Done{})
		return
	}
	a.openSnapshot(ctx, m.CatalogVersion, func(ctx runtime.Context, id, _ uint64) {
		if a.txn != t {
			// Cannot happen: requests run one at a time.
			panic("session: transaction changed while its snapshot opened")
		}
		t.snapshot = id
		a.finish(Done{})
	})
}

// read reads whole relations and point lookups, then overlays the
// transaction's own writes.
func (a *Actor) read(ctx runtime.Context, m Read) {
	if a.statementReadAt() == 0 && len(m.Points) > 0 && (len(m.Relations) > 0 || len(m.Points) > 1) {
		// Several shard requests (a Lookup per point read, a Read for the
		// rest) would each see the newest state, and a commit between
		// them would show in one and not the other: they share one
		// snapshot instead, as one request would.
		a.openStmtSnapshot(ctx, m.CatalogVersion, true, func(ctx runtime.Context) { a.readNow(ctx, m) })
		return
	}
	a.readNow(ctx, m)
}

// pinReads opens the snapshot the statement's reads share until
// UnpinReads (none is needed under REPEATABLE READ, whose snapshot they
// use).
func (a *Actor) pinReads(ctx runtime.Context, m PinReads) {
	if a.statementReadAt() != 0 {
		a.finish(Done{})
		return
	}
	a.openStmtSnapshot(ctx, m.CatalogVersion, false, func(ctx runtime.Context) { a.finish(Done{}) })
}

// openStmtSnapshot pins a snapshot on the table shard for the statement's
// reads (stmtSnapshot), then runs next.
func (a *Actor) openStmtSnapshot(ctx runtime.Context, catalogVersion uint64, perRead bool, next func(runtime.Context)) {
	a.openSnapshot(ctx, catalogVersion, func(ctx runtime.Context, id, epoch uint64) {
		a.stmtSnapshot, a.stmtSnapshotEpoch, a.stmtSnapshotPerRead = id, epoch, perRead
		next(ctx)
	})
}

// releaseStmtSnapshot ends the statement's snapshot, if one is open.
func (a *Actor) releaseStmtSnapshot(ctx runtime.Context) {
	if a.stmtSnapshot == 0 {
		return
	}
	id := a.stmtSnapshot
	a.stmtSnapshot, a.stmtSnapshotEpoch, a.stmtSnapshotPerRead = 0, 0, false
	a.releaseSnapshotID(ctx, id)
}

func (a *Actor) readNow(ctx runtime.Context, m Read) {
	out := make([]zset.Batch, 0, len(m.Relations)+len(m.Points))
	finishPoints := func(ctx runtime.Context) {
		a.readPoints(ctx, m, out, 0)
	}
	if len(m.Relations) == 0 {
		finishPoints(ctx)
		return
	}
	minEpoch := uint64(0)
	if m := a.stmt; m.WaitForOwn {
		minEpoch = a.lastWritten
	}
	a.readRelations(ctx, m, minEpoch, readAcrossAttemptsMax, func(ctx runtime.Context, batches []zset.Batch) {
		for i, id := range m.Relations {
			out = append(out, a.txn.overlay(id, batches[i]))
		}
		finishPoints(ctx)
	})
}

// readAcrossAttemptsMax bounds the attempts of a read of tables and views
// whose tables' changes after the view's frontier were collected meanwhile.
const readAcrossAttemptsMax = 5

// readRelations reads whole relations from the shards serving them, as of
// one epoch: relations of one shard in one Read; tables together with
// views by reading the views first, at the view shard's frontier, and then
// the tables as they were at that epoch (shard readAtEpoch).
func (a *Actor) readRelations(ctx runtime.Context, m Read, minEpoch uint64, attempts int, done func(runtime.Context, []zset.Batch)) {
	if slices.Contains(m.Homes, shard.TableShards) {
		a.readPartitioned(ctx, m, minEpoch, done)
		return
	}
	table := a.cfg.Router.TableShard()
	var views, tables []catalog.ID
	var viewShard partition.ShardID
	for i, id := range m.Relations {
		if i < len(m.Homes) && m.Homes[i] != table {
			if m.Homes[i] == shard.SpreadShards || (len(views) > 0 && m.Homes[i] != viewShard) {
				a.readSpread(ctx, m, readAcrossAttemptsMax, done)
				return
			}
			viewShard = m.Homes[i]
			views = append(views, id)
		} else {
			tables = append(tables, id)
		}
	}
	at := a.statementReadAt()
	if len(views) > 0 && at == 0 {
		// NB: the view shard learns of commits through the exchange: the
		// read waits for every commit acknowledged before it began (to any
		// session), as a read on one shard sees them.
		if a.cfg.Router.Partitioned() {
			// The last epoch handed out to any table shard (seal.go).
			a.ask(ctx, a.control(), control.GetEpochs{}, a.orFail(func(ctx runtime.Context, reply runtime.Message) {
				e := reply.(control.EpochAllocated).Known
				a.readRelationsFrom(ctx, m, max(minEpoch, e), views, tables, viewShard, attempts, done)
			}))
			return
		}
		a.ask(ctx, a.home(), shard.GetEpoch{}, a.orFail(func(ctx runtime.Context, reply runtime.Message) {
			e := reply.(shard.Committed).Epoch
			a.readRelationsFrom(ctx, m, max(minEpoch, e), views, tables, viewShard, attempts, done)
		}))
		return
	}
	a.readRelationsFrom(ctx, m, minEpoch, views, tables, viewShard, attempts, done)
}

// readRelationsFrom is readRelations once the epoch to wait for is known.
func (a *Actor) readRelationsFrom(ctx runtime.Context, m Read, minEpoch uint64, views, tables []catalog.ID, viewShard partition.ShardID, attempts int, done func(runtime.Context, []zset.Batch)) {
	at := a.statementReadAt()
	if len(views) == 0 || len(tables) == 0 {
		to := a.home()
		if len(views) > 0 {
			// NB: with a REPEATABLE READ snapshot, the view shard holds
			// the table shard's pin of it (shard pins.go).
			to = a.cfg.Router.ActorOf(viewShard)
		}
		var ranges [][]shard.KeyRange
		if len(views) == 0 {
			ranges = m.Ranges
		}
		a.ask(ctx, to, shard.Read{CatalogVersion: m.CatalogVersion, Relations: m.Relations, Ranges: ranges, MinEpoch: minEpoch, At: at},
			a.orFail(func(ctx runtime.Context, reply runtime.Message) {
				done(ctx, reply.(shard.ReadResult).Batches)
			}))
		return
	}
	if at != 0 {
		a.readPinned(ctx, m, views, tables, viewShard, at, done)
		return
	}
	a.readAcross(ctx, m, views, tables, viewShard, minEpoch, attempts, done)
}

// readPinned reads tables and views of a REPEATABLE READ snapshot: the
// tables in the table shard's pin, the views in the view shard's pin of
// the same epoch.
func (a *Actor) readPinned(ctx runtime.Context, m Read, views, tables []catalog.ID, viewShard partition.ShardID, at uint64, done func(runtime.Context, []zset.Batch)) {
	viewsAt := at
	if plantViewUnpinned {
		viewsAt = 0
	}
	a.ask(ctx, a.cfg.Router.ActorOf(viewShard), shard.Read{CatalogVersion: m.CatalogVersion, Relations: views, At: viewsAt},
		a.orFail(func(ctx runtime.Context, reply runtime.Message) {
			vr := reply.(shard.ReadResult)
			a.ask(ctx, a.home(), shard.Read{CatalogVersion: m.CatalogVersion, Relations: tables, At: at},
				a.orFail(func(ctx runtime.Context, reply runtime.Message) {
					done(ctx, a.merge(m, vr, reply.(shard.ReadResult)))
				}))
		}))
}

// readSpread reads relations of several view shards (and the table
// shard) as of one epoch: in the REPEATABLE READ snapshot, else in a
// snapshot pinned for the statement, whose pins every view shard takes at
// the same epoch (shard pins.go), released once read.
//
// A view created after the statement's pin has no state in it: the read
// is tried again with a new snapshot (attempts bounds the tries).
func (a *Actor) readSpread(ctx runtime.Context, m Read, attempts int, done func(runtime.Context, []zset.Batch)) {
	if at := a.statementReadAt(); at != 0 {
		a.readAtSnapshot(ctx, m, at, make([]zset.Batch, len(m.Relations)), func(ctx runtime.Context, batches []zset.Batch, err error) {
			if err != nil {
				a.finish(err)
				return
			}
			done(ctx, batches)
		})
		return
	}
	a.readSpreadSince(ctx, m, attempts, ctx.Now(), done)
}

// readSpreadSince is readSpread's read in a new snapshot, first tried at
// began.
func (a *Actor) readSpreadSince(ctx runtime.Context, m Read, attempts int, began time.Time, done func(runtime.Context, []zset.Batch)) {
	a.openSnapshot(ctx, m.CatalogVersion, func(ctx runtime.Context, id, epoch uint64) {
		a.readSnapshot = id
		a.readSnapshotEpoch = epoch
		a.readAtSnapshot(ctx, m, id, make([]zset.Batch, len(m.Relations)), func(ctx runtime.Context, batches []zset.Batch, err error) {
			a.releaseReadSnapshot(ctx)
			if err != nil {
				if errcode.Has(err, errcode.SnapshotUnavailable) && attempts > 1 {
					a.readSpreadSince(ctx, m, attempts-1, began, done)
					return
				}
				if errcode.Has(err, errcode.SnapshotUnavailable) && ctx.Now().Sub(began) < readFillingWaitMax {
					// A view being filled (after a restart, or created
					// meanwhile) has no state to pin yet: wait for its
					// fill as a read of it alone does, and try again.
					ctx.After(readFillingRetryEvery, retryRead{run: func(ctx runtime.Context) { a.readSpreadSince(ctx, m, 1, began, done) }})
					return
				}
				a.finish(err)
				return
			}
			done(ctx, batches)
		})
	})
}

// retryRead runs a statement's read again (readSpread).
type retryRead struct{ run func(runtime.Context) }

// A statement's read of several shards naming a view being filled tries
// again every readFillingRetryEvery for up to readFillingWaitMax.
// Simulation range: fixed.
const (
	readFillingRetryEvery = 50 * time.Millisecond
	readFillingWaitMax    = 2 * time.Minute
)

// readAtSnapshot reads m.Relations in snapshot at, one Read per shard
// serving them, into out (in m.Relations' order); a view spread over the
// view shards is the sum of its parts, read from each.
func (a *Actor) readAtSnapshot(ctx runtime.Context, m Read, at uint64, out []zset.Batch, done func(runtime.Context, []zset.Batch, error)) {
	a.readShards(ctx, m, at, a.cfg.Router.Shards(), out, func(ctx runtime.Context, out []zset.Batch, err error) {
		for i := range out {
			if err == nil && i < len(m.Homes) && m.Homes[i] == shard.SpreadShards {
				out[i] = zset.Consolidate(out[i])
			}
		}
		done(ctx, out, err)
	})
}

// readShards is readAtSnapshot's step: one Read for the first of shards
// serving any of m.Relations.
func (a *Actor) readShards(ctx runtime.Context, m Read, at uint64, shards []partition.ShardID, out []zset.Batch, done func(runtime.Context, []zset.Batch, error)) {
	var ids []catalog.ID
	var slots []int
	for len(shards) > 0 && len(ids) == 0 {
		for j, id := range m.Relations {
			h := a.cfg.Router.TableShard()
			if j < len(m.Homes) {
				h = m.Homes[j]
			}
			if slices.Contains(a.cfg.Router.ShardsOfHome(h), shards[0]) {
				ids, slots = append(ids, id), append(slots, j)
			}
		}
		if len(ids) == 0 {
			shards = shards[1:]
		}
	}
	if len(shards) == 0 {
		done(ctx, out, nil)
		return
	}
	home := shards[0]
	readAt := at
	if plantViewUnpinned && home != a.cfg.Router.TableShard() {
		readAt = 0
	}
	a.ask(ctx, a.cfg.Router.ActorOf(home), shard.Read{CatalogVersion: m.CatalogVersion, Relations: ids, At: readAt, PinEpoch: a.pinEpochOf(readAt)}, func(ctx runtime.Context, reply runtime.Message) {
		if err, ok := reply.(error); ok {
			done(ctx, nil, err)
			return
		}
		addParts(out, slots, reply.(shard.ReadResult).Batches)
		a.readShards(ctx, m, at, shards[1:], out, done)
	})
}

// addParts adds one shard's batches of a read to out, batch k to
// out[slots[k]] (a relation read on several shards is the sum of its
// parts).
func addParts(out []zset.Batch, slots []int, batches []zset.Batch) {
	for k, b := range batches {
		if len(out[slots[k]].Rows) == 0 {
			out[slots[k]] = b
		} else {
			out[slots[k]].AddBatch(b, 1)
		}
	}
}

// pinEpochOf is the epoch of snapshot at when the statement opened it
// (readSpread); 0 (unchecked) for others.
func (a *Actor) pinEpochOf(at uint64) uint64 {
	switch {
	case at == 0:
	case at == a.readSnapshot:
		return a.readSnapshotEpoch
	case at == a.stmtSnapshot:
		return a.stmtSnapshotEpoch
	}
	return 0
}

// releaseReadSnapshot ends the snapshot a statement pinned to read
// several view shards (readSpread), if one is open.
func (a *Actor) releaseReadSnapshot(ctx runtime.Context) {
	if a.readSnapshot == 0 {
		return
	}
	id := a.readSnapshot
	a.readSnapshot = 0
	a.releaseSnapshotID(ctx, id)
}

// merge puts a read's view and table batches back in m.Relations' order.
func (a *Actor) merge(m Read, vr, tr shard.ReadResult) []zset.Batch {
	table := a.cfg.Router.TableShard()
	batches := make([]zset.Batch, 0, len(m.Relations))
	vi, ti := 0, 0
	for i := range m.Relations {
		if i < len(m.Homes) && m.Homes[i] != table {
			batches = append(batches, vr.Batches[vi])
			vi++
		} else {
			batches = append(batches, tr.Batches[ti])
			ti++
		}
	}
	return batches
}

// readAcross reads views on the view shard, at its frontier once it has
// every commit acknowledged so far, then the tables as of that epoch.
func (a *Actor) readAcross(ctx runtime.Context, m Read, views, tables []catalog.ID, viewShard partition.ShardID, minEpoch uint64, attempts int, done func(runtime.Context, []zset.Batch)) {
	a.ask(ctx, a.cfg.Router.ActorOf(viewShard), shard.Read{CatalogVersion: m.CatalogVersion, Relations: views, MinEpoch: minEpoch},
		a.orFail(func(ctx runtime.Context, reply runtime.Message) {
			vr := reply.(shard.ReadResult)
			a.ask(ctx, a.home(), shard.Read{CatalogVersion: m.CatalogVersion, Relations: tables, AtEpoch: true, Epoch: vr.Frontier},
				func(ctx runtime.Context, reply runtime.Message) {
					if err, ok := reply.(error); ok {
						if errcode.Has(err, errcode.SnapshotUnavailable) && attempts > 1 {
							a.readAcross(ctx, m, views, tables, viewShard, minEpoch, attempts-1, done)
							return
						}
						a.finish(err)
						return
					}
					done(ctx, a.merge(m, vr, reply.(shard.ReadResult)))
				})
		}))
}

// statementReadAt is the snapshot a statement reads at (readAt; the
// REPEATABLE READ pin unless planted otherwise, plant_*.go).
func (a *Actor) statementReadAt() uint64 {
	if plantRRNewSnapshot {
		return 0
	}
	if at := a.readAt(); at != 0 {
		return at
	}
	return a.stmtSnapshot
}

// readPoints reads m.Points from i on, one shard lookup each, appending
// their batches to out, then answers the request.
func (a *Actor) readPoints(ctx runtime.Context, m Read, out []zset.Batch, i int) {
	if i == len(m.Points) {
		a.finish(ReadResult{Batches: out})
		return
	}
	p := m.Points[i]
	rel := p.Relation
	a.lookupKeys(ctx, m.CatalogVersion, &rel, p.Keys, a.statementReadAt(),
		func(ctx runtime.Context, rows []types.Row, _ lookupSeen) {
			var b zset.Batch
			seen := map[string]bool{}
			for j, r := range rows {
				k := EncodeKey(&rel, p.Keys[j])
				if r == nil || seen[k] {
					continue
				}
				seen[k] = true
				b.Add(r, 1)
			}
			if rel.Kind == catalog.KindTable {
				b = a.txn.overlay(rel.ID, b)
			}
			a.readPoints(ctx, m, append(out, b), i+1)
		})
}

// lookupSeen is the shard that answered a lookup and the state it
// answered in (zero when several shards answered: shard.LookupSeen).
type lookupSeen struct {
	by   runtime.ActorID
	seen shard.LookupSeen
}

// lookupKeys looks keys of rel up on the shards storing them, one Lookup
// per shard (a partitioned table's keys may be on several), into rows (in
// keys' order), then runs done.
func (a *Actor) lookupKeys(ctx runtime.Context, catalogVersion uint64, rel *catalog.Relation, keys []types.Row, at uint64, done func(runtime.Context, []types.Row, lookupSeen)) {
	if owner, ok := a.cfg.Router.OwnerOfKeys(rel, keys); ok {
		// One shard (every key of a table that is not partitioned): its
		// answer, in keys' order, is the rows.
		to := a.cfg.Router.ActorOf(owner)
		a.ask(ctx, to, shard.Lookup{CatalogVersion: catalogVersion, Table: rel.ID, Keys: keys, At: at},
			a.orFail(func(ctx runtime.Context, reply runtime.Message) {
				res := reply.(shard.LookupResult)
				if len(res.Rows) != len(keys) {
					a.finish(errcode.New(errcode.InternalError, "internal: a lookup of %d keys of %s answered %d rows", len(keys), rel.Name, len(res.Rows)))
					return
				}
				done(ctx, res.Rows, lookupSeen{by: to, seen: res.Seen})
			}))
		return
	}
	rows := make([]types.Row, len(keys))
	var owners []partition.ShardID
	of := make([]partition.ShardID, len(keys))
	for j, k := range keys {
		of[j] = a.cfg.Router.OwnerOfKey(rel, k)
		if !slices.Contains(owners, of[j]) {
			owners = append(owners, of[j])
		}
	}
	var next func(ctx runtime.Context, i int)
	next = func(ctx runtime.Context, i int) {
		if i == len(owners) {
			done(ctx, rows, lookupSeen{})
			return
		}
		var batch []types.Row
		var slots []int
		for j, k := range keys {
			if of[j] == owners[i] {
				batch, slots = append(batch, k), append(slots, j)
			}
		}
		a.ask(ctx, a.cfg.Router.ActorOf(owners[i]), shard.Lookup{CatalogVersion: catalogVersion, Table: rel.ID, Keys: batch, At: at},
			a.orFail(func(ctx runtime.Context, reply runtime.Message) {
				for k, r := range reply.(shard.LookupResult).Rows {
					rows[slots[k]] = r
				}
				next(ctx, i+1)
			}))
	}
	next(ctx, 0)
}

// writable checks the transaction may write rel.
func (a *Actor) writable(rel *catalog.Relation) error {
	a.ensureTxn()
	if a.txn.readOnly {
		return errcode.New(errcode.ReadOnlyTransaction, "cannot change rows in a read-only transaction")
	}
	if rel.Kind != catalog.KindTable {
		return errcode.New(errcode.WrongObjectType, "cannot change relation %q", rel.Name)
	}
	return nil
}

// lookup answers Lookup: lock (with m.Lock), look up the keys the
// transaction has not seen, check what the statement read, record bases.
func (a *Actor) lookup(ctx runtime.Context, m Lookup) {
	if err := a.writable(&m.Table); err != nil {
		a.finish(err)
		return
	}
	t := a.txn
	tw := t.table(m.Table)
	rel := tw.rel
	encs := m.Encoded
	if len(encs) != len(m.Keys) {
		encs = make([]string, len(m.Keys))
		for i, k := range m.Keys {
			encs[i] = EncodeKey(rel, k)
		}
	}
	fresh := make([]bool, len(m.Keys))
	for i, k := range encs {
		if !tw.mayHave(k) {
			fresh[i] = true
			continue
		}
		fresh[i] = tw.get(k) == nil
	}
	afterLock := func(ctx runtime.Context) {
		a.current(ctx, m, tw, encs, fresh, func(ctx runtime.Context, cur []types.Row) {
			a.checkVisible(ctx, m, tw, encs, fresh, func(ctx runtime.Context) {
				if m.Lock && m.Read != nil {
					for i := range m.Keys {
						if fresh[i] && m.Read[i] != nil && !SameRow(rel, cur[i], m.Read[i]) {
							if t.repeatable() {
								// The row read from the transaction's
								// snapshot is not the newest: someone
								// committed a change after it.
								a.finish(concurrentUpdate(cur[i] == nil))
								return
							}
							a.finish(LookupResult{Stale: true})
							return
						}
					}
				}
				if m.Read != nil {
					for i := range m.Keys {
						if fresh[i] && m.Read[i] != nil {
							p := t.writable(tw, encs[i])
							p.base, p.existedBefore = m.Read[i], true
						}
					}
				}
				a.finish(LookupResult{Rows: cur})
			})
		})
	}
	if !m.Lock {
		afterLock(ctx)
		return
	}
	keys := make([]string, 0, len(encs))
	for _, k := range encs {
		// NB: a key the transaction holds already is not asked for again
		// (a statement run again after a wait asks for the same keys).
		if _, held := a.locksHeld[heldLock{table: rel.ID, key: k}]; !held {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	keys = dedupSorted(keys)
	a.lockKeys(ctx, rel, keys, afterLock)
}

func dedupSorted(keys []string) []string {
	out := keys[:0]
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			out = append(out, k)
		}
	}
	return out
}

// recentLookup is a Lookup of keys all new to the transaction, kept until
// the next request: a bulk insert's Set of the same keys in the same
// order (a COPY chunk) then finds their pending rows without a map
// access per row.
type recentLookup struct {
	tw      *tableWrites
	encs    []string
	pending []*pendingRow
}

// current looks up the committed rows of the keys the transaction has not
// touched (fresh, one request) and records them; next gets every key's
// row as the transaction sees it.
func (a *Actor) current(ctx runtime.Context, m Lookup, tw *tableWrites, encs []string, fresh []bool, next func(ctx runtime.Context, cur []types.Row)) {
	n := 0
	for _, f := range fresh {
		if f {
			n++
		}
	}
	// With every key fresh (a COPY chunk's), the keys asked for are m.Keys
	// and the answer is the lookup's: no lists of them to build (at nil
	// is every index, out the answer).
	var out []types.Row
	missing := m.Keys
	var at []int
	if n < len(m.Keys) {
		out = make([]types.Row, len(m.Keys))
		missing, at = make([]types.Row, 0, n), make([]int, 0, n)
		for i, k := range encs {
			if !fresh[i] {
				if p := tw.get(k); p != nil {
					out[i] = p.row
					continue
				}
			}
			missing = append(missing, m.Keys[i])
			at = append(at, i)
		}
	}
	if len(missing) == 0 {
		next(ctx, out)
		return
	}
	a.lookupKeys(ctx, m.CatalogVersion, tw.rel, missing, 0, func(ctx runtime.Context, rows []types.Row, seen lookupSeen) {
		if at == nil {
			out = rows
		}
		tw.noteSeen(seen)
		// One allocation for the new entries (a COPY chunk adds
		// thousands), and room for them in the key order up front.
		slab := make([]pendingRow, len(missing))
		if n := len(tw.keys) + len(missing); cap(tw.keys) < n {
			// NB: at least doubled, or a COPY's chunks each copied every
			// key so far (quadratic in the rows of the transaction).
			tw.keys = append(make([]string, 0, max(n, 2*cap(tw.keys))), tw.keys...)
			tw.pending = append(make([]*pendingRow, 0, cap(tw.keys)), tw.pending...)
		}
		from, twice := len(tw.keys), false
		for j := range missing {
			i := j
			if at != nil {
				i = at[j]
			}
			// Remember what was committed when the transaction first looked.
			out[i] = rows[j]
			p := &slab[j]
			*p = pendingRow{key: missing[j], row: rows[j], existedBefore: rows[j] != nil, base: rows[j]}
			if !a.txn.touch(tw, encs[i], p) {
				twice = true
			}
			// NB: an untouched key's pending row equals the committed
			// row; writes() skips entries that were never changed.
		}
		if twice {
			tw.relist(from)
		} else if len(missing) == len(encs) {
			a.recent = &recentLookup{tw: tw, encs: encs, pending: tw.pending[from:len(tw.pending):len(tw.pending)]}
		}
		next(ctx, out)
	})
}

// checkVisible is REPEATABLE READ's rule for INSERT ... ON CONFLICT: a
// conflicting row (looked up at the newest state by current) must be the
// one the transaction's snapshot holds; one committed after the snapshot
// fails with 40001, as in PostgreSQL, rather than being skipped or
// updated from a state the transaction cannot see.
func (a *Actor) checkVisible(ctx runtime.Context, m Lookup, tw *tableWrites, encs []string, fresh []bool, next then) {
	if !m.CheckVisible || !a.txn.repeatable() {
		next(ctx)
		return
	}
	var check, latest []types.Row
	for i, k := range encs {
		if !fresh[i] {
			continue
		}
		if p := tw.get(k); p != nil && p.row != nil && !p.changed {
			check = append(check, m.Keys[i])
			latest = append(latest, p.row)
		}
	}
	if len(check) == 0 {
		next(ctx)
		return
	}
	a.lookupKeys(ctx, m.CatalogVersion, tw.rel, check, a.readAt(), func(ctx runtime.Context, rows []types.Row, _ lookupSeen) {
		for i, r := range rows {
			if !SameRow(tw.rel, r, latest[i]) {
				a.finish(concurrentUpdate(false))
				return
			}
		}
		next(ctx)
	})
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

// set answers Set.
func (a *Actor) set(m Set) {
	if err := a.writable(&m.Table); err != nil {
		a.finish(err)
		return
	}
	t := a.txn
	tw := t.table(m.Table)
	recent := a.recent
	a.recent = nil
	if recent != nil && (recent.tw != tw || len(recent.encs) != len(m.Keys)) {
		recent = nil
	}
	encoded := len(m.Encoded) == len(m.Keys)
	for i, key := range m.Keys {
		var k string
		if encoded {
			k = m.Encoded[i]
		} else {
			k = EncodeKey(tw.rel, key)
		}
		var p *pendingRow
		if recent != nil && recent.encs[i] == k {
			p = t.writablePending(tw, k, recent.pending[i])
		} else {
			p = t.writable(tw, k)
		}
		if p == nil {
			a.finish(errcode.New(errcode.InternalError, "internal: a write to %s under a key the transaction did not look up", tw.rel.Name))
			return
		}
		p.row = m.Rows[i]
		p.changed = true
		p.mustNotExist = !p.existedBefore
	}
	if err := t.grow(len(m.Keys)); err != nil {
		a.finish(err)
		return
	}
	a.finish(Done{})
}

// appendRows answers Append and Remove (remove: rows deleted by value).
func (a *Actor) appendRows(rel catalog.Relation, rows []types.Row, remove bool) {
	if err := a.writable(&rel); err != nil {
		a.finish(err)
		return
	}
	tw := a.txn.table(rel)
	if remove {
		tw.removed = append(tw.removed, rows...)
	} else {
		tw.appended = append(tw.appended, rows...)
	}
	if err := a.txn.grow(len(rows)); err != nil {
		a.finish(err)
		return
	}
	a.finish(Done{})
}

// commit answers Commit: the writes become one durable epoch on the
// shard that stores them.
func (a *Actor) commit(ctx runtime.Context, m Commit) {
	t := a.txn
	a.txn = nil
	if t == nil {
		a.unlockRows(ctx)
		a.finish(Committed{})
		return
	}
	a.releaseSnapshot(ctx, t)
	writes := t.writes()
	if len(writes) == 0 {
		a.unlockRows(ctx)
		a.finish(Committed{})
		return
	}
	if parts, several, err := a.partsOfWrites(t, writes); err != nil {
		a.unlockRows(ctx)
		a.finish(err)
		return
	} else if several {
		a.commitParts(ctx, m, parts, len(writes))
		return
	}
	to, err := a.shardOfWrites(t, writes)
	if err != nil {
		a.unlockRows(ctx)
		a.finish(err)
		return
	}
	// NB: the shard releases the transaction's row locks once this commit
	// is durable (or failed), never before: a waiter must not read a row
	// version a crash could take back.
	lockTxn := a.endLockTxn()
	commitTxn := lockTxn
	if to != a.lockShard() {
		// NB: the locks are on the lock shard (a partitioned layout's
		// first), not on the shard committing: released once the commit
		// is durable (or failed), after its answer.
		commitTxn = 0
	}
	a.askPatiently(ctx, to, shard.Commit{CatalogVersion: m.CatalogVersion, Writes: writes, Txn: commitTxn, Absent: t.absent(to)}, func(ctx runtime.Context, reply runtime.Message) {
		if lockTxn != 0 && commitTxn == 0 {
			a.send(ctx, a.lockShard(), shard.UnlockRows{Txn: lockTxn})
		}
		if err, ok := reply.(error); ok {
			if lockTxn != 0 && commitTxn != 0 {
				// In case the Commit never reached the shard's lock
				// table. Sent after the Commit, so behind it in the
				// shard's mailbox, and not a Commit, so handled only once
				// every pending commit is durable.
				a.send(ctx, a.lockShard(), shard.UnlockRows{Txn: lockTxn})
			}
			a.finish(err)
			return
		}
		epoch := reply.(shard.Committed).Epoch
		a.lastWritten = max(a.lastWritten, epoch)
		a.finish(Committed{Epoch: epoch, Rows: len(writes)})
	})
}

// shardOfWrites is the shard storing every row writes change.
func (a *Actor) shardOfWrites(t *txn, writes []shard.RowWrite) (runtime.ActorID, error) {
	var owner partition.ShardID
	var rel *catalog.Relation
	for i, w := range writes {
		sameTable := i > 0 && w.Table == writes[i-1].Table
		if !sameTable {
			rel = t.tables[w.Table].rel
		} else if !rel.Partitioned() {
			// NB: on the table shard, as the write before: a COPY's
			// million writes skip a map access and a routing each.
			continue
		}
		first, second := a.cfg.Router.OwnersOfWrite(rel, w)
		if first != second || (i > 0 && first != owner) {
			// NB: a partitioned layout's writes of several shards were
			// split by partsOfWrites before.
			return "", errcode.New(errcode.InternalError, "a transaction writes rows stored on several shards")
		}
		owner = first
	}
	return a.cfg.Router.ActorOf(owner), nil
}

// control is the control plane's actor.
func (a *Actor) control() runtime.ActorID {
	if a.cfg.Control == "" {
		return control.ActorID
	}
	return a.cfg.Control
}

// writePart is one shard's part of a transaction's writes.
type writePart struct {
	shard  partition.ShardID
	writes []shard.RowWrite
}

// partsOfWrites splits a partitioned layout's writes by the shard storing
// their rows, ascending; several reports whether there is more than one.
// A write moving a row to a key of another shard is refused.
func (a *Actor) partsOfWrites(t *txn, writes []shard.RowWrite) (parts []writePart, several bool, err error) {
	if !a.cfg.Router.Partitioned() {
		return nil, false, nil
	}
	for _, w := range writes {
		first, second := a.cfg.Router.OwnersOfWrite(t.tables[w.Table].rel, w)
		if first != second {
			return nil, false, errPartitioned("updates moving a row to a primary key stored on another shard")
		}
		i := slices.IndexFunc(parts, func(p writePart) bool { return p.shard == first })
		if i < 0 {
			parts = append(parts, writePart{shard: first})
			i = len(parts) - 1
		}
		parts[i].writes = append(parts[i].writes, w)
	}
	slices.SortFunc(parts, func(x, y writePart) int { return cmp.Compare(x.shard, y.shard) })
	return parts, len(parts) > 1, nil
}

// commitParts commits a transaction whose rows are on several table shards
// (shard twophase.go): each part prepared in ascending shard order, the
// decision made durable on the first (the home), then each part resolved.
// COMMIT is answered once the decision is durable.
func (a *Actor) commitParts(ctx runtime.Context, m Commit, parts []writePart, rows int) {
	lockTxn := a.endLockTxn()
	unlock := func(ctx runtime.Context) {
		if lockTxn != 0 {
			a.send(ctx, a.lockShard(), shard.UnlockRows{Txn: lockTxn})
		}
	}
	a.commitPartsAttempt(ctx, m, parts, rows, unlock, commitPartsAttemptsMax)
}

// commitPartsAttemptsMax bounds the attempts of a transaction on several
// shards whose prepares younger transactions' intents refused.
const commitPartsAttemptsMax = 64

// commitPartsAttempt is one attempt of commitParts: every part prepared
// at once, under a new id (shard twophase.go). A part refused because an
// older transaction is in doubt on its shard (wait-die) makes the attempt
// drop its parts and try again.
func (a *Actor) commitPartsAttempt(ctx runtime.Context, m Commit, parts []writePart, rows int, unlock func(runtime.Context), attempts int) {
	// The transaction's id is an epoch the control plane hands out: never
	// handed out again, also after a restart, so a home never answers a
	// transaction with another's decision. Its order is the wait-die age.
	var txn uint64
	home := parts[0].shard
	abort := func(ctx runtime.Context) {
		for _, p := range parts {
			a.send(ctx, a.cfg.Router.ActorOf(p.shard), shard.Resolve{Txn: txn, Abort: true})
		}
	}
	fail := func(ctx runtime.Context, err error) {
		abort(ctx)
		unlock(ctx)
		a.finish(err)
	}
	decide := func(ctx runtime.Context, epoch uint64) {
		a.askPatiently(ctx, a.cfg.Router.ActorOf(home), shard.Decide{Txn: txn, Epoch: epoch}, func(ctx runtime.Context, reply runtime.Message) {
			if err, ok := reply.(error); ok {
				// NB: the decision may or may not be recorded: the
				// participants ask the home, which answers them.
				unlock(ctx)
				a.finish(err)
				return
			}
			d := reply.(shard.Decided)
			if d.Aborted {
				fail(ctx, errcode.New(errcode.OptimisticConflict, "could not serialize access: the transaction was aborted while one of its shards waited for its decision"))
				return
			}
			for _, p := range parts {
				a.send(ctx, a.cfg.Router.ActorOf(p.shard), shard.Resolve{Txn: txn, Epoch: d.Epoch})
			}
			unlock(ctx)
			a.lastWritten = max(a.lastWritten, d.Epoch)
			a.finish(Committed{Epoch: d.Epoch, Rows: rows})
		})
	}
	prepared := func(ctx runtime.Context, replies []runtime.Message) {
		refused := false
		for _, r := range replies {
			switch r := r.(type) {
			case error:
				// NB: a part may be prepared (its answer lost): the abort
				// drops it too; an abort of what was never prepared is a
				// no-op.
				fail(ctx, r)
				return
			case shard.PrepareRefused:
				refused = true
			}
		}
		if refused {
			if attempts <= 1 {
				fail(ctx, errcode.New(errcode.OptimisticConflict, "could not serialize access: the transaction's shards stayed busy with older transactions over several shards"))
				return
			}
			abort(ctx)
			a.commitPartsAttempt(ctx, m, parts, rows, unlock, attempts-1)
			return
		}
		// The decision's epoch, handed out after every prepare: above
		// what each participant sealed.
		a.ask(ctx, a.control(), control.AllocEpoch{Count: 1}, func(ctx runtime.Context, reply runtime.Message) {
			e, ok := reply.(control.EpochAllocated)
			if !ok {
				err := errcode.New(errcode.ShardUnavailable, "the transaction got no epoch from the control plane; it was rolled back")
				if cause, isErr := reply.(error); isErr {
					err = errcode.Wrap(errcode.ShardUnavailable, cause, "the transaction got no epoch from the control plane; it was rolled back")
				}
				fail(ctx, err)
				return
			}
			decide(ctx, e.Epoch)
		})
	}
	a.ask(ctx, a.control(), control.AllocEpoch{Count: 1}, func(ctx runtime.Context, reply runtime.Message) {
		e, ok := reply.(control.EpochAllocated)
		if !ok {
			err := errcode.New(errcode.ShardUnavailable, "the transaction got no id from the control plane; it was rolled back")
			if cause, isErr := reply.(error); isErr {
				err = errcode.Wrap(errcode.ShardUnavailable, cause, "the transaction got no id from the control plane; it was rolled back")
			}
			unlock(ctx)
			a.finish(err)
			return
		}
		txn = e.Epoch
		// Every part at once: each shard checks and stores its part on
		// its own core.
		shards := make([]partition.ShardID, len(parts))
		for i, p := range parts {
			shards[i] = p.shard
		}
		a.askEach(ctx, shards, true, func(i int) runtime.Message {
			return shard.Prepare{CatalogVersion: m.CatalogVersion, Txn: txn, Home: home, Writes: parts[i].writes}
		}, prepared)
	})
}

// errPartitioned refuses what a partitioned layout does not do yet.
func errPartitioned(what string) error {
	return errcode.New(errcode.SQLFeatureNotSupported, "%s are not supported yet when tables are partitioned over several shards", what).
		WithDetail("This data directory was created with --partition-tables, which is experimental. Write the rows of one transaction so that they share one shard, or use a data directory created without it.")
}

// endTxn ends the open transaction without committing: locks, snapshot
// and writes are let go.
func (a *Actor) endTxn(ctx runtime.Context) {
	a.unlockRows(ctx)
	a.releaseReadSnapshot(ctx)
	a.releaseStmtSnapshot(ctx)
	a.releaseSnapshot(ctx, a.txn)
	a.txn = nil
}

// releaseSnapshot unpins an ended transaction's snapshot.
func (a *Actor) releaseSnapshot(ctx runtime.Context, t *txn) {
	if t == nil || t.snapshot == 0 {
		return
	}
	id := t.snapshot
	t.snapshot = 0
	a.releaseSnapshotID(ctx, id)
}

// sequenceOp answers SequenceOp: the control plane's answer, remembered
// for currval and lastval.
func (a *Actor) sequenceOp(ctx runtime.Context, m SequenceOp) {
	a.ask(ctx, a.control(), m.Op, a.orFail(func(_ runtime.Context, reply runtime.Message) {
		v := reply.(control.SequenceValue)
		if m.Op.Op == control.SeqNextVal || m.Op.IsCalled {
			if a.currval == nil {
				a.currval = map[catalog.ID]int64{}
			}
			a.currval[v.ID] = v.Value
			a.lastSequence, a.hasLastval = v.ID, true
		}
		a.finish(v)
	}))
}

// readPartitioned reads relations of a partitioned layout: the tables on
// every table shard as of one epoch each has sealed, at or after the last
// epoch the control plane handed out (so every commit acknowledged
// before the read began shows), and views (of one view shard) at their
// frontier once it passed that epoch, the tables then as of that
// frontier.
func (a *Actor) readPartitioned(ctx runtime.Context, m Read, minEpoch uint64, done func(runtime.Context, []zset.Batch)) {
	if a.statementReadAt() != 0 {
		// In the statement's or the transaction's snapshot.
		a.readSpread(ctx, m, readAcrossAttemptsMax, done)
		return
	}
	var views []catalog.ID
	var slots []int
	var viewShard partition.ShardID
	for i, id := range m.Relations {
		if m.Homes[i] == shard.TableShards {
			continue
		}
		if m.Homes[i] == shard.SpreadShards || (len(views) > 0 && m.Homes[i] != viewShard) {
			// Views of several shards: in one snapshot of every shard.
			a.readSpread(ctx, m, readAcrossAttemptsMax, done)
			return
		}
		views, slots, viewShard = append(views, id), append(slots, i), m.Homes[i]
	}
	out := make([]zset.Batch, len(m.Relations))
	a.ask(ctx, a.control(), control.GetEpochs{}, a.orFail(func(ctx runtime.Context, reply runtime.Message) {
		epoch := max(minEpoch, reply.(control.EpochAllocated).Known)
		if len(views) == 0 {
			a.readTableShards(ctx, m, epoch, a.cfg.Router.TableShards(), out, done)
			return
		}
		a.ask(ctx, a.cfg.Router.ActorOf(viewShard), shard.Read{CatalogVersion: m.CatalogVersion, Relations: views, MinEpoch: epoch},
			a.orFail(func(ctx runtime.Context, reply runtime.Message) {
				vr := reply.(shard.ReadResult)
				for k, b := range vr.Batches {
					out[slots[k]] = b
				}
				a.readTableShards(ctx, m, vr.Frontier, a.cfg.Router.TableShards(), out, done)
			}))
	}))
}

// readTableShards is readPartitioned's read of the tables on each of
// shards in turn, as of epoch, each table the sum of its parts.
func (a *Actor) readTableShards(ctx runtime.Context, m Read, epoch uint64, shards []partition.ShardID, out []zset.Batch, done func(runtime.Context, []zset.Batch)) {
	var ids []catalog.ID
	var slots []int
	for i, id := range m.Relations {
		if m.Homes[i] == shard.TableShards {
			ids, slots = append(ids, id), append(slots, i)
		}
	}
	if len(shards) == 0 || len(ids) == 0 {
		done(ctx, out)
		return
	}
	a.ask(ctx, a.cfg.Router.ActorOf(shards[0]), shard.Read{CatalogVersion: m.CatalogVersion, Relations: ids, AtEpoch: true, Epoch: epoch},
		a.orFail(func(ctx runtime.Context, reply runtime.Message) {
			addParts(out, slots, reply.(shard.ReadResult).Batches)
			a.readTableShards(ctx, m, epoch, shards[1:], out, done)
		}))
}
