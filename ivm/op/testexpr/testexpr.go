// Package testexpr has a few tiny expr.Expr nodes for operator and circuit
// tests (test support only; never used by production code), so the
// operator tests do not depend on the full expression engine.
package testexpr

import (
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// Col is a column reference.
type Col struct {
	Index int
	T     types.Type
}

func (c Col) Type() types.Type { return c.T }
func (c Col) Eval(_ *expr.Env, row types.Row) (types.Datum, error) {
	return row[c.Index], nil
}
func (c Col) String() string { return fmt.Sprintf("$%d", c.Index) }

// Const is a constant.
type Const struct {
	V types.Datum
	T types.Type
}

func (c Const) Type() types.Type                               { return c.T }
func (c Const) Eval(*expr.Env, types.Row) (types.Datum, error) { return c.V, nil }
func (c Const) String() string                                 { return fmt.Sprint(c.V) }

// Binary is an int8 binary operator: + - * / > < = (NULL in, NULL out).
type Binary struct {
	Op   string
	L, R expr.Expr
}

func (b Binary) Type() types.Type {
	switch b.Op {
	case ">", "<", "=", ">=", "<=", "<>":
		return types.TBool
	}
	return types.TInt8
}

func (b Binary) Eval(env *expr.Env, row types.Row) (types.Datum, error) {
	l, err := b.L.Eval(env, row)
	if err != nil {
		return nil, err
	}
	r, err := b.R.Eval(env, row)
	if err != nil {
		return nil, err
	}
	if l == nil || r == nil {
		return nil, nil
	}
	x, y := l.(int64), r.(int64)
	switch b.Op {
	case "+":
		return x + y, nil
	case "-":
		return x - y, nil
	case "*":
		return x * y, nil
	case "/":
		if y == 0 {
			return nil, errcode.New(errcode.ViewEvaluationError, "division by zero").WithSQLState("22012")
		}
		return x / y, nil
	case ">":
		return x > y, nil
	case "<":
		return x < y, nil
	case ">=":
		return x >= y, nil
	case "<=":
		return x <= y, nil
	case "=":
		return x == y, nil
	case "<>":
		return x != y, nil
	}
	panic("testexpr: unknown operator " + b.Op)
}

func (b Binary) String() string { return "(" + b.L.String() + " " + b.Op + " " + b.R.String() + ")" }

// Int is an int8 constant.
func Int(v int64) Const { return Const{V: v, T: types.TInt8} }

// IntCol is an int8 column reference.
func IntCol(i int) Col { return Col{Index: i, T: types.TInt8} }
