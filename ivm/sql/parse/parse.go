// Package parse turns SQL text into statements: standard PostgreSQL
// statements parsed by pg_query (PostgreSQL's own grammar, via cgo) and the
// RockStream statements PostgreSQL cannot parse, recognised by a small front
// parser that hands any embedded standard SQL to pg_query.
//
// Walkthrough:
//
//	stmts, err := parse.Parse("CREATE SOURCE s FROM GENERATE ROWS (id BIGINT GENERATED); SELECT 1")
//	// stmts[0] is *parse.CreateSource, stmts[1] is *parse.PG (a pg_query tree).
//
// Errors are *errcode.Error with SQLSTATE 42601 and PostgreSQL's message
// (`syntax error at or near "x"`) and a 1-based character Position in the
// whole input, like PostgreSQL's ErrorResponse P field.
package parse

import (
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"github.com/rockstream/rockstream/errcode"
)

// Statement is one parsed statement.
type Statement interface {
	// Text is the statement's own source text (without the trailing ';').
	Text() string
}

// PG is a standard PostgreSQL statement.
type PG struct {
	// Stmt is pg_query's tree; node locations are byte offsets into SQL.
	Stmt *pg_query.Node
	// SQL is the statement's text as handed to pg_query.
	SQL string
	// Offset is the byte offset of SQL inside the whole parsed input.
	Offset int
}

// Text implements Statement.
func (p *PG) Text() string { return p.SQL }

// QualifiedName is a possibly qualified object name, folded like PostgreSQL
// folds identifiers (unquoted lower-cased, quoted kept).
type QualifiedName []string

func (q QualifiedName) String() string { return strings.Join(q, ".") }

// Last is the object's own name (the last part).
func (q QualifiedName) Last() string {
	if len(q) == 0 {
		return ""
	}
	return q[len(q)-1]
}

// GeneratorKind is how a generated source column gets its values.
type GeneratorKind uint8

// Generator kinds (spec §13.5.0).
const (
	// GenSequence is `GENERATED`: 1, 2, 3, ... per source.
	GenSequence GeneratorKind = iota + 1
	// GenUniform is `UNIFORM(low, high)`: uniformly drawn, inclusive.
	GenUniform
	// GenPick is `PICK(v1, v2, ...)`: one of the listed values.
	GenPick
)

// Literal is a literal argument of a generator: its text and whether it
// was a quoted string.
type Literal struct {
	Text     string
	IsString bool
}

// GenColumn is one column of CREATE SOURCE ... FROM GENERATE ROWS.
type GenColumn struct {
	Name string
	// TypeSQL is the column type as written (e.g. "DECIMAL(10,2)").
	TypeSQL   string
	Generator GeneratorKind
	// Args are UNIFORM's bounds or PICK's values.
	Args []Literal
}

// CreateSource is `CREATE SOURCE name FROM GENERATE ROWS [AS] (cols)
// [RATE = n PER SECOND]`.
type CreateSource struct {
	SQL     string
	Name    QualifiedName
	Columns []GenColumn
	// RatePerSecond is the RATE clause; 0 when omitted.
	RatePerSecond int64
	// Nexmark is set for CREATE SOURCE name FROM NEXMARK [( key = literal,
	// ... )]: the options as written (possibly none).
	Nexmark []SourceOption
	// Postgres is set for CREATE SOURCE name FROM POSTGRES ( key =
	// literal, ... ): change data capture from a PostgreSQL publication.
	Postgres []SourceOption
	// Kafka is set for CREATE SOURCE name [(columns)] FROM KAFKA ( key =
	// literal, ... ): records of a Kafka topic; Columns then carry no
	// generators.
	Kafka []SourceOption
}

// SourceOption is one `key = literal` option of a source.
type SourceOption struct {
	Key   string
	Value Literal
}

// Text implements Statement.
func (c *CreateSource) Text() string { return c.SQL }

// DropSource is `DROP SOURCE [IF EXISTS] name [, ...] [CASCADE | RESTRICT]`.
type DropSource struct {
	SQL      string
	Names    []QualifiedName
	IfExists bool
	Cascade  bool
	// Sink marks DROP SINK [IF EXISTS] name [, ...] (same grammar).
	Sink bool
}

// CreateSink is `CREATE SINK name FROM view INTO KAFKA | POSTGRES ( key =
// literal, ... )`: a materialized view's changes written to a Kafka topic
// (Kafka set) or a PostgreSQL table (Postgres set).
type CreateSink struct {
	SQL      string
	Name     QualifiedName
	From     QualifiedName
	Kafka    []SourceOption
	Postgres []SourceOption
}

// Text implements Statement.
func (c *CreateSink) Text() string { return c.SQL }

// Text implements Statement.
func (d *DropSource) Text() string { return d.SQL }

// Subscribe is `SUBSCRIBE [TO] view [WITH (SNAPSHOT)] [AS OF NOW WITH
// SNAPSHOT] [AS OF EPOCH n]`.
type Subscribe struct {
	SQL      string
	Name     QualifiedName
	Snapshot bool
	// AsOfEpoch is the epoch to resume from; -1 when not given.
	AsOfEpoch int64
}

// Text implements Statement.
func (s *Subscribe) Text() string { return s.SQL }

// ExplainIncremental is `EXPLAIN [ANALYZE | (ANALYZE)] INCREMENTAL
// [VERBOSE] view-or-query`. Exactly one of Name and Query is set.
type ExplainIncremental struct {
	SQL     string
	Verbose bool
	// Analyze asks for the running view's operator statistics.
	Analyze bool
	Name    QualifiedName
	Query   *PG
}

// Text implements Statement.
func (e *ExplainIncremental) Text() string { return e.SQL }

// ShowViewStatus is `SHOW VIEW STATUS [name]`; Name is nil for all views.
type ShowViewStatus struct {
	SQL  string
	Name QualifiedName
}

// Text implements Statement.
func (s *ShowViewStatus) Text() string { return s.SQL }

// RecompileView is `ALTER MATERIALIZED VIEW name RECOMPILE`: the view is
// compiled again with today's definitions of the inline views it reads
// and rebuilt from its inputs.
type RecompileView struct {
	SQL  string
	Name QualifiedName
}

// Text implements Statement.
func (r *RecompileView) Text() string { return r.SQL }

// CharPosition converts a byte offset in s to PostgreSQL's 1-based
// character position.
func CharPosition(s string, byteOffset int) int {
	if byteOffset > len(s) {
		byteOffset = len(s)
	}
	if byteOffset < 0 {
		byteOffset = 0
	}
	return utf8.RuneCountInString(s[:byteOffset]) + 1
}

// SyntaxError builds PostgreSQL's syntax error at byte offset in src; near
// is the offending token's text ("" means end of input).
func SyntaxError(src string, offset int, near string) *errcode.Error {
	if near == "" {
		return errcode.New(errcode.SQLSyntaxError, "syntax error at end of input").WithPosition(CharPosition(src, offset))
	}
	return errcode.New(errcode.SQLSyntaxError, "syntax error at or near \"%s\"", near).WithPosition(CharPosition(src, offset))
}

// Tree is pg_query's parse of Text, as PGParse returned it. A caller that
// already parsed a statement (the gateway, to classify it) hands it on so
// that the statement is parsed once: ParseReusing uses Result for the
// statement whose text is exactly Text instead of calling pg_query again.
// The receiver owns Result afterwards.
type Tree struct {
	Text   string
	Result *pg_query.ParseResult
}

// Parse parses a script of one or more ';'-separated statements.
func Parse(src string) ([]Statement, error) {
	return ParseReusing(src, nil)
}

// ParseReusing is Parse, taking the pg_query tree of a statement whose
// text is tree.Text from tree (nil: none) instead of parsing it again.
// The answer is Parse's: pg_query's parse of a text is always the same,
// and every check Parse makes before pg_query still runs.
func ParseReusing(src string, tree *Tree) ([]Statement, error) {
	if i := strings.IndexByte(src, 0); i >= 0 {
		return nil, errcode.New(errcode.SQLSyntaxError, "invalid message format: query contains a NUL byte").WithSQLState("08P01").WithPosition(CharPosition(src, i))
	}
	if !utf8.ValidString(src) {
		return nil, errcode.New(errcode.SQLSyntaxError, "invalid byte sequence for encoding \"UTF8\"").WithSQLState("22021")
	}
	toks, lerr := tokenizePrefix(src)
	// The depth guard runs on the whole input before any of it reaches
	// pg_query (statements are checked one by one: ';' resets it).
	if err := checkNesting(toks); err != nil {
		return nil, err
	}
	if lerr != nil {
		// Let PostgreSQL's lexer report unterminated literals exactly as
		// PostgreSQL would.
		return parsePG(src, 0, src, tree)
	}
	var out []Statement
	start := 0 // index of the first token of the current statement
	for i, t := range toks {
		if t.Kind != tokEOF && !(t.Kind == tokPunct && t.Text == ";") {
			continue
		}
		if i > start {
			stmts, err := parseOne(src, toks[start:i], toks[i], tree)
			if err != nil {
				return nil, err
			}
			out = append(out, stmts...)
		}
		start = i + 1
	}
	return out, nil
}

// ParseOne parses exactly one statement.
func ParseOne(src string) (Statement, error) {
	stmts, err := Parse(src)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, errcode.New(errcode.SQLSyntaxError, "expected exactly one statement, got %d", len(stmts))
	}
	return stmts[0], nil
}

// parseOne parses the statement made of toks; end is the ';' or EOF token
// that follows it.
func parseOne(src string, toks []token, end token, tree *Tree) ([]Statement, error) {
	first := toks[0].Offset
	text := strings.TrimRight(src[first:end.Offset], " \t\r\n\f\v")
	kw := func(i int, word string) bool {
		return i < len(toks) && toks[i].Kind == tokIdent && toks[i].Text == word
	}
	p := &frontParser{src: src, toks: append(append([]token(nil), toks...), token{Kind: tokEOF, Offset: end.Offset, Raw: end.Raw}), text: text}
	switch {
	case kw(0, "create") && kw(1, "source"):
		s, err := p.createSource()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	case kw(0, "drop") && (kw(1, "source") || kw(1, "sink")):
		s, err := p.dropSource()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	case kw(0, "create") && kw(1, "sink"):
		s, err := p.createSink()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	case kw(0, "subscribe"):
		s, err := p.subscribe()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	case kw(0, "explain") && (kw(1, "incremental") || kw(1, "analyze") && kw(2, "incremental") ||
		len(toks) > 4 && toks[1].Kind == tokPunct && toks[1].Text == "(" && kw(2, "analyze") && toks[3].Kind == tokPunct && toks[3].Text == ")" && kw(4, "incremental")):
		s, err := p.explainIncremental()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	case kw(0, "alter") && kw(1, "materialized") && kw(2, "view") && kw(len(toks)-1, "recompile"):
		s, err := p.recompileView()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	case kw(0, "show") && kw(1, "view") && kw(2, "status"):
		s, err := p.showViewStatus()
		if err != nil {
			return nil, err
		}
		return []Statement{s}, nil
	}
	return parsePG(src, first, text, tree)
}

// parsePG hands text (at byte offset in src) to pg_query, or takes its
// tree from tree when that is text's.
func parsePG(src string, offset int, text string, tree *Tree) ([]Statement, error) {
	var res *pg_query.ParseResult
	if tree != nil && tree.Result != nil && tree.Text == text {
		res = tree.Result
	} else {
		var err error
		if res, err = pgParseChecked(text); err != nil {
			return nil, pgError(src, offset, text, err)
		}
	}
	var out []Statement
	for _, raw := range res.Stmts {
		loc := int(raw.StmtLocation)
		n := int(raw.StmtLen)
		if n == 0 {
			n = len(text) - loc
		}
		stmtText := text[loc : loc+n]
		// Re-parse alone so node locations are relative to stmtText. This
		// only happens for multi-statement pieces (lexer fallback).
		node := raw.Stmt
		if len(res.Stmts) > 1 {
			single, err := pgParseChecked(stmtText)
			if err != nil || len(single.Stmts) != 1 {
				return nil, pgError(src, offset, text, err)
			}
			node = single.Stmts[0].Stmt
		}
		out = append(out, &PG{Stmt: node, SQL: stmtText, Offset: offset + loc})
	}
	return out, nil
}

// pgError converts a pg_query error to an *errcode.Error with a position in
// the whole input.
func pgError(src string, offset int, text string, err error) error {
	if e, ok := err.(*errcode.Error); ok {
		return e // the depth guard's 54001
	}
	pe, ok := err.(interface{ Error() string })
	if !ok || err == nil {
		return errcode.New(errcode.SQLSyntaxError, "syntax error")
	}
	e := errcode.New(errcode.SQLSyntaxError, "%s", pe.Error())
	if qe, ok := err.(*pgparser.Error); ok && qe.Cursorpos > 0 {
		// Cursorpos is a 1-based character position inside text.
		e = e.WithPosition(CharPosition(src, offset) - 1 + qe.Cursorpos)
	}
	return e
}
