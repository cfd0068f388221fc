package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// Time bucketing and POSIX regular-expression functions (the PostgreSQL
// forms of Nexmark's TUMBLE/HOP windows, REGEXP_EXTRACT and friends):
//
//   date_bin(stride interval, ts, origin)     timestamp and timestamptz
//   substring(s text FROM pattern text)       first parenthesized group
//   regexp_match(s, pattern [, flags])        text[] of the groups
//   regexp_like(s, pattern [, flags])         bool
//
// PostgreSQL's regular expressions are POSIX AREs; they run on Go's RE2
// engine where the syntax means the same thing. ARE-only syntax (word
// boundaries \m \M \y \Y, \Z, back-references, lookaround, collating
// elements and equivalence classes, the ***: directors) is rejected with
// 0A000 naming the construct rather than silently matching differently.
// A constant pattern is compiled once per call site (Func.Specialize).

// areOnly lists ARE syntax RE2 lacks, with the name used in the error.
//
//lint:immutable a constant table.
var areOnly = []struct{ syntax, name string }{
	{`\m`, `word-start escape \m`}, {`\M`, `word-end escape \M`}, {`\y`, `word-boundary escape \y`},
	{`\Y`, `non-word-boundary escape \Y`}, {`\Z`, `end-of-string escape \Z`},
	{`(?=`, "positive lookahead (?=...)"}, {`(?!`, "negative lookahead (?!...)"},
	{`(?<=`, "positive lookbehind (?<=...)"}, {`(?<!`, "negative lookbehind (?<!...)"},
	{`[[:<:]]`, "word-start bracket [[:<:]]"}, {`[[:>:]]`, "word-end bracket [[:>:]]"},
	{`[[.`, "collating element [[. .]]"}, {`[[=`, "equivalence class [[= =]]"}, {`***`, "regular-expression director ***"},
}

// areRegexp is a compiled pattern with a literal every match contains
// (need, "" when there is none): a string without it cannot match, which
// strings.Contains tells far faster than the regexp engine (most rows of
// a filter such as url ~ '(&|^)channel_id=' have no "channel_id=").
type areRegexp struct {
	re   *regexp.Regexp
	need string
}

func (r *areRegexp) FindStringSubmatchIndex(s string) []int {
	if r.need != "" && !strings.Contains(s, r.need) {
		return nil
	}
	return r.re.FindStringSubmatchIndex(s)
}

func (r *areRegexp) MatchString(s string) bool {
	if r.need != "" && !strings.Contains(s, r.need) {
		return false
	}
	return r.re.MatchString(s)
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of the RE2 pattern p contains, or "".
func requiredLiteral(p string) string {
	t, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return ""
	}
	var best string
	var walk func(*syntax.Regexp)
	walk = func(t *syntax.Regexp) {
		switch t.Op {
		case syntax.OpLiteral:
			if t.Flags&syntax.FoldCase == 0 && len(string(t.Rune)) > len(best) {
				best = string(t.Rune)
			}
		case syntax.OpConcat:
			for _, s := range t.Sub {
				walk(s)
			}
		case syntax.OpCapture, syntax.OpPlus:
			walk(t.Sub[0])
		case syntax.OpRepeat:
			if t.Min >= 1 {
				walk(t.Sub[0])
			}
		}
	}
	walk(t)
	return best
}

// compileARE compiles a PostgreSQL regular expression for RE2 with the
// given flags (i, c; g only where allowGlobal), returning whether g was set.
func compileARE(pattern, flags, fn string, allowGlobal bool) (*areRegexp, bool, error) {
	ci, global := false, false
	for _, f := range flags {
		switch f {
		case 'i':
			ci = true
		case 'c':
			ci = false
		case 'g':
			if !allowGlobal {
				return nil, false, EvalError(StateInvalidParameterValue, "%s() does not support the \"global\" option", fn)
			}
			global = true
		case 'b', 'e', 'q', 'n', 'p', 'w', 's', 't', 'x', 'm':
			return nil, false, EvalError(StateFeatureNotSupported, "regular expression option \"%c\" is not supported", f)
		default:
			return nil, false, EvalError(StateInvalidParameterValue, "invalid regular expression option: \"%c\"", f)
		}
	}
	for _, a := range areOnly {
		if strings.Contains(pattern, a.syntax) {
			return nil, false, EvalError(StateFeatureNotSupported, "regular expression syntax not supported: %s", a.name)
		}
	}
	for i := 0; i+1 < len(pattern); i++ {
		if pattern[i] == '\\' {
			if c := pattern[i+1]; c >= '1' && c <= '9' {
				return nil, false, EvalError(StateFeatureNotSupported, "regular expression syntax not supported: back-reference \\%c", c)
			}
			i++
		}
	}
	// ARE: '.' and bracket expressions match newline; ^ and $ anchor the
	// whole string (RE2's defaults except for s).
	p := "(?s)" + pattern
	if ci {
		p = "(?i)" + p
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, false, EvalError(StateInvalidRegex, "invalid regular expression: %v", err)
	}
	// With only greedy quantifiers an ARE prefers the longest match, like
	// RE2's leftmost-longest mode; a non-greedy quantifier makes it
	// prefer the shortest, which leftmost-first approximates.
	if !nonGreedy.MatchString(pattern) {
		re.Longest()
	}
	return &areRegexp{re: re, need: requiredLiteral(p)}, global, nil
}

//lint:immutable a compiled constant pattern.
var nonGreedy = regexp.MustCompile(`[*+?}]\?`)

// regexBody is a regex function body given a compiled pattern.
type regexBody func(s string, re *areRegexp, global bool) (types.Datum, error)

// regexFunc builds fn(text, pattern text [, flags text]) that compiles the
// pattern per row, and specializes to a precompiled one when pattern and
// flags are constant.
func regexFunc(name string, nargs int, result types.Type, allowGlobal bool, body regexBody) *Func {
	args := make([]types.Type, nargs)
	for i := range args {
		args[i] = types.TText
	}
	flagsOf := func(a []types.Datum) string {
		if len(a) > 2 {
			return a[2].(string)
		}
		return ""
	}
	f := strict(name, args, result, func(_ *Env, a []types.Datum) (types.Datum, error) {
		re, g, err := compileARE(a[1].(string), flagsOf(a), name, allowGlobal)
		if err != nil {
			return nil, err
		}
		return body(a[0].(string), re, g)
	})
	f.Specialize = func(consts []types.Datum) *Func {
		if consts[1] == nil || (nargs > 2 && consts[2] == nil) {
			return nil
		}
		re, g, err := compileARE(consts[1].(string), flagsOf(consts), name, allowGlobal)
		if err != nil {
			return nil // the generic form reports it per row, like PostgreSQL
		}
		return strict(name, args, result, func(_ *Env, a []types.Datum) (types.Datum, error) { return body(a[0].(string), re, g) })
	}
	return f
}

// dateBinTimestamp and dateBinTimestampTZ are date_bin's two forms, named
// so the vectorized compiler can tell a call of them (vector_time.go).
//
//lint:immutable registered once, never written; calls only compare the pointer.
var dateBinTimestamp = &Func{Name: "date_bin", Args: []types.Type{types.TInterval, types.TTimestamp, types.TTimestamp}, Result: types.TTimestamp, Strict: true, Volatility: Immutable,
	Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
		v, err := dateBin(a[0].(types.Interval), int64(a[1].(types.Timestamp)), int64(a[2].(types.Timestamp)), a[1].(types.Timestamp).IsFinite(), a[2].(types.Timestamp).IsFinite())
		if err != nil {
			return nil, err
		}
		return types.Timestamp(v), nil
	}}

//lint:immutable as dateBinTimestamp.
var dateBinTimestampTZ = &Func{Name: "date_bin", Args: []types.Type{types.TInterval, types.TTimestampTZ, types.TTimestampTZ}, Result: types.TTimestampTZ, Strict: true, Volatility: Immutable,
	Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
		v, err := dateBin(a[0].(types.Interval), int64(a[1].(types.TimestampTZ)), int64(a[2].(types.TimestampTZ)), a[1].(types.TimestampTZ).IsFinite(), a[2].(types.TimestampTZ).IsFinite())
		if err != nil {
			return nil, err
		}
		return types.TimestampTZ(v), nil
	}}

func registerPattern(add adder) {
	add(
		dateBinTimestamp, dateBinTimestampTZ,
		// substring(s FROM pattern): the part matching the first
		// parenthesized subexpression, or the whole match without one.
		regexFunc("substring", 2, types.TText, false, func(s string, re *areRegexp, _ bool) (types.Datum, error) {
			m := re.FindStringSubmatchIndex(s)
			if m == nil {
				return nil, nil
			}
			if len(m) > 2 {
				if m[2] < 0 {
					return nil, nil
				}
				return s[m[2]:m[3]], nil
			}
			return s[m[0]:m[1]], nil
		}),
		regexFunc("regexp_like", 2, types.TBool, false, regexpLike),
		regexFunc("regexp_like", 3, types.TBool, false, regexpLike),
		regexFunc("regexp_match", 2, types.ArrayOf(types.TText), false, regexpMatch),
		regexFunc("regexp_match", 3, types.ArrayOf(types.TText), false, regexpMatch),
	)
}

func regexpLike(s string, re *areRegexp, _ bool) (types.Datum, error) {
	return re.MatchString(s), nil
}

// regexpMatch returns the captured groups of the first match (the whole
// match when the pattern has none), NULL when there is no match.
func regexpMatch(s string, re *areRegexp, _ bool) (types.Datum, error) {
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return nil, nil
	}
	if len(m) == 2 {
		return types.Array{Elem: types.TText, Values: []types.Datum{s[m[0]:m[1]]}}, nil
	}
	vals := make([]types.Datum, 0, len(m)/2-1)
	for i := 2; i < len(m); i += 2 {
		if m[i] < 0 {
			vals = append(vals, nil)
		} else {
			vals = append(vals, s[m[i]:m[i+1]])
		}
	}
	return types.Array{Elem: types.TText, Values: vals}, nil
}

// dateBin is PostgreSQL 15's timestamp_bin on microseconds: ts moved down
// to the start of its stride-wide bin counted from origin. An infinite ts
// (finite false) comes back unchanged, as in PostgreSQL.
//
// NB: it returns the int64, not a Datum, so the caller boxes the result
// once, as its own type.
func dateBin(stride types.Interval, ts, origin int64, finite, originFinite bool) (int64, error) {
	if !finite {
		return ts, nil
	}
	if !originFinite {
		return 0, EvalError(StateDatetimeFieldOverflow, "origin out of range")
	}
	if stride.Months != 0 {
		return 0, EvalError(StateFeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	strideUs := int64(stride.Days)*types.MicrosPerDay + stride.Micros
	if strideUs <= 0 {
		return 0, EvalError(StateDatetimeFieldOverflow, "stride must be greater than zero")
	}
	diff := ts - origin
	if (origin < 0 && diff < ts) || (origin > 0 && diff > ts) {
		return 0, errTimestampRange()
	}
	delta := diff - diff%strideUs
	// Before the origin, truncation toward zero went up a bin.
	if diff < 0 && diff%strideUs != 0 {
		delta -= strideUs
	}
	r := origin + delta
	if (delta > 0 && r < origin) || (delta < 0 && r > origin) || !types.TimestampInRange(r) {
		return 0, errTimestampRange()
	}
	return r, nil
}
