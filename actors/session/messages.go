package session

import (
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Isolation is a transaction's isolation level (PostgreSQL's READ
// UNCOMMITTED runs as READ COMMITTED, SERIALIZABLE as REPEATABLE READ:
// the gateway maps them).
type Isolation uint8

// Isolation levels.
const (
	ReadCommitted Isolation = iota
	RepeatableRead
)

// Requests a connection sends to its session actor, one at a time, each
// answered by the reply named in its comment or by an error (an
// *errcode.Error: the statement's error, with its SQLSTATE). A request
// that arrives while the previous one still waits (a row lock, a commit
// becoming durable) is queued behind it, except CancelWait.
//
// All are values (the wire codec carries them): a relation travels as a
// catalog.Relation value, which the actor keeps for the transaction's
// writes to it.
type (
	// Begin opens a transaction: explicit (BEGIN) or implicit (one
	// statement outside a transaction block). → Done.
	Begin struct {
		Isolation Isolation
		ReadOnly  bool
		Implicit  bool
	}

	// Statement starts a statement of the open transaction (or of none:
	// autocommit reads). Data says it reads or writes table data, so a
	// REPEATABLE READ transaction pins its snapshot at its first such
	// statement; LockTimeout is the statement's lock_timeout (0: none),
	// after which a row-lock wait fails with 55P03. → Done.
	Statement struct {
		CatalogVersion uint64
		Data           bool
		LockTimeout    time.Duration
		// WaitForOwn: reads wait until the session's own last commit is
		// visible (read-your-writes; rockstream.session_wait_for).
		WaitForOwn bool
	}

	// PinReads makes the statement's reads until UnpinReads share one
	// snapshot of the committed state (READ COMMITTED; a REPEATABLE READ
	// transaction's reads share its own): a statement that reads in
	// several requests, such as a lookup join reading a table at the join
	// values of the rows read before, sees one committed state, as one
	// request does. → Done.
	PinReads struct {
		CatalogVersion uint64
	}
	// UnpinReads ends PinReads' snapshot. → Done.
	UnpinReads struct{}

	// Read returns the relations' contents as the statement sees them:
	// committed (at the transaction's pinned snapshot under REPEATABLE
	// READ, else the newest, after the session's own last commit), with
	// the transaction's own writes applied to tables. Points are read by
	// primary key only. → ReadResult.
	Read struct {
		CatalogVersion uint64
		Relations      []catalog.ID
		Points         []PointRead
		// Ranges, when set, has one entry per Relations entry: the
		// primary-key ranges holding every row of the table the
		// statement can keep (nil: read it whole; shard.Read.Ranges).
		Ranges [][]shard.KeyRange
		// Homes are the shards serving Relations, one each
		// (shard.Router.HomeOf): the table shard for tables, the view
		// shard for materialized views. Nil: all on the table shard.
		Homes []partition.ShardID
	}

	// Lookup returns the rows of Table under primary keys Keys as the
	// transaction sees them (its own writes, else the newest committed
	// row), recording each untouched key's committed row as the base its
	// commit checks. With Lock, the keys' row locks are taken first
	// (waiting while another transaction holds one). Read, when set, are
	// the rows the statement read for the keys (UPDATE, DELETE): a key
	// the transaction had not touched gets the row read as its base, and
	// with Lock a row changed since it was read makes the reply Stale
	// (READ COMMITTED: run the statement again) or fails with 40001
	// (REPEATABLE READ). CheckVisible (REPEATABLE READ ON CONFLICT): a
	// key first looked up now whose newest committed row is not the one
	// the snapshot holds fails with 40001. → LookupResult.
	Lookup struct {
		CatalogVersion uint64
		Table          catalog.Relation
		Keys           []types.Row
		// Encoded, when not nil, is EncodeKey of each of Keys (the
		// sender had them), so the actor need not encode them again.
		Encoded      []string
		Read         []types.Row
		Lock         bool
		CheckVisible bool
	}

	// LockTable takes the lock of a whole table without a primary key for
	// an implicit transaction's UPDATE or DELETE (no-op otherwise). →
	// Done.
	LockTable struct {
		Table catalog.Relation
	}

	// Set changes the rows of Table under Keys (looked up before by this
	// transaction) to Rows (nil deletes). → Done, or RS-2009 when the
	// transaction grows past its row limit.
	Set struct {
		Table catalog.Relation
		Keys  []types.Row
		// Encoded is as in Lookup.
		Encoded []string
		Rows    []types.Row
	}

	// Append inserts rows into a table without a primary key; Remove
	// deletes rows of one by value (rows the transaction read). → Done.
	Append struct {
		Table catalog.Relation
		Rows  []types.Row
	}
	Remove struct {
		Table catalog.Relation
		Rows  []types.Row
	}

	// Savepoint pushes a savepoint; RollbackTo restores savepoint Depth
	// (1 = oldest) and keeps it; Release drops Depth and later ones,
	// keeping their changes. → Done.
	Savepoint  struct{}
	RollbackTo struct{ Depth int }
	Release    struct{ Depth int }

	// Commit ends the transaction: its writes become one durable epoch on
	// the shard, and its row locks are released once that epoch is
	// durable. → Committed (Epoch 0: it wrote nothing).
	Commit struct{ CatalogVersion uint64 }
	// Rollback ends the transaction, discarding its writes and releasing
	// its locks and snapshot. → Done.
	Rollback struct{}

	// CancelWait ends the current request's row-lock wait, if any (the
	// statement was canceled or timed out): that request fails with
	// 57014. Handled at once, not queued. → Done.
	CancelWait struct{}

	// SequenceOp runs a nextval or setval at the control plane (durable,
	// outside the transaction, as in PostgreSQL) and remembers the value
	// for currval and lastval. → control.SequenceValue.
	SequenceOp struct{ Op control.SequenceOp }
	// CurrVal asks the value this session last got from sequence ID
	// (currval); LastVal the last value of any sequence (lastval). →
	// SequenceCurrent.
	CurrVal struct{ ID catalog.ID }
	LastVal struct{}

	// GetState reports the session's transaction (tests, the simulator's
	// checkers, pg_stat_activity). → State.
	GetState struct{}
)

// Replies.
type (
	// Done acknowledges a request.
	Done struct{}
	// ReadResult holds one batch per Read.Relations entry, then one per
	// Read.Points entry, in request order.
	ReadResult struct {
		Batches []zset.Batch
	}
	// LookupResult has one row per Lookup.Keys entry (nil: absent).
	// Stale: a row changed while the statement waited for its lock; the
	// statement's changes since its Savepoint must be undone and the
	// statement run again (rows is then empty).
	LookupResult struct {
		Rows  []types.Row
		Stale bool
	}
	// SequenceCurrent answers CurrVal and LastVal: Defined is false when
	// the session has not used the sequence (55000 for the caller).
	SequenceCurrent struct {
		Value   int64
		Defined bool
	}
	// Committed answers Commit: the epoch the writes became (0: there
	// were none) and how many row changes it held.
	Committed struct {
		Epoch uint64
		Rows  int
	}
	// State answers GetState.
	State struct {
		InTransaction bool
		Isolation     Isolation
		// Snapshot is the REPEATABLE READ snapshot pinned (0: none).
		Snapshot uint64
		// Rows is how many row changes the transaction buffers;
		// Savepoints how deep its savepoint stack is; Locks how many row
		// locks it holds.
		Rows, Savepoints, Locks int
		// LastWritten is the epoch of the session's last commit.
		LastWritten uint64
		// WaitingForLock: the running request waits for a row lock
		// (pg_stat_activity's wait event).
		WaitingForLock bool
	}
)

// PointRead reads rows of Relation by primary key (Read.Points).
type PointRead struct {
	Relation catalog.Relation
	Keys     []types.Row
}
