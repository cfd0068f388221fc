package op

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

var varianceFuncs = []AggFunc{AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp}

// varianceCases are specs with every variance aggregate over int8, int4
// and numeric (with NaN and ±Infinity) arguments, plain and DISTINCT,
// grouped and global.
func varianceCases() []AggregateSpec {
	a := testexpr.IntCol(1)
	b4 := int4Of{testexpr.IntCol(2)}
	num := numericsOf{e: testexpr.IntCol(2), t: types.Type{Kind: types.KindNumeric, Typmod: -1}, values: []string{"1.5", "-2.25", "NaN", "7", "Infinity", "0.125"}}
	calls := []AggregateCall{{Func: AggCountStar, Name: "n"}}
	for _, f := range varianceFuncs {
		calls = append(calls,
			AggregateCall{Func: f, Arg: a, Name: f.String() + "_a"},
			AggregateCall{Func: f, Arg: b4, Name: f.String() + "_b"},
			AggregateCall{Func: f, Arg: num, Name: f.String() + "_n"},
		)
	}
	calls = append(calls,
		AggregateCall{Func: AggStddevSamp, Arg: num, Distinct: true, Name: "dn"},
		AggregateCall{Func: AggVarPop, Arg: a, Filter: testexpr.Binary{Op: ">", L: a, R: testexpr.Int(0)}, Name: "fa"},
	)
	return []AggregateSpec{{GroupBy: []int{0}, Calls: calls}, {Calls: calls}}
}

// TestAggregateVarianceIncremental: the incremental variance aggregates
// (inserts, deletes, NULLs) equal StreamAggregate over the live rows.
func TestAggregateVarianceIncremental(t *testing.T) {
	for i, spec := range varianceCases() {
		a, err := NewAggregate(State{}, intSchema(3), spec)
		if err != nil || a.lin != nil {
			t.Fatalf("spec %d: not on the generic path (%v)", i, err)
		}
	}
	checkAggregateSpecs(t, varianceCases())
}

// TestAggregateVarianceDiscard: epochs thrown away leave no trace.
func TestAggregateVarianceDiscard(t *testing.T) { checkAggregateDiscard(t, varianceCases()) }

// TestVarianceRefusesFloat: float arguments are refused (PostgreSQL's
// Youngs–Cramer accumulation cannot be retracted exactly).
func TestVarianceRefusesFloat(t *testing.T) {
	spec := AggregateSpec{Calls: []AggregateCall{{Func: AggStddevSamp, Arg: testexpr.Col{Index: 0, T: types.TFloat8}, Name: "s"}}}
	_, err := NewAggregate(State{}, types.Schema{{Name: "x", Type: types.TFloat8, Nullable: true}}, spec)
	if err == nil || !strings.Contains(err.Error(), "stddev_samp(double precision)") {
		t.Fatalf("err = %v", err)
	}
}

// TestVarianceMatchesPostgres: var_pop, var_samp, stddev_pop and
// stddev_samp over int4, int8 and numeric columns, with values at the
// types' extremes, many scales, NaN and ±Infinity, inserted and deleted
// in steps (through N = 0, 1 and 2), print exactly what PostgreSQL 15
// prints for the same live rows.
func TestVarianceMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	num := types.Type{Kind: types.KindNumeric, Typmod: -1}
	schema := types.Schema{{Name: "i4", Type: types.TInt4, Nullable: true}, {Name: "i8", Type: types.TInt8, Nullable: true}, {Name: "n", Type: num, Nullable: true}}
	var calls []AggregateCall
	var sqlCalls []string
	for c, col := range schema {
		for _, f := range varianceFuncs {
			calls = append(calls, AggregateCall{Func: f, Arg: testexpr.Col{Index: c, T: col.Type}, Name: f.String()})
			sqlCalls = append(sqlCalls, fmt.Sprintf("%s(%s)::text", f, col.Name))
		}
	}
	a, err := NewAggregate(State{}, schema, AggregateSpec{Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	run := newAggRun(t, a)
	// A row is "i4|i8|n" (empty: NULL).
	type change struct {
		row string
		w   int64
	}
	maxI4, minI4 := fmt.Sprint(math.MaxInt32), fmt.Sprint(math.MinInt32)
	maxI8, minI8 := fmt.Sprint(int64(math.MaxInt64)), fmt.Sprint(int64(math.MinInt64))
	steps := [][]change{
		{{"1|1|1.5", 1}},
		{{"2|2|2.25", 1}},
		{{maxI4 + "|" + maxI8 + "|99999999999999999999.123456789", 3}, {minI4 + "|" + minI8 + "|-0.000000001", 2}},
		{{"1|1|1.5", -1}, {"||", 4}, {"7|-7|NaN", 1}},
		{{"7|-7|NaN", -1}, {"-3|3|Infinity", 1}},
		{{"-3|3|Infinity", -1}, {"5|5|5", 2}},
		{{maxI4 + "|" + maxI8 + "|99999999999999999999.123456789", -3}, {minI4 + "|" + minI8 + "|-0.000000001", -2}},
		{{"2|2|2.25", -1}},
		{{"5|5|5", -1}},
		{{"5|5|5", -1}, {"0|0|0.00", 1}, {"1|1|0.1", 1}, {"2|2|0.7", 1}},
		{{"0|0|0.00", -1}, {"1|1|0.1", -1}, {"2|2|0.7", -1}, {"-1|-1|-Infinity", 1}},
		{{"-1|-1|-Infinity", -1}, {"8|8|NaN", 1}},
		{{"8|8|NaN", -1}, {"9|9|Infinity", 1}, {"10|10|3", 1}},
		{{"9|9|Infinity", -1}, {"10|10|3", -1}, {"||", -4}, {"12|12|1e-20", 1}, {"13|13|33333333333333333333333333.3", 1}},
	}
	live := map[string]int64{}
	var order []string
	for i, step := range steps {
		var delta zset.Batch
		for _, c := range step {
			parts := strings.Split(c.row, "|")
			row := types.Row{}
			for _, p := range parts[:2] {
				if p == "" {
					row = append(row, nil)
					continue
				}
				var v int64
				if _, err := fmt.Sscan(p, &v); err != nil {
					t.Fatal(err)
				}
				row = append(row, v)
			}
			if parts[2] == "" {
				row = append(row, nil)
			} else {
				d, _, err := apd.NewFromString(parts[2])
				if err != nil {
					t.Fatal(err)
				}
				row = append(row, d)
			}
			delta.Add(row, c.w)
			if _, ok := live[c.row]; !ok {
				order = append(order, c.row)
			}
			live[c.row] += c.w
		}
		run.step(delta)
		if len(run.outputs.Rows) != 1 || run.outputs.Weights[0] != 1 || len(run.errs.Rows) != 0 {
			t.Fatalf("step %d: output %v errors %v", i, run.outputs, run.errs)
		}
		var values []string
		lit := func(s, typ string) string {
			if s == "" {
				return "NULL::" + typ
			}
			return "'" + s + "'::" + typ
		}
		for _, r := range order {
			parts := strings.Split(r, "|")
			for range live[r] {
				values = append(values, "("+lit(parts[0], "int4")+","+lit(parts[1], "int8")+","+lit(parts[2], "numeric")+")")
			}
		}
		from := "(SELECT NULL::int4 AS i4, NULL::int8 AS i8, NULL::numeric AS n WHERE false) t"
		if len(values) > 0 {
			from = "(VALUES " + strings.Join(values, ",") + ") t(i4, i8, n)"
		}
		for c, sc := range sqlCalls {
			want, null, _, err := pgtest.QueryText(context.Background(), conn, "SELECT "+sc+" FROM "+from)
			if err != nil {
				t.Fatal(err)
			}
			got := run.outputs.Rows[0][c]
			if null != (got == nil) || (!null && types.Format(types.TNumeric, got) != want) {
				t.Fatalf("step %d: %s = %v, PostgreSQL %q (null %v)", i, sc, got, want, null)
			}
		}
	}
}
