package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// simpleQuery runs a Query message: each statement in turn, all inside one
// implicit transaction unless BEGIN opens an explicit block, stopping at
// the first error; then ReadyForQuery.
func (c *conn) simpleQuery(ctx context.Context, sql string) {
	c.clientQuery = sql
	pieces := splitStatements(sql)
	if len(pieces) == 0 {
		c.backend.Send(&pgproto3.EmptyQueryResponse{})
	}
	if err := checkSyntax(sql, pieces, 1); err != nil {
		c.fail(err)
		pieces = nil
	}
	for _, p := range pieces {
		st := classify(p.sql)
		if !c.runSimple(ctx, &st, func(err error) error { return positionInMessage(err, sql, p) }) {
			break
		}
	}
	c.ignoreTillSync = false
	c.endImplicit(ctx)
	c.sendReady()
}

// runSimple runs one statement of a Query message; false after an error.
// inMessage moves an error's position from the statement to the message.
func (c *conn) runSimple(ctx context.Context, st *statement, inMessage func(error) error) bool {
	if c.state == txFailed && !st.allowedWhenFailed() {
		c.fail(abortedError())
		return false
	}
	tree := st.tree
	st.tree = nil // the engine's (PrepareRequest.Parsed)
	p := &portal{stmt: &prepared{st: *st}}
	if st.kind == kindEngine {
		sctx, done := c.statementContext(ctx, st.sql)
		stmt, err := c.session.Prepare(sctx, PrepareRequest{SQL: st.sql, Settings: c.settings, Parsed: tree})
		err = canceledError(sctx, err)
		done()
		if err != nil {
			c.fail(inMessage(err))
			return false
		}
		if len(stmt.ParamTypes) > 0 {
			c.fail(errcode.New(errcode.ParameterCountMismatch, "there is no parameter $1").WithSQLState("42P02"))
			return false
		}
		p.stmt.engine, p.stmt.columns = stmt, stmt.Columns
		p.justPrepared = true
	} else if st.kind == kindExecute {
		target, err := c.executeTarget(st)
		if err != nil {
			c.fail(err)
			return false
		}
		p.stmt.engine, p.stmt.columns = target.engine, target.columns
	} else {
		p.stmt.columns = gatewayColumns(st)
	}
	p.resultFormats = make([]int16, len(p.stmt.columns))
	// NB: deferred too, so that a panic in the engine still closes the
	// cursor (before dispatch's recovery rolls the transaction back); the
	// portal is in no map that abortTx would close.
	defer c.closePortalValue(p)
	if err := c.executePortal(ctx, p, 0, true); err != nil {
		c.closePortalValue(p)
		c.fail(inMessage(err))
		return false
	}
	c.closePortalValue(p)
	return true
}

func abortedError() error {
	return errcode.New(errcode.TransactionAborted, "current transaction is aborted, commands ignored until end of transaction block")
}

// closePortalValue closes an unregistered portal's cursor.
func (c *conn) closePortalValue(p *portal) {
	if p.cursor != nil {
		if err := p.cursor.Close(); err != nil {
			c.log.Warn("gateway: closing cursor failed", "err", err)
		}
		p.cursor = nil
	}
}

// gatewayColumns is the result shape of a statement the gateway answers.
func gatewayColumns(st *statement) types.Schema {
	switch st.kind {
	case kindShow:
		return types.Schema{{Name: displayName(st.name), Type: types.TText, Nullable: true}}
	case kindShowAll:
		return types.Schema{
			{Name: "name", Type: types.TText}, {Name: "setting", Type: types.TText}, {Name: "description", Type: types.TText},
		}
	}
	return nil
}

// executePortal runs (or resumes) a portal, sending at most maxRows rows
// (0 = all). In the simple protocol the RowDescription is sent here; in the
// extended protocol Describe sends it.
func (c *conn) executePortal(ctx context.Context, p *portal, maxRows int32, simple bool) error {
	st := &p.stmt.st
	if p.done {
		c.backend.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.doneTag)})
		return nil
	}
	sctx, done := c.statementContext(ctx, st.sql)
	defer done()
	switch st.kind {
	case kindEmpty:
		c.backend.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	case kindUnsupported:
		return st.err
	case kindEngine:
		if !p.started {
			if err := c.ensureTx(sctx); err != nil {
				return canceledError(sctx, err)
			}
			p.stmt.executions++
			req := c.executeRequest(p.stmt.engine, p.params)
			req.JustPrepared = p.justPrepared
			cur, err := c.session.Execute(sctx, req)
			if err != nil {
				return canceledError(sctx, err)
			}
			p.cursor, p.started = cur, true
		}
	case kindExecute:
		if !p.started {
			if err := c.ensureTx(sctx); err != nil {
				return canceledError(sctx, err)
			}
			params, err := c.executeParams(sctx, st, p.stmt.engine)
			if err != nil {
				return canceledError(sctx, err)
			}
			if target, ok := c.stmts[st.name]; ok {
				target.executions++
			}
			cur, err := c.session.Execute(sctx, c.executeRequest(p.stmt.engine, params))
			if err != nil {
				return canceledError(sctx, err)
			}
			p.cursor, p.started = cur, true
		}
	case kindShow, kindShowAll:
		if !p.started {
			rows, err := c.showRows(st)
			if err != nil {
				return err
			}
			p.rows, p.started = rows, true
		}
	case kindCopyFrom:
		return c.copyIn(sctx, st.copy)
	case kindCopyTo:
		return c.copyOut(sctx, st.copy)
	default:
		tag, err := c.runGateway(sctx, st)
		if err != nil {
			return err
		}
		c.backend.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
		return nil
	}
	if simple && p.stmt.columns != nil {
		c.backend.Send(rowDescription(p.stmt.columns, p.resultFormats, p.stmt.origins()))
	}
	return c.streamRows(sctx, p, maxRows)
}

// streamRows sends rows from the portal's cursor (or computed rows).
func (c *conn) streamRows(ctx context.Context, p *portal, maxRows int32) error {
	var sent int64
	var scratch []byte
	for maxRows <= 0 || sent < int64(maxRows) {
		var row types.Row
		if p.cursor != nil {
			r, err := p.cursor.Next(ctx)
			if errors.Is(err, io.EOF) {
				return c.completePortal(p, sent)
			}
			if err != nil {
				return canceledError(ctx, err)
			}
			row = r
		} else {
			if len(p.rows) == 0 {
				return c.completePortal(p, sent)
			}
			row, p.rows = p.rows[0], p.rows[1:]
		}
		var err error
		if scratch, err = c.sendDataRow(scratch[:0], row, p.stmt.columns, p.resultFormats); err != nil {
			return err
		}
		sent++
		if c.unflushedBytes > flushBytesMax || (p.cursor != nil && isStreaming(p.cursor)) {
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	c.backend.Send(&pgproto3.PortalSuspended{})
	return nil
}

// completePortal sends CommandComplete (and the engine's notices) for an
// exhausted portal.
func (c *conn) completePortal(p *portal, sent int64) error {
	tag := ""
	if p.cursor != nil {
		for _, n := range p.cursor.Notices() {
			c.notice(n, noticeSeverity(n))
		}
		tag = p.cursor.Tag()
		if err := p.cursor.Close(); err != nil {
			p.cursor = nil
			return err
		}
		p.cursor = nil
	}
	if tag == "" || (p.stmt.columns != nil && strings.HasPrefix(tag, "SELECT")) {
		// A resumed portal reports the rows of this Execute, as PostgreSQL.
		if p.stmt.columns != nil {
			tag = "SELECT " + strconv.FormatInt(sent, 10)
		} else if tag == "" {
			tag = "OK"
		}
	}
	if p.stmt.st.kind == kindShow || p.stmt.st.kind == kindShowAll {
		tag = "SHOW"
	}
	p.done, p.doneTag = true, tag
	c.backend.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	return nil
}

// sendDataRow encodes one row in the requested formats.
func (c *conn) sendDataRow(scratch []byte, row types.Row, cols types.Schema, formats []int16) ([]byte, error) {
	if len(row) != len(cols) {
		return scratch, errcode.New(errcode.InternalError, "internal: row has %d values for %d columns", len(row), len(cols))
	}
	bounds := make([]int, 0, 2*len(row))
	for i, v := range row {
		start := len(scratch)
		if v == nil {
			bounds = append(bounds, -1, -1)
			continue
		}
		var err error
		if formats[i] == 1 {
			scratch, err = appendBinary(scratch, cols[i].Type, v)
		} else {
			scratch, err = appendText(scratch, cols[i].Type, v, c.settings)
		}
		if err != nil {
			return scratch, errcode.Wrap(errcode.InternalError, err, "cannot encode column %q", cols[i].Name)
		}
		bounds = append(bounds, start, len(scratch))
	}
	values := make([][]byte, len(row))
	for i := range row {
		switch {
		case bounds[2*i] < 0:
			// nil: NULL on the wire.
		case bounds[2*i] == bounds[2*i+1]:
			// An empty value ('' text) must not be nil: slicing a nil
			// scratch buffer gives nil, which DataRow sends as NULL.
			values[i] = []byte{}
		default:
			values[i] = scratch[bounds[2*i]:bounds[2*i+1]]
		}
	}
	c.backend.Send(&pgproto3.DataRow{Values: values})
	c.unflushedBytes += len(scratch) + 4*len(row)
	return scratch, nil
}

// rowDescription describes columns with the given formats.
func rowDescription(cols types.Schema, formats []int16, origins []ColumnOrigin) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		fields[i] = pgproto3.FieldDescription{
			Name:         []byte(col.Name),
			DataTypeOID:  col.Type.OID(),
			DataTypeSize: col.Type.TypLen(),
			TypeModifier: col.Type.Typmod,
			Format:       formats[i],
		}
		if i < len(origins) {
			fields[i].TableOID, fields[i].TableAttributeNumber = origins[i].TableOID, uint16(origins[i].AttNum)
		}
	}
	return &pgproto3.RowDescription{Fields: fields}
}

// runGateway executes a session or transaction statement and returns its
// command tag.
func (c *conn) runGateway(ctx context.Context, st *statement) (string, error) {
	switch st.kind {
	case kindBegin:
		return st.commandTag(), c.begin(st)
	case kindCommit:
		return c.commit(ctx)
	case kindRollback:
		return st.commandTag(), c.rollback(ctx)
	case kindPrepare:
		return st.commandTag(), c.sqlPrepare(ctx, st)
	case kindListen:
		c.queueListen(listenAction{channel: st.name, listen: true})
		return st.commandTag(), nil
	case kindUnlisten:
		c.queueListen(listenAction{channel: st.name, all: st.name == ""})
		return st.commandTag(), nil
	case kindNotify:
		return st.commandTag(), c.queueNotify(st.name, st.value)
	case kindSavepoint, kindRelease, kindRollbackTo:
		return st.commandTag(), c.savepointCmd(ctx, st)
	case kindSet:
		return st.commandTag(), c.set(st)
	case kindReset:
		next, err := c.settings.reset(st.name, c.startupSettings)
		if err != nil {
			return "", err
		}
		c.setSettings(next)
		if c.state == txIdle {
			c.resetTxCharacteristics()
		}
		return st.commandTag(), nil
	case kindResetAll:
		next := c.settings.clone()
		for i := range paramDefs {
			if !paramDefs[i].readOnly {
				key := strings.ToLower(paramDefs[i].name)
				next.values[key] = c.startupSettings.values[key]
			}
		}
		c.setSettings(next)
		if c.state == txIdle {
			c.resetTxCharacteristics()
		}
		return st.commandTag(), nil
	case kindSetTransaction:
		return st.commandTag(), c.setTransaction(st)
	case kindDiscard:
		if st.discardAll {
			if c.state != txIdle {
				return "", errcode.New(errcode.TransactionInProgress, "DISCARD ALL cannot run inside a transaction block")
			}
			c.closeAllPortals()
			c.stmts = map[string]*prepared{}
			c.queueListen(listenAction{all: true})
			c.setSettings(c.startupSettings)
			c.resetTxCharacteristics()
		}
		return st.commandTag(), nil
	case kindDeallocate:
		if st.name == "" {
			c.stmts = map[string]*prepared{}
		} else {
			if _, ok := c.stmts[st.name]; !ok {
				return "", errcode.New(errcode.UnknownPreparedStatement, "prepared statement %q does not exist", st.name)
			}
			delete(c.stmts, st.name)
		}
		return st.commandTag(), nil
	}
	return "", errcode.New(errcode.InternalError, "internal: statement kind %d not handled", st.kind)
}

func (c *conn) warn(code *errcode.Code, format string, args ...any) {
	c.notice(errcode.New(code, format, args...), "WARNING")
}

// noticeSeverity is PostgreSQL's severity for an engine notice: SQLSTATE
// class 01 is a WARNING, everything else (00000 "does not exist, skipping"
// and the like) a NOTICE.
func noticeSeverity(e *errcode.Error) string {
	if strings.HasPrefix(e.State(), "01") {
		return "WARNING"
	}
	return "NOTICE"
}

// messageLevels orders client_min_messages' values.
//
//lint:immutable a constant table.
var messageLevels = map[string]int{"debug5": 0, "debug4": 1, "debug3": 2, "debug2": 3, "debug1": 4, "log": 5, "notice": 6, "warning": 7, "error": 8}

// notice sends a NoticeResponse unless client_min_messages filters it out.
func (c *conn) notice(e *errcode.Error, severity string) {
	minLevel, _ := c.settings.Get("client_min_messages")
	if messageLevels[strings.ToLower(severity)] < messageLevels[minLevel] {
		return
	}
	c.backend.Send(noticeResponse(e, severity))
}

func (c *conn) begin(st *statement) error {
	if st.tx.serializable {
		return errcode.New(errcode.SerializableNotSupported, "SERIALIZABLE isolation is not supported")
	}
	if c.state == txInBlock {
		c.warn(errcode.TransactionInProgress, "there is already a transaction in progress")
		return nil
	}
	c.resetTxCharacteristics()
	if st.tx.isolation != nil {
		c.txIsolation = *st.tx.isolation
	}
	if st.tx.readOnly != nil {
		c.txReadOnly = *st.tx.readOnly
	}
	c.state = txInBlock
	c.txSettings = c.settings
	c.localSettings = nil
	// BEGIN after statements of the same Query message turns their implicit
	// transaction into this block, as PostgreSQL does.
	c.engineImplicit = false
	return nil
}

func (c *conn) commit(ctx context.Context) (string, error) {
	switch c.state {
	case txIdle:
		c.warn(errcode.NoTransactionInProgress, "there is no transaction in progress")
		return "COMMIT", nil
	case txFailed:
		var err error
		if c.engineTx {
			// Kept open for ROLLBACK TO SAVEPOINT (abortTx).
			c.engineTx = false
			err = c.session.Rollback(ctx)
		}
		c.endBlock(true)
		return "ROLLBACK", err
	}
	var err error
	c.closeAllPortals()
	if c.engineTx {
		c.engineTx = false
		err = c.session.Commit(ctx)
	}
	c.endBlock(err != nil)
	if err != nil {
		return "", err
	}
	return "COMMIT", nil
}

func (c *conn) rollback(ctx context.Context) error {
	if c.state == txIdle {
		c.warn(errcode.NoTransactionInProgress, "there is no transaction in progress")
		return nil
	}
	c.closeAllPortals()
	if c.engineTx {
		c.engineTx = false
		if err := c.session.Rollback(ctx); err != nil {
			c.endBlock(true)
			return err
		}
	}
	c.endBlock(true)
	return nil
}

// endBlock leaves an explicit block; rolledBack restores the settings the
// block changed (SET inside a rolled-back transaction is undone, as in
// PostgreSQL).
func (c *conn) endBlock(rolledBack bool) {
	c.notifyTxEnded(!rolledBack)
	c.state = txIdle
	c.savepoints = nil
	c.closeAllPortals()
	next := c.settings
	if rolledBack && c.txSettings != nil {
		next = c.txSettings
	} else if len(c.localSettings) > 0 {
		next = c.settings.clone()
		for _, k := range sortedKeys(c.localSettings) {
			next.values[k] = c.localSettings[k]
		}
	}
	c.txSettings, c.localSettings = nil, nil
	c.setSettings(next)
	c.resetTxCharacteristics()
}

func (c *conn) set(st *statement) error {
	key := canonicalKey(st.name)
	switch key {
	case "transaction_isolation", "transaction_read_only":
		req := txRequest{}
		if key == "transaction_isolation" {
			v, err := normalizeIsolation(st.value)
			if err != nil {
				return setError(st.name, st.value, err)
			}
			iso := ReadCommitted
			if v == "repeatable read" {
				iso = RepeatableRead
			}
			req.isolation = &iso
		} else {
			v, err := normalizeBool(st.value)
			if err != nil {
				return setError(st.name, st.value, err)
			}
			ro := v == "on"
			req.readOnly = &ro
		}
		return c.setTransaction(&statement{kind: kindSetTransaction, tx: req})
	}
	if st.isLocal {
		if c.state != txInBlock {
			c.warn(errcode.NoTransactionInProgress, "SET LOCAL can only be used in transaction blocks")
			return nil
		}
		if c.localSettings == nil {
			c.localSettings = map[string]string{}
		}
		if _, seen := c.localSettings[key]; !seen {
			c.localSettings[key] = c.settings.values[key]
		}
	}
	next, err := c.settings.set(st.name, st.value)
	if err != nil {
		return err
	}
	c.setSettings(next)
	if c.state == txIdle && strings.HasPrefix(key, "default_transaction_") {
		c.resetTxCharacteristics()
	}
	return nil
}

func setError(name, value string, err error) error {
	if e, ok := errcode.As(err); ok {
		return e
	}
	return errcode.New(errcode.InvalidParameterValue, "invalid value for parameter %q: %q", name, value).WithDetail("%v", err)
}

// setTransaction handles SET TRANSACTION and SET SESSION CHARACTERISTICS.
func (c *conn) setTransaction(st *statement) error {
	if st.tx.serializable {
		return errcode.New(errcode.SerializableNotSupported, "SERIALIZABLE isolation is not supported")
	}
	if st.sessionCharacteristics {
		next := c.settings.clone()
		if st.tx.isolation != nil {
			next.values["default_transaction_isolation"] = st.tx.isolation.String()
		}
		if st.tx.readOnly != nil {
			next.values["default_transaction_read_only"] = map[bool]string{true: "on", false: "off"}[*st.tx.readOnly]
		}
		c.setSettings(next)
		if c.state == txIdle {
			c.resetTxCharacteristics()
		}
		return nil
	}
	if c.state != txInBlock {
		c.warn(errcode.NoTransactionInProgress, "SET TRANSACTION can only be used in transaction blocks")
		return nil
	}
	if c.engineTx && st.tx.isolation != nil && *st.tx.isolation != c.txIsolation {
		return errcode.New(errcode.TransactionInProgress, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
	}
	if st.tx.isolation != nil {
		c.txIsolation = *st.tx.isolation
	}
	if st.tx.readOnly != nil {
		if c.engineTx && !*st.tx.readOnly && c.txReadOnly {
			return errcode.New(errcode.ReadOnlyTransaction, "transaction read-write mode must be set before any query")
		}
		c.txReadOnly = *st.tx.readOnly
	}
	return nil
}

// showRows answers SHOW name / SHOW ALL.
func (c *conn) showRows(st *statement) ([]types.Row, error) {
	if st.kind == kindShowAll {
		all := c.settings.All()
		rows := make([]types.Row, 0, len(all))
		for _, r := range all {
			rows = append(rows, types.Row{r.Name, c.showValue(r.Name, r.Setting), r.ShortDesc})
		}
		return rows, nil
	}
	v, ok := c.settings.Get(st.name)
	if !ok {
		return nil, errcode.New(errcode.UnknownParameter, "unrecognized configuration parameter %q", st.name)
	}
	return []types.Row{{c.showValue(st.name, v)}}, nil
}

// showValue reports the transaction-scoped parameters from the state
// machine rather than the stored defaults.
func (c *conn) showValue(name, stored string) string {
	switch canonicalKey(name) {
	case "transaction_isolation":
		return c.txIsolation.String()
	case "transaction_read_only":
		if c.txReadOnly {
			return "on"
		}
		return "off"
	case "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout":
		return formatDurationMillis(stored)
	}
	return stored
}

// formatDurationMillis shows milliseconds as PostgreSQL does ("0", "5s").
func formatDurationMillis(ms string) string {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n == 0 {
		return ms
	}
	switch {
	case n%86400000 == 0:
		return fmt.Sprintf("%dd", n/86400000)
	case n%3600000 == 0:
		return fmt.Sprintf("%dh", n/3600000)
	case n%60000 == 0:
		return fmt.Sprintf("%dmin", n/60000)
	case n%1000 == 0:
		return fmt.Sprintf("%ds", n/1000)
	}
	return fmt.Sprintf("%dms", n)
}
