package op

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func aggregateCases() []AggregateSpec {
	a, b := testexpr.IntCol(1), testexpr.IntCol(2)
	b4 := testexpr.Col{Index: 2, T: types.TInt4}
	isBig := testexpr.Binary{Op: ">", L: a, R: testexpr.Int(1)}
	all := []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggCount, Arg: a, Name: "c"},
		{Func: AggSum, Arg: a, Name: "s8"},
		{Func: AggSum, Arg: b4, Name: "s4"},
		{Func: AggAvg, Arg: b, Name: "avg"},
		{Func: AggMin, Arg: a, Name: "min"},
		{Func: AggMax, Arg: b, Name: "max"},
		{Func: AggBoolAnd, Arg: isBig, Name: "band"},
		{Func: AggBoolOr, Arg: isBig, Name: "bor"},
		{Func: AggCount, Arg: a, Distinct: true, Name: "cd"},
		{Func: AggSum, Arg: b, Distinct: true, Name: "sd"},
		{Func: AggCountStar, Filter: isBig, Name: "nf"},
		{Func: AggSum, Arg: b, Filter: isBig, Name: "sf"},
		// Division by zero on a = 0: errors are data.
		{Func: AggSum, Arg: testexpr.Binary{Op: "/", L: testexpr.Int(6), R: a}, Name: "div"},
	}
	return []AggregateSpec{
		{GroupBy: []int{0}, Calls: all},
		{GroupBy: nil, Calls: all},
		{GroupBy: []int{0, 1}, Calls: all[:3]},
		{GroupBy: []int{0}},
	}
}

func TestAggregateIncremental(t *testing.T) {
	checkAggregateSpecs(t, aggregateCases())
}

// checkAggregateSpecs checks Aggregate against StreamAggregate for each
// spec over 3-column int8 rows with NULLs.
func checkAggregateSpecs(t *testing.T, specs []AggregateSpec) {
	for i, spec := range specs {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{3}, nulls: true, positive: true,
					make: func(s State) Operator {
						o, err := NewAggregate(s, intSchema(3), spec)
						if err != nil {
							panic(err)
						}
						return o
					},
					stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamAggregate(ctx, intSchema(3), spec, in[0])
					},
				})
			})
		})
	}
}

func dec(s string) *apd.Decimal {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return d
}

// TestAggregatePostgresResults pins PostgreSQL's result values and types.
func TestAggregatePostgresResults(t *testing.T) {
	x := testexpr.IntCol(0)
	x4 := testexpr.Col{Index: 0, T: types.TInt4}
	spec := AggregateSpec{Calls: []AggregateCall{
		{Func: AggCountStar}, {Func: AggSum, Arg: x}, {Func: AggSum, Arg: x4}, {Func: AggAvg, Arg: x4}, {Func: AggMax, Arg: x},
	}}
	ctx := &Context{Env: &expr.Env{}}
	schema := intSchema(1)
	empty, err := StreamAggregate(ctx, schema, spec, zset.Batch{})
	if err != nil {
		t.Fatal(err)
	}
	// SELECT count(*), sum(x), sum(x::int4), avg(x::int4), max(x) FROM empty → (0, NULL, NULL, NULL, NULL)
	if want := (zset.Batch{Rows: []types.Row{{int64(0), nil, nil, nil, nil}}, Weights: []int64{1}}); !zset.Equal(empty, want) {
		t.Fatalf("empty: %v", empty)
	}
	in := zset.Batch{Rows: []types.Row{{int64(1)}, {int64(2)}}, Weights: []int64{1, 1}}
	got, _ := StreamAggregate(ctx, schema, spec, in)
	want := types.Row{int64(2), dec("3"), int64(3), dec("1.5000000000000000"), int64(2)}
	if !zset.Equal(got, zset.Batch{Rows: []types.Row{want}, Weights: []int64{1}}) {
		t.Fatalf("got %v want %v", got, zset.FormatRow(want))
	}
	// avg(1, 1) = 1.00000000000000000000 (20 digits), as PostgreSQL prints.
	got, _ = StreamAggregate(ctx, schema, spec, zset.Batch{Rows: []types.Row{{int64(1)}}, Weights: []int64{2}})
	if avg := got.Rows[0][3].(*apd.Decimal).Text('f'); avg != "1.00000000000000000000" {
		t.Fatalf("avg(1,1) = %s", avg)
	}
	a, _ := NewAggregate(State{}, schema, spec)
	wantTypes := []types.Kind{types.KindInt8, types.KindNumeric, types.KindInt8, types.KindNumeric, types.KindInt8}
	for i, c := range a.Schema() {
		if c.Type.Kind != wantTypes[i] {
			t.Errorf("column %d type %s", i, c.Type)
		}
	}
}

func TestNumericDivideScale(t *testing.T) {
	cases := []struct{ x, y, want string }{
		{"3", "2", "1.5000000000000000"},
		{"2", "2", "1.00000000000000000000"},
		{"10", "3", "3.3333333333333333"},
		{"1", "3", "0.33333333333333333333"},
		{"100000", "7", "14285.714285714286"},
		{"2.50", "2", "1.25000000000000000000"},
		{"5.00", "2", "2.5000000000000000"},
		{"-5", "2", "-2.5000000000000000"},
		{"0", "5", "0.00000000000000000000"},
	}
	for _, c := range cases {
		if got := numericDivide(dec(c.x), dec(c.y)).Text('f'); got != c.want {
			t.Errorf("%s/%s = %s want %s", c.x, c.y, got, c.want)
		}
	}
}
