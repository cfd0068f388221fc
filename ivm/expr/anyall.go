package expr

import (
	"github.com/rockstream/rockstream/ivm/types"
)

// AnyAll is x op ANY (array) or x op ALL (array) (PostgreSQL's
// ScalarArrayOpExpr): ANY is true if some element satisfies op, ALL if
// every element does; NULL comparisons make the result NULL unless another
// element decides it. An empty array gives false for ANY and true for ALL,
// even when x is NULL.
type AnyAll struct {
	Info OpInfo
	X    Expr
	Arr  Expr
	All  bool
}

// NewAnyAll builds x op ANY/ALL (arr); arr must be an array (an untyped
// literal such as '{1,2}' takes the array type of x).
func NewAnyAll(op string, x, arr Expr, all bool) (Expr, error) {
	at := arr.Type()
	if at.Kind == types.KindUnknown {
		xt := x.Type()
		if xt.Kind == types.KindUnknown {
			xt = types.TText
		}
		var err error
		if arr, err = Coerce(arr, types.ArrayOf(noTypmod(xt))); err != nil {
			return nil, err
		}
		at = arr.Type()
	}
	if at.Kind != types.KindArray || at.Elem == nil {
		return nil, errUndefinedOperator(op, x.Type().SQLName(), at.SQLName())
	}
	info, ok := LookupBinaryOp(op, x.Type(), *at.Elem)
	if !ok || info.Result.Kind != types.KindBool || info.Fn == nil {
		return nil, errUndefinedOperator(op, x.Type().SQLName(), at.Elem.SQLName())
	}
	var err error
	if x, err = coerceOperand(x, info.Left); err != nil {
		return nil, err
	}
	if at.Elem.Kind != info.Right.Kind {
		if arr, err = Coerce(arr, types.ArrayOf(info.Right)); err != nil {
			return nil, err
		}
	}
	return &AnyAll{Info: info, X: x, Arr: arr, All: all}, nil
}

func (a *AnyAll) Type() types.Type { return types.TBool }

func (a *AnyAll) Eval(env *Env, row types.Row) (types.Datum, error) {
	x, err := a.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	av, err := a.Arr.Eval(env, row)
	if err != nil || av == nil {
		return nil, err
	}
	elems := av.(types.Array).Values
	if len(elems) == 0 {
		return a.All, nil
	}
	if x == nil {
		return nil, nil
	}
	sawNull := false
	for _, e := range elems {
		if e == nil {
			sawNull = true
			continue
		}
		r, err := a.Info.Fn(env, x, e)
		if err != nil {
			return nil, err
		}
		if r.(bool) != a.All {
			return !a.All, nil // ANY found a true / ALL found a false
		}
	}
	if sawNull {
		return nil, nil
	}
	return a.All, nil
}

func (a *AnyAll) String() string {
	q := " ANY "
	if a.All {
		q = " ALL "
	}
	return "(" + a.X.String() + " " + a.Info.Op + q + "(" + a.Arr.String() + "))"
}
