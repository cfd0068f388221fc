package op

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// aggRun steps an Aggregate over a kv.Memory, committing every step, and
// integrates its outputs and errors.
type aggRun struct {
	t             *testing.T
	a             *Aggregate
	store         *kv.Memory
	env           *expr.Env
	outputs, errs zset.Batch
}

func newAggRun(t *testing.T, a *Aggregate) *aggRun {
	return &aggRun{t: t, a: a, store: kv.NewMemory(), env: &expr.Env{}}
}

func (r *aggRun) step(delta zset.Batch) {
	r.t.Helper()
	txn := kv.NewTxn(r.store)
	ctx := &Context{Txn: txn, Env: r.env}
	out, err := r.a.Step(ctx, []zset.Batch{delta})
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.store.Apply(txn.Batch()); err != nil {
		r.t.Fatal(err)
	}
	r.outputs = zset.Consolidate(zset.Sum(r.outputs, out))
	r.errs = zset.Consolidate(zset.Sum(r.errs, ctx.Errors))
}

// int8SumSpec is SELECT sum(x), avg(x) over int8 x (column 0), on the
// linear path's int8 words.
func int8SumSpec(t *testing.T) (*Aggregate, AggregateSpec) {
	x := testexpr.IntCol(0)
	spec := AggregateSpec{Calls: []AggregateCall{{Func: AggSum, Arg: x, Name: "s"}, {Func: AggAvg, Arg: x, Name: "a"}}}
	a, err := NewAggregate(State{}, intSchema(1), spec)
	if err != nil {
		t.Fatal(err)
	}
	if a.lin == nil || !a.lin.merge || a.lin.calls[0].kind != linSumInt8 {
		t.Fatal("sum(int8) is not on the linear path with merge words")
	}
	return a, spec
}

// TestInt8SumMatchesPostgres: sum(int8) and avg(int8) over values at and
// near ±2^63, inserted and deleted in steps, print exactly what
// PostgreSQL 15 prints for the same live rows (numeric results).
func TestInt8SumMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	a, _ := int8SumSpec(t)
	run := newAggRun(t, a)
	type change struct {
		v int64
		w int64
	}
	steps := [][]change{
		{{math.MaxInt64, 3}, {math.MaxInt64 - 1, 1}},
		{{math.MinInt64, 2}, {-1, 1}, {1<<32 - 1, 5}},
		{{math.MaxInt64, -2}, {-1 << 31, 7}},
		{{math.MinInt64, 3}, {math.MaxInt64, -1}},
		{{math.MaxInt64 - 1, -1}, {-1, -1}, {1<<32 - 1, -5}, {-1 << 31, -7}},
		{{math.MinInt64, -5}},
	}
	live := map[int64]int64{}
	for i, step := range steps {
		var delta zset.Batch
		for _, c := range step {
			delta.Add(types.Row{c.v}, c.w)
			live[c.v] += c.w
		}
		run.step(delta)
		outputs := run.outputs
		if len(outputs.Rows) != 1 || outputs.Weights[0] != 1 {
			t.Fatalf("step %d: output %v", i, outputs)
		}
		var values []string
		for _, v := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, -1, 1<<32 - 1, -1 << 31} {
			for range live[v] {
				values = append(values, fmt.Sprintf("%d", v))
			}
		}
		checkSumAvgMatchPostgres(t, conn, i, outputs.Rows[0], "int8", values)
	}
}

// checkSumAvgMatchPostgres checks that row's first two values print as
// PostgreSQL 15 prints sum(x) and avg(x) over values (literals of type
// typ; none: an empty input).
func checkSumAvgMatchPostgres(t *testing.T, conn *pgx.Conn, step int, row types.Row, typ string, values []string) {
	t.Helper()
	from := "(SELECT NULL::" + typ + " AS x WHERE false) t"
	if len(values) > 0 {
		lits := make([]string, len(values))
		for i, v := range values {
			lits[i] = "('" + v + "'::" + typ + ")"
		}
		from = "(VALUES " + strings.Join(lits, ",") + ") t(x)"
	}
	for c, fn := range []string{"sum", "avg"} {
		want, null, _, err := pgtest.QueryText(context.Background(), conn, "SELECT "+fn+"(x)::text FROM "+from)
		if err != nil {
			t.Fatal(err)
		}
		got := row[c]
		if null != (got == nil) || (!null && types.Format(types.TNumeric, got) != want) {
			t.Fatalf("step %d: %s = %v, PostgreSQL %q (null %v)", step, fn, got, want, null)
		}
	}
}

// TestInt8SumRowBound: a group past int8SumRowsMax live rows is in error
// (54000) rather than showing a wrong sum, and the error is retracted,
// with the exact sum back, when rows leave.
func TestInt8SumRowBound(t *testing.T) {
	a, _ := int8SumSpec(t)
	run := newAggRun(t, a)
	step := func(v, w int64) {
		t.Helper()
		run.step(zset.Batch{Rows: []types.Row{{v}}, Weights: []int64{w}})
	}
	step(math.MaxInt64, int8SumRowsMax)
	errs, outputs := &run.errs, &run.outputs
	if len(errs.Rows) != 0 {
		t.Fatalf("errors at the bound: %v", errs)
	}
	want := "39614081247908796755622232065" // (2^63-1)·(2^32-1)
	if got := types.Format(types.TNumeric, outputs.Rows[0][0]); got != want {
		t.Fatalf("sum at the bound = %s, want %s", got, want)
	}
	step(math.MaxInt64, 1)
	// One error per failing call (sum and avg).
	if len(errs.Rows) != 1 || errs.Weights[0] != 2 || errs.Rows[0][0] != "54000" || errs.Rows[0][1] != errcode.ViewEvaluationError.ID {
		t.Fatalf("past the bound: errors %v", errs)
	}
	step(math.MaxInt64, -2)
	if len(errs.Rows) != 0 {
		t.Fatalf("error not retracted: %v", errs)
	}
	want = "39614081238685424718767456258" // (2^63-1)·(2^32-2)
	if got := types.Format(types.TNumeric, outputs.Rows[0][0]); got != want {
		t.Fatalf("sum back under the bound = %s, want %s", got, want)
	}
}

// TestFloatSumMatchesPostgres: sum and avg over float8 (and sum over
// float4) near the largest values, with infinities and NaN, inserted and
// deleted one at a time: after every step the view's value, or its error,
// is what PostgreSQL 15 answers for the live rows. A sum that overflowed
// (22003) comes back when a row leaves; an infinity or NaN that leaves
// takes its effect with it. (The finite values share one sign, so
// PostgreSQL's sums do not depend on the order it reads the rows in; avg
// reads y8, whose finite values are all equal: PostgreSQL's avg(float8)
// also fails when its sum of squared deviations overflows, which
// floatSum does not reproduce — see its NOTE.)
func TestFloatSumMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	x8 := testexpr.Col{Index: 0, T: types.TFloat8}
	x4 := testexpr.Col{Index: 1, T: types.TFloat4}
	y8 := testexpr.Col{Index: 2, T: types.TFloat8}
	spec := AggregateSpec{Calls: []AggregateCall{
		{Func: AggSum, Arg: x8, Name: "s8"}, {Func: AggAvg, Arg: y8, Name: "a8"}, {Func: AggSum, Arg: x4, Name: "s4"},
	}}
	schema := types.Schema{{Name: "x8", Type: types.TFloat8, Nullable: true}, {Name: "x4", Type: types.TFloat4, Nullable: true}, {Name: "y8", Type: types.TFloat8, Nullable: true}}
	a, err := NewAggregate(State{}, schema, spec)
	if err != nil || a.lin == nil {
		t.Fatalf("not on the linear path: %v", err)
	}
	run := newAggRun(t, a)
	type row struct {
		x8, x4, y8 string
	}
	parse := func(s string) types.Datum {
		switch s {
		case "":
			return nil
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		case "NaN":
			return math.NaN()
		}
		var f float64
		if _, err := fmt.Sscan(s, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	sql := func(s string) string {
		if s == "" {
			return "NULL"
		}
		return "'" + s + "'"
	}
	steps := []struct {
		r row
		w int64
	}{
		{row{"1e308", "3e38", "1e308"}, 1}, {row{"1e308", "3e38", "1e308"}, 1}, // overflow
		{row{"5e307", "1e38", ""}, 1},
		{row{"1e308", "3e38", "1e308"}, -1}, // back in range
		{row{"Infinity", "1", "Infinity"}, 1},
		{row{"1e308", "3e38", "1e308"}, 1},       // overflowed finite part, but +Infinity is live
		{row{"-Infinity", "1", "-Infinity"}, 1},  // NaN
		{row{"Infinity", "1", "Infinity"}, -1},   // -Infinity
		{row{"-Infinity", "1", "-Infinity"}, -1}, // overflow again
		{row{"NaN", "2", "NaN"}, 1},
		{row{"1e308", "3e38", "1e308"}, -1},
		{row{"NaN", "2", "NaN"}, -1},
		{row{"5e307", "1e38", ""}, -1},
		{row{"1e308", "3e38", "1e308"}, -1}, // empty: NULL
	}
	live := map[row]int64{}
	var order []row
	for i, st := range steps {
		if _, ok := live[st.r]; !ok {
			order = append(order, st.r)
		}
		live[st.r] += st.w
		run.step(zset.Batch{Rows: []types.Row{{parse(st.r.x8), float64(float32(parse(st.r.x4).(float64))), parse(st.r.y8)}}, Weights: []int64{st.w}})
		outputs, errs := run.outputs, run.errs
		// NB: PostgreSQL reads the non-finite rows first: with an
		// infinity live, a finite part that overflows does not fail in
		// that order (it does if the finite rows come first), and the
		// view answers as in the order that does not fail.
		var values []string
		nonFinite := func(r row) bool { return r.x8 == "Infinity" || r.x8 == "-Infinity" || r.x8 == "NaN" }
		pgOrder := slices.Clone(order)
		slices.SortStableFunc(pgOrder, func(a, b row) int {
			if nonFinite(a) == nonFinite(b) {
				return 0
			}
			if nonFinite(a) {
				return -1
			}
			return 1
		})
		for _, r := range pgOrder {
			for range live[r] {
				values = append(values, fmt.Sprintf("(%s::float8, %s::float4, %s::float8)", sql(r.x8), sql(r.x4), sql(r.y8)))
			}
		}
		from := "(SELECT NULL::float8 AS x8, NULL::float4 AS x4, NULL::float8 AS y8 WHERE false) t"
		if len(values) > 0 {
			from = "(VALUES " + strings.Join(values, ",") + ") t(x8, x4, y8)"
		}
		var failing []string
		for c, q := range []string{"sum(x8)", "avg(y8)", "sum(x4)"} {
			want, null, state, _ := pgtest.QueryText(context.Background(), conn, "SELECT "+q+"::text FROM "+from)
			got := outputs.Rows[0][c]
			if state != "" {
				failing = append(failing, state)
				if got != nil {
					t.Fatalf("step %d: %s = %v, PostgreSQL fails with %s", i, q, got, state)
				}
				continue
			}
			typ := types.TFloat8
			if c == 2 {
				typ = types.TFloat4
			}
			if null != (got == nil) || (!null && types.Format(typ, got) != want) {
				t.Fatalf("step %d: %s = %v, PostgreSQL %q (null %v)", i, q, got, want, null)
			}
		}
		var gotFailing []string
		for j, e := range errs.Rows {
			for range errs.Weights[j] {
				gotFailing = append(gotFailing, e[0].(string))
			}
		}
		if fmt.Sprint(gotFailing) != fmt.Sprint(failing) {
			t.Fatalf("step %d: view errors %v, PostgreSQL errors %v", i, errs, failing)
		}
	}
}

// TestNumericSumMatchesPostgres: sum and avg over numeric(18,2) run on the
// linear path's words, and over values at the type's bounds and NaN,
// inserted and deleted in steps, print exactly what PostgreSQL 15 prints
// for the same live rows.
func TestNumericSumMatchesPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	typ := types.Type{Kind: types.KindNumeric, Typmod: types.MakeNumericTypmod(18, 2)}
	x := testexpr.Col{Index: 0, T: typ}
	spec := AggregateSpec{Calls: []AggregateCall{{Func: AggSum, Arg: x, Name: "s"}, {Func: AggAvg, Arg: x, Name: "a"}}}
	a, err := NewAggregate(State{}, types.Schema{{Name: "x", Type: typ, Nullable: true}}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if a.lin == nil || !a.lin.merge || a.lin.calls[0].kind != linSumNumeric {
		t.Fatal("sum(numeric(18,2)) is not on the linear path with merge words")
	}
	run := newAggRun(t, a)
	type change struct {
		v string
		w int64
	}
	const top, bottom = "9999999999999999.99", "-9999999999999999.99"
	steps := [][]change{
		{{top, 3}, {"0.01", 1}},
		{{bottom, 2}, {"NaN", 1}, {"-0.50", 5}},
		{{"NaN", -1}, {top, -2}},
		{{"12.30", 7}, {bottom, -2}},
		{{top, -1}, {"0.01", -1}, {"-0.50", -5}, {"12.30", -7}},
	}
	order := []string{top, bottom, "0.01", "NaN", "-0.50", "12.30"}
	live := map[string]int64{}
	for i, step := range steps {
		var delta zset.Batch
		for _, c := range step {
			d, _, err := apd.NewFromString(c.v)
			if err != nil {
				t.Fatal(err)
			}
			delta.Add(types.Row{d}, c.w)
			live[c.v] += c.w
		}
		run.step(delta)
		if len(run.outputs.Rows) != 1 || run.outputs.Weights[0] != 1 || len(run.errs.Rows) != 0 {
			t.Fatalf("step %d: output %v errors %v", i, run.outputs, run.errs)
		}
		var values []string
		for _, v := range order {
			for range live[v] {
				values = append(values, v)
			}
		}
		checkSumAvgMatchPostgres(t, conn, i, run.outputs.Rows[0], "numeric(18,2)", values)
	}
}
