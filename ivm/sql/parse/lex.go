package parse

import (
	"strings"
	"unicode/utf8"
)

// tokenKind classifies a lexical token of the front parser.
type tokenKind uint8

const (
	tokEOF tokenKind = iota
	// tokIdent is an unquoted identifier or keyword, folded to lower case.
	tokIdent
	// tokQuotedIdent is a "double quoted" identifier, case preserved.
	tokQuotedIdent
	tokNumber
	// tokString is a 'string' literal (value unescaped).
	tokString
	// tokPunct is a single punctuation character or an operator run.
	tokPunct
)

// token is one lexical token; Offset is its byte offset in the input.
type token struct {
	Kind   tokenKind
	Text   string // folded identifier, literal value or punctuation
	Raw    string // the exact source text
	Offset int
}

// lexer is a small PostgreSQL-compatible tokenizer: enough to recognise the
// RockStream statements and to split a script into statements (quotes,
// dollar quotes and comments hide semicolons).
type lexer struct {
	src string
	pos int
}

// lexErr is an unterminated literal or comment at Offset.
type lexErr struct {
	Offset int
	Msg    string
}

func isIdentStart(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r >= 0x80
}

func isIdentCont(r rune) bool {
	return isIdentStart(r) || (r >= '0' && r <= '9') || r == '$'
}

// next returns the next token, or a lexErr.
func (l *lexer) next() (token, *lexErr) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{Kind: tokEOF, Offset: len(l.src)}, nil
	}
	start := l.pos
	r, size := utf8.DecodeRuneInString(l.src[l.pos:])
	switch {
	case r == '\'' || ((r == 'E' || r == 'e') && strings.HasPrefix(l.src[l.pos+1:], "'")):
		escapes := r != '\''
		if escapes {
			l.pos++
		}
		val, err := l.quoted('\'', escapes)
		if err != nil {
			return token{}, err
		}
		return token{Kind: tokString, Text: val, Raw: l.src[start:l.pos], Offset: start}, nil
	case r == '"':
		val, err := l.quoted('"', false)
		if err != nil {
			return token{}, err
		}
		return token{Kind: tokQuotedIdent, Text: val, Raw: l.src[start:l.pos], Offset: start}, nil
	case r == '$' && l.dollarTag() != "":
		tag := l.dollarTag()
		end := strings.Index(l.src[l.pos+len(tag):], tag)
		if end < 0 {
			return token{}, &lexErr{Offset: start, Msg: "unterminated dollar-quoted string"}
		}
		val := l.src[l.pos+len(tag) : l.pos+len(tag)+end]
		l.pos += len(tag) + end + len(tag)
		return token{Kind: tokString, Text: val, Raw: l.src[start:l.pos], Offset: start}, nil
	case isIdentStart(r):
		l.pos += size
		for l.pos < len(l.src) {
			r, size = utf8.DecodeRuneInString(l.src[l.pos:])
			if !isIdentCont(r) {
				break
			}
			l.pos += size
		}
		raw := l.src[start:l.pos]
		return token{Kind: tokIdent, Text: strings.ToLower(raw), Raw: raw, Offset: start}, nil
	case (r >= '0' && r <= '9') || (r == '.' && l.pos+1 < len(l.src) && l.src[l.pos+1] >= '0' && l.src[l.pos+1] <= '9'):
		for l.pos < len(l.src) {
			c := l.src[l.pos]
			if (c >= '0' && c <= '9') || c == '.' || c == '_' {
				l.pos++
				continue
			}
			if (c == 'e' || c == 'E') && l.pos+1 < len(l.src) {
				n := l.src[l.pos+1]
				if n >= '0' && n <= '9' {
					l.pos++
					continue
				}
				if (n == '+' || n == '-') && l.pos+2 < len(l.src) && l.src[l.pos+2] >= '0' && l.src[l.pos+2] <= '9' {
					l.pos += 2
					continue
				}
			}
			break
		}
		raw := l.src[start:l.pos]
		return token{Kind: tokNumber, Text: raw, Raw: raw, Offset: start}, nil
	default:
		l.pos += size
		raw := l.src[start:l.pos]
		return token{Kind: tokPunct, Text: raw, Raw: raw, Offset: start}, nil
	}
}

// dollarTag returns the $tag$ opening at l.pos, or "".
func (l *lexer) dollarTag() string {
	rest := l.src[l.pos:]
	if !strings.HasPrefix(rest, "$") {
		return ""
	}
	for i := 1; i < len(rest); i++ {
		c := rest[i]
		if c == '$' {
			return rest[:i+1]
		}
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 1 && c >= '0' && c <= '9') || c >= 0x80) {
			return ""
		}
	}
	return ""
}

// quoted consumes a literal delimited by q (doubling q escapes it).
func (l *lexer) quoted(q byte, backslashEscapes bool) (string, *lexErr) {
	start := l.pos
	l.pos++ // opening quote
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if backslashEscapes && c == '\\' && l.pos+1 < len(l.src) {
			b.WriteByte(l.src[l.pos+1])
			l.pos += 2
			continue
		}
		if c == q {
			if l.pos+1 < len(l.src) && l.src[l.pos+1] == q {
				b.WriteByte(q)
				l.pos += 2
				continue
			}
			l.pos++
			return b.String(), nil
		}
		b.WriteByte(c)
		l.pos++
	}
	if q == '"' {
		return "", &lexErr{Offset: start, Msg: "unterminated quoted identifier"}
	}
	return "", &lexErr{Offset: start, Msg: "unterminated quoted string"}
}

// skipSpace skips white space and comments (nested /* */ as in PostgreSQL).
func (l *lexer) skipSpace() *lexErr {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "--"):
			nl := strings.IndexByte(l.src[l.pos:], '\n')
			if nl < 0 {
				l.pos = len(l.src)
			} else {
				l.pos += nl + 1
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			start := l.pos
			depth := 0
			for l.pos < len(l.src) {
				if strings.HasPrefix(l.src[l.pos:], "/*") {
					depth++
					l.pos += 2
				} else if strings.HasPrefix(l.src[l.pos:], "*/") {
					depth--
					l.pos += 2
					if depth == 0 {
						break
					}
				} else {
					l.pos++
				}
			}
			if depth != 0 {
				return &lexErr{Offset: start, Msg: "unterminated /* comment"}
			}
		default:
			return nil
		}
	}
	return nil
}

// tokenizePrefix lexes src; on a lexical error (an unterminated literal) it
// returns the tokens before it, which is all pg_query can build a tree of.
func tokenizePrefix(src string) ([]token, *lexErr) {
	l := &lexer{src: src}
	var out []token
	for {
		t, err := l.next()
		if err != nil {
			return out, err
		}
		out = append(out, t)
		if t.Kind == tokEOF {
			return out, nil
		}
	}
}

// Token is an exported lexical token for callers that need to locate
// clauses in statement text (e.g. a view's defining query).
type Token struct {
	// Text is the folded identifier, literal value or punctuation.
	Text string
	// Offset is the byte offset in the input.
	Offset int
	// Word is set for unquoted identifiers and keywords.
	Word bool
}

// Tokens lexes src; on a lexical error it returns the tokens before it.
func Tokens(src string) []Token {
	toks, _ := tokenizePrefix(src)
	out := make([]Token, 0, len(toks))
	for _, t := range toks {
		if t.Kind == tokEOF {
			break
		}
		out = append(out, Token{Text: t.Text, Offset: t.Offset, Word: t.Kind == tokIdent})
	}
	return out
}
