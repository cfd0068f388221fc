package expr

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// Property tests over tiny domains: three nullable int4 columns holding
// -1..2, where NULLs and ties are common.

func genRow(r *rapid.T) types.Row {
	row := make(types.Row, 3)
	for i := range row {
		v := rapid.IntRange(-2, 2).Draw(r, fmt.Sprintf("c%d", i))
		if v == -2 {
			row[i] = nil
		} else {
			row[i] = int64(v)
		}
	}
	return row
}

func col(i int) Expr { return &ColumnRef{Index: i, Typ: types.TInt4, Name: fmt.Sprintf("c%d", i)} }

func must(t interface{ Fatalf(string, ...any) }, e Expr, err error) Expr {
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return e
}

// m adapts a constructor result for must.
func m(t interface{ Fatalf(string, ...any) }) func(Expr, error) Expr {
	return func(e Expr, err error) Expr { return must(t, e, err) }
}

func eval(t interface{ Fatalf(string, ...any) }, e Expr, row types.Row) types.Datum {
	v, err := e.Eval(&Env{}, row)
	if err != nil {
		t.Fatalf("%s: %v", e, err)
	}
	return v
}

func cmp(t interface{ Fatalf(string, ...any) }, op string, l, r Expr) Expr {
	e, err := NewBinary(op, l, r)
	return must(t, e, err)
}

func TestInIsOrOfEqualities(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		row := genRow(r)
		negated := rapid.Bool().Draw(r, "not")
		in := m(r)(NewIn(col(0), []Expr{col(1), col(2), NewConst(types.TInt4, int64(1))}, negated))
		or := m(r)(NewOr(cmp(r, "=", col(0), col(1)), cmp(r, "=", col(0), col(2)), cmp(r, "=", col(0), NewConst(types.TInt4, int64(1)))))
		if negated {
			or = m(r)(NewNot(or))
		}
		if a, b := eval(r, in, row), eval(r, or, row); a != b {
			r.Fatalf("%v: %s = %v but %s = %v", row, in, a, or, b)
		}
	})
}

func TestBetweenIsConjunction(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		row := genRow(r)
		negated := rapid.Bool().Draw(r, "not")
		symmetric := rapid.Bool().Draw(r, "sym")
		b := m(r)(NewBetween(col(0), col(1), col(2), negated, symmetric))
		ref := m(r)(NewAnd(cmp(r, ">=", col(0), col(1)), cmp(r, "<=", col(0), col(2))))
		if symmetric {
			ref = m(r)(NewOr(ref, m(r)(NewAnd(cmp(r, ">=", col(0), col(2)), cmp(r, "<=", col(0), col(1))))))
		}
		if negated {
			ref = m(r)(NewNot(ref))
		}
		if x, y := eval(r, b, row), eval(r, ref, row); x != y {
			r.Fatalf("%v: %s = %v but %s = %v", row, b, x, ref, y)
		}
	})
}

func TestDeMorganAndDistinctFrom(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		row := genRow(r)
		a, b := cmp(r, "<", col(0), col(1)), cmp(r, "=", col(1), col(2))
		lhs := m(r)(NewNot(m(r)(NewAnd(a, b))))
		rhs := m(r)(NewOr(m(r)(NewNot(a)), m(r)(NewNot(b))))
		if x, y := eval(r, lhs, row), eval(r, rhs, row); x != y {
			r.Fatalf("%v: NOT(a AND b) = %v, NOT a OR NOT b = %v", row, x, y)
		}
		d := eval(r, m(r)(NewDistinctFrom(col(0), col(1), false)), row)
		nd := eval(r, m(r)(NewDistinctFrom(col(0), col(1), true)), row)
		if d == nil || nd == nil || d == nd {
			r.Fatalf("%v: DISTINCT FROM %v and NOT DISTINCT FROM %v", row, d, nd)
		}
		if row[0] != nil && row[1] != nil {
			if ne := eval(r, cmp(r, "<>", col(0), col(1)), row); ne != d {
				r.Fatalf("%v: <> %v but DISTINCT FROM %v", row, ne, d)
			}
		}
	})
}

// genExpr draws a small int4 expression over the columns and constants,
// including ones that fail (division by zero).
func genExpr(r *rapid.T, depth int) Expr {
	if depth == 0 || rapid.IntRange(0, 3).Draw(r, "leaf") == 0 {
		switch rapid.IntRange(0, 2).Draw(r, "leafkind") {
		case 0:
			return col(rapid.IntRange(0, 2).Draw(r, "col"))
		case 1:
			return Null(types.TInt4)
		}
		return NewConst(types.TInt4, int64(rapid.IntRange(-1, 2).Draw(r, "k")))
	}
	a, b := genExpr(r, depth-1), genExpr(r, depth-1)
	switch rapid.IntRange(0, 5).Draw(r, "node") {
	case 0:
		return m(r)(NewBinary(rapid.SampledFrom([]string{"+", "-", "*", "/", "%"}).Draw(r, "op"), a, b))
	case 1:
		cond := cmp(r, rapid.SampledFrom([]string{"=", "<", ">="}).Draw(r, "cmp"), genExpr(r, depth-1), genExpr(r, depth-1))
		return m(r)(NewCase(nil, []When{{Cond: cond, Result: a}}, b))
	case 2:
		return m(r)(NewCoalesce(a, b))
	case 3:
		return m(r)(NewNullIf(a, b))
	case 4:
		return m(r)(NewGreatest(a, b))
	}
	return m(r)(NewCall("abs", a))
}

// TestFoldPreservesResults: whenever folding succeeds, the folded tree
// evaluates exactly like the original on every row (value or SQLSTATE).
func TestFoldPreservesResults(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		e := genExpr(r, 3)
		f, err := Fold(e)
		if err != nil {
			var ce *errcode.Error
			if !errors.As(err, &ce) || ce.State() != StateDivisionByZero {
				r.Fatalf("Fold(%s): unexpected error %v", e, err)
			}
			return
		}
		row := genRow(r)
		v1, err1 := e.Eval(&Env{}, row)
		v2, err2 := f.Eval(&Env{}, row)
		if (err1 == nil) != (err2 == nil) {
			// The original may fail on a constant branch the folded tree
			// dropped, never the other way round.
			if err2 != nil {
				r.Fatalf("%s folded to %s: original %v, folded fails %v", e, f, v1, err2)
			}
			return
		}
		if err1 == nil && !types.Equal(types.TInt4, v1, v2) {
			r.Fatalf("%v: %s = %v but folded %s = %v", row, e, v1, f, v2)
		}
	})
}

func TestStringRendering(t *testing.T) {
	e := m(t)(NewBinary("+", col(0), NewConst(types.TInt4, int64(1))))
	c := m(t)(NewCase(nil, []When{{Cond: cmp(t, ">", e, NewConst(types.TInt4, int64(2))), Result: NewConst(types.TUnknown, "big")}}, nil))
	if got, want := c.String(), "CASE WHEN ((c0 + 1) > 2) THEN 'big'::text END"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

func TestVolatility(t *testing.T) {
	now := m(t)(NewCall("now"))
	if ExprVolatility(now) != Stable {
		t.Fatal("now() must be stable")
	}
	if ExprVolatility(m(t)(NewCall("clock_timestamp"))) != Volatile {
		t.Fatal("clock_timestamp() must be volatile")
	}
	if ExprVolatility(m(t)(NewCall("abs", col(0)))) != Immutable {
		t.Fatal("abs must be immutable")
	}
	tz := m(t)(NewCast(&ColumnRef{Index: 0, Typ: types.TTimestamp}, types.TTimestampTZ))
	if ExprVolatility(tz) != Stable {
		t.Fatal("timestamp -> timestamptz depends on the session time zone")
	}
	v, err := now.Eval(&Env{StatementTime: 42}, nil)
	if err != nil || v != types.TimestampTZ(42) {
		t.Fatalf("now() = %v, %v", v, err)
	}
}

func TestEvalBatchReportsRow(t *testing.T) {
	div := m(t)(NewBinary("/", NewConst(types.TInt4, int64(6)), col(0)))
	rows := []types.Row{{int64(1), nil, nil}, {int64(2), nil, nil}, {int64(0), nil, nil}}
	out := make([]types.Datum, len(rows))
	err := EvalBatch(&Env{}, div, rows, out)
	var be *BatchError
	if !errors.As(err, &be) || be.Row != 2 {
		t.Fatalf("want failure at row 2, got %v", err)
	}
	if ce, ok := errcode.As(err); !ok || ce.State() != StateDivisionByZero {
		t.Fatalf("want 22012, got %v", err)
	}
	if out[0] != int64(6) || out[1] != int64(3) {
		t.Fatalf("out = %v", out)
	}
	sel, err := FilterBatch(&Env{}, cmp(t, ">", col(0), NewConst(types.TInt4, int64(1))), rows, nil)
	if err != nil || len(sel) != 1 || sel[0] != 1 {
		t.Fatalf("FilterBatch = %v, %v", sel, err)
	}
}

func BenchmarkEvalFilterProject(b *testing.B) {
	pred := m(b)(NewAnd(cmp(b, ">", col(0), NewConst(types.TInt4, int64(0))), cmp(b, "<>", col(1), NewConst(types.TInt4, int64(7)))))
	proj := m(b)(NewBinary("*", m(b)(NewBinary("+", col(0), col(1))), NewConst(types.TInt4, int64(3))))
	rows := make([]types.Row, 1024)
	for i := range rows {
		rows[i] = types.Row{int64(i % 100), int64(i % 7), nil}
	}
	out := make([]types.Datum, len(rows))
	sel := make([]int, 0, len(rows))
	env := &Env{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sel, _ = FilterBatch(env, pred, rows, sel[:0])
		if err := EvalBatch(env, proj, rows, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(rows))/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkEvalNumericDivision(b *testing.B) {
	e := m(b)(NewBinary("/", &ColumnRef{Index: 0, Typ: types.TNumeric}, NewConst(types.TNumeric, mustNumeric("7"))))
	row := types.Row{mustNumeric("12345.678")}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := e.Eval(&Env{}, row); err != nil {
			b.Fatal(err)
		}
	}
}

func mustNumeric(s string) types.Datum {
	d, err := types.ParseNumeric(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestLikeMatchesBruteForce compares the LIKE matcher with a regular
// expression translation over tiny alphabets, and runs a pathological
// pattern that needs PostgreSQL's abort rule to finish quickly.
func TestLikeMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(r *rapid.T) {
		pat := rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b', '%', '_'}), 0, 6, -1).Draw(r, "pat")
		s := rapid.StringOfN(rapid.SampledFrom([]rune{'a', 'b'}), 0, 8, -1).Draw(r, "s")
		p, err := compileLike(pat, -1, false)
		if err != nil {
			r.Fatal(err)
		}
		got, err := p.match(s)
		if err != nil {
			r.Fatal(err)
		}
		re := "^"
		for _, c := range pat {
			switch c {
			case '%':
				re += ".*"
			case '_':
				re += "."
			default:
				re += string(c)
			}
		}
		want := regexp.MustCompile(re + "$").MatchString(s)
		if got != want {
			r.Fatalf("%q LIKE %q = %v, want %v", s, pat, got, want)
		}
	})
	p, _ := compileLike("%a%a%a%a%a%a%a%a%b", '\\', false)
	if m, _ := p.match(strings.Repeat("a", 5000)); m {
		t.Fatal("no b, no match")
	}
}
