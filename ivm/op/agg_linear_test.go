package op

import (
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// floatOf is float8(e) for an int8 expression (test only).
type floatOf struct{ e expr.Expr }

func (f floatOf) Type() types.Type { return types.TFloat8 }
func (f floatOf) String() string   { return "float8(" + f.e.String() + ")" }
func (f floatOf) Eval(env *expr.Env, row types.Row) (types.Datum, error) {
	v, err := f.e.Eval(env, row)
	if v == nil || err != nil {
		return nil, err
	}
	return float64(v.(int64)), nil
}

// extremeOf maps an int8 expression's tiny domain onto int8 values near
// ±2^63 and the 2^31/2^32 boundaries of the int8 SUM words (test only).
type extremeOf struct{ e expr.Expr }

//lint:immutable test table, never assigned.
var extremes = []int64{math.MaxInt64, math.MinInt64, 1<<32 - 1, -1 << 31, math.MaxInt64 - 1<<31}

func (f extremeOf) Type() types.Type { return types.TInt8 }
func (f extremeOf) String() string   { return "extreme(" + f.e.String() + ")" }
func (f extremeOf) Eval(env *expr.Env, row types.Row) (types.Datum, error) {
	v, err := f.e.Eval(env, row)
	if v == nil || err != nil {
		return nil, err
	}
	return extremes[v.(int64)%int64(len(extremes))], nil
}

// floatsOf maps an int8 expression's tiny domain onto float values of
// type t (test only): the values near float8's (or float4's) largest,
// whose sums overflow, and non-finite ones. Every sum of them is exact in
// any order (small multiples of one power of two), so the incremental
// (sequential) float sum and StreamAggregate's exact sum agree.
type floatsOf struct {
	e      expr.Expr
	t      types.Type
	values []float64
}

func (f floatsOf) Type() types.Type { return f.t }
func (f floatsOf) String() string   { return "floats(" + f.e.String() + ")" }
func (f floatsOf) Eval(env *expr.Env, row types.Row) (types.Datum, error) {
	v, err := f.e.Eval(env, row)
	if v == nil || err != nil {
		return nil, err
	}
	return f.values[v.(int64)%int64(len(f.values))], nil
}

// numericsOf maps an int8 expression's tiny domain onto numeric values
// of type t (test only): by default numeric(18,2)'s largest and least, a
// small one and NaN.
type numericsOf struct {
	e      expr.Expr
	t      types.Type
	values []string
}

//lint:immutable test table, never assigned.
var numerics = []string{"9999999999999999.99", "NaN", "-9999999999999999.99", "0.50"}

func (f numericsOf) Type() types.Type {
	if f.t.Kind == 0 {
		return types.Type{Kind: types.KindNumeric, Typmod: types.MakeNumericTypmod(18, 2)}
	}
	return f.t
}
func (f numericsOf) String() string { return "numerics(" + f.e.String() + ")" }
func (f numericsOf) Eval(env *expr.Env, row types.Row) (types.Datum, error) {
	v, err := f.e.Eval(env, row)
	if v == nil || err != nil {
		return nil, err
	}
	values := f.values
	if values == nil {
		values = numerics
	}
	d, _, err := apd.NewFromString(values[v.(int64)%int64(len(values))])
	return d, err
}

// int4Of is e typed int4 (test only).
type int4Of struct{ expr.Expr }

func (int4Of) Type() types.Type { return types.TInt4 }

// linearCases are specs on the Aggregate's linear path (words state,
// decoded cache; merge operands unless a float sum is present).
func linearCases() []AggregateSpec {
	a := testexpr.IntCol(1)
	b4 := testexpr.Col{Index: 2, T: types.TInt4}
	isBig := testexpr.Binary{Op: ">", L: a, R: testexpr.Int(1)}
	mergeable := []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggCount, Arg: a, Name: "c"},
		{Func: AggSum, Arg: b4, Name: "s4"},
		{Func: AggAvg, Arg: b4, Name: "avg4"},
		{Func: AggBoolAnd, Arg: isBig, Name: "band"},
		{Func: AggBoolOr, Arg: isBig, Name: "bor"},
		{Func: AggCountStar, Filter: isBig, Name: "nf"},
		{Func: AggSum, Arg: b4, Filter: isBig, Name: "sf"},
		// Division by zero on a = 0: errors are data.
		{Func: AggSum, Arg: int4Of{testexpr.Binary{Op: "/", L: testexpr.Int(6), R: a}}, Name: "div"},
	}
	floats := append(append([]AggregateCall(nil), mergeable[:3]...),
		AggregateCall{Func: AggSum, Arg: floatOf{a}, Name: "sf8"},
		AggregateCall{Func: AggAvg, Arg: floatOf{testexpr.Col{Index: 2, T: types.TInt8}}, Name: "avgf8"})
	b8 := testexpr.IntCol(2)
	ext := extremeOf{b8}
	int8s := []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggSum, Arg: b8, Name: "s8"},
		{Func: AggAvg, Arg: b8, Name: "avg8"},
		{Func: AggSum, Arg: ext, Name: "sx"},
		{Func: AggAvg, Arg: ext, Name: "avgx"},
		{Func: AggSum, Arg: ext, Filter: isBig, Name: "sxf"},
		{Func: AggSum, Arg: b4, Name: "s4"},
	}
	num := numericsOf{e: b8}
	numerics := []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggSum, Arg: num, Name: "sn"},
		{Func: AggAvg, Arg: num, Name: "avgn"},
		{Func: AggSum, Arg: num, Filter: isBig, Name: "snf"},
		{Func: AggSum, Arg: ext, Name: "sx"},
	}
	overflows := floatOverflowCalls()
	return []AggregateSpec{
		{GroupBy: []int{0}, Calls: mergeable},
		{GroupBy: nil, Calls: mergeable},
		{GroupBy: []int{0, 1}, Calls: mergeable[:3]},
		{GroupBy: []int{0}, Calls: int8s},
		{GroupBy: nil, Calls: int8s},
		{GroupBy: []int{0}, Calls: numerics},
		{GroupBy: nil, Calls: numerics},
		{GroupBy: []int{0}, Calls: floats},
		{GroupBy: nil, Calls: floats},
		{GroupBy: []int{1}, Calls: overflows},
		{GroupBy: nil, Calls: overflows},
	}
}

// floatOverflowCalls are float SUM/AVG calls whose sums overflow and come
// back, over infinities and NaN (values of columns 1 and 2).
func floatOverflowCalls() []AggregateCall {
	a, b := testexpr.IntCol(1), testexpr.IntCol(2)
	big8 := floatsOf{e: a, t: types.TFloat8, values: []float64{math.Ldexp(1, 1023), math.Ldexp(-1, 1023), math.Ldexp(3, 1021)}}
	odd8 := floatsOf{e: b, t: types.TFloat8, values: []float64{math.Inf(1), math.Ldexp(1, 1023), math.NaN(), math.Inf(-1)}}
	big4 := floatsOf{e: b, t: types.TFloat4, values: []float64{math.Ldexp(1, 127), math.Ldexp(-1, 127), math.Ldexp(3, 125)}}
	return []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggSum, Arg: big8, Name: "s8"},
		{Func: AggAvg, Arg: big8, Name: "a8"},
		{Func: AggSum, Arg: odd8, Name: "so"},
		{Func: AggAvg, Arg: odd8, Name: "ao"},
		{Func: AggSum, Arg: big4, Name: "s4"},
		{Func: AggAvg, Arg: big4, Name: "a4"},
	}
}

// TestAggregateGenericFloatOverflow: the same float sums on the generic
// path (a MIN and DISTINCT sums beside them), whose output errors are
// stored with the group and retracted with the rows.
func TestAggregateGenericFloatOverflow(t *testing.T) {
	calls := floatOverflowCalls()
	calls = append(calls,
		AggregateCall{Func: AggMin, Arg: testexpr.IntCol(1), Name: "min"},
		AggregateCall{Func: AggSum, Arg: calls[1].Arg, Distinct: true, Name: "sd8"},
		AggregateCall{Func: AggAvg, Arg: calls[3].Arg, Distinct: true, Name: "ad8"})
	specs := []AggregateSpec{{GroupBy: []int{1}, Calls: calls}, {GroupBy: nil, Calls: calls}, {GroupBy: []int{2}, Calls: calls}}
	for i, spec := range specs {
		a, err := NewAggregate(State{}, intSchema(3), spec)
		if err != nil || a.lin != nil {
			t.Fatalf("spec %d: not on the generic path (%v)", i, err)
		}
	}
	checkAggregateSpecs(t, specs)
}

// TestAggregateGenericNumericNonFinite: numeric SUM/AVG (unconstrained:
// the generic path) over NaN and ±Infinity, inserted and deleted, equal
// StreamAggregate's over the live rows: a deleted NaN or infinity leaves
// no trace in the sum.
func TestAggregateGenericNumericNonFinite(t *testing.T) {
	num := types.Type{Kind: types.KindNumeric, Typmod: -1}
	x := numericsOf{e: testexpr.IntCol(1), t: num, values: []string{"NaN", "Infinity", "1.5"}}
	y := numericsOf{e: testexpr.IntCol(2), t: num, values: []string{"-Infinity", "2.25", "Infinity"}}
	calls := []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggSum, Arg: x, Name: "sx"},
		{Func: AggAvg, Arg: x, Name: "ax"},
		{Func: AggSum, Arg: y, Name: "sy"},
		{Func: AggAvg, Arg: y, Name: "ay"},
		{Func: AggSum, Arg: y, Distinct: true, Name: "sdy"},
	}
	specs := []AggregateSpec{{GroupBy: []int{0}, Calls: calls}, {GroupBy: nil, Calls: calls}}
	for i, spec := range specs {
		a, err := NewAggregate(State{}, intSchema(3), spec)
		if err != nil || a.lin != nil {
			t.Fatalf("spec %d: not on the generic path (%v)", i, err)
		}
	}
	checkAggregateSpecs(t, specs)
}

// linearMergeable is how many of linearCases() lead with mergeable words.
const linearMergeable = 7

func TestAggregateLinearIncremental(t *testing.T) {
	for i, spec := range linearCases() {
		a, err := NewAggregate(State{}, intSchema(3), spec)
		if err != nil || a.lin == nil {
			t.Fatalf("spec %d: not on the linear path (%v)", i, err)
		}
		if a.lin.merge != (i < linearMergeable) {
			t.Fatalf("spec %d: merge = %v", i, a.lin.merge)
		}
	}
	checkAggregateSpecs(t, linearCases())
}

// TestAggregateLinearDiscard: an epoch whose batch is thrown away (and the
// arrangement caches discarded, as circuit.DiscardCaches does) leaves no
// trace in the decoded group cache: the next epochs give the right output.
func TestAggregateLinearDiscard(t *testing.T) { checkAggregateDiscard(t, linearCases()) }

// checkAggregateDiscard steps an Aggregate of a random spec among specs,
// throwing some epochs' batches away, and checks it against
// StreamAggregate over the committed input after every kept epoch.
func checkAggregateDiscard(t *testing.T, specs []AggregateSpec) {
	rapid.Check(t, func(t *rapid.T) {
		spec := specs[rapid.IntRange(0, len(specs)-1).Draw(t, "spec")]
		a, err := NewAggregate(State{ID: arrange.MakeID(1, 1), CacheEntriesMax: rapid.SampledFrom([]int{0, 1, 2}).Draw(t, "cache")}, intSchema(3), spec)
		if err != nil {
			t.Fatal(err)
		}
		store := kv.NewMemory()
		env := &expr.Env{}
		var integrated, outputs, errs zset.Batch
		for step := 0; step < stepsMax; step++ {
			delta := keepPositive(integrated, genDelta(t, "in", 3, true))
			txn := kv.NewTxn(store)
			ctx := &Context{Txn: txn, Env: env}
			out, err := a.Step(ctx, []zset.Batch{delta})
			if err != nil {
				t.Fatal(err)
			}
			if rapid.IntRange(0, 2).Draw(t, "discard") == 0 {
				for _, arr := range a.Arrangements() {
					arr.DiscardCache()
				}
				continue
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			integrated = zset.Consolidate(zset.Sum(integrated, delta))
			outputs = zset.Consolidate(zset.Sum(outputs, out))
			errs = zset.Consolidate(zset.Sum(errs, ctx.Errors))
			want := &Context{Env: env}
			expected, err := StreamAggregate(want, intSchema(3), spec, integrated)
			if err != nil {
				t.Fatal(err)
			}
			if !zset.Equal(outputs, expected) {
				t.Fatalf("step %d: incremental %v\nstream %v", step, outputs, zset.Consolidate(expected))
			}
			if !zset.Equal(errs, want.Errors) {
				t.Fatalf("step %d: errors %v want %v", step, errs, zset.Consolidate(want.Errors))
			}
		}
	})
}

// TestNumericDivideExact: the exact integer division gives what apd's
// division at 2000 extra digits gives, digit for digit and scale for
// scale, for sums of int8 and numeric values divided by row counts (and
// by decimals).
func TestNumericDivideExact(t *testing.T) {
	// Ties round half away from zero, as PostgreSQL's numeric does.
	for _, c := range []struct{ x, y, want string }{
		{"12345678901234567891", "2", "6172839450617283946"},
		{"-12345678901234567891", "2", "-6172839450617283946"},
		{"12345678901234567890.1", "2", "6172839450617283945.1"},
		{"1", "3", "0.33333333333333333333"},
		{"-2", "3", "-0.66666666666666666667"},
	} {
		x, _, _ := apd.NewFromString(c.x)
		y, _, _ := apd.NewFromString(c.y)
		if got := numericDivide(x, y).Text('f'); got != c.want {
			t.Fatalf("%s / %s = %s, want %s", c.x, c.y, got, c.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		coeff := rapid.SampledFrom([]int64{0, 1, 2, 3, 5, 7, 9, 10, 99, 12345, math.MaxInt64, math.MinInt64 + 1, -1, -7, -2, 1 << 40}).Draw(t, "c")
		x := apd.New(coeff, int32(rapid.IntRange(-24, 3).Draw(t, "ex")))
		if rapid.Bool().Draw(t, "big") {
			x = int8Sum(rapid.Int64().Draw(t, "hi"), rapid.Int64().Draw(t, "lo"))
		}
		y := apd.New(rapid.SampledFrom([]int64{1, 2, 3, 6, 7, 9, 11, 4294967295, 1000000007, -3}).Draw(t, "y"), int32(rapid.IntRange(-2, 2).Draw(t, "ey")))
		got := numericDivide(x, y)
		want := numericDivideDecimal(x, y, divScale(x, y))
		if want.IsZero() {
			// PostgreSQL's numeric has no negative zero; apd's has.
			want.Negative = false
		}
		if got.Text('f') != want.Text('f') || got.Exponent != want.Exponent {
			t.Fatalf("%s / %s = %s, apd %s", x.Text('f'), y.Text('f'), got.Text('f'), want.Text('f'))
		}
	})
}

// TestAggregateLinearReadAhead: groups the decoded cache does not hold are
// read ahead in one ordered pass (readAhead) and must give what a Get per
// group gives: many groups (wide key values), a cache of none to a few
// groups, deletions, restarts and epochs thrown away, checked against
// StreamAggregate after every kept epoch.
func TestAggregateLinearReadAhead(t *testing.T) {
	specs := linearCases()
	rapid.Check(t, func(t *rapid.T) {
		spec := specs[rapid.IntRange(0, len(specs)-1).Draw(t, "spec")]
		cache := rapid.SampledFrom([]int{0, 1, 4, 64}).Draw(t, "cache")
		open := func() *Aggregate {
			a, err := NewAggregate(State{ID: arrange.MakeID(1, 1), CacheEntriesMax: cache}, intSchema(3), spec)
			if err != nil {
				t.Fatal(err)
			}
			if a.lin == nil {
				t.Fatal("not on the linear path")
			}
			a.lin.readAheadMin = rapid.IntRange(1, 3).Draw(t, "readAheadMin")
			return a
		}
		a := open()
		store := kv.NewMemory()
		env := &expr.Env{}
		var integrated, outputs, errs zset.Batch
		for step := 0; step < stepsMax; step++ {
			var delta zset.Batch
			for range rapid.IntRange(0, 40).Draw(t, "rows") {
				// Column 0 (the group key of most specs) takes many values.
				row := types.Row{int64(rapid.IntRange(0, 30).Draw(t, "g")), genValue(t, "a", true), genValue(t, "b", true)}
				delta.Add(row, int64(rapid.SampledFrom([]int{-1, 1, 1, 2}).Draw(t, "w")))
			}
			delta = keepPositive(integrated, delta)
			if rapid.IntRange(0, 4).Draw(t, "restart") == 0 {
				a = open()
			}
			txn := kv.NewTxn(store)
			ctx := &Context{Txn: txn, Env: env}
			out, err := a.Step(ctx, []zset.Batch{delta})
			if err != nil {
				t.Fatal(err)
			}
			if rapid.IntRange(0, 3).Draw(t, "discard") == 0 {
				for _, arr := range a.Arrangements() {
					arr.DiscardCache()
				}
				continue
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			integrated = zset.Consolidate(zset.Sum(integrated, delta))
			outputs = zset.Consolidate(zset.Sum(outputs, out))
			errs = zset.Consolidate(zset.Sum(errs, ctx.Errors))
			want := &Context{Env: env}
			expected, err := StreamAggregate(want, intSchema(3), spec, integrated)
			if err != nil {
				t.Fatal(err)
			}
			if !zset.Equal(outputs, expected) {
				t.Fatalf("step %d: incremental %v\nstream %v", step, outputs, zset.Consolidate(expected))
			}
			if !zset.Equal(errs, want.Errors) {
				t.Fatalf("step %d: errors %v want %v", step, errs, zset.Consolidate(want.Errors))
			}
		}
	})
}
