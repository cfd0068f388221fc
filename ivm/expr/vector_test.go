package expr

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// The vectorized Program must agree with Eval on every row: same value,
// same NULL, same error (SQLSTATE and message). Expressions are random
// trees of the vectorized nodes (integer arithmetic and comparisons,
// AND/OR/NOT, IS NULL, constants, column references, implicit casts) with
// fallback nodes (COALESCE, CASE) mixed in; values come from a tiny domain
// of NULL, 0, ±1, 2 and each type's extremes so overflow (22003) and
// division by zero (22012) are common.

// vectorColumns are the test rows' columns: int2, int4, int8, int8, bool.
//
//lint:immutable a constant test schema.
var vectorColumns = []types.Type{types.TInt2, types.TInt4, types.TInt8, types.TInt8, types.TBool}

func vectorIntDomain(t types.Type) []int64 {
	base := []int64{0, 1, -1, 2}
	switch t.Kind {
	case types.KindInt2:
		return append(base, math.MaxInt16, math.MinInt16)
	case types.KindInt4:
		return append(base, math.MaxInt32, math.MinInt32)
	}
	return append(base, math.MaxInt64, math.MinInt64, math.MaxInt32+1)
}

func genVectorRow(t *rapid.T, label string) types.Row {
	row := make(types.Row, len(vectorColumns))
	for i, ct := range vectorColumns {
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("%s.null%d", label, i)) == 0 {
			continue
		}
		if ct.Kind == types.KindBool {
			row[i] = rapid.Bool().Draw(t, fmt.Sprintf("%s.c%d", label, i))
			continue
		}
		row[i] = rapid.SampledFrom(vectorIntDomain(ct)).Draw(t, fmt.Sprintf("%s.c%d", label, i))
	}
	return row
}

// genIntExpr draws an integer expression of depth at most depth.
func genIntExpr(t *rapid.T, depth int) Expr {
	choice := rapid.IntRange(0, 4).Draw(t, "intNode")
	if depth <= 0 {
		choice = rapid.IntRange(0, 1).Draw(t, "intLeaf")
	}
	switch choice {
	case 0:
		col := rapid.IntRange(0, 3).Draw(t, "intCol")
		return &ColumnRef{Index: col, Typ: vectorColumns[col]}
	case 1:
		ct := rapid.SampledFrom([]types.Type{types.TInt2, types.TInt4, types.TInt8}).Draw(t, "constType")
		if rapid.IntRange(0, 5).Draw(t, "constNull") == 0 {
			return Null(ct)
		}
		return NewConst(ct, rapid.SampledFrom(vectorIntDomain(ct)).Draw(t, "const"))
	case 2, 3:
		op := rapid.SampledFrom([]string{"+", "-", "*", "/", "%"}).Draw(t, "arith")
		e, err := NewBinary(op, genIntExpr(t, depth-1), genIntExpr(t, depth-1))
		if err != nil {
			t.Fatalf("NewBinary: %v", err)
		}
		return e
	}
	// A fallback node in the middle of a vectorized tree.
	l, r := genIntExpr(t, depth-1), genIntExpr(t, depth-1)
	if l.Type().Kind != r.Type().Kind {
		return l
	}
	return &Coalesce{Args: []Expr{l, r}, Typ: l.Type()}
}

// genBoolExpr draws a boolean expression of depth at most depth.
func genBoolExpr(t *rapid.T, depth int) Expr {
	choice := rapid.IntRange(0, 6).Draw(t, "boolNode")
	if depth <= 0 {
		choice = rapid.IntRange(0, 1).Draw(t, "boolLeaf")
	}
	switch choice {
	case 0:
		return &ColumnRef{Index: 4, Typ: types.TBool}
	case 1:
		op := rapid.SampledFrom([]string{"=", "<>", "<", "<=", ">", ">="}).Draw(t, "cmp")
		e, err := NewBinary(op, genIntExpr(t, depth-1), genIntExpr(t, depth-1))
		if err != nil {
			t.Fatalf("NewBinary: %v", err)
		}
		return e
	case 2, 3:
		args := make([]Expr, rapid.IntRange(2, 3).Draw(t, "logicArgs"))
		for i := range args {
			args[i] = genBoolExpr(t, depth-1)
		}
		if choice == 2 {
			return &And{Args: args}
		}
		return &Or{Args: args}
	case 4:
		return &Not{X: genBoolExpr(t, depth-1)}
	case 5:
		if rapid.Bool().Draw(t, "isNullOfInt") {
			return &IsNull{X: genIntExpr(t, depth-1), Negated: rapid.Bool().Draw(t, "negated")}
		}
		return &IsNull{X: genBoolExpr(t, depth-1), Negated: rapid.Bool().Draw(t, "negated")}
	}
	return NewConst(types.TBool, rapid.SampledFrom([]types.Datum{nil, true, false}).Draw(t, "boolConst"))
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errcode.As(err); ok {
		return e.State() + " " + err.Error()
	}
	return "non-SQL error " + err.Error()
}

func TestVectorMatchesRowEvaluation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e Expr
		if rapid.Bool().Draw(t, "boolean") {
			e = genBoolExpr(t, 3)
		} else {
			e = genIntExpr(t, 3)
		}
		rows := make([]types.Row, rapid.IntRange(0, 10).Draw(t, "rows"))
		for i := range rows {
			rows[i] = genVectorRow(t, fmt.Sprintf("row%d", i))
		}
		env := &Env{}
		p := CompileVector(e)
		// Twice: buffers reused across batches must not leak values.
		for round := 0; round < 2; round++ {
			res := p.Eval(env, rows)
			for i, row := range rows {
				want, wantErr := e.Eval(env, row)
				if got, want := errorText(res.Err(i)), errorText(wantErr); got != want {
					t.Fatalf("%s on row %d %v: vector error %q, row error %q", e, i, row, got, want)
				}
				if wantErr != nil {
					continue
				}
				if got := res.Datum(i); got != want {
					t.Fatalf("%s on row %d %v: vector %v, row %v", e, i, row, got, want)
				}
				if res.Null(i) != (want == nil) {
					t.Fatalf("%s on row %d: Null mismatch", e, i)
				}
			}
			if len(rows) > 0 {
				rows = append(append([]types.Row{}, rows[1:]...), rows[0])
			}
		}
	})
}
