// Package lower turns PlanIR scalars into ivm/expr expressions (which
// evaluate): the bridge between the compiler's descriptive expressions and
// the engine's executable ones. The binder already resolved types with the
// expression engine's rules, so lowering re-resolves to the same types; a
// disagreement is a compiler bug and is reported as one.
package lower

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Lowerer implements incr.Lowerer with the ivm/expr engine.
type Lowerer struct{}

// Lower converts one scalar.
func (Lowerer) Lower(s plan.Scalar) (expr.Expr, error) { return Scalar(s) }

// Scalar converts one scalar.
func Scalar(s plan.Scalar) (expr.Expr, error) {
	e, err := scalar(s)
	if err != nil {
		return nil, err
	}
	want := s.Type()
	if got := e.Type(); !got.Equal(want) && want.Kind != types.KindUnknown {
		if got.Kind == want.Kind && want.Typmod < 0 {
			return e, nil
		}
		return expr.Coerce(e, want)
	}
	return e, nil
}

// Lowerable is a scalar that lowers itself (ad-hoc execution's lazily
// evaluated subqueries).
type Lowerable interface {
	Lower() (expr.Expr, error)
}

func unsupported(construct string) error {
	return errcode.New(errcode.UnsupportedSQLConstruct, "materialized views do not support %s", construct).WithDetail("construct: %s", construct)
}

func all(ss []plan.Scalar) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(ss))
	for i, s := range ss {
		e, err := Scalar(s)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func scalar(s plan.Scalar) (expr.Expr, error) {
	if l, ok := s.(Lowerable); ok {
		return l.Lower()
	}
	switch x := s.(type) {
	case *plan.ColRef:
		return &expr.ColumnRef{Index: x.Index, Typ: x.Typ, Name: x.Name}, nil
	case *plan.Const:
		t := x.Typ
		if t.Kind == types.KindUnknown {
			t = types.TText
		}
		return expr.NewConst(t, x.Value), nil
	case *plan.Param:
		return &expr.Param{N: x.Index + 1, Typ: x.Typ}, nil
	case *plan.Cast:
		arg, err := Scalar(x.Arg)
		if err != nil {
			return nil, err
		}
		if x.Explicit {
			return expr.NewCast(arg, x.Typ)
		}
		return expr.Coerce(arg, x.Typ)
	case *plan.Func:
		args, err := all(x.Args)
		if err != nil {
			return nil, err
		}
		if x.Op {
			switch len(args) {
			case 1:
				return expr.NewUnary(x.Name, args[0])
			case 2:
				return expr.NewBinary(x.Name, args[0], args[1])
			}
		}
		switch x.Name {
		case "greatest":
			return expr.NewGreatest(args...)
		case "least":
			return expr.NewLeast(args...)
		}
		return expr.NewCall(x.Name, args...)
	case *plan.BoolOp:
		args, err := all(x.Args)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case plan.And:
			return expr.NewAnd(args...)
		case plan.Or:
			return expr.NewOr(args...)
		}
		return expr.NewNot(args[0])
	case *plan.IsNull:
		arg, err := Scalar(x.Arg)
		if err != nil {
			return nil, err
		}
		return expr.NewIsNull(arg, x.Negate), nil
	case *plan.IsDistinct:
		l, err := Scalar(x.L)
		if err != nil {
			return nil, err
		}
		r, err := Scalar(x.R)
		if err != nil {
			return nil, err
		}
		return expr.NewDistinctFrom(l, r, x.Negate)
	case *plan.Case:
		whens := make([]expr.When, len(x.Whens))
		for i, w := range x.Whens {
			c, err := Scalar(w.Cond)
			if err != nil {
				return nil, err
			}
			r, err := Scalar(w.Result)
			if err != nil {
				return nil, err
			}
			whens[i] = expr.When{Cond: c, Result: r}
		}
		e, err := Scalar(x.Else)
		if err != nil {
			return nil, err
		}
		return expr.NewCase(nil, whens, e)
	case *plan.Coalesce:
		args, err := all(x.Args)
		if err != nil {
			return nil, err
		}
		return expr.NewCoalesce(args...)
	case *plan.AnyAll:
		l, err := Scalar(x.X)
		if err != nil {
			return nil, err
		}
		arr, err := Scalar(x.Arr)
		if err != nil {
			return nil, err
		}
		return expr.NewAnyAll(x.Op, l, arr, x.All)
	case *plan.ArrayCtor:
		elems, err := all(x.Elems)
		if err != nil {
			return nil, err
		}
		return expr.NewArrayCtor(x.Typ, elems)
	case *plan.Subquery:
		return nil, unsupported("this form of subquery")
	case *plan.OuterRef:
		return nil, unsupported("this correlated subquery")
	}
	return nil, errcode.New(errcode.InternalError, "lower: unknown scalar %T", s)
}
