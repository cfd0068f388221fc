package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

const (
	// messageBytesMax bounds one frontend message (PostgreSQL allows 1 GiB;
	// a quarter of that is plenty for any statement or COPY chunk).
	messageBytesMax = 256 << 20
	// flushBytesMax is how much result data is buffered before it is
	// written to the socket, so that large results stream in bounded memory.
	flushBytesMax = 64 << 10
)

// txState is the transaction state machine's state (doc.go has the diagram).
type txState uint8

const (
	txIdle    txState = iota // no explicit block ('I')
	txInBlock                // after BEGIN ('T')
	txFailed                 // an error inside a block ('E')
)

// conn is one client connection, served by one goroutine.
type conn struct {
	srv     *Server
	netConn net.Conn
	backend *pgproto3.Backend
	log     *slog.Logger
	isTLS   bool

	pid    uint32
	secret []byte

	session  Session
	settings *Settings
	// startupSettings is what RESET returns to.
	startupSettings *Settings

	state txState
	// engineTx is true while the engine has an open transaction (Begin
	// called, Commit/Rollback not yet); engineImplicit says whether it is an
	// implicit block (ends at the end of the Query message / at Sync).
	engineTx       bool
	engineImplicit bool
	// txIsolation and txReadOnly are the current (or next) transaction's
	// characteristics.
	txIsolation Isolation
	txReadOnly  bool
	// txSettings is the settings snapshot at BEGIN, restored on ROLLBACK.
	txSettings *Settings
	// localSettings are SET LOCAL parameters' values before the block, to
	// restore at its end.
	localSettings map[string]string
	// savepoints are the explicit block's open savepoints, oldest first.
	savepoints []savepoint

	stmts   map[string]*prepared
	portals map[string]*portal
	// notify is the session's LISTEN/NOTIFY state (notify.go).
	notify notifyState
	// clientQuery is the text of the client message being run (a Query's
	// string or a Parse's query), which pg_prepared_statements shows.
	clientQuery string
	// ignoreTillSync is set after an error in the extended protocol.
	ignoreTillSync bool

	// unflushedBytes counts result bytes buffered in backend since the last
	// flush.
	unflushedBytes int

	cancelMu sync.Mutex
	// cancelFunc cancels the running statement's context; nil when idle.
	cancelFunc context.CancelCauseFunc

	// activity is the session's pg_stat_activity row (activity.go);
	// terminated is set by pg_terminate_backend, and terminateOnce sends
	// its FATAL once.
	activity      activity
	terminated    atomic.Bool
	terminateOnce sync.Once
}

// errCanceledByUser is the cancel cause of a CancelRequest.
var errCanceledByUser = errors.New("canceled by user request")

// errStatementTimeout is the cancel cause of statement_timeout.
var errStatementTimeout = errors.New("statement timeout")

// prepared is a prepared statement (named or unnamed).
type prepared struct {
	st     statement
	engine *Statement // nil for statements the gateway answers
	// paramTypes and columns describe the statement (ParameterDescription,
	// RowDescription).
	paramTypes []types.Type
	columns    types.Schema
	// What pg_prepared_statements shows of named statements
	// (prepared_statements.go).
	text        string
	prepareTime time.Time
	fromSQL     bool
	executions  int64
}

// origins are the result columns' sources, when the engine knows them.
func (p *prepared) origins() []ColumnOrigin {
	if p.engine == nil || len(p.engine.Origins) != len(p.columns) {
		return nil
	}
	return p.engine.Origins
}

// portal is a bound statement, possibly partly executed.
type portal struct {
	stmt          *prepared
	params        []types.Datum
	resultFormats []int16 // one per column
	cursor        Cursor
	// rows is the gateway-computed result (SHOW) when cursor is nil.
	rows    []types.Row
	started bool
	done    bool
	// doneTag is the tag of a completed portal, re-sent on re-execution.
	doneTag string
	// justPrepared marks a Query message statement's portal, executed
	// right after its Prepare (ExecuteRequest.JustPrepared).
	justPrepared bool
}

func (s *Server) serveConn(ctx context.Context, nc net.Conn) {
	c := &conn{srv: s, netConn: nc, log: s.log.With("remote", nc.RemoteAddr().String()),
		stmts: map[string]*prepared{}, portals: map[string]*portal{}}
	defer nc.Close()
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("gateway: panic in connection", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.backend = pgproto3.NewBackend(nc, nc)
	c.backend.SetMaxBodyLen(messageBytesMax)
	_ = nc.SetDeadline(time.Now().Add(s.opts.StartupTimeout))
	ok, err := c.startup(ctx)
	if err != nil {
		c.log.Info("gateway: startup failed", "err", err)
	}
	if !ok {
		return
	}
	defer s.unregister(c)
	defer c.closeSession()
	_ = c.netConn.SetDeadline(time.Time{})
	c.loop(ctx)
}

// startup runs the startup phase up to the first ReadyForQuery. It returns
// false when the connection must be closed (cancel request, failed auth).
func (c *conn) startup(ctx context.Context) (bool, error) {
	var sm *pgproto3.StartupMessage
	for sm == nil {
		msg, err := c.backend.ReceiveStartupMessage()
		if err != nil {
			return false, err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.srv.opts.TLS == nil || c.isTLS {
				if _, err := c.netConn.Write([]byte{'N'}); err != nil {
					return false, err
				}
				continue
			}
			if _, err := c.netConn.Write([]byte{'S'}); err != nil {
				return false, err
			}
			tc := tls.Server(c.netConn, c.srv.opts.TLS)
			if err := tc.HandshakeContext(ctx); err != nil {
				return false, err
			}
			c.netConn, c.isTLS = tc, true
			c.backend = pgproto3.NewBackend(tc, tc)
			c.backend.SetMaxBodyLen(messageBytesMax)
		case *pgproto3.GSSEncRequest:
			if _, err := c.netConn.Write([]byte{'N'}); err != nil {
				return false, err
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return false, nil
		case *pgproto3.StartupMessage:
			sm = m
		default:
			return false, fmt.Errorf("unexpected startup message %T", msg)
		}
	}
	params := make(map[string]string, len(sm.Parameters))
	var unrecognized []string
	for k, v := range sm.Parameters {
		params[k] = v
		if strings.HasPrefix(k, "_pq_.") {
			unrecognized = append(unrecognized, k)
		}
	}
	if sm.ProtocolVersion != pgproto3.ProtocolVersion30 || len(unrecognized) > 0 {
		// We speak protocol 3.0 and no _pq_ extensions; say so, as
		// PostgreSQL does (the version is sent whole, as PostgreSQL 18 and
		// libpq expect).
		unrecognized = sortedStrings(unrecognized)
		c.backend.Send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: pgproto3.ProtocolVersion30, UnrecognizedOptions: unrecognized})
	}
	user := params["user"]
	if user == "" {
		c.fatal(errcode.New(errcode.ProtocolViolation, "no PostgreSQL user name specified in startup packet").WithSQLState("28000"))
		return false, nil
	}
	if params["replication"] != "" && params["replication"] != "false" && params["replication"] != "0" {
		c.fatal(errcode.New(errcode.GatewayUnsupported, "replication connections are not supported"))
		return false, nil
	}
	database := params["database"]
	if database == "" {
		database = user
	}
	settings := NewSettings(user, database)
	for _, name := range sortedKeys(params) {
		switch name {
		case "user", "database", "replication":
			continue
		case "options":
			// "-c name=value" pairs, as libpq's PGOPTIONS sends them.
			fields := strings.Fields(params[name])
			for i := 0; i < len(fields); i++ {
				kv := strings.TrimPrefix(fields[i], "-c")
				if kv == "" && i+1 < len(fields) {
					i++
					kv = fields[i]
				}
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					continue
				}
				next, err := settings.set(strings.TrimPrefix(k, "--"), v)
				if err != nil {
					c.fatal(err)
					return false, nil
				}
				settings = next
			}
			continue
		}
		if strings.HasPrefix(name, "_pq_.") {
			continue
		}
		next, err := settings.set(name, params[name])
		if err != nil {
			if e, ok := errcode.As(err); ok && e.Code == errcode.UnknownParameter {
				c.fatal(err)
				return false, nil
			}
			c.fatal(err)
			return false, nil
		}
		settings = next
	}

	// A trusted connection (no authentication configured, or a trusted
	// loopback) acts as a superuser; an authenticated one has its role's
	// attributes (auth.go).
	superuser := true
	if c.srv.roles != nil && !(c.srv.opts.TrustLoopback && isLoopback(c.netConn.RemoteAddr())) {
		role, err := c.authenticate(ctx, user)
		if err != nil {
			if e, ok := errcode.As(err); ok {
				c.fatal(e)
				return false, nil
			}
			return false, err
		}
		superuser = role.Superuser
	}
	c.backend.Send(&pgproto3.AuthenticationOk{})

	if err := c.srv.register(c, superuser); err != nil {
		c.fatal(err)
		return false, nil
	}
	c.log = c.log.With("pid", c.pid, "user", user, "database", database)
	c.settings, c.startupSettings = settings, settings
	session, err := c.srv.engine.NewSession(ctx, SessionInfo{
		Database: database, User: user, ApplicationName: params["application_name"],
		RemoteAddr: c.netConn.RemoteAddr().String(), ProcessID: c.pid, Settings: settings,
		Unprivileged: !superuser,
	})
	if err != nil {
		c.srv.unregister(c)
		c.fatal(err)
		return false, nil
	}
	c.session = session
	c.startActivity(SessionInfo{Database: database, User: user, ApplicationName: params["application_name"],
		RemoteAddr: c.netConn.RemoteAddr().String(), ProcessID: c.pid})
	c.resetTxCharacteristics()
	for i := range paramDefs {
		def := &paramDefs[i]
		if def.reported {
			c.backend.Send(&pgproto3.ParameterStatus{Name: def.name, Value: settings.values[strings.ToLower(def.name)]})
		}
	}
	c.backend.Send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	c.sendReady()
	return true, c.backend.Flush()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m { //lint:maprange sorted below
		keys = append(keys, k)
	}
	return sortedStrings(keys)
}

func sortedStrings(keys []string) []string {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// fatal sends a FATAL error during startup.
func (c *conn) fatal(err error) {
	resp := errorResponse(err)
	resp.Severity, resp.SeverityUnlocalized = "FATAL", "FATAL"
	c.backend.Send(resp)
	_ = c.backend.Flush()
}

func (c *conn) closeSession() {
	if c.session == nil {
		return
	}
	c.stopListening()
	ctx := context.Background()
	c.closeAllPortals()
	if c.engineTx {
		if err := c.session.Rollback(ctx); err != nil {
			c.log.Warn("gateway: rollback at disconnect failed", "err", err)
		}
		c.engineTx = false
	}
	if err := c.session.Close(); err != nil {
		c.log.Warn("gateway: closing session failed", "err", err)
	}
}

// loop reads and dispatches messages until Terminate or a broken connection.
func (c *conn) loop(ctx context.Context) {
	c.notify.ioMu.Lock()
	defer c.notify.ioMu.Unlock()
	for {
		c.awaitClient()
		msg, err := c.backend.Receive()
		c.clientSpoke()
		if err != nil {
			if msgType, ok := malformedMessage(err); ok {
				// The body was read whole, so the stream is still in step:
				// answer as PostgreSQL does (08P01, the session stays).
				if !c.malformed(ctx, msgType) {
					return
				}
				continue
			}
			if ctx.Err() == nil && !errors.Is(err, net.ErrClosed) && !isEOF(err) {
				c.log.Info("gateway: receive failed", "err", err)
			}
			return
		}
		if _, ok := msg.(*pgproto3.Terminate); ok {
			return
		}
		if !c.dispatch(ctx, msg) {
			return
		}
		if c.terminated.Load() {
			// pg_terminate_backend while a statement ran.
			c.sendTerminated()
			return
		}
	}
}

// malformedMessage recognises pgproto3's errors for a message whose body
// does not decode (e.g. a Query string with a NUL byte inside) and returns
// the message type. pgproto3 reads the whole body before it decodes it.
func malformedMessage(err error) (string, bool) {
	msg := err.Error()
	for _, marker := range [...]string{" body is invalid", " body must have length of "} {
		if i := strings.Index(msg, marker); i > 0 {
			return msg[:i], true
		}
	}
	return "", false
}

// malformed answers a malformed message with PostgreSQL's ERROR 08P01
// "invalid message format": a Query ends with ReadyForQuery, an extended
// protocol message skips to Sync. False when the connection broke.
func (c *conn) malformed(ctx context.Context, msgType string) bool {
	if c.ignoreTillSync && msgType != "Sync" {
		return true
	}
	c.fail(errcode.New(errcode.ProtocolViolation, "invalid message format"))
	if msgType == "Query" {
		c.ignoreTillSync = false
		c.endImplicit(ctx)
		c.sendReady()
	}
	return c.flush() == nil
}

func isEOF(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "connection reset"))
}

// dispatch handles one message with panic recovery; false ends the
// connection.
func (c *conn) dispatch(ctx context.Context, msg pgproto3.FrontendMessage) (keep bool) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("gateway: panic in handler", "panic", r, "message", fmt.Sprintf("%T", msg), "stack", string(debug.Stack()))
			c.clearRunning()
			c.fail(errcode.New(errcode.InternalError, "internal error: %v", r))
			if _, simple := msg.(*pgproto3.Query); simple {
				c.ignoreTillSync = false
				c.endImplicit(ctx)
				c.sendReady()
			}
			keep = c.flush() == nil
		}
	}()
	if c.ignoreTillSync {
		// After an extended-protocol error everything up to Sync is
		// dropped, a Query included, exactly as PostgreSQL does.
		if _, sync := msg.(*pgproto3.Sync); !sync {
			return true
		}
	}
	switch m := msg.(type) {
	case *pgproto3.Query:
		c.simpleQuery(ctx, m.String)
		return c.flush() == nil
	case *pgproto3.Parse:
		c.handleParse(ctx, m)
	case *pgproto3.Bind:
		c.handleBind(m)
	case *pgproto3.Describe:
		c.handleDescribe(m)
	case *pgproto3.Execute:
		c.handleExecute(ctx, m)
	case *pgproto3.Close:
		c.handleClose(m)
	case *pgproto3.Sync:
		c.ignoreTillSync = false
		c.endImplicit(ctx)
		c.sendReady()
		return c.flush() == nil
	case *pgproto3.Flush:
		return c.flush() == nil
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Left over after a failed COPY FROM: PostgreSQL drops them.
	case *pgproto3.FunctionCall:
		c.fail(errcode.New(errcode.GatewayUnsupported, "the fast-path function call interface is not supported"))
	default:
		c.fail(errcode.New(errcode.ProtocolViolation, "unexpected message %T", msg))
	}
	if c.unflushedBytes > flushBytesMax {
		return c.flush() == nil
	}
	return true
}

func (c *conn) flush() error {
	c.unflushedBytes = 0
	return c.backend.Flush()
}

// sendReady sends ReadyForQuery with the transaction status.
func (c *conn) sendReady() {
	status := byte('I')
	switch c.state {
	case txInBlock:
		status = 'T'
	case txFailed:
		status = 'E'
	}
	c.sendNotifications()
	c.idleActivity()
	c.backend.Send(&pgproto3.ReadyForQuery{TxStatus: status})
}

// statementContext returns the context for one statement, cancellable by a
// CancelRequest and bounded by statement_timeout.
func (c *conn) statementContext(ctx context.Context, query string) (context.Context, func()) {
	c.activeActivity(query)
	sctx, cancel := context.WithCancelCause(ctx)
	var stopTimer func() bool
	if d := c.settings.StatementTimeout(); d > 0 {
		timer := time.AfterFunc(d, func() { cancel(errStatementTimeout) })
		stopTimer = timer.Stop
	}
	c.cancelMu.Lock()
	c.cancelFunc = cancel
	c.cancelMu.Unlock()
	return sctx, func() {
		if stopTimer != nil {
			stopTimer()
		}
		c.clearRunning()
		cancel(nil)
	}
}

func (c *conn) clearRunning() {
	c.cancelMu.Lock()
	c.cancelFunc = nil
	c.cancelMu.Unlock()
}

// cancelRunning cancels the running statement, if any (CancelRequest).
func (c *conn) cancelRunning() {
	c.cancelMu.Lock()
	defer c.cancelMu.Unlock()
	if c.cancelFunc != nil {
		c.cancelFunc(errCanceledByUser)
	}
}

// canceledError maps a cancelled statement context to 57014.
func canceledError(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTerminated):
		return errcode.New(errcode.AdminShutdown, "terminating connection due to administrator command")
	case errors.Is(cause, errStatementTimeout):
		return errcode.New(errcode.QueryCanceled, "canceling statement due to statement timeout")
	case errors.Is(cause, errCanceledByUser):
		return errcode.New(errcode.QueryCanceled, "canceling statement due to user request")
	}
	return err
}

// fail reports err and moves the transaction state machine: a failure inside
// an explicit block makes it failed (25P02 until ROLLBACK); an implicit
// transaction is rolled back at once. In the extended protocol the rest of
// the batch up to Sync is skipped.
func (c *conn) fail(err error) {
	c.backend.Send(errorResponse(err))
	// PostgreSQL flushes every ErrorResponse at once: a client that sent
	// Flush (not Sync) after the failing message waits for it.
	_ = c.flush()
	c.ignoreTillSync = true
	c.abortTx()
}

// abortTx rolls back the engine's transaction after an error.
func (c *conn) abortTx() {
	// Portals end with their transaction; their cursors close before the
	// engine's transaction does.
	c.closeAllPortals()
	if c.state != txIdle && len(c.savepoints) > 0 {
		// Keep the engine's transaction: ROLLBACK TO SAVEPOINT resumes it.
		c.state = txFailed
		return
	}
	if c.engineTx {
		if rbErr := c.session.Rollback(context.Background()); rbErr != nil {
			c.log.Warn("gateway: rollback after error failed", "err", rbErr)
		}
		c.engineTx = false
	}
	c.closeAllPortals()
	if c.state == txInBlock {
		c.state = txFailed
	}
	if c.state == txIdle {
		c.notifyTxEnded(false) // the implicit transaction rolled back
	}
}

// ensureTx begins the engine transaction before an engine statement.
func (c *conn) ensureTx(ctx context.Context) error {
	if c.engineTx {
		return nil
	}
	opts := TxOptions{Isolation: c.txIsolation, ReadOnly: c.txReadOnly, Implicit: c.state == txIdle, Settings: c.settings}
	if err := c.session.Begin(ctx, opts); err != nil {
		return err
	}
	c.engineTx, c.engineImplicit = true, opts.Implicit
	return nil
}

// endImplicit commits an implicit transaction at the end of a Query message
// or at Sync.
func (c *conn) endImplicit(ctx context.Context) {
	if c.state != txIdle {
		return
	}
	c.closeAllPortals()
	committed := true
	if c.engineTx && c.engineImplicit {
		c.engineTx = false
		if err := c.session.Commit(ctx); err != nil {
			c.backend.Send(errorResponse(err))
			committed = false
		}
	}
	c.notifyTxEnded(committed)
	c.closeAllPortals()
	c.resetTxCharacteristics()
}

// resetTxCharacteristics loads the next transaction's defaults.
func (c *conn) resetTxCharacteristics() {
	c.txIsolation = ReadCommitted
	if v, _ := c.settings.Get("default_transaction_isolation"); v == "repeatable read" {
		c.txIsolation = RepeatableRead
	}
	v, _ := c.settings.Get("default_transaction_read_only")
	c.txReadOnly = v == "on"
}

func (c *conn) closeAllPortals() {
	for _, name := range sortedPortalNames(c.portals) {
		c.closePortal(name)
	}
}

func sortedPortalNames(m map[string]*portal) []string {
	names := make([]string, 0, len(m))
	for k := range m { //lint:maprange sorted below
		names = append(names, k)
	}
	return sortedStrings(names)
}

func (c *conn) closePortal(name string) {
	p := c.portals[name]
	if p == nil {
		return
	}
	delete(c.portals, name)
	if p.cursor != nil {
		if err := p.cursor.Close(); err != nil {
			c.log.Warn("gateway: closing cursor failed", "err", err)
		}
		p.cursor = nil
	}
}

// setSettings installs a new settings snapshot and reports changed
// reported parameters with ParameterStatus.
func (c *conn) setSettings(next *Settings) {
	for _, def := range reportedChanges(c.settings, next) {
		c.backend.Send(&pgproto3.ParameterStatus{Name: def.name, Value: next.values[strings.ToLower(def.name)]})
	}
	c.settings = next
}

// errorResponse converts any error into an ErrorResponse (ARCHITECTURE.md
// §8): SQLSTATE in code, "RS-xxxx slug" (+ detail) in detail, next steps in
// hint, position when known.
func errorResponse(err error) *pgproto3.ErrorResponse {
	e := errcode.Internal(err)
	detail := e.Code.ID + " " + e.Code.Slug
	if e.Detail != "" {
		detail += ": " + e.Detail
	}
	msg := e.Message
	if e.Cause != nil && e.Code == errcode.InternalError {
		msg += ": " + e.Cause.Error()
	}
	return &pgproto3.ErrorResponse{
		Severity: "ERROR", SeverityUnlocalized: "ERROR",
		Code: e.State(), Message: msg, Detail: detail, Hint: e.NextSteps(),
		Position: int32(e.Position),
	}
}

// noticeResponse converts a warning into a NoticeResponse.
func noticeResponse(e *errcode.Error, severity string) *pgproto3.NoticeResponse {
	r := errorResponse(e)
	r.Severity, r.SeverityUnlocalized = severity, severity
	n := pgproto3.NoticeResponse(*r)
	return &n
}
