package parse

import (
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/errcode"
)

// frontParser is a recursive-descent parser over the tokens of one
// RockStream statement. toks always ends with a tokEOF token.
type frontParser struct {
	src  string
	toks []token
	pos  int
	text string
}

func (p *frontParser) peek() token { return p.toks[p.pos] }

func (p *frontParser) advance() token {
	t := p.toks[p.pos]
	if t.Kind != tokEOF {
		p.pos++
	}
	return t
}

// errAt is PostgreSQL's syntax error at token t.
func (p *frontParser) errAt(t token) error {
	if t.Kind == tokEOF {
		return SyntaxError(p.src, t.Offset, "")
	}
	return SyntaxError(p.src, t.Offset, t.Raw)
}

func (p *frontParser) isKeyword(word string) bool {
	t := p.peek()
	return t.Kind == tokIdent && t.Text == word
}

func (p *frontParser) acceptKeyword(word string) bool {
	if p.isKeyword(word) {
		p.pos++
		return true
	}
	return false
}

func (p *frontParser) expectKeyword(word string) error {
	if !p.acceptKeyword(word) {
		return p.errAt(p.peek())
	}
	return nil
}

func (p *frontParser) isPunct(s string) bool {
	t := p.peek()
	return t.Kind == tokPunct && t.Text == s
}

func (p *frontParser) acceptPunct(s string) bool {
	t := p.peek()
	if t.Kind == tokPunct && t.Text == s {
		p.pos++
		return true
	}
	return false
}

func (p *frontParser) expectPunct(s string) error {
	if !p.acceptPunct(s) {
		return p.errAt(p.peek())
	}
	return nil
}

func (p *frontParser) expectEnd() error {
	if p.peek().Kind != tokEOF {
		return p.errAt(p.peek())
	}
	return nil
}

// identifier reads one identifier (unquoted folded, or quoted).
func (p *frontParser) identifier() (string, error) {
	t := p.peek()
	if t.Kind == tokIdent || t.Kind == tokQuotedIdent {
		p.pos++
		return t.Text, nil
	}
	return "", p.errAt(t)
}

// qualifiedName reads ident(.ident)*.
func (p *frontParser) qualifiedName() (QualifiedName, error) {
	first, err := p.identifier()
	if err != nil {
		return nil, err
	}
	name := QualifiedName{first}
	for p.acceptPunct(".") {
		part, err := p.identifier()
		if err != nil {
			return nil, err
		}
		name = append(name, part)
	}
	if len(name) > 3 {
		return nil, errcode.New(errcode.SQLSyntaxError, "improper qualified name (too many dotted names): %s", name).WithPosition(CharPosition(p.src, p.toks[0].Offset))
	}
	return name, nil
}

// createSource parses CREATE SOURCE name FROM GENERATE ROWS [AS] ( ... )
// [RATE [=] n PER SECOND].
func (p *frontParser) createSource() (*CreateSource, error) {
	p.pos = 2 // CREATE SOURCE
	name, err := p.qualifiedName()
	if err != nil {
		return nil, err
	}
	var columns []GenColumn
	if p.isPunct("(") {
		// Declared columns: only a KAFKA source takes them (its records
		// carry no schema).
		if columns, err = p.declaredColumns(); err != nil {
			return nil, err
		}
	}
	if err := p.expectKeyword("from"); err != nil {
		return nil, err
	}
	if p.acceptKeyword("kafka") {
		return p.kafkaSource(name, columns)
	}
	if columns != nil {
		t := p.peek()
		return nil, errcode.New(errcode.SQLSyntaxError, "only CREATE SOURCE ... FROM KAFKA declares its columns before FROM").WithPosition(CharPosition(p.src, t.Offset))
	}
	if p.acceptKeyword("nexmark") {
		return p.nexmarkSource(name)
	}
	if p.acceptKeyword("postgres") {
		return p.postgresSource(name)
	}
	if !p.isKeyword("generate") {
		t := p.peek()
		if t.Kind == tokIdent {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "CREATE SOURCE ... FROM %s is not supported; only FROM GENERATE ROWS, FROM NEXMARK, FROM POSTGRES and FROM KAFKA are", strings.ToUpper(t.Raw)).WithPosition(CharPosition(p.src, t.Offset))
		}
		return nil, p.errAt(t)
	}
	p.pos++
	if err := p.expectKeyword("rows"); err != nil {
		return nil, err
	}
	p.acceptKeyword("as")
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	src := &CreateSource{SQL: p.text, Name: name}
	for {
		col, err := p.genColumn()
		if err != nil {
			return nil, err
		}
		src.Columns = append(src.Columns, col)
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		break
	}
	if p.acceptKeyword("rate") {
		p.acceptPunct("=")
		t := p.peek()
		if t.Kind != tokNumber {
			return nil, p.errAt(t)
		}
		n, convErr := strconv.ParseInt(t.Text, 10, 64)
		if convErr != nil || n <= 0 {
			return nil, errcode.New(errcode.SQLInvalidParameterValue, "RATE must be a positive integer number of rows per second, got %s", t.Raw).WithPosition(CharPosition(p.src, t.Offset))
		}
		p.pos++
		if err := p.expectKeyword("per"); err != nil {
			return nil, err
		}
		if err := p.expectKeyword("second"); err != nil {
			return nil, err
		}
		src.RatePerSecond = n
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return src, nil
}

// genColumn parses `name type generator`.
func (p *frontParser) genColumn() (GenColumn, error) {
	name, err := p.identifier()
	if err != nil {
		return GenColumn{}, err
	}
	// The type is every token up to the generator keyword, at paren depth 0.
	typeStart := p.peek()
	depth := 0
	for {
		t := p.peek()
		if t.Kind == tokEOF {
			return GenColumn{}, p.errAt(t)
		}
		if depth == 0 && t.Kind == tokIdent && (t.Text == "generated" || t.Text == "uniform" || t.Text == "pick") && t.Offset > typeStart.Offset {
			break
		}
		if t.Kind == tokPunct {
			switch t.Text {
			case "(":
				depth++
			case ")":
				depth--
				if depth < 0 {
					return GenColumn{}, p.errAt(t)
				}
			case ",":
				if depth == 0 {
					return GenColumn{}, p.errAt(t)
				}
			}
		}
		p.pos++
	}
	typeEnd := p.peek().Offset
	col := GenColumn{Name: name, TypeSQL: strings.TrimSpace(p.src[typeStart.Offset:typeEnd])}
	switch p.advance().Text {
	case "generated":
		col.Generator = GenSequence
	case "uniform":
		col.Generator = GenUniform
		args, err := p.literalList()
		if err != nil {
			return GenColumn{}, err
		}
		if len(args) != 2 {
			return GenColumn{}, errcode.New(errcode.SQLSyntaxError, "UNIFORM takes exactly two bounds, got %d", len(args)).WithPosition(CharPosition(p.src, typeEnd))
		}
		col.Args = args
	case "pick":
		col.Generator = GenPick
		args, err := p.literalList()
		if err != nil {
			return GenColumn{}, err
		}
		col.Args = args
	}
	return col, nil
}

// literalList parses ( literal {, literal} ).
func (p *frontParser) literalList() ([]Literal, error) {
	if err := p.expectPunct("("); err != nil {
		return nil, err
	}
	var out []Literal
	for {
		neg := p.acceptPunct("-")
		t := p.peek()
		switch {
		case t.Kind == tokNumber:
			text := t.Text
			if neg {
				text = "-" + text
			}
			out = append(out, Literal{Text: text})
		case t.Kind == tokString && !neg:
			out = append(out, Literal{Text: t.Text, IsString: true})
		default:
			return nil, p.errAt(t)
		}
		p.pos++
		if p.acceptPunct(",") {
			continue
		}
		if err := p.expectPunct(")"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// subscribe parses SUBSCRIBE [TO] name [WITH (SNAPSHOT)] [AS OF NOW WITH
// SNAPSHOT | AS OF EPOCH n].
func (p *frontParser) subscribe() (*Subscribe, error) {
	p.pos = 1
	p.acceptKeyword("to")
	name, err := p.qualifiedName()
	if err != nil {
		return nil, err
	}
	s := &Subscribe{SQL: p.text, Name: name, AsOfEpoch: -1}
	for p.peek().Kind != tokEOF {
		switch {
		case p.acceptKeyword("with"):
			if err := p.expectPunct("("); err != nil {
				return nil, err
			}
			if err := p.expectKeyword("snapshot"); err != nil {
				return nil, err
			}
			if p.acceptPunct("=") {
				switch {
				case p.acceptKeyword("true"):
					s.Snapshot = true
				case p.acceptKeyword("false"):
					s.Snapshot = false
				default:
					return nil, p.errAt(p.peek())
				}
			} else {
				s.Snapshot = true
			}
			if err := p.expectPunct(")"); err != nil {
				return nil, err
			}
		case p.acceptKeyword("as"):
			if err := p.expectKeyword("of"); err != nil {
				return nil, err
			}
			switch {
			case p.acceptKeyword("now"):
				if err := p.expectKeyword("with"); err != nil {
					return nil, err
				}
				if err := p.expectKeyword("snapshot"); err != nil {
					return nil, err
				}
				s.Snapshot = true
			case p.acceptKeyword("epoch"):
				t := p.peek()
				n, convErr := strconv.ParseInt(t.Text, 10, 64)
				if t.Kind != tokNumber || convErr != nil || n < 0 {
					return nil, p.errAt(t)
				}
				p.pos++
				s.AsOfEpoch = n
			default:
				return nil, p.errAt(p.peek())
			}
		case p.isKeyword("where") || (p.peek().Kind == tokPunct && p.peek().Text == "("):
			t := p.peek()
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "SUBSCRIBE with server-side filtering or projection is not supported yet").WithPosition(CharPosition(p.src, t.Offset))
		default:
			return nil, p.errAt(p.peek())
		}
	}
	return s, nil
}

// explainIncremental parses EXPLAIN [ANALYZE | (ANALYZE)] INCREMENTAL
// [VERBOSE] name-or-query.
func (p *frontParser) explainIncremental() (*ExplainIncremental, error) {
	p.pos = 1
	e := &ExplainIncremental{SQL: p.text}
	switch {
	case p.acceptKeyword("analyze"):
		e.Analyze = true
	case p.peek().Kind == tokPunct && p.peek().Text == "(":
		p.pos += 3 // ( ANALYZE ), as the caller checked
		e.Analyze = true
	}
	if err := p.expectKeyword("incremental"); err != nil {
		return nil, err
	}
	// VERBOSE is a modifier only when something follows it: a view named
	// "verbose" stays explainable.
	if p.isKeyword("verbose") && p.toks[p.pos+1].Kind != tokEOF {
		e.Verbose = true
		p.pos++
	}
	start := p.pos
	if t := p.peek(); t.Kind == tokIdent || t.Kind == tokQuotedIdent {
		if name, err := p.qualifiedName(); err == nil && p.peek().Kind == tokEOF && !isQueryKeyword(t) {
			e.Name = name
			return e, nil
		}
	}
	p.pos = start
	t := p.peek()
	if t.Kind == tokEOF {
		return nil, p.errAt(t)
	}
	end := p.toks[len(p.toks)-1].Offset
	stmts, err := parsePG(p.src, t.Offset, p.src[t.Offset:end], nil)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, p.errAt(t)
	}
	e.Query = stmts[0].(*PG)
	return e, nil
}

// isQueryKeyword reports tokens that start a query rather than a name.
func isQueryKeyword(t token) bool {
	if t.Kind != tokIdent {
		return false
	}
	switch t.Text {
	case "select", "with", "values", "table", "create":
		return true
	}
	return false
}

// showViewStatus parses SHOW VIEW STATUS [name].
func (p *frontParser) showViewStatus() (*ShowViewStatus, error) {
	p.pos = 3
	s := &ShowViewStatus{SQL: p.text}
	if p.peek().Kind != tokEOF {
		name, err := p.qualifiedName()
		if err != nil {
			return nil, err
		}
		s.Name = name
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return s, nil
}

// dropSource parses DROP SOURCE [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
func (p *frontParser) dropSource() (*DropSource, error) {
	d := &DropSource{SQL: p.text, Sink: p.toks[1].Text == "sink"}
	p.pos = 2 // DROP SOURCE | DROP SINK
	if p.acceptKeyword("if") {
		if err := p.expectKeyword("exists"); err != nil {
			return nil, err
		}
		d.IfExists = true
	}
	for {
		name, err := p.qualifiedName()
		if err != nil {
			return nil, err
		}
		d.Names = append(d.Names, name)
		if !p.acceptPunct(",") {
			break
		}
	}
	switch {
	case p.acceptKeyword("cascade"):
		d.Cascade = true
	case p.acceptKeyword("restrict"):
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return d, nil
}

// createSink parses CREATE SINK name FROM view INTO KAFKA | POSTGRES ( key
// = literal {, key = literal} ).
func (p *frontParser) createSink() (*CreateSink, error) {
	p.pos = 2 // CREATE SINK
	name, err := p.qualifiedName()
	if err != nil {
		return nil, err
	}
	if err := p.expectKeyword("from"); err != nil {
		return nil, err
	}
	from, err := p.qualifiedName()
	if err != nil {
		return nil, err
	}
	if err := p.expectKeyword("into"); err != nil {
		return nil, err
	}
	t := p.peek()
	postgres := p.acceptKeyword("postgres")
	if !postgres && !p.acceptKeyword("kafka") {
		if t.Kind == tokIdent {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "CREATE SINK ... INTO %s is not supported; only INTO KAFKA and INTO POSTGRES are", strings.ToUpper(t.Raw)).WithPosition(CharPosition(p.src, t.Offset))
		}
		return nil, p.errAt(t)
	}
	opts, err := p.sourceOptions(true)
	if err != nil {
		return nil, err
	}
	if postgres {
		return &CreateSink{SQL: p.text, Name: name, From: from, Postgres: opts}, nil
	}
	return &CreateSink{SQL: p.text, Name: name, From: from, Kafka: opts}, nil
}

// recompileView parses ALTER MATERIALIZED VIEW name RECOMPILE.
func (p *frontParser) recompileView() (*RecompileView, error) {
	p.pos = 3 // ALTER MATERIALIZED VIEW
	name, err := p.qualifiedName()
	if err != nil {
		return nil, err
	}
	if err := p.expectKeyword("recompile"); err != nil {
		return nil, err
	}
	if err := p.expectEnd(); err != nil {
		return nil, err
	}
	return &RecompileView{SQL: p.text, Name: name}, nil
}
