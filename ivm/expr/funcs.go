package expr

import (
	"sort"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// Volatility is PostgreSQL's provolatile: views accept only Immutable
// functions (their results must not depend on when or where they run).
type Volatility uint8

// Volatilities.
const (
	Immutable Volatility = iota
	Stable               // depends on session settings (TimeZone) or the statement time
	Volatile             // may change every call
)

func (v Volatility) String() string {
	return [...]string{"immutable", "stable", "volatile"}[v]
}

// anyType is a parameter that accepts any type unchanged.
//
//lint:immutable a constant marker type.
var anyType = types.Type{Kind: types.KindInvalid, Typmod: -1}

// anyArrayType accepts any array.
//
//lint:immutable a constant marker type.
var anyArrayType = types.Type{Kind: types.KindArray, Typmod: -1}

// Func is one function signature of the library.
type Func struct {
	Name string
	// Args are the parameter types; Kind KindInvalid accepts anything (the
	// argument arrives with its own type), an Array with nil Elem any array.
	Args []types.Type
	// Variadic means the last parameter repeats zero or more times.
	Variadic bool
	Result   types.Type
	// ResultOf, when set, derives the result type from the argument types
	// (e.g. for polymorphic array functions).
	ResultOf func(args []types.Type) types.Type
	// Strict functions return NULL when any argument is NULL, without
	// being called.
	Strict     bool
	Volatility Volatility
	// Eval computes the result; with Strict, no argument is nil. argTypes
	// are the (coerced) argument types.
	Eval func(env *Env, argTypes []types.Type, args []types.Datum) (types.Datum, error)
	// Specialize, when set, may return a faster equivalent of the function
	// for a call whose arguments consts[i] are constant (nil: not constant),
	// e.g. a regular expression compiled once instead of per row.
	Specialize func(consts []types.Datum) *Func
}

// Signature renders name(argtypes) for messages.
func (f *Func) Signature() string {
	parts := make([]string, len(f.Args))
	for i, a := range f.Args {
		switch {
		case a.Kind == types.KindInvalid:
			parts[i] = "\"any\""
		case a.Kind == types.KindArray && a.Elem == nil:
			parts[i] = "anyarray"
		default:
			parts[i] = a.SQLName()
		}
	}
	if f.Variadic && len(parts) > 0 {
		parts[len(parts)-1] = "VARIADIC " + parts[len(parts)-1] + "[]"
	}
	return f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// registry maps a lower-case function name to its overloads in preference
// order.
//
//lint:immutable built once by buildRegistry; never modified afterwards.
var registry = buildRegistry()

func buildRegistry() map[string][]*Func {
	r := map[string][]*Func{}
	add := func(fs ...*Func) {
		for _, f := range fs {
			if f.Result.Kind == types.KindInvalid && f.ResultOf == nil {
				panic("expr: function without result type: " + f.Name)
			}
			r[f.Name] = append(r[f.Name], f)
		}
	}
	registerMath(add)
	registerString(add)
	registerDateTime(add)
	registerMisc(add)
	registerArray(add)
	registerBackend(add)
	registerToChar(add)
	registerPattern(add)
	registerTimeZone(add)
	registerCatalog(add)
	registerSequence(add)
	registerNotify(add)
	registerJSON(add)
	return r
}

// FunctionNames lists every registered function name, sorted.
func FunctionNames() []string {
	names := make([]string, 0, len(registry))
	//lint:maprange sorted below
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Overloads returns the registered signatures of name.
func Overloads(name string) []*Func { return registry[strings.ToLower(name)] }

func argMatches(param, arg types.Type) (exact, ok bool) {
	switch {
	case param.Kind == types.KindInvalid:
		return false, true
	case param.Kind == types.KindArray && param.Elem == nil:
		return arg.Kind == types.KindArray, arg.Kind == types.KindArray
	case arg.Kind == param.Kind:
		return true, true
	case arg.Kind == types.KindUnknown:
		return false, true
	}
	return false, CanImplicitCast(arg, param)
}

// paramAt is the parameter type at position i (variadic repeats the last).
func (f *Func) paramAt(i int) types.Type {
	if i >= len(f.Args) {
		return f.Args[len(f.Args)-1]
	}
	return f.Args[i]
}

func (f *Func) arityOK(n int) bool {
	if f.Variadic {
		return n >= len(f.Args)-1
	}
	return n == len(f.Args)
}

// LookupFunc resolves name for the argument types as PostgreSQL's
// func_select_candidate does in the common cases: the candidates whose
// parameters accept every argument (exactly, via implicit cast, or as an
// unknown literal); then the most exact matches; then the most preferred
// types (float8, text, timestamptz, ...) where conversion is needed; then
// for unknown literals a string parameter; then registration order.
func LookupFunc(name string, argTypes []types.Type) (*Func, error) {
	cands := registry[strings.ToLower(name)]
	type scored struct {
		f                 *Func
		exact, pref, text int
	}
	var ok []scored
	for _, f := range cands {
		if !f.arityOK(len(argTypes)) {
			continue
		}
		s := scored{f: f}
		good := true
		for i, at := range argTypes {
			p := f.paramAt(i)
			exact, match := argMatches(p, at)
			if !match {
				good = false
				break
			}
			if exact {
				s.exact++
			} else if p.Kind != types.KindInvalid && IsPreferred(p) {
				s.pref++
			}
			if at.Kind == types.KindUnknown && TypeCategory(p) == CatString {
				s.text++
			}
		}
		if good {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		names := make([]string, len(argTypes))
		for i, t := range argTypes {
			names[i] = t.SQLName()
		}
		return nil, errcode.New(errcode.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(names, ", ")).WithSQLState(StateUndefinedFunction)
	}
	best := ok[0]
	for _, s := range ok[1:] {
		if s.exact > best.exact ||
			(s.exact == best.exact && s.pref > best.pref) ||
			(s.exact == best.exact && s.pref == best.pref && s.text > best.text) {
			best = s
		}
	}
	return best.f, nil
}

// Call applies a library function.
type Call struct {
	Fn       *Func
	Args     []Expr
	ArgTypes []types.Type
	Typ      types.Type
}

// NewCall resolves name for the arguments and coerces them to the chosen
// signature.
func NewCall(name string, args ...Expr) (Expr, error) {
	ats := make([]types.Type, len(args))
	for i, a := range args {
		ats[i] = a.Type()
	}
	f, err := LookupFunc(name, ats)
	if err != nil {
		return nil, err
	}
	out := make([]Expr, len(args))
	for i, a := range args {
		p := f.paramAt(i)
		switch {
		case p.Kind == types.KindInvalid:
			if a.Type().Kind == types.KindUnknown {
				a, err = Coerce(a, types.TText)
				if err != nil {
					return nil, err
				}
			}
			out[i] = a
		case p.Kind == types.KindArray && p.Elem == nil:
			out[i] = a
		default:
			c, err := coerceOperand(a, p)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		ats[i] = out[i].Type()
	}
	rt := f.Result
	if f.ResultOf != nil {
		rt = f.ResultOf(ats)
	}
	return &Call{Fn: specialize(f, out), Args: out, ArgTypes: ats, Typ: rt}, nil
}

// specialize applies f.Specialize to the constant arguments of a call.
func specialize(f *Func, args []Expr) *Func {
	if f.Specialize == nil {
		return f
	}
	consts := make([]types.Datum, len(args))
	for i, a := range args {
		if c, ok := a.(*Const); ok {
			consts[i] = c.Value
		}
	}
	if g := f.Specialize(consts); g != nil {
		return g
	}
	return f
}

func (c *Call) Type() types.Type { return c.Typ }
func (c *Call) Eval(env *Env, row types.Row) (types.Datum, error) {
	var buf [4]types.Datum
	vals := buf[:0]
	if len(c.Args) > len(buf) {
		vals = make([]types.Datum, 0, len(c.Args))
	}
	for _, a := range c.Args {
		v, err := a.Eval(env, row)
		if err != nil {
			return nil, err
		}
		if v == nil && c.Fn.Strict {
			return nil, nil
		}
		vals = append(vals, v)
	}
	return c.Fn.Eval(env, c.ArgTypes, vals)
}
func (c *Call) String() string { return c.Fn.Name + joinExprs(c.Args, ", ") }

// Volatility of an expression tree: the most volatile function it calls.
// A view may only contain Immutable expressions.
func ExprVolatility(e Expr) Volatility {
	v := Immutable
	Walk(e, func(x Expr) {
		if c, ok := x.(*Call); ok && c.Fn.Volatility > v {
			v = c.Fn.Volatility
		}
		if c, ok := x.(*Cast); ok && castDependsOnZone(c.X.Type(), c.Typ) && v < Stable {
			v = Stable
		}
		if b, ok := x.(*Binary); ok && (b.Info.Left.Kind == types.KindTimestampTZ || b.Info.Right.Kind == types.KindTimestampTZ) &&
			(b.Info.Op == "+" || b.Info.Op == "-") && v < Stable {
			v = Stable
		}
	})
	return v
}

// Walk visits e and every sub-expression (pre-order).
func Walk(e Expr, visit func(Expr)) {
	if e == nil {
		return
	}
	visit(e)
	for _, c := range Children(e) {
		Walk(c, visit)
	}
}

// Children returns the direct sub-expressions of e.
func Children(e Expr) []Expr {
	switch x := e.(type) {
	case *Not:
		return []Expr{x.X}
	case *And:
		return x.Args
	case *Or:
		return x.Args
	case *IsNull:
		return []Expr{x.X}
	case *BoolTest:
		return []Expr{x.X}
	case *DistinctFrom:
		return []Expr{x.L, x.R}
	case *Case:
		var out []Expr
		if x.Operand != nil {
			out = append(out, x.Operand)
		}
		for _, w := range x.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if x.Else != nil {
			out = append(out, x.Else)
		}
		return out
	case *Coalesce:
		return x.Args
	case *NullIf:
		return []Expr{x.X, x.Y}
	case *MinMax:
		return x.Args
	case *InList:
		return append([]Expr{x.X}, x.List...)
	case *Between:
		return []Expr{x.X, x.Lo, x.Hi}
	case *Like:
		out := []Expr{x.X, x.Pattern}
		if x.Escape != nil {
			out = append(out, x.Escape)
		}
		return out
	case *RegexMatch:
		return []Expr{x.X, x.Pattern}
	case *Binary:
		return []Expr{x.L, x.R}
	case *Unary:
		return []Expr{x.X}
	case *Cast:
		return []Expr{x.X}
	case *Call:
		return x.Args
	case *AnyAll:
		return []Expr{x.X, x.Arr}
	}
	return nil
}
