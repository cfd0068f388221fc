package gateway

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// SQL-level prepared statements: PREPARE name [(type, ...)] AS statement,
// EXECUTE name [(arg, ...)], DEALLOCATE [PREPARE] {name | ALL}. They share
// one namespace with the extended protocol's named statements, as in
// PostgreSQL (so EXECUTE can run a statement a driver prepared with Parse,
// and DEALLOCATE ALL, which poolers send, drops both kinds). They are not
// transactional: a ROLLBACK keeps them.
//
// PREPARE's parameter types are resolved by the engine (it describes
// `SELECT NULL::t1, ...`), and EXECUTE's arguments are evaluated by it
// (`SELECT (arg1)::t1, ...`, the cast being PostgreSQL's coercion of an
// EXECUTE argument to its parameter type), then bound like Bind's values.

// sqlPrepareText finds, from the statement's tokens, the parameter type
// list and the text of the statement after AS.
func sqlPrepareText(sql string, st *statement) bool {
	toks, ok := scanTokens(sql)
	if !ok || len(toks) < 3 {
		return false
	}
	i := 2 // PREPARE name
	if toks[i].Token == pg_query.Token_ASCII_40 {
		items, next, ok := parenItems(sql, toks, i)
		if !ok {
			return false
		}
		st.prepareTypes, i = items, next
	}
	if i >= len(toks) || toks[i].Token != pg_query.Token_AS {
		return false
	}
	st.prepareQuery = strings.TrimSpace(sql[toks[i].End:])
	return st.prepareQuery != ""
}

// sqlExecuteArgs reads EXECUTE's argument list.
func sqlExecuteArgs(sql string, st *statement) bool {
	toks, ok := scanTokens(sql)
	if !ok || len(toks) < 2 {
		return false
	}
	if len(toks) > 2 && toks[2].Token == pg_query.Token_ASCII_40 {
		items, _, ok := parenItems(sql, toks, 2)
		if !ok {
			return false
		}
		st.executeArgs = items
	}
	return true
}

func scanTokens(sql string) ([]*pg_query.ScanToken, bool) {
	res, err := pg_query.Scan(sql)
	if err != nil {
		return nil, false
	}
	var toks []*pg_query.ScanToken
	for _, t := range res.Tokens {
		if t.Token != pg_query.Token_SQL_COMMENT && t.Token != pg_query.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	return toks, true
}

// parenItems splits the parenthesized, comma-separated list opening at
// toks[open] into the items' texts (commas inside nested parentheses or
// literals do not split) and returns the index after the closing ")".
func parenItems(sql string, toks []*pg_query.ScanToken, open int) ([]string, int, bool) {
	depth, start := 0, -1
	var items []string
	for i := open; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Token == pg_query.Token_ASCII_40:
			depth++
			if depth == 1 {
				start = int(t.End)
				continue
			}
		case t.Token == pg_query.Token_ASCII_41:
			depth--
			if depth == 0 {
				if item := strings.TrimSpace(sql[start:t.Start]); item != "" || len(items) > 0 {
					items = append(items, item)
				}
				return items, i + 1, true
			}
		case t.Token == pg_query.Token_ASCII_44 && depth == 1:
			items = append(items, strings.TrimSpace(sql[start:t.Start]))
			start = int(t.End)
		}
	}
	return nil, 0, false
}

// sqlPrepare runs PREPARE.
func (c *conn) sqlPrepare(ctx context.Context, st *statement) error {
	if _, dup := c.stmts[st.name]; dup {
		return errcode.New(errcode.DuplicatePreparedStatement, "prepared statement %q already exists", st.name)
	}
	var declared []types.Type
	if len(st.prepareTypes) > 0 {
		casts := make([]string, len(st.prepareTypes))
		for i, t := range st.prepareTypes {
			casts[i] = "NULL::" + t
		}
		desc, err := c.session.Prepare(ctx, PrepareRequest{SQL: "SELECT " + strings.Join(casts, ", "), Settings: c.settings})
		if err != nil {
			return err
		}
		for _, col := range desc.Columns {
			declared = append(declared, col.Type)
		}
	}
	inner := classify(st.prepareQuery)
	if inner.kind != kindEngine {
		return errcode.New(errcode.GatewayUnsupported, "PREPARE of this statement is not supported")
	}
	stmt, err := c.session.Prepare(ctx, PrepareRequest{SQL: inner.sql, ParamTypes: declared, Settings: c.settings, Parsed: inner.tree})
	inner.tree = nil // the engine's now
	if err != nil {
		return err
	}
	c.stmts[st.name] = &prepared{st: inner, engine: stmt, paramTypes: stmt.ParamTypes, columns: stmt.Columns,
		text: c.clientQuery, prepareTime: time.Now(), fromSQL: true}
	return nil
}

// executeTarget is the prepared statement EXECUTE names.
func (c *conn) executeTarget(st *statement) (*prepared, error) {
	target, ok := c.stmts[st.name]
	if !ok {
		return nil, errcode.New(errcode.UnknownPreparedStatement, "prepared statement %q does not exist", st.name)
	}
	if target.engine == nil {
		return nil, errcode.New(errcode.GatewayUnsupported, "EXECUTE of a session or transaction statement is not supported")
	}
	return target, nil
}

// executeArgs prepares the evaluation of EXECUTE's arguments as the
// parameter values of stmt: `SELECT (arg1)::t1, ...`; nil when stmt takes
// no parameters.
func (c *conn) executeArgs(ctx context.Context, st *statement, stmt *Statement) (*Statement, error) {
	if len(st.executeArgs) != len(stmt.ParamTypes) {
		return nil, errcode.New(errcode.ExecuteParameterCount, "wrong number of parameters for prepared statement %q", st.name).
			WithDetail("Expected %d parameters but got %d.", len(stmt.ParamTypes), len(st.executeArgs))
	}
	if len(st.executeArgs) == 0 {
		return nil, nil
	}
	casts := make([]string, len(st.executeArgs))
	for i, a := range st.executeArgs {
		casts[i] = "(" + a + ")::" + stmt.ParamTypes[i].SQLName()
	}
	return c.session.Prepare(ctx, PrepareRequest{SQL: "SELECT " + strings.Join(casts, ", "), Settings: c.settings})
}

// executeParams evaluates EXECUTE's arguments as the parameter values of
// stmt, inside the current transaction. EXECUTE binds no parameters of
// its own, so $n in an argument fails (42P02) as in PostgreSQL.
func (c *conn) executeParams(ctx context.Context, st *statement, stmt *Statement) ([]types.Datum, error) {
	eval, err := c.executeArgs(ctx, st, stmt)
	if err != nil || eval == nil {
		return nil, err
	}
	if len(eval.ParamTypes) > 0 {
		return nil, errcode.New(errcode.ParameterCountMismatch, "there is no parameter $1").WithSQLState("42P02")
	}
	cur, err := c.session.Execute(ctx, c.executeRequest(eval, nil))
	if err != nil {
		return nil, err
	}
	row, err := cur.Next(ctx)
	closeErr := cur.Close()
	if errors.Is(err, io.EOF) {
		return nil, errcode.New(errcode.InternalError, "internal: EXECUTE arguments evaluated to no row")
	}
	if err != nil {
		return nil, err
	}
	if closeErr != nil {
		return nil, closeErr
	}
	return []types.Datum(row), nil
}
