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

// EvalSel on a random selection evaluates exactly the selected rows (a row
// outside it never fails), Box lays out the same Datums as Eval, and
// SelectTrue keeps the rows where a predicate is true.
func TestVectorSelectionMatchesRowEvaluation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		boolean := rapid.Bool().Draw(t, "boolean")
		var e Expr
		if boolean {
			e = genBoolExpr(t, 3)
		} else {
			e = genIntExpr(t, 3)
		}
		rows := make([]types.Row, rapid.IntRange(0, 10).Draw(t, "rows"))
		for i := range rows {
			rows[i] = genVectorRow(t, fmt.Sprintf("row%d", i))
		}
		var sel []int32
		for i := range rows {
			if rapid.Bool().Draw(t, fmt.Sprintf("sel%d", i)) {
				sel = append(sel, int32(i))
			}
		}
		env := &Env{}
		p := CompileVector(e)
		for round := 0; round < 2; round++ {
			if round == 1 {
				// A full batch first, so stale values and errors from
				// rows outside the selection are in the buffers.
				p.Eval(env, rows)
			}
			res := p.EvalSel(env, rows, sel)
			var ok, wantTrue []int32
			var want []types.Datum
			for _, i := range sel {
				v, err := e.Eval(env, rows[i])
				if got, want := errorText(res.Err(int(i))), errorText(err); got != want {
					t.Fatalf("%s on row %d %v: vector error %q, row error %q", e, i, rows[i], got, want)
				}
				if err != nil {
					continue
				}
				ok = append(ok, i)
				want = append(want, v)
				if v == true {
					wantTrue = append(wantTrue, i)
				}
			}
			for i := range rows {
				if !containsRow(sel, int32(i)) && res.Err(i) != nil {
					t.Fatalf("%s: row %d outside the selection failed: %v", e, i, res.Err(i))
				}
			}
			const stride = 2
			got := make([]types.Datum, len(ok)*stride)
			res.Box(got, stride, ok)
			for k := range ok {
				if got[k*stride] != want[k] || got[k*stride+1] != nil {
					t.Fatalf("%s on row %d: Box %v, row %v", e, ok[k], got[k*stride], want[k])
				}
			}
			if boolean {
				if got := res.SelectTrue(nil, sel); fmt.Sprint(got) != fmt.Sprint(wantTrue) {
					t.Fatalf("%s: SelectTrue %v, want %v", e, got, wantTrue)
				}
			}
		}
	})
}

func containsRow(sel []int32, i int32) bool {
	for _, s := range sel {
		if s == i {
			return true
		}
	}
	return false
}

// Datums boxed into a shared slab behave as ordinary int64 Datums.
func TestBoxIntsRoundTrip(t *testing.T) {
	values := []int64{0, 1, 255, 256, -1, math.MaxInt64, math.MinInt64, 1 << 40}
	ints := Vector{kind: vectorInt}
	ints.resize(len(values) + 1)
	copy(ints.ints, values)
	ints.nulls[len(values)] = true
	sel := AllRows(nil, len(values)+1)
	got := make([]types.Datum, len(sel))
	Result{vec: &ints}.Box(got, 1, sel)
	seen := map[types.Datum]int{}
	for k, v := range values {
		d := got[k]
		if x, ok := d.(int64); !ok || x != v {
			t.Fatalf("types.Datum %d: %#v, want int64 %d", k, d, v)
		}
		if d != any(v) || any(v) != d {
			t.Fatalf("types.Datum %d: == disagrees with an ordinary int64", k)
		}
		switch d.(type) {
		case int64:
		default:
			t.Fatalf("types.Datum %d: type switch missed int64", k)
		}
		seen[d]++
		if seen[any(v)] != 1 {
			t.Fatalf("types.Datum %d: map key differs from an ordinary int64", k)
		}
		if fmt.Sprint(d) != fmt.Sprint(v) {
			t.Fatalf("types.Datum %d: prints %s", k, fmt.Sprint(d))
		}
	}
	if got[len(values)] != nil {
		t.Fatalf("NULL boxed as %#v", got[len(values)])
	}
	// The slab is not aliased by the vector: reusing the vector for the
	// next batch leaves the Datums unchanged.
	for i := range ints.ints {
		ints.ints[i] = 7
	}
	for k, v := range values {
		if got[k] != any(v) {
			t.Fatalf("types.Datum %d changed to %v after the vector was reused", k, got[k])
		}
	}
}
