package gateway

import (
	"context"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// This file is the seam between the wire protocol and the SQL engine. The
// gateway owns everything that is pure protocol or session business (message
// framing, formats, SET/SHOW/RESET/DISCARD, the transaction state machine,
// COPY framing and parsing, auth, cancel); the engine owns everything that
// needs the catalog or data (parsing and binding real SQL, executing it,
// transactions' effects).
//
// Calling discipline: one connection is served by one goroutine, and that
// goroutine is the only caller of a Session's methods, one call at a time (a
// Session may therefore be a thin client of a session actor).
//
// Cursors: several may be open at once (extended-protocol portals suspended
// by an Execute row limit), and other statements may run between their Next
// calls, so a Session must not assume one statement at a time. The ctx of
// Execute covers that call only; each Next gets its own ctx (a later Execute
// message), cancelled by CancelRequest or statement_timeout. The gateway
// closes every cursor of a transaction before it calls Commit or Rollback.

// Engine creates sessions. It is called once per authenticated connection.
type Engine interface {
	NewSession(ctx context.Context, info SessionInfo) (Session, error)
}

// SessionInfo describes the client behind a new session.
type SessionInfo struct {
	// Database is the StartupMessage's database, which RockStream reads as the
	// namespace (spec §5.2). Defaults to the user name, as in PostgreSQL.
	Database string
	// User is the authenticated user.
	User string
	// ApplicationName is the client's application_name at startup.
	ApplicationName string
	// RemoteAddr is the client's address, for logs and audit.
	RemoteAddr string
	// ProcessID is the BackendKeyData process id, for logs.
	ProcessID uint32
	// Settings is the session's parameter state right after startup.
	Settings *Settings
	// Unprivileged is set when the session authenticated as a role that
	// is not a superuser: the engine checks its table privileges and
	// refuses it DDL and role management. The zero value is a superuser
	// session, as a trusted connection (no password authentication) is.
	Unprivileged bool
}

// Session is one client session inside the engine.
//
// Transactions: the gateway runs every engine statement inside a transaction
// it opened with Begin. Outside an explicit BEGIN block the gateway opens an
// implicit one (TxOptions.Implicit) before the first engine statement of a
// simple Query message or of an extended-protocol batch, and commits it at the
// end of the Query message / at Sync (rolls it back on error), exactly like
// PostgreSQL's implicit transaction blocks. So the engine never needs its own
// autocommit logic, and a multi-statement Query is atomic as in PostgreSQL.
// Statements the gateway answers itself (SET, SHOW, BEGIN, ...) never reach
// the engine.
type Session interface {
	// Prepare parses, binds and plans one statement. req.ParamTypes has one
	// entry per parameter the client declared; KindUnknown (OID 0) means
	// "infer". The returned Statement must report every parameter's final
	// type (ParameterDescription) and the result columns (RowDescription),
	// or nil Columns for a statement that returns no rows.
	Prepare(ctx context.Context, req PrepareRequest) (*Statement, error)

	// Execute runs a prepared statement with bound parameters (already
	// decoded to the Datum representation of Statement.ParamTypes, ints
	// widened). The result rows are pulled through the Cursor, so a portal
	// with a row limit can stop and resume. ctx is cancelled by a
	// CancelRequest; return an error wrapping ctx.Err() then.
	Execute(ctx context.Context, req ExecuteRequest) (Cursor, error)

	// Begin, Commit and Rollback drive the transaction the gateway's state
	// machine decided on. A COMMIT of an aborted transaction reaches the
	// engine as Rollback (PostgreSQL answers it with the tag ROLLBACK).
	Begin(ctx context.Context, opts TxOptions) error
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error

	// CopyIn starts `COPY table [(columns)] FROM STDIN` inside the current
	// transaction. The sink reports the target columns' types, receives the
	// parsed rows in bounded chunks, and is finished (the COPY's rows become
	// part of the transaction) or aborted (nothing of the COPY is kept).
	CopyIn(ctx context.Context, req CopyInRequest) (CopyInSink, error)

	// Close ends the session (connection closed). Any open transaction has
	// already been rolled back by the gateway.
	Close() error
}

// SavepointSession is a Session that supports savepoints inside explicit
// transaction blocks. The gateway keeps the savepoint names and PostgreSQL's
// stack discipline (duplicate names shadow older ones; RELEASE and ROLLBACK
// TO act on the newest savepoint of that name and destroy every later one)
// and tells the engine depths: the oldest open savepoint has depth 1.
// After an error inside a block with open savepoints the gateway keeps the
// engine's transaction open (state failed) so that ROLLBACK TO SAVEPOINT can
// resume it; COMMIT or ROLLBACK then end it as usual.
type SavepointSession interface {
	// Savepoint pushes a savepoint at depth n+1 (n = open savepoints).
	Savepoint(ctx context.Context) error
	// RollbackToSavepoint undoes every change of the transaction since
	// savepoint depth, drops the later savepoints and keeps this one.
	RollbackToSavepoint(ctx context.Context, depth int) error
	// ReleaseSavepoint drops savepoint depth and the later ones, keeping
	// their changes.
	ReleaseSavepoint(ctx context.Context, depth int) error
}

// PrepareRequest asks the engine to prepare one SQL statement.
type PrepareRequest struct {
	// SQL is exactly one statement, without a trailing semicolon.
	SQL string
	// ParamTypes is what the client declared in Parse (may be shorter than
	// the number of placeholders; missing entries mean "infer").
	ParamTypes []types.Type
	// Settings is the session's parameters at the time of the call.
	Settings *Settings
	// Parsed is SQL's pg_query tree when the gateway parsed it to classify
	// it (nil: not parsed), so that the engine need not parse it again.
	Parsed *parse.Tree
}

// Statement is a prepared statement as the engine describes it.
type Statement struct {
	// ParamTypes has one entry per placeholder $1..$n, all resolved.
	ParamTypes []types.Type
	// Columns describes the result rows; nil when the statement returns no
	// rows (INSERT without RETURNING, DDL, ...).
	Columns types.Schema
	// Origins optionally gives, per column, the table (or view) column it
	// plainly comes from: RowDescription's table OID and attribute number
	// (zero when not a plain column reference, as PostgreSQL sends).
	Origins []ColumnOrigin
	// Handle is private to the engine (a plan, a compiled circuit, ...).
	Handle any
}

// RegValue is a regclass or regtype result value: text format sends the
// name (regclassout/regtypeout need the catalog, which the engine has),
// binary format the oid.
type RegValue struct {
	OID  int64
	Name string
}

// ColumnOrigin is a result column's source: pg_class.oid and attnum.
type ColumnOrigin struct {
	TableOID uint32
	AttNum   int16
}

// ExecuteRequest asks the engine to run a prepared statement.
type ExecuteRequest struct {
	Statement *Statement
	// Params are the bound parameter values, one per Statement.ParamTypes.
	Params []types.Datum
	// Settings is the session's parameters at the time of the call.
	Settings *Settings
	// PreparedStatements lists the session's named prepared statements
	// (pg_prepared_statements); nil outside a connection.
	PreparedStatements func() []PreparedStatementInfo
	// Notify queues a notification of the statement's transaction
	// (pg_notify); it checks the arguments as PostgreSQL does.
	Notify func(channel, payload string) error
	// JustPrepared says the session's previous Prepare call prepared
	// Statement for this execution alone (a Query message's statement),
	// with nothing in between but Begin: the engine may run it in the
	// catalog it was bound in instead of looking again.
	JustPrepared bool
}

// PreparedStatementInfo is one row of pg_prepared_statements: a named
// statement prepared with Parse or SQL PREPARE.
type PreparedStatementInfo struct {
	Name string
	// Statement is the text of the client message that created it (the
	// whole Query string for PREPARE, as PostgreSQL shows it).
	Statement   string
	PrepareTime time.Time
	ParamTypes  []types.Type
	FromSQL     bool
	// Executions counts its executions (all with its one plan: RockStream
	// binds a statement once, so they are generic plans).
	Executions int64
}

// Cursor streams a statement's result.
type Cursor interface {
	// Next returns the next row, or (nil, io.EOF) after the last one. A
	// statement without rows returns io.EOF at once.
	Next(ctx context.Context) (types.Row, error)
	// Tag is the command tag, valid after Next returned io.EOF
	// ("SELECT 3", "INSERT 0 1", "UPDATE 2", "CREATE TABLE", ...). An empty
	// tag makes the gateway send "SELECT <rows>" for row-returning
	// statements and "OK" otherwise.
	Tag() string
	// Notices returns warnings to send to the client as NoticeResponse
	// (each *errcode.Error's code should have a warning-class SQLSTATE
	// such as 01000). Called once after the cursor is exhausted.
	Notices() []*errcode.Error
	// Close releases the cursor; called exactly once, also after errors and
	// for portals closed before exhaustion.
	Close() error
}

// StreamingCursor is a Cursor whose rows arrive over time (SUBSCRIBE): the
// gateway flushes after every row instead of buffering, so a client sees
// each change as it happens.
type StreamingCursor interface {
	Cursor
	Streaming() bool
}

// isStreaming reports whether rows of c must be flushed one by one.
func isStreaming(c Cursor) bool {
	s, ok := c.(StreamingCursor)
	return ok && s.Streaming()
}

// Isolation is a transaction isolation level.
type Isolation uint8

// Isolation levels. SERIALIZABLE never reaches the engine: the gateway
// rejects it with RS-2003.
const (
	ReadCommitted Isolation = iota
	RepeatableRead
)

func (i Isolation) String() string {
	if i == RepeatableRead {
		return "repeatable read"
	}
	return "read committed"
}

// TxOptions describes a transaction the gateway begins.
type TxOptions struct {
	Isolation Isolation
	ReadOnly  bool
	// Implicit is true for PostgreSQL's implicit transaction block (no
	// BEGIN): the statements of one Query message or of one extended batch
	// up to Sync. The engine may refuse statements that cannot run inside an
	// explicit block (e.g. CREATE MATERIALIZED VIEW) when Implicit is false.
	Implicit bool
	// Settings is the session's parameters at BEGIN.
	Settings *Settings
}

// CopyInRequest describes `COPY table [(columns)] FROM STDIN`.
type CopyInRequest struct {
	// Schema is the table's schema name when qualified, "" otherwise
	// (resolve through Settings' search_path).
	Schema string
	Table  string
	// Columns is the explicit column list, nil for all columns in order.
	Columns  []string
	Settings *Settings
}

// CopyInSink receives the rows of a COPY FROM STDIN.
type CopyInSink interface {
	// Columns are the target columns in the order COPY fields arrive.
	Columns() types.Schema
	// Write appends a chunk of rows (at most copyChunkRowsMax rows); the
	// engine may buffer or stage them, but must not make them visible
	// before Finish and the transaction's commit.
	Write(ctx context.Context, rows []types.Row) error
	// Finish ends the COPY successfully; returns the number of rows copied.
	Finish(ctx context.Context) (int64, error)
	// Abort ends the COPY unsuccessfully: nothing written through this sink
	// may survive. The gateway then also aborts the transaction.
	Abort(ctx context.Context) error
}
