package expr

import (
	"strings"
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// Rewrites of a fallback kernel's private copy of its expression
// (kernelRewrite): case-folded comparisons and constant datetime reads.
//
// Case-folded comparisons.
//
// lower(x) = 'apple', lower(x) <> 'apple' and lower(x) IN ('apple',
// 'google') (or upper) are how SQL compares text ignoring case. Evaluated
// as written, each row builds lower(x) — a new string and its Datum — only
// to compare it with constants, and a CASE testing several constants
// builds it once per WHEN. A fallback kernel evaluates them instead as
// foldedCmp, which compares x with the constants byte by byte through the
// ASCII case mapping lower and upper use (asciiLower), allocating nothing.
// The rewrite is private to the kernel's copy of the expression.
//
// Constant datetime reads. timestamptz '1970-01-01 00:00:00+00' is read
// when the expression runs, not when it is bound (the value depends on the
// time zone, and a date's field order on DateStyle), so the cast parses
// the same text for every row. A kernel evaluates it as constRead, which
// reads it once per settings it runs under.

// foldedCmp is fold(X) = Consts[0] (Negated: <>), or fold(X) [NOT] IN
// (Consts...), where fold is lower (Upper false) or upper over ASCII.
type foldedCmp struct {
	X       Expr
	Consts  []string
	Upper   bool
	Negated bool
}

func (f *foldedCmp) Type() types.Type { return types.TBool }

func (f *foldedCmp) Eval(env *Env, row types.Row) (types.Datum, error) {
	v, err := f.X.Eval(env, row)
	if err != nil || v == nil {
		return nil, err
	}
	s := v.(string)
	for _, c := range f.Consts {
		if foldedEqual(s, c, f.Upper) {
			return !f.Negated, nil
		}
	}
	return f.Negated, nil
}

func (f *foldedCmp) String() string {
	fn := "lower"
	if f.Upper {
		fn = "upper"
	}
	op := " IN "
	if f.Negated {
		op = " NOT IN "
	}
	quoted := make([]string, len(f.Consts))
	for i, c := range f.Consts {
		quoted[i] = "'" + strings.ReplaceAll(c, "'", "''") + "'"
	}
	return "(" + fn + "(" + f.X.String() + ")" + op + "(" + strings.Join(quoted, ", ") + "))"
}

// foldedEqual reports whether asciiLower(s) (asciiUpper with upper) == c.
func foldedEqual(s, c string, upper bool) bool {
	if len(s) != len(c) {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if upper {
			if b >= 'a' && b <= 'z' {
				b -= 'a' - 'A'
			}
		} else if b >= 'A' && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != c[i] {
			return false
		}
	}
	return true
}

// constRead is a Cast of a text constant to a date/time type, read once
// per settings (the Env fields a read depends on) and remembered.
// NB: it belongs to one kernel, which one goroutine runs at a time.
type constRead struct {
	cast *Cast
	// at is the settings v and err were read under (ok: read at all).
	ok  bool
	at  constReadSettings
	v   types.Datum
	err error
}

// constReadSettings are the Env fields reading a datetime depends on.
type constReadSettings struct {
	env           *Env
	zone          *time.Location
	dateStyle     types.DateStyle
	dateOrder     types.DateOrder
	intervalStyle types.IntervalStyle
	statementTime types.TimestampTZ
}

func settingsOf(env *Env) constReadSettings {
	if env == nil {
		return constReadSettings{}
	}
	return constReadSettings{env: env, zone: env.TimeZone, dateStyle: env.DateStyle, dateOrder: env.DateOrder,
		intervalStyle: env.IntervalStyle, statementTime: env.StatementTime}
}

func (r *constRead) Type() types.Type { return r.cast.Typ }
func (r *constRead) String() string   { return r.cast.String() }

func (r *constRead) Eval(env *Env, row types.Row) (types.Datum, error) {
	at := settingsOf(env)
	if !r.ok || r.at != at {
		r.v, r.err = r.cast.Eval(env, row)
		r.ok, r.at = true, at
	}
	return r.v, r.err
}

// isConstRead reports whether e is a text constant cast to a date/time
// type (constRead).
func isConstRead(e Expr) (*Cast, bool) {
	c, ok := e.(*Cast)
	if !ok {
		return nil, false
	}
	k, ok := c.X.(*Const)
	if !ok || k.Value == nil || !(k.Typ.Kind == types.KindUnknown || k.Typ.Kind.IsString()) {
		return nil, false
	}
	switch c.Typ.Kind {
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ, types.KindInterval:
		return c, true
	}
	return nil, false
}

// kernelRewrite returns e with its case-folded comparisons rewritten as
// foldedCmp and its constant datetime reads as constRead (e itself when
// there are none).
func kernelRewrite(e Expr) Expr {
	lower, _ := LookupFunc("lower", []types.Type{types.TText})
	upper, _ := LookupFunc("upper", []types.Type{types.TText})
	if lower == nil || upper == nil {
		return e
	}
	// folded returns the argument of lower(x)/upper(x) over text.
	folded := func(x Expr) (arg Expr, isUpper, ok bool) {
		c, isCall := x.(*Call)
		if !isCall || len(c.Args) != 1 || c.Args[0].Type().Kind != types.KindText || (c.Fn != lower && c.Fn != upper) {
			return nil, false, false
		}
		return c.Args[0], c.Fn == upper, true
	}
	textConst := func(x Expr) (string, bool) {
		k, ok := x.(*Const)
		if !ok || k.Typ.Kind != types.KindText {
			return "", false
		}
		s, ok := k.Value.(string)
		return s, ok
	}
	var rewrite func(Expr) Expr
	rewrite = func(e Expr) Expr {
		switch x := e.(type) {
		case *Binary:
			if (x.Info.Op == "=" || x.Info.Op == "<>") && x.Info.Left.Kind == types.KindText && x.Info.Right.Kind == types.KindText {
				l, r := x.L, x.R
				if _, ok := textConst(l); ok {
					l, r = r, l
				}
				if arg, up, ok := folded(l); ok {
					if c, ok := textConst(r); ok {
						return &foldedCmp{X: arg, Consts: []string{c}, Upper: up, Negated: x.Info.Op == "<>"}
					}
				}
			}
		case *InList:
			if arg, up, ok := folded(x.X); ok && x.Cmp.Kind == types.KindText {
				consts := make([]string, 0, len(x.List))
				for _, v := range x.List {
					c, ok := textConst(v)
					if !ok {
						consts = nil
						break
					}
					consts = append(consts, c)
				}
				if consts != nil {
					return &foldedCmp{X: arg, Consts: consts, Upper: up, Negated: x.Negated}
				}
			}
		case *Not:
			return &Not{X: rewrite(x.X)}
		case *And:
			return &And{Args: rewriteAll(x.Args, rewrite)}
		case *Or:
			return &Or{Args: rewriteAll(x.Args, rewrite)}
		case *Case:
			out := &Case{Operand: x.Operand, Cmp: x.Cmp, Typ: x.Typ, Whens: make([]When, len(x.Whens))}
			for i, w := range x.Whens {
				out.Whens[i] = When{Cond: w.Cond, Result: rewrite(w.Result)}
				if x.Operand == nil {
					out.Whens[i].Cond = rewrite(w.Cond)
				}
			}
			if x.Else != nil {
				out.Else = rewrite(x.Else)
			}
			return out
		case *Coalesce:
			return &Coalesce{Args: rewriteAll(x.Args, rewrite), Typ: x.Typ}
		case *Cast:
			if c, ok := isConstRead(x); ok {
				return &constRead{cast: c}
			}
		}
		// Other nodes are rebuilt only when a child changed (withChildren
		// knows them; a node it does not know keeps its subtree).
		kids := Children(e)
		var changed []Expr
		for i, k := range kids {
			if r := rewrite(k); r != k {
				if changed == nil {
					changed = append([]Expr(nil), kids...)
				}
				changed[i] = r
			}
		}
		if changed == nil {
			return e
		}
		return withChildren(e, changed)
	}
	return rewrite(e)
}

func rewriteAll(args []Expr, rewrite func(Expr) Expr) []Expr {
	out := make([]Expr, len(args))
	for i, a := range args {
		out[i] = rewrite(a)
	}
	return out
}
