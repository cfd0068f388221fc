package expr

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rockstream/rockstream/ivm/types"
)

// likeToken is one element of a compiled LIKE pattern.
type likeToken struct {
	kind byte // 'l' literal, '_' one character, '%' any sequence
	lit  string
}

type likePattern []likeToken

// compileLike parses a LIKE pattern with escape character esc (-1: none).
func compileLike(p string, esc rune, fold bool) (likePattern, error) {
	if fold {
		p = asciiLower(p)
	}
	var out likePattern
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, likeToken{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		i += size
		switch {
		case esc >= 0 && r == esc:
			if i >= len(p) {
				// NB: PostgreSQL raises this error only if matching
				// reaches the escape with text left ('abc' LIKE 'abc\'
				// is false, 'abcd' LIKE 'abc\' an error).
				flush()
				out = append(out, likeToken{kind: 'E'})
				continue
			}
			r2, size2 := utf8.DecodeRuneInString(p[i:])
			i += size2
			lit.WriteRune(r2)
		case r == '%':
			flush()
			if len(out) == 0 || out[len(out)-1].kind != '%' {
				out = append(out, likeToken{kind: '%'})
			}
		case r == '_':
			flush()
			out = append(out, likeToken{kind: '_'})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return out, nil
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Match results.
const (
	likeFalse = iota
	likeTrue
	likeError // reached a trailing escape character with text left
	// likeAbort: the text ran out before the pattern, so no later start
	// position of an enclosing % can match either (PostgreSQL's
	// LIKE_ABORT, which keeps matching O(text × pattern)).
	likeAbort
)

// match reports whether s matches the pattern.
func (p likePattern) match(s string) (bool, error) {
	switch matchFrom(p, s) { // likeAbort is a non-match
	case likeTrue:
		return true, nil
	case likeError:
		return false, EvalError(StateInvalidEscapeSequence, "LIKE pattern must not end with escape character")
	}
	return false, nil
}

func matchFrom(p likePattern, s string) int {
	for len(p) > 0 {
		t := p[0]
		switch t.kind {
		case 'E':
			if s != "" {
				return likeError
			}
			return likeFalse
		case 'l':
			if !strings.HasPrefix(s, t.lit) {
				if strings.HasPrefix(t.lit, s) {
					return likeAbort
				}
				return likeFalse
			}
			s = s[len(t.lit):]
			p = p[1:]
		case '_':
			if s == "" {
				return likeAbort
			}
			_, size := utf8.DecodeRuneInString(s)
			s = s[size:]
			p = p[1:]
		case '%':
			p = p[1:]
			if len(p) == 0 {
				return likeTrue
			}
			// Try every suffix start; a following literal narrows the search.
			if p[0].kind == 'l' {
				lit := p[0].lit
				for {
					i := strings.Index(s, lit)
					if i < 0 {
						return likeAbort
					}
					if r := matchFrom(p[1:], s[i+len(lit):]); r != likeFalse {
						return r
					}
					_, size := utf8.DecodeRuneInString(s[i:])
					s = s[i+size:]
				}
			}
			for {
				if r := matchFrom(p, s); r != likeFalse {
					return r
				}
				if s == "" {
					return likeAbort
				}
				_, size := utf8.DecodeRuneInString(s)
				s = s[size:]
			}
		}
	}
	if s == "" {
		return likeTrue
	}
	return likeFalse
}

// Like is x [NOT] LIKE/ILIKE pattern [ESCAPE esc]. Bytea operands are
// matched bytewise through their string form.
type Like struct {
	X, Pattern, Escape Expr
	CaseInsensitive    bool
	Negated            bool
	compiled           likePattern // set when Pattern and Escape are constants
}

func newLike(x, pattern, escape Expr, ci, negated bool) *Like {
	l := &Like{X: x, Pattern: pattern, Escape: escape, CaseInsensitive: ci, Negated: negated}
	if pc, ok := pattern.(*Const); ok && pc.Value != nil {
		esc := rune('\\')
		escOK := true
		if escape != nil {
			ec, ok := escape.(*Const)
			if !ok || ec.Value == nil {
				escOK = false
			} else if r, err := likeEscape(ec.Value.(string)); err == nil {
				esc = r
			} else {
				escOK = false
			}
		}
		if escOK {
			if p, err := compileLike(likeText(pc.Value), esc, ci); err == nil {
				l.compiled = p
			}
		}
	}
	return l
}

// NewLike builds x [NOT] LIKE pattern [ESCAPE escape] (escape may be nil).
func NewLike(x, pattern, escape Expr, caseInsensitive, negated bool) (Expr, error) {
	var err error
	target := types.TText
	if x.Type().Kind == types.KindBytea && !caseInsensitive {
		target = types.TBytea
	}
	if x, err = Coerce(x, target); err != nil {
		return nil, err
	}
	if pattern, err = Coerce(pattern, target); err != nil {
		return nil, err
	}
	if escape != nil {
		if escape, err = Coerce(escape, types.TText); err != nil {
			return nil, err
		}
	}
	return newLike(x, pattern, escape, caseInsensitive, negated), nil
}

func likeText(v types.Datum) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v.(string)
}

func likeEscape(s string) (rune, error) {
	switch utf8.RuneCountInString(s) {
	case 0:
		return -1, nil
	case 1:
		r, _ := utf8.DecodeRuneInString(s)
		return r, nil
	}
	return 0, EvalError(StateInvalidEscapeSequence, "invalid escape string").WithDetail("Escape string must be empty or one character.")
}

func (l *Like) Type() types.Type { return types.TBool }
func (l *Like) Eval(env *Env, row types.Row) (types.Datum, error) {
	x, err := l.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	p := l.compiled
	if p == nil {
		pv, err := l.Pattern.Eval(env, row)
		if err != nil {
			return nil, err
		}
		esc := rune('\\')
		if l.Escape != nil {
			ev, err := l.Escape.Eval(env, row)
			if err != nil {
				return nil, err
			}
			if ev == nil {
				return nil, nil
			}
			if esc, err = likeEscape(ev.(string)); err != nil {
				return nil, err
			}
		}
		if pv == nil {
			return nil, nil
		}
		if p, err = compileLike(likeText(pv), esc, l.CaseInsensitive); err != nil {
			return nil, err
		}
	}
	if x == nil {
		return nil, nil
	}
	s := likeText(x)
	if l.CaseInsensitive {
		s = asciiLower(s)
	}
	m, err := p.match(s)
	if err != nil {
		return nil, err
	}
	return m != l.Negated, nil
}
func (l *Like) String() string {
	op := " LIKE "
	if l.CaseInsensitive {
		op = " ILIKE "
	}
	if l.Negated {
		op = " NOT" + op
	}
	s := "(" + l.X.String() + op + l.Pattern.String()
	if l.Escape != nil {
		s += " ESCAPE " + l.Escape.String()
	}
	return s + ")"
}

// RegexMatch is x ~ pattern (and ~*, !~, !~*). Patterns use Go's RE2
// syntax, which agrees with PostgreSQL's ARE for the common subset
// (classes, anchors, alternation, quantifiers); back-references and
// lookaround are rejected with 2201B.
type RegexMatch struct {
	X, Pattern      Expr
	CaseInsensitive bool
	Negated         bool
	compiled        *regexp.Regexp
	// need is a literal every match of the compiled pattern contains
	// ("" if none): a text without it does not match (areRegexp).
	need string
}

func newRegexMatch(x, pattern Expr, ci, negated bool) *RegexMatch {
	m := &RegexMatch{X: x, Pattern: pattern, CaseInsensitive: ci, Negated: negated}
	if pc, ok := pattern.(*Const); ok && pc.Value != nil {
		if re, err := compileRegex(pc.Value.(string), ci); err == nil {
			m.compiled, m.need = re, requiredLiteral(re.String())
		}
	}
	return m
}

func compileRegex(p string, ci bool) (*regexp.Regexp, error) {
	if ci {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, EvalError(StateInvalidRegex, "invalid regular expression: %v", err)
	}
	return re, nil
}

func (m *RegexMatch) Type() types.Type { return types.TBool }
func (m *RegexMatch) Eval(env *Env, row types.Row) (types.Datum, error) {
	x, err := m.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	re := m.compiled
	if re == nil {
		pv, err := m.Pattern.Eval(env, row)
		if err != nil || pv == nil {
			return nil, err
		}
		if re, err = compileRegex(pv.(string), m.CaseInsensitive); err != nil {
			return nil, err
		}
	}
	if x == nil {
		return nil, nil
	}
	if m.need != "" && re == m.compiled && !strings.Contains(x.(string), m.need) {
		return m.Negated, nil
	}
	return re.MatchString(x.(string)) != m.Negated, nil
}
func (m *RegexMatch) String() string {
	op := " ~ "
	switch {
	case m.CaseInsensitive && m.Negated:
		op = " !~* "
	case m.CaseInsensitive:
		op = " ~* "
	case m.Negated:
		op = " !~ "
	}
	return "(" + m.X.String() + op + m.Pattern.String() + ")"
}
