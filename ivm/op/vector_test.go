package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Filter and Map with real ivm/expr nodes take the vectorized path
// (expr.Program); their Stream forms evaluate row by row. Outputs and
// error Z-sets must agree at every step.

func mustBinary(t testing.TB, op string, l, r expr.Expr) expr.Expr {
	e, err := expr.NewBinary(op, l, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func int8Col(i int) expr.Expr { return &expr.ColumnRef{Index: i, Typ: types.TInt8} }

func int8Const(v int64) expr.Expr { return expr.NewConst(types.TInt8, v) }

func TestFilterVectorizedIncremental(t *testing.T) {
	// (6 / (a - 1) > b OR a IS NULL) AND NOT (b = 2): fails on a = 1.
	pred := &expr.And{Args: []expr.Expr{
		&expr.Or{Args: []expr.Expr{
			mustBinary(t, ">", mustBinary(t, "/", int8Const(6), mustBinary(t, "-", int8Col(0), int8Const(1))), int8Col(1)),
			&expr.IsNull{X: int8Col(0)},
		}},
		&expr.Not{X: mustBinary(t, "=", int8Col(1), int8Const(2))},
	}}
	if !NewFilter(intSchema(2), pred).program.Vectorized {
		t.Fatal("predicate did not compile to column kernels")
	}
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{2}, nulls: true,
			make: func(State) Operator { return NewFilter(intSchema(2), pred) },
			stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamFilter(ctx, pred, in[0])
			},
		})
	})
}

func TestMapVectorizedIncremental(t *testing.T) {
	exprs := []expr.Expr{
		mustBinary(t, "+", int8Col(0), mustBinary(t, "*", int8Col(1), int8Const(2))),
		int8Col(1),
		mustBinary(t, "%", int8Col(1), int8Col(0)),
		mustBinary(t, "/", int8Col(0), mustBinary(t, "-", int8Col(1), int8Const(1))),
	}
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{2}, nulls: true,
			make: func(State) Operator { return NewMap(exprs, []string{"s", "b", "m", "q"}) },
			stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamMap(ctx, exprs, in[0])
			},
		})
	})
}
