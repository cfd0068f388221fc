package gateway

import (
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// stmtKind says who answers a statement: the gateway itself (session and
// transaction control, COPY framing) or the engine.
type stmtKind uint8

const (
	kindEngine stmtKind = iota
	kindEmpty
	kindBegin
	kindCommit
	kindRollback
	kindSavepoint
	kindRelease
	kindRollbackTo
	kindSet
	kindReset
	kindResetAll
	kindSetTransaction // SET TRANSACTION / SET SESSION CHARACTERISTICS
	kindShow
	kindShowAll
	kindDiscard
	kindDeallocate
	kindPrepare // SQL PREPARE
	kindExecute // SQL EXECUTE
	kindCopyFrom
	kindCopyTo
	kindListen
	kindUnlisten
	kindNotify
	kindUnsupported
)

// statement is one classified SQL statement.
type statement struct {
	kind stmtKind
	sql  string
	// Transaction options for BEGIN / SET TRANSACTION.
	tx txRequest
	// sessionCharacteristics marks SET SESSION CHARACTERISTICS (changes the
	// defaults) as opposed to SET TRANSACTION (changes the current one).
	sessionCharacteristics bool
	// SET/SHOW/RESET/DEALLOCATE: parameter or statement name, value.
	name, value string
	setDefault  bool
	isLocal     bool
	discardAll  bool
	// PREPARE's statement text and parameter type names; EXECUTE's
	// argument expressions (prepare.go).
	prepareQuery string
	prepareTypes []string
	executeArgs  []string
	// copy is the parsed COPY statement.
	copy *copySpec
	// err is the error to report (kindUnsupported, bad COPY).
	err *errcode.Error
	// tree is the statement's parse, handed to the engine's Prepare
	// (PrepareRequest.Parsed); nil when classify did not parse it.
	tree *parse.Tree
}

// txRequest is what BEGIN / SET TRANSACTION asked for; nil fields were not
// mentioned.
type txRequest struct {
	isolation *Isolation
	readOnly  *bool
	// serializable records a request for SERIALIZABLE (rejected, RS-2003).
	serializable bool
}

// piece is one statement of a Query or Parse message: its text (white
// space trimmed) and its byte offset in the message, so that error
// positions can be reported in the whole message as PostgreSQL does.
type piece struct {
	sql    string
	offset int
}

// splitStatements splits a Query message into statements. Pieces that hold
// only comments or whitespace are dropped. If the scanner cannot split the
// text (e.g. an unterminated quote) the whole text is one statement, and the
// engine reports the syntax error.
func splitStatements(sql string) []piece {
	if p, ok := singleStatement(sql); ok {
		return p
	}
	return splitScanned(sql)
}

// singleStatement is splitStatements without the scanner for the common
// message: one statement with no comment anywhere and no ';', which the
// scanner would return whole (trimmed) either way, or with one ';' at the
// end after text the scanner surely reads without error (so that the ';'
// is a token and not inside an unterminated literal).
func singleStatement(sql string) ([]piece, bool) {
	if strings.Contains(sql, "--") || strings.Contains(sql, "/*") {
		return nil, false
	}
	end := len(sql)
	if i := strings.IndexByte(sql, ';'); i >= 0 {
		if strings.Trim(sql[i+1:], " \t\r\n\f\v") != "" || !plainTokens(sql[:i]) {
			return nil, false
		}
		end = i
	}
	if strings.TrimSpace(sql[:end]) == "" {
		if end < len(sql) {
			return nil, false
		}
		return nil, true
	}
	return []piece{trimmedPiece(sql, 0, end)}, true
}

// plainTokens reports whether text is ASCII without backslashes, dollar
// signs or double quotes, with its single quotes closed and no number
// running into a letter: text that pg_query's scanner reads without an
// error whatever it means.
func plainTokens(text string) bool {
	inQuote := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= utf8.RuneSelf || c == '\\' || c == '$' || c == '"':
			return false
		case c == '\'':
			inQuote = !inQuote
		case inQuote:
		case c >= '0' && c <= '9' && (i == 0 || !identChar(text[i-1])):
			// A number: junk after it ("1abc", "0x1") is a scanner error.
			j := i
			for j < len(text) && (text[j] >= '0' && text[j] <= '9' || text[j] == '.' || text[j] == '_') {
				j++
			}
			if j < len(text) && identChar(text[j]) {
				return false
			}
			i = j - 1
		}
	}
	return !inQuote
}

// identChar reports an ASCII character that continues an identifier.
func identChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// splitScanned is splitStatements by pg_query's scanner.
func splitScanned(sql string) []piece {
	pieces, err := pg_query.SplitWithScanner(sql, true)
	if err != nil {
		if strings.TrimSpace(sql) == "" {
			return nil
		}
		return []piece{trimmedPiece(sql, 0, len(sql))}
	}
	// NB: pg_query's split drops every statement that does not start with
	// a keyword it knows ("FOO", "SELEC 1"), so `FOO; SELECT 1` would run
	// only the SELECT. Locate each piece and require that what lies between
	// them is only separators and comments; otherwise split by the tokens.
	out := make([]piece, 0, len(pieces))
	at := 0
	for _, p := range pieces {
		i := strings.Index(sql[at:], p)
		if i < 0 || !onlySeparators(sql[at:at+i]) {
			return splitByTokens(sql)
		}
		if !onlyComments(p) {
			out = append(out, piece{sql: p, offset: at + i})
		}
		at += i + len(p)
	}
	if !onlySeparators(sql[at:]) {
		return splitByTokens(sql)
	}
	return out
}

// onlySeparators reports whether text between statements holds nothing
// but white space, semicolons and comments.
func onlySeparators(text string) bool {
	if strings.Trim(text, " \t\r\n\f\v;") == "" {
		return true
	}
	return onlyComments(text)
}

// splitByTokens splits sql at every ';' token (quotes, dollar quotes and
// comments hide semicolons), keeping every piece that has a token besides
// comments.
func splitByTokens(sql string) []piece {
	res, err := pg_query.Scan(sql)
	if err != nil {
		return []piece{trimmedPiece(sql, 0, len(sql))}
	}
	var out []piece
	start, hasTokens := 0, false
	for _, tok := range res.Tokens {
		switch tok.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
		case pg_query.Token_ASCII_59:
			if hasTokens {
				out = append(out, trimmedPiece(sql, start, int(tok.Start)))
			}
			start, hasTokens = int(tok.End), false
		default:
			hasTokens = true
		}
	}
	if hasTokens {
		out = append(out, trimmedPiece(sql, start, len(sql)))
	}
	return out
}

// trimmedPiece is sql[start:end] without surrounding white space.
func trimmedPiece(sql string, start, end int) piece {
	text := sql[start:end]
	trimmed := strings.TrimLeft(text, " \t\r\n\f\v")
	return piece{sql: strings.TrimRight(trimmed, " \t\r\n\f\v"), offset: start + len(text) - len(trimmed)}
}

// onlyComments reports whether text has no tokens besides comments.
func onlyComments(text string) bool {
	if strings.TrimSpace(text) == "" {
		return true
	}
	if !strings.Contains(text, "--") && !strings.Contains(text, "/*") {
		// No comment can start: only ';' and white space make no token.
		return strings.Trim(text, " \t\r\n\f\v;") == ""
	}
	return onlyCommentsScanned(text)
}

// onlyCommentsScanned is onlyComments by pg_query's scanner.
func onlyCommentsScanned(text string) bool {
	res, err := pg_query.Scan(text)
	if err != nil {
		return false
	}
	for _, tok := range res.Tokens {
		if tok.Token != pg_query.Token_SQL_COMMENT && tok.Token != pg_query.Token_C_COMMENT && tok.Token != pg_query.Token_ASCII_59 {
			return false
		}
	}
	return true
}

// checkSyntax parses pieces[from:] of message sql and returns the first
// syntax error (42601, 54001, ...) with its position in the whole message.
// PostgreSQL parses a whole Query message before it runs any of it, so
// `SELECT 1; FOO` runs nothing; the gateway runs statements one by one, so
// it checks the later ones first (the first is parsed by Prepare before
// anything runs).
func checkSyntax(sql string, pieces []piece, from int) error {
	for i := from; i < len(pieces); i++ {
		p := pieces[i]
		text := p.sql
		if parseable, _, ok := copyOfExtension(text); ok {
			text = parseable
		}
		if _, err := parse.Parse(text); err != nil {
			return positionInMessage(err, sql, p)
		}
	}
	return nil
}

// positionInMessage moves err's position (relative to piece p) to the whole
// message sql, as PostgreSQL reports it.
func positionInMessage(err error, sql string, p piece) error {
	e, ok := errcode.As(err)
	if !ok || e.Position == 0 || p.offset == 0 {
		return err
	}
	moved := *e
	moved.Position = parse.CharPosition(sql, p.offset) - 1 + e.Position
	return &moved
}

// plainDML reports whether sql starts (after white space) with a keyword
// no gateway-answered statement starts with: INSERT, UPDATE, DELETE or
// SELECT, followed by white space.
func plainDML(sql string) bool {
	s := strings.TrimLeft(sql, " \t\r\n")
	for _, kw := range [...]string{"insert", "update", "delete", "select"} {
		if len(s) > len(kw) && strings.EqualFold(s[:len(kw)], kw) {
			switch s[len(kw)] {
			case ' ', '\t', '\r', '\n':
				return true
			}
		}
	}
	return false
}

// classify parses one statement and decides who answers it. Statements
// PostgreSQL's grammar does not know (RockStream extensions) and all
// ordinary SQL go to the engine unchanged.
func classify(sql string) statement {
	st := statement{kind: kindEngine, sql: sql}
	if plainDML(sql) {
		// Nothing below applies to it, and scanning and parsing a large
		// multi-row INSERT here (the engine parses it again) cost as much
		// as executing it.
		return st
	}
	if kind, ok := transactionKeywords(sql); ok {
		// BEGIN and COMMIT of every explicit transaction: no parse.
		return statement{kind: kind, sql: sql}
	}
	return classifyParsed(sql)
}

// transactionWords are the transaction statements of keywords alone, by
// their words lower-cased and joined by one space; classifyParsed gives
// them these kinds and nothing else.
//
//lint:immutable a constant table.
var transactionWords = map[string]stmtKind{
	"begin": kindBegin, "begin transaction": kindBegin, "begin work": kindBegin, "start transaction": kindBegin,
	"commit": kindCommit, "commit transaction": kindCommit, "commit work": kindCommit,
	"end": kindCommit, "end transaction": kindCommit, "end work": kindCommit,
	"rollback": kindRollback, "rollback transaction": kindRollback, "rollback work": kindRollback,
	"abort": kindRollback, "abort transaction": kindRollback, "abort work": kindRollback,
}

// transactionKeywords is the kind of a statement of transactionWords.
func transactionKeywords(sql string) (stmtKind, bool) {
	if len(sql) > 32 {
		return 0, false
	}
	for i := 0; i < len(sql); i++ {
		if sql[i] >= utf8.RuneSelf {
			// ToLower maps some letters outside ASCII into it (K, U+212A).
			return 0, false
		}
	}
	words := strings.FieldsFunc(sql, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	})
	kind, ok := transactionWords[strings.ToLower(strings.Join(words, " "))]
	return kind, ok
}

// classifyParsed is classify by parsing the statement.
func classifyParsed(sql string) statement {
	st := statement{kind: kindEngine, sql: sql}
	if onlyComments(sql) {
		st.kind = kindEmpty
		return st
	}
	// COPY (<RockStream statement>) TO STDOUT, e.g. psql's way to stream a
	// SUBSCRIBE: PostgreSQL's grammar cannot parse the inner statement, so
	// parse the COPY around a placeholder and keep the inner text.
	parseable, inner, isCopyOfExtension := copyOfExtension(sql)
	tree, err := parse.PGParse(parseable)
	if err != nil || len(tree.Stmts) != 1 {
		return st
	}
	st = classifyTree(sql, tree, isCopyOfExtension, inner)
	if st.kind == kindEngine && !isCopyOfExtension {
		// The engine parses the same text: hand it the tree.
		st.tree = &parse.Tree{Text: sql, Result: tree}
	}
	return st
}

// classifyTree is classifyParsed of the statement sql parsed as tree (of
// the COPY around a placeholder for inner when isCopyOfExtension).
func classifyTree(sql string, tree *pg_query.ParseResult, isCopyOfExtension bool, inner string) statement {
	st := statement{kind: kindEngine, sql: sql}
	node := tree.Stmts[0].Stmt
	if isCopyOfExtension && node.GetCopyStmt() != nil {
		classifyCopy(node.GetCopyStmt(), tree.Version, &st)
		if st.copy != nil {
			st.copy.query = inner
		}
		return st
	}
	switch {
	case node.GetTransactionStmt() != nil:
		classifyTransaction(node.GetTransactionStmt(), &st)
	case node.GetVariableSetStmt() != nil:
		classifySet(node.GetVariableSetStmt(), &st)
	case node.GetVariableShowStmt() != nil:
		name := node.GetVariableShowStmt().Name
		_, known := paramIndex[canonicalKey(name)]
		switch {
		case strings.EqualFold(name, "all"):
			st.kind = kindShowAll
		case known || strings.Contains(name, "."):
			st.kind, st.name = kindShow, name
		default:
			// Not a session parameter: the engine may know it (RockStream's
			// own SHOW commands) or report 42704 itself.
		}
	case node.GetDiscardStmt() != nil:
		st.kind = kindDiscard
		st.discardAll = node.GetDiscardStmt().Target == pg_query.DiscardMode_DISCARD_ALL
	case node.GetDeallocateStmt() != nil:
		st.kind, st.name = kindDeallocate, node.GetDeallocateStmt().Name
	case node.GetCopyStmt() != nil:
		classifyCopy(node.GetCopyStmt(), tree.Version, &st)
	case node.GetListenStmt() != nil:
		st.kind, st.name = kindListen, node.GetListenStmt().Conditionname
	case node.GetUnlistenStmt() != nil:
		st.kind, st.name = kindUnlisten, node.GetUnlistenStmt().Conditionname
	case node.GetNotifyStmt() != nil:
		st.kind, st.name, st.value = kindNotify, node.GetNotifyStmt().Conditionname, node.GetNotifyStmt().Payload
	case node.GetPrepareStmt() != nil:
		st.kind, st.name = kindPrepare, node.GetPrepareStmt().Name
		if !sqlPrepareText(sql, &st) {
			st.kind = kindUnsupported
			st.err = errcode.New(errcode.GatewayUnsupported, "cannot read this PREPARE statement")
		}
	case node.GetExecuteStmt() != nil:
		st.kind, st.name = kindExecute, node.GetExecuteStmt().Name
		if !sqlExecuteArgs(sql, &st) {
			st.kind = kindUnsupported
			st.err = errcode.New(errcode.GatewayUnsupported, "cannot read this EXECUTE statement")
		}
	}
	return st
}

func classifyTransaction(ts *pg_query.TransactionStmt, st *statement) {
	switch ts.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		st.kind = kindBegin
		st.tx = transactionOptions(ts.Options)
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		st.kind = kindCommit
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		st.kind = kindRollback
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		st.kind, st.name = kindSavepoint, ts.SavepointName
	case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
		st.kind, st.name = kindRelease, ts.SavepointName
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		st.kind, st.name = kindRollbackTo, ts.SavepointName
	default:
		st.kind = kindUnsupported
		st.err = errcode.New(errcode.GatewayUnsupported, "two-phase commit is not supported")
	}
	if ts.Chain {
		st.kind = kindUnsupported
		st.err = errcode.New(errcode.GatewayUnsupported, "COMMIT/ROLLBACK AND CHAIN is not supported")
	}
}

// transactionOptions reads BEGIN/SET TRANSACTION's mode list.
func transactionOptions(options []*pg_query.Node) txRequest {
	var req txRequest
	for _, o := range options {
		def := o.GetDefElem()
		if def == nil {
			continue
		}
		switch def.Defname {
		case "transaction_isolation":
			switch strings.ToLower(constString(def.Arg)) {
			case "serializable":
				req.serializable = true
			case "repeatable read":
				iso := RepeatableRead
				req.isolation = &iso
			default: // read committed, read uncommitted (PostgreSQL maps it to read committed)
				iso := ReadCommitted
				req.isolation = &iso
			}
		case "transaction_read_only":
			ro := constString(def.Arg) == "1"
			req.readOnly = &ro
		}
	}
	return req
}

// constString renders an A_Const (or a cast of one) as SET would see it.
func constString(n *pg_query.Node) string {
	if n == nil {
		return ""
	}
	if tc := n.GetTypeCast(); tc != nil {
		return constString(tc.Arg)
	}
	switch {
	case n.GetString_() != nil:
		return n.GetString_().Sval
	case n.GetInteger() != nil:
		return strconv.FormatInt(int64(n.GetInteger().Ival), 10)
	case n.GetBoolean() != nil:
		if n.GetBoolean().Boolval {
			return "true"
		}
		return "false"
	case n.GetFloat() != nil:
		return n.GetFloat().Fval
	}
	c := n.GetAConst()
	if c == nil {
		return ""
	}
	switch {
	case c.GetSval() != nil:
		return c.GetSval().Sval
	case c.GetIval() != nil:
		return strconv.FormatInt(int64(c.GetIval().Ival), 10)
	case c.GetFval() != nil:
		return c.GetFval().Fval
	case c.GetBoolval() != nil:
		if c.GetBoolval().Boolval {
			return "on"
		}
		return "off"
	}
	return ""
}

func classifySet(vs *pg_query.VariableSetStmt, st *statement) {
	st.isLocal = vs.IsLocal
	switch vs.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		st.kind, st.name = kindSet, vs.Name
		parts := make([]string, 0, len(vs.Args))
		for _, a := range vs.Args {
			v := constString(a)
			if iv, ok := intervalZoneArg(vs.Name, a); ok {
				v = iv
			}
			if strings.EqualFold(vs.Name, "search_path") && needsIdentQuote(v) {
				v = `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
			}
			parts = append(parts, v)
		}
		st.value = strings.Join(parts, ", ")
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		st.kind, st.name = kindReset, vs.Name
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		st.kind = kindResetAll
	case pg_query.VariableSetKind_VAR_SET_MULTI:
		st.kind = kindSetTransaction
		st.sessionCharacteristics = vs.Name == "SESSION CHARACTERISTICS"
		st.tx = transactionOptions(vs.Args)
	default:
		st.kind = kindUnsupported
		st.err = errcode.New(errcode.GatewayUnsupported, "SET ... FROM CURRENT is not supported")
	}
}

// intervalZoneArg spells SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE as
// PostgreSQL hands it to the TimeZone check ("INTERVAL '+05:30' hour to
// minute"): an offset east of Greenwich, unlike the string '+05:30'.
func intervalZoneArg(name string, n *pg_query.Node) (string, bool) {
	tc := n.GetTypeCast()
	if !strings.EqualFold(name, "timezone") || tc == nil || tc.TypeName == nil || len(tc.TypeName.Names) == 0 {
		return "", false
	}
	if last := tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_(); last == nil || last.Sval != "interval" {
		return "", false
	}
	v := "INTERVAL '" + strings.ReplaceAll(constString(tc.Arg), "'", "''") + "'"
	if len(tc.TypeName.Typmods) > 0 {
		mask, err := strconv.Atoi(constString(tc.TypeName.Typmods[0]))
		if err == nil && mask != types.IntervalFullRange {
			if tm, ok := types.IntervalTypmod(int64(mask), types.IntervalFullPrecision); ok {
				v += types.IntervalTypmodSuffix(tm)
			}
		}
	}
	return v, true
}

// needsIdentQuote reports whether an identifier must be double-quoted to
// survive PostgreSQL's list parsing (as "$user" is).
func needsIdentQuote(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || (i > 0 && (c >= '0' && c <= '9' || c == '$'))) {
			return true
		}
	}
	return false
}

// commandTag is the CommandComplete tag of a gateway-answered statement.
func (st *statement) commandTag() string {
	switch st.kind {
	case kindBegin:
		return "BEGIN"
	case kindCommit:
		return "COMMIT"
	case kindRollback, kindRollbackTo:
		return "ROLLBACK"
	case kindSavepoint:
		return "SAVEPOINT"
	case kindRelease:
		return "RELEASE"
	case kindSet, kindSetTransaction:
		return "SET"
	case kindReset, kindResetAll:
		return "RESET"
	case kindShow, kindShowAll:
		return "SHOW"
	case kindDiscard:
		if st.discardAll {
			return "DISCARD ALL"
		}
		return "DISCARD"
	case kindPrepare:
		return "PREPARE"
	case kindListen:
		return "LISTEN"
	case kindUnlisten:
		return "UNLISTEN"
	case kindNotify:
		return "NOTIFY"
	case kindDeallocate:
		if st.name == "" {
			return "DEALLOCATE ALL"
		}
		return "DEALLOCATE"
	}
	return ""
}

// allowedWhenFailed reports statements PostgreSQL runs in a failed
// transaction block (everything else gets 25P02).
func (st *statement) allowedWhenFailed() bool {
	return st.kind == kindCommit || st.kind == kindRollback || st.kind == kindRollbackTo || st.kind == kindEmpty
}

// copyOfExtension recognises `COPY (SUBSCRIBE ...) TO ...` (statements only
// RockStream's parser knows, inside COPY) and returns the COPY with the
// inner statement replaced by a placeholder PostgreSQL can parse, plus the
// inner text. For anything else it returns sql unchanged and ok = false.
func copyOfExtension(sql string) (parseable, inner string, ok bool) {
	trimmed := strings.TrimLeft(sql, " \t\r\n")
	if len(trimmed) < 5 || !strings.EqualFold(trimmed[:4], "copy") {
		return sql, "", false
	}
	rest := strings.TrimLeft(trimmed[4:], " \t\r\n")
	if !strings.HasPrefix(rest, "(") {
		return sql, "", false
	}
	depth, quote := 0, byte(0)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				body := strings.TrimSpace(rest[1:i])
				words := strings.Fields(body)
				if len(words) == 0 || !strings.EqualFold(words[0], "subscribe") {
					return sql, "", false
				}
				return "COPY (SELECT 1) " + rest[i+1:], body, true
			}
		}
	}
	return sql, "", false
}
