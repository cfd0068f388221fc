package op

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

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
	store := kv.NewMemory()
	env := &expr.Env{}
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
	var outputs zset.Batch
	for i, step := range steps {
		var delta zset.Batch
		for _, c := range step {
			delta.Add(types.Row{c.v}, c.w)
			live[c.v] += c.w
		}
		txn := kv.NewTxn(store)
		ctx := &Context{Txn: txn, Env: env}
		out, err := a.Step(ctx, []zset.Batch{delta})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		outputs = zset.Consolidate(zset.Sum(outputs, out))
		if len(outputs.Rows) != 1 || outputs.Weights[0] != 1 {
			t.Fatalf("step %d: output %v", i, outputs)
		}
		var values []string
		for _, v := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, -1, 1<<32 - 1, -1 << 31} {
			for range live[v] {
				values = append(values, fmt.Sprintf("('%d'::int8)", v))
			}
		}
		from := "(SELECT NULL::int8 AS x WHERE false) t"
		if len(values) > 0 {
			from = "(VALUES " + strings.Join(values, ",") + ") t(x)"
		}
		for c, fn := range []string{"sum", "avg"} {
			want, null, _, err := pgtest.QueryText(context.Background(), conn, "SELECT "+fn+"(x)::text FROM "+from)
			if err != nil {
				t.Fatal(err)
			}
			got := outputs.Rows[0][c]
			if null != (got == nil) || (!null && types.Format(types.TNumeric, got) != want) {
				t.Fatalf("step %d: %s = %v, PostgreSQL %q (null %v)", i, fn, got, want, null)
			}
		}
	}
}

// TestInt8SumRowBound: a group past int8SumRowsMax live rows is in error
// (54000) rather than showing a wrong sum, and the error is retracted,
// with the exact sum back, when rows leave.
func TestInt8SumRowBound(t *testing.T) {
	a, _ := int8SumSpec(t)
	store := kv.NewMemory()
	env := &expr.Env{}
	var outputs, errs zset.Batch
	step := func(v, w int64) {
		t.Helper()
		txn := kv.NewTxn(store)
		ctx := &Context{Txn: txn, Env: env}
		out, err := a.Step(ctx, []zset.Batch{{Rows: []types.Row{{v}}, Weights: []int64{w}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		outputs = zset.Consolidate(zset.Sum(outputs, out))
		errs = zset.Consolidate(zset.Sum(errs, ctx.Errors))
	}
	step(math.MaxInt64, int8SumRowsMax)
	if len(errs.Rows) != 0 {
		t.Fatalf("errors at the bound: %v", errs)
	}
	want := "39614081247908796755622232065" // (2^63-1)·(2^32-1)
	if got := types.Format(types.TNumeric, outputs.Rows[0][0]); got != want {
		t.Fatalf("sum at the bound = %s, want %s", got, want)
	}
	step(math.MaxInt64, 1)
	if len(errs.Rows) != 1 || errs.Weights[0] != 1 || errs.Rows[0][0] != "54000" || errs.Rows[0][1] != errcode.ViewEvaluationError.ID {
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
