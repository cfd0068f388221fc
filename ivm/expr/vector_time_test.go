package expr

import (
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/types"
)

// timeColumns are the timestamp kernel tests' columns: timestamp,
// timestamptz, int4, int2.
//
//lint:immutable a constant test schema.
var timeColumns = []types.Type{types.TTimestamp, types.TTimestampTZ, types.TInt4, types.TInt2}

// timeMicros are timestamps (µs since 2000) at and near the ends of the
// range, the infinities and ordinary values.
//
//lint:immutable a constant test domain.
var timeMicros = []int64{0, 1, -1, 1_999_999, 761_234_567_890_123, -946_684_800_000_000,
	math.MinInt64, math.MaxInt64, -211813488000000000, -211813488000000000 + 1, 9223371331200000000 - 1, 9223371331200000000 - 2_000_000}

func genTimeRow(t *rapid.T, label string) types.Row {
	row := make(types.Row, len(timeColumns))
	for i, ct := range timeColumns {
		if rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("%s.null%d", label, i)) == 0 {
			continue
		}
		switch ct.Kind {
		case types.KindTimestamp:
			row[i] = types.Timestamp(rapid.SampledFrom(timeMicros).Draw(t, fmt.Sprintf("%s.c%d", label, i)))
		case types.KindTimestampTZ:
			row[i] = types.TimestampTZ(rapid.SampledFrom(timeMicros).Draw(t, fmt.Sprintf("%s.c%d", label, i)))
		default:
			row[i] = rapid.SampledFrom(vectorIntDomain(ct)).Draw(t, fmt.Sprintf("%s.c%d", label, i))
		}
	}
	return row
}

// genTimeExpr draws a timestamp (tz: timestamptz) expression of the shapes
// timeKernel computes, nested up to depth, and some it leaves to Eval.
func genTimeExpr(t *rapid.T, tz bool, depth int) Expr {
	col := 0
	if tz {
		col = 1
	}
	choice := rapid.IntRange(0, 3).Draw(t, "timeNode")
	if depth <= 0 {
		choice = 0
	}
	micros := rapid.SampledFrom([]int64{2_000_000, -2_000_000, 0, 1, math.MaxInt64, math.MinInt64, 1 << 40, 86_400_000_000}).Draw(t, "micros")
	iv := types.Interval{Micros: micros}
	if rapid.IntRange(0, 5).Draw(t, "days") == 0 {
		iv.Days = 1
	}
	must := func(e Expr, err error) Expr {
		if err != nil {
			t.Fatalf("build: %v", err)
		}
		return e
	}
	switch choice {
	case 0:
		return &ColumnRef{Index: col, Typ: timeColumns[col]}
	case 1:
		x := genTimeExpr(t, tz, depth-1)
		stride := types.Interval{Micros: rapid.SampledFrom([]int64{2_000_000, 10_000_000, 0, -5, 1}).Draw(t, "stride")}
		if rapid.IntRange(0, 5).Draw(t, "strideMonths") == 0 {
			stride.Months = 1
		}
		origin := rapid.SampledFrom([]int64{0, -946_684_800_000_000, math.MaxInt64, 1_500_000}).Draw(t, "origin")
		var o types.Datum = types.Timestamp(origin)
		if tz {
			o = types.TimestampTZ(origin)
		}
		return must(NewCall("date_bin", NewConst(types.TInterval, stride), x, NewConst(x.Type(), o)))
	case 2:
		op := rapid.SampledFrom([]string{"+", "-"}).Draw(t, "op")
		return must(NewBinary(op, genTimeExpr(t, tz, depth-1), NewConst(types.TInterval, iv)))
	}
	op := rapid.SampledFrom([]string{"+", "-"}).Draw(t, "op")
	k := rapid.IntRange(2, 3).Draw(t, "factorColumn")
	factor := must(NewCast(&ColumnRef{Index: k, Typ: timeColumns[k]}, types.TFloat8))
	var scaled Expr
	if rapid.Bool().Draw(t, "ivLeft") {
		scaled = must(NewBinary("*", NewConst(types.TInterval, iv), factor))
	} else {
		scaled = must(NewBinary("*", factor, NewConst(types.TInterval, iv)))
	}
	return must(NewBinary(op, genTimeExpr(t, tz, depth-1), scaled))
}

// The timestamp kernels give Eval's values and errors, row by row, on a
// random selection, and their Datums are ordinary timestamps.
func TestTimeKernelMatchesRowEvaluation(t *testing.T) {
	compiled := 0
	rapid.Check(t, func(t *rapid.T) {
		e := genTimeExpr(t, rapid.Bool().Draw(t, "tz"), 3)
		rows := make([]types.Row, rapid.IntRange(0, 10).Draw(t, "rows"))
		var sel []int32
		for i := range rows {
			rows[i] = genTimeRow(t, fmt.Sprintf("row%d", i))
			if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("skip%d", i)) != 0 {
				sel = append(sel, int32(i))
			}
		}
		env := &Env{}
		p := CompileVector(e)
		if _, ok := p.root.(*timeKernel); ok {
			compiled++
		}
		for round := 0; round < 2; round++ {
			res := p.EvalSel(env, rows, sel)
			for _, i := range sel {
				want, wantErr := e.Eval(env, rows[i])
				if got, want := errorText(res.Err(int(i))), errorText(wantErr); got != want {
					t.Fatalf("%s on row %d %v: vector error %q, row error %q", e, i, rows[i], got, want)
				}
				if wantErr != nil {
					continue
				}
				got := res.Datum(int(i))
				if got != want || res.Null(int(i)) != (want == nil) {
					t.Fatalf("%s on row %d %v: vector %#v, row %#v", e, i, rows[i], got, want)
				}
				switch got.(type) {
				case nil, types.Timestamp, types.TimestampTZ:
				default:
					t.Fatalf("%s: a %T Datum", e, got)
				}
			}
		}
	})
	if compiled == 0 {
		t.Fatal("no expression compiled to a timeKernel")
	}
}

// The HOP window start of Nexmark q5 compiles to timestamp kernels.
func TestTimeKernelCompilesHop(t *testing.T) {
	ts := &ColumnRef{Index: 0, Typ: types.TTimestamp}
	bin, err := NewCall("date_bin", NewConst(types.TInterval, types.Interval{Micros: 2_000_000}), ts, NewConst(types.TTimestamp, types.Timestamp(-946_684_800_000_000)))
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewCast(&ColumnRef{Index: 2, Typ: types.TInt4}, types.TFloat8)
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := NewBinary("*", k, NewConst(types.TInterval, types.Interval{Micros: 2_000_000}))
	if err != nil {
		t.Fatal(err)
	}
	hop, err := NewBinary("-", bin, scaled)
	if err != nil {
		t.Fatal(err)
	}
	p := CompileVector(hop)
	root, ok := p.root.(*timeKernel)
	if !ok || root.xt == nil || !root.xt.bin {
		t.Fatalf("%s compiled to %T, want a timeKernel over date_bin's", hop, p.root)
	}
	res := p.Eval(&Env{}, []types.Row{{types.Timestamp(3_500_000), nil, int64(1)}})
	if got := res.Datum(0); got != types.Timestamp(0) {
		t.Fatalf("%s = %#v, want 2000-01-01 00:00:00", hop, got)
	}
}
