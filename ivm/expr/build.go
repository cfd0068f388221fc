package expr

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// Constructors that resolve types as PostgreSQL's parser does and insert
// the implicit casts; the compiler builds expression trees with these.

func coerceBool(e Expr, context string) (Expr, error) {
	t := e.Type()
	if t.Kind == types.KindBool {
		return e, nil
	}
	if t.Kind == types.KindUnknown {
		return Coerce(e, types.TBool)
	}
	return nil, errcode.New(errcode.DatatypeMismatch, "argument of %s must be type boolean, not type %s", context, t.SQLName()).WithSQLState(StateDatatypeMismatch)
}

// NewAnd is a AND b AND ...
func NewAnd(args ...Expr) (Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		c, err := coerceBool(a, "AND")
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return &And{Args: out}, nil
}

// NewOr is a OR b OR ...
func NewOr(args ...Expr) (Expr, error) {
	out := make([]Expr, len(args))
	for i, a := range args {
		c, err := coerceBool(a, "OR")
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return &Or{Args: out}, nil
}

// NewNot is NOT x.
func NewNot(x Expr) (Expr, error) {
	c, err := coerceBool(x, "NOT")
	if err != nil {
		return nil, err
	}
	return &Not{X: c}, nil
}

// NewBoolTest is x IS [NOT] TRUE/FALSE/UNKNOWN.
func NewBoolTest(x Expr, test BoolTestKind) (Expr, error) {
	names := [...]string{"IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN"}
	c, err := coerceBool(x, names[test])
	if err != nil {
		return nil, err
	}
	return &BoolTest{X: c, Test: test}, nil
}

// comparable coerces both sides to their comparison type.
func comparable(context string, l, r Expr) (Expr, Expr, types.Type, error) {
	ct, ok := ComparisonType(l.Type(), r.Type())
	if !ok {
		return nil, nil, types.Type{}, errUndefinedOperator("=", l.Type().SQLName(), r.Type().SQLName())
	}
	var err error
	if l, err = coerceOperand(l, ct); err != nil {
		return nil, nil, ct, err
	}
	if r, err = coerceOperand(r, ct); err != nil {
		return nil, nil, ct, err
	}
	return l, r, ct, nil
}

// NewDistinctFrom is l IS [NOT] DISTINCT FROM r.
func NewDistinctFrom(l, r Expr, negated bool) (Expr, error) {
	l, r, ct, err := comparable("IS DISTINCT FROM", l, r)
	if err != nil {
		return nil, err
	}
	return &DistinctFrom{L: l, R: r, Cmp: ct, Negated: negated}, nil
}

// commonTypeOf resolves and coerces a list of expressions to their common
// type.
func commonTypeOf(context string, es []Expr) ([]Expr, types.Type, error) {
	ts := make([]types.Type, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	ct, err := CommonType(context, ts...)
	if err != nil {
		return nil, ct, err
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		c, err := Coerce(e, ct)
		if err != nil {
			return nil, ct, err
		}
		out[i] = c
	}
	return out, ct, nil
}

// NewCase builds a CASE. operand nil makes a searched CASE; elseExpr nil is
// ELSE NULL.
func NewCase(operand Expr, whens []When, elseExpr Expr) (Expr, error) {
	results := make([]Expr, 0, len(whens)+1)
	for _, w := range whens {
		results = append(results, w.Result)
	}
	if elseExpr != nil {
		results = append(results, elseExpr)
	}
	results, rt, err := commonTypeOf("CASE", results)
	if err != nil {
		return nil, err
	}
	c := &Case{Typ: rt}
	if elseExpr != nil {
		c.Else = results[len(results)-1]
	}
	if operand != nil {
		conds := []Expr{operand}
		for _, w := range whens {
			conds = append(conds, w.Cond)
		}
		conds, ct, err := commonTypeOf("CASE/WHEN", conds)
		if err != nil {
			return nil, err
		}
		if _, ok := ComparisonType(ct, ct); !ok {
			return nil, errUndefinedOperator("=", ct.SQLName(), ct.SQLName())
		}
		c.Operand, c.Cmp = conds[0], noTypmod(ct)
		for i := range whens {
			c.Whens = append(c.Whens, When{Cond: conds[i+1], Result: results[i]})
		}
		return c, nil
	}
	for i, w := range whens {
		cond, err := coerceBool(w.Cond, "CASE/WHEN")
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: cond, Result: results[i]})
	}
	return c, nil
}

// NewCoalesce is COALESCE(args...).
func NewCoalesce(args ...Expr) (Expr, error) {
	out, ct, err := commonTypeOf("COALESCE", args)
	if err != nil {
		return nil, err
	}
	return &Coalesce{Args: out, Typ: ct}, nil
}

// NewNullIf is NULLIF(x, y); both convert to their comparison type, which
// is also the result type.
func NewNullIf(x, y Expr) (Expr, error) {
	if x.Type().Kind == types.KindUnknown {
		var err error
		if x, err = Coerce(x, types.TText); err != nil {
			return nil, err
		}
	}
	ct, ok := ComparisonType(x.Type(), y.Type())
	if !ok {
		return nil, errUndefinedOperator("=", x.Type().SQLName(), y.Type().SQLName())
	}
	yc, err := coerceOperand(y, ct)
	if err != nil {
		return nil, err
	}
	xc, err := coerceOperand(x, ct)
	if err != nil {
		return nil, err
	}
	// NB: the result has the comparison's left input type, as in
	// PostgreSQL (NULLIF(1, 1.0) is numeric).
	return &NullIf{X: xc, Y: yc, Cmp: ct}, nil
}

// NewGreatest is GREATEST(args...); NewLeast is LEAST(args...).
func NewGreatest(args ...Expr) (Expr, error) { return newMinMax(true, args) }

// NewLeast is LEAST(args...).
func NewLeast(args ...Expr) (Expr, error) { return newMinMax(false, args) }

func newMinMax(greatest bool, args []Expr) (Expr, error) {
	name := "LEAST"
	if greatest {
		name = "GREATEST"
	}
	out, ct, err := commonTypeOf(name, args)
	if err != nil {
		return nil, err
	}
	if _, ok := ComparisonType(ct, ct); !ok {
		return nil, errUndefinedOperator(">", ct.SQLName(), ct.SQLName())
	}
	return &MinMax{Args: out, Typ: ct, Greatest: greatest}, nil
}

// NewIn is x [NOT] IN (list...). The list and x resolve to a common type
// (PostgreSQL's rule for IN lists of scalars).
func NewIn(x Expr, list []Expr, negated bool) (Expr, error) {
	all, ct, err := commonTypeOf("IN", append([]Expr{x}, list...))
	if err != nil {
		return nil, err
	}
	if _, ok := ComparisonType(ct, ct); !ok {
		return nil, errUndefinedOperator("=", ct.SQLName(), ct.SQLName())
	}
	return &InList{X: all[0], List: all[1:], Cmp: noTypmod(ct), Negated: negated}, nil
}

// NewBetween is x [NOT] BETWEEN [SYMMETRIC] lo AND hi.
func NewBetween(x, lo, hi Expr, negated, symmetric bool) (Expr, error) {
	all, ct, err := commonTypeOf("BETWEEN", []Expr{x, lo, hi})
	if err != nil {
		return nil, err
	}
	if _, ok := ComparisonType(ct, ct); !ok {
		return nil, errUndefinedOperator(">=", ct.SQLName(), ct.SQLName())
	}
	return &Between{X: all[0], Lo: all[1], Hi: all[2], Cmp: noTypmod(ct), Negated: negated, Symmetric: symmetric}, nil
}

// NewIsNull is x IS [NOT] NULL.
func NewIsNull(x Expr, negated bool) Expr { return &IsNull{X: x, Negated: negated} }
