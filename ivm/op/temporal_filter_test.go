package op

import (
	"encoding/binary"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// tsCol reads an int8 column as a timestamptz of that many microseconds,
// on a tiny domain with the edge cases mixed in: NULL stays NULL, 7 fails
// (an evaluation error), 8 is +infinity and -8 is -infinity.
type tsCol struct{ index int }

func (c tsCol) Type() types.Type { return types.TTimestampTZ }
func (c tsCol) String() string   { return fmt.Sprintf("ts($%d)", c.index) }
func (c tsCol) Eval(_ *expr.Env, row types.Row) (types.Datum, error) {
	v, ok := row[c.index].(int64)
	if !ok {
		return nil, nil
	}
	switch v {
	case 7:
		return nil, errcode.New(errcode.ViewEvaluationError, "timestamp out of range").WithSQLState("22008")
	case 8:
		return types.TimestampTZPosInfinity, nil
	case -8:
		return types.TimestampTZNegInfinity, nil
	}
	return types.TimestampTZ(v), nil
}

// TestTemporalFilterIncremental checks the temporal filter against its
// non-incremental form at every instant: the integrated output after each
// step is the stream filter over the integrated input at the step's time
// (time may stand still or go back, which the operator treats as
// standing still), with restarts over the same store and thrown-away
// steps; and its state never holds an entry whose time has come.
func TestTemporalFilterIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ops := []TemporalOp{TemporalLt, TemporalLe, TemporalGt, TemporalGe}
		var spec TemporalFilterSpec
		for i, n := 0, rapid.IntRange(1, 3).Draw(t, "bounds"); i < n; i++ {
			spec.Bounds = append(spec.Bounds, TemporalBound{
				Expr:         tsCol{index: rapid.IntRange(0, 1).Draw(t, "col")},
				Op:           rapid.SampledFrom(ops).Draw(t, "op"),
				OffsetMicros: int64(rapid.IntRange(-3, 3).Draw(t, "offset")),
			})
		}
		schema := intSchema(2)
		store := kv.NewMemory()
		id := arrange.MakeID(1, 1)
		newOp := func() *TemporalFilter {
			return NewTemporalFilter(State{ID: id, CacheEntriesMax: rapid.SampledFrom([]int{-1, 0, 1, 2}).Draw(t, "cache")}, schema, spec)
		}
		operator := newOp()
		env := &expr.Env{}
		var integrated, outputs, errs zset.Batch
		now, applied := int64(rapid.IntRange(-4, 4).Draw(t, "start")), int64(0)
		started := false
		for step, steps := 0, rapid.IntRange(1, stepsMax).Draw(t, "steps"); step < steps; step++ {
			delta := genTimedDelta(t)
			integrated = zset.Consolidate(zset.Sum(integrated, delta))
			now += int64(rapid.IntRange(-1, 4).Draw(t, "advance"))
			if !started || now > applied {
				applied, started = now, true
			}
			if rapid.IntRange(0, 4).Draw(t, "restart") == 0 {
				operator = newOp()
			}
			if rapid.IntRange(0, 5).Draw(t, "abort") == 0 {
				if _, err := operator.Step(&Context{Txn: kv.NewTxn(store), Env: env, Now: types.TimestampTZ(now)}, []zset.Batch{delta}); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				operator.state.DiscardCache()
			}
			txn := kv.NewTxn(store)
			ctx := &Context{Txn: txn, Env: env, Now: types.TimestampTZ(now)}
			out, err := operator.Step(ctx, []zset.Batch{delta})
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			outputs = zset.Consolidate(zset.Sum(outputs, out))
			errs = zset.Consolidate(zset.Sum(errs, ctx.Errors))
			want := &Context{Env: env}
			expected, err := StreamTemporalFilter(want, spec, types.TimestampTZ(applied), integrated)
			if err != nil {
				t.Fatal(err)
			}
			if !zset.Equal(outputs, expected) {
				t.Fatalf("step %d at %d (applied %d): inputs %v\nincremental %v\nstream      %v", step, now, applied, integrated, outputs, zset.Consolidate(expected))
			}
			if !zset.Equal(errs, want.Errors) {
				t.Fatalf("step %d: errors incremental %v stream %v", step, errs, zset.Consolidate(want.Errors))
			}
			checkTemporalStateBounded(t, store, operator, applied)
		}
	})
}

// genTimedDelta draws a delta of (id, ts) rows over the tiny domain of
// tsCol, including its NULL, error and infinite values.
func genTimedDelta(t *rapid.T) zset.Batch {
	var b zset.Batch
	for i, n := 0, rapid.IntRange(0, rowsPerStep).Draw(t, "rows"); i < n; i++ {
		row := types.Row{int64(rapid.IntRange(0, 2).Draw(t, "id")), nil}
		if v := rapid.IntRange(-9, 8).Draw(t, "ts"); v > -9 {
			row[1] = int64(v)
		}
		if rapid.IntRange(0, 3).Draw(t, "sameTs") == 0 {
			row[0] = row[1]
		}
		b.Add(row, int64(rapid.SampledFrom([]int{-2, -1, 1, 1, 2}).Draw(t, "w")))
	}
	return b
}

// checkTemporalStateBounded asserts that the operator keeps no entry
// whose deadline has passed: expired rows are gone from its state, and
// all of it is global (the empty partition key's bucket).
func checkTemporalStateBounded(t *rapid.T, store kv.Reader, f *TemporalFilter, now int64) {
	checkStateBuckets(t, store, f, map[string]bool{})
	err := f.state.ScanGroup(store, nil, nil, func(suffix, _ []byte) error {
		if suffix[0] == temporalNow {
			return nil
		}
		if deadline := int64(binary.BigEndian.Uint64(suffix[1:9]) ^ (1 << 63)); deadline <= now {
			return fmt.Errorf("index %c keeps an entry due at %d at time %d", suffix[0], deadline, now)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTemporalFilterExpiresWithoutInput is the operator's table: a row
// leaves when its time comes, on a step with no input.
func TestTemporalFilterExpiresWithoutInput(t *testing.T) {
	spec := TemporalFilterSpec{Bounds: []TemporalBound{{Expr: tsCol{index: 1}, Op: TemporalGt, OffsetMicros: -5}}}
	f := NewTemporalFilter(State{ID: arrange.MakeID(1, 1)}, intSchema(2), spec)
	store := kv.NewMemory()
	r := types.Row{int64(1), int64(12)}
	for _, c := range []struct {
		now  int64
		in   zset.Batch
		want zset.Batch
	}{
		{now: 10, in: zset.Batch{Rows: []types.Row{r}, Weights: []int64{1}}, want: zset.Batch{Rows: []types.Row{r}, Weights: []int64{1}}},
		{now: 15},
		{now: 17, want: zset.Batch{Rows: []types.Row{r}, Weights: []int64{-1}}},
		{now: 18, in: zset.Batch{Rows: []types.Row{r}, Weights: []int64{-1}}},
	} {
		txn := kv.NewTxn(store)
		out, err := f.Step(&Context{Txn: txn, Env: &expr.Env{}, Now: types.TimestampTZ(c.now)}, []zset.Batch{c.in})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		if !zset.Equal(zset.Consolidate(out), zset.Consolidate(c.want)) {
			t.Fatalf("at %d: got %v, want %v", c.now, out, c.want)
		}
	}
}

// BenchmarkTemporalFilter measures a step that indexes 10 000 new rows
// (each with an expiry) and the later step that expires them all.
func BenchmarkTemporalFilter(b *testing.B) {
	spec := TemporalFilterSpec{Bounds: []TemporalBound{{Expr: testexprCol{index: 1}, Op: TemporalGt, OffsetMicros: -1000}}}
	var in zset.Batch
	for i := range 10000 {
		in.Add(types.Row{int64(i), types.TimestampTZ(i % 1000)}, 1)
	}
	b.ReportAllocs()
	for range b.N {
		store := kv.NewMemory()
		f := NewTemporalFilter(State{ID: arrange.MakeID(1, 1)}, intSchema(2), spec)
		for _, step := range []struct {
			now int64
			in  zset.Batch
		}{{now: 0, in: in}, {now: 5000}} {
			txn := kv.NewTxn(store)
			out, err := f.Step(&Context{Txn: txn, Env: &expr.Env{}, Now: types.TimestampTZ(step.now)}, []zset.Batch{step.in})
			if err != nil || out.Len() != 10000 {
				b.Fatalf("%d rows out, err %v", out.Len(), err)
			}
			if err := store.Apply(txn.Batch()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// testexprCol reads a timestamptz column.
type testexprCol struct{ index int }

func (c testexprCol) Type() types.Type { return types.TTimestampTZ }
func (c testexprCol) String() string   { return fmt.Sprintf("$%d", c.index) }
func (c testexprCol) Eval(_ *expr.Env, row types.Row) (types.Datum, error) {
	return row[c.index], nil
}
