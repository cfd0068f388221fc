package gateway

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// The extended query protocol: Parse, Bind, Describe, Execute, Close, Sync,
// Flush. After an error every message up to Sync is skipped (dispatch).

func (c *conn) handleParse(ctx context.Context, m *pgproto3.Parse) {
	pieces := splitStatements(m.Query)
	if len(pieces) > 1 {
		// PostgreSQL reports a syntax error anywhere in the text before it
		// counts the statements.
		if err := checkSyntax(m.Query, pieces, 0); err != nil {
			c.fail(err)
			return
		}
		c.fail(errcode.New(errcode.MultipleStatementsInPrepare, "cannot insert multiple commands into a prepared statement"))
		return
	}
	st := statement{kind: kindEmpty, sql: m.Query}
	if len(pieces) == 1 {
		st = classify(pieces[0].sql)
	}
	if c.state == txFailed && !st.allowedWhenFailed() {
		c.fail(abortedError())
		return
	}
	if m.Name != "" {
		if _, dup := c.stmts[m.Name]; dup {
			c.fail(errcode.New(errcode.DuplicatePreparedStatement, "prepared statement %q already exists", m.Name))
			return
		}
	}
	declared := make([]types.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		t, ok := types.FromOID(oid)
		if !ok {
			t = types.TUnknown
		}
		declared[i] = t
	}
	c.clientQuery = m.Query
	tree := st.tree
	st.tree = nil // the engine's (PrepareRequest.Parsed)
	p := &prepared{st: st, paramTypes: declared, text: m.Query, prepareTime: time.Now()}
	switch st.kind {
	case kindEngine:
		sctx, done := c.statementContext(ctx, m.Query)
		stmt, err := c.session.Prepare(sctx, PrepareRequest{SQL: st.sql, ParamTypes: declared, Settings: c.settings, Parsed: tree})
		err = canceledError(sctx, err)
		done()
		if err != nil {
			c.fail(positionInMessage(err, m.Query, pieces[0]))
			return
		}
		p.engine, p.paramTypes, p.columns = stmt, stmt.ParamTypes, stmt.Columns
	case kindExecute:
		target, err := c.executeTarget(&st)
		if err != nil {
			c.fail(err)
			return
		}
		// EXECUTE is a utility statement: PostgreSQL binds no parameters
		// to it ($n in its arguments fails when it runs).
		p.engine, p.paramTypes, p.columns = target.engine, nil, target.columns
	case kindUnsupported:
		c.fail(st.err)
		return
	default:
		p.columns = gatewayColumns(&st)
	}
	c.stmts[m.Name] = p
	c.backend.Send(&pgproto3.ParseComplete{})
}

func (c *conn) handleBind(m *pgproto3.Bind) {
	ps, ok := c.stmts[m.PreparedStatement]
	if !ok {
		c.fail(errcode.New(errcode.UnknownPreparedStatement, "prepared statement %q does not exist", m.PreparedStatement))
		return
	}
	if c.state == txFailed && !ps.st.allowedWhenFailed() {
		c.fail(abortedError())
		return
	}
	if m.DestinationPortal != "" {
		if _, dup := c.portals[m.DestinationPortal]; dup {
			c.fail(errcode.New(errcode.DuplicatePreparedStatement, "cursor %q already exists", m.DestinationPortal).WithSQLState("42P03"))
			return
		}
	} else {
		c.closePortal("")
	}
	if len(m.Parameters) != len(ps.paramTypes) {
		c.fail(errcode.New(errcode.ParameterCountMismatch, "bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(ps.paramTypes)))
		return
	}
	formatOf := func(codes []int16, i int) (int16, bool) {
		switch len(codes) {
		case 0:
			return 0, true
		case 1:
			return codes[0], true
		}
		if i < len(codes) {
			return codes[i], true
		}
		return 0, false
	}
	if n := len(m.ParameterFormatCodes); n > 1 && n != len(m.Parameters) {
		c.fail(errcode.New(errcode.ProtocolViolation, "bind message has %d parameter formats but %d parameters", n, len(m.Parameters)))
		return
	}
	params := make([]types.Datum, len(m.Parameters))
	for i, raw := range m.Parameters {
		if raw == nil {
			continue
		}
		format, _ := formatOf(m.ParameterFormatCodes, i)
		t := ps.paramTypes[i]
		var v types.Datum
		var err error
		if format == 1 {
			v, err = decodeBinary(t, raw)
		} else {
			v, err = parseText(t, string(raw), c.settings)
		}
		if err != nil {
			if e, ok := errcode.As(err); ok && format == 0 {
				// Text input errors carry PostgreSQL's SQLSTATE (22P02,
				// 22003, 22007, ...) from the type's input function.
				c.fail(e)
				return
			}
			c.fail(errcode.New(errcode.InvalidParameterEncoding, "invalid value for parameter $%d (%s): %v", i+1, t.SQLName(), err))
			return
		}
		params[i] = v
	}
	ncols := len(ps.columns)
	if n := len(m.ResultFormatCodes); n > 1 && n != ncols {
		c.fail(errcode.New(errcode.ProtocolViolation, "bind message has %d result formats but query has %d columns", n, ncols))
		return
	}
	formats := make([]int16, ncols)
	for i := range formats {
		f, _ := formatOf(m.ResultFormatCodes, i)
		if f != 0 && f != 1 {
			c.fail(errcode.New(errcode.ProtocolViolation, "unsupported format code: %d", f))
			return
		}
		formats[i] = f
	}
	c.portals[m.DestinationPortal] = &portal{stmt: ps, params: params, resultFormats: formats}
	c.backend.Send(&pgproto3.BindComplete{})
}

func (c *conn) handleDescribe(m *pgproto3.Describe) {
	switch m.ObjectType {
	case 'S':
		ps, ok := c.stmts[m.Name]
		if !ok {
			c.fail(errcode.New(errcode.UnknownPreparedStatement, "prepared statement %q does not exist", m.Name))
			return
		}
		oids := make([]uint32, len(ps.paramTypes))
		for i, t := range ps.paramTypes {
			oids[i] = t.OID()
		}
		c.backend.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		if ps.columns == nil {
			c.backend.Send(&pgproto3.NoData{})
		} else {
			c.backend.Send(rowDescription(ps.columns, make([]int16, len(ps.columns)), ps.origins()))
		}
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			c.fail(errcode.New(errcode.UnknownPortal, "portal %q does not exist", m.Name))
			return
		}
		if p.stmt.columns == nil {
			c.backend.Send(&pgproto3.NoData{})
		} else {
			c.backend.Send(rowDescription(p.stmt.columns, p.resultFormats, p.stmt.origins()))
		}
	default:
		c.fail(errcode.New(errcode.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType))
	}
}

func (c *conn) handleExecute(ctx context.Context, m *pgproto3.Execute) {
	p, ok := c.portals[m.Portal]
	if !ok {
		c.fail(errcode.New(errcode.UnknownPortal, "portal %q does not exist", m.Portal))
		return
	}
	if c.state == txFailed && !p.stmt.st.allowedWhenFailed() {
		c.fail(abortedError())
		return
	}
	if err := c.executePortal(ctx, p, int32(m.MaxRows), false); err != nil {
		c.fail(err)
	}
}

func (c *conn) handleClose(m *pgproto3.Close) {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		c.closePortal(m.Name)
	default:
		c.fail(errcode.New(errcode.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType))
		return
	}
	c.backend.Send(&pgproto3.CloseComplete{})
}
