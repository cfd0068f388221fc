package op

import (
	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Tiny domains (STYLE.md 19): ≤ 4 distinct values, ≤ 10 rows per step,
// ≤ 15 steps, weights in [-2, 2].
const (
	valuesMax   = 4
	rowsPerStep = 10
	stepsMax    = 15
)

// genValue draws a small int8 or NULL.
func genValue(t *rapid.T, label string, nulls bool) types.Datum {
	lo := 0
	if nulls {
		lo = -1
	}
	v := rapid.IntRange(lo, valuesMax-1-boolInt(nulls)).Draw(t, label)
	if v < 0 {
		return nil
	}
	return int64(v)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// genDelta draws one step's delta over rows of width columns.
func genDelta(t *rapid.T, label string, width int, nulls bool) zset.Batch {
	var b zset.Batch
	n := rapid.IntRange(0, rowsPerStep).Draw(t, label+"Rows")
	for i := 0; i < n; i++ {
		row := make(types.Row, width)
		for c := range row {
			row[c] = genValue(t, label, nulls)
		}
		w := int64(rapid.SampledFrom([]int{-2, -1, 1, 1, 2}).Draw(t, label+"W"))
		b.Add(row, w)
	}
	return b
}

func intSchema(width int) types.Schema {
	s := make(types.Schema, width)
	for i := range s {
		s[i] = types.Column{Name: string(rune('a' + i)), Type: types.TInt8, Nullable: true}
	}
	return s
}

// incrementalCase describes one operator under test.
type incrementalCase struct {
	// widths are the input row widths (one per input).
	widths []int
	nulls  bool
	// positive restricts integrated inputs to non-negative weights (for
	// operators whose SQL meaning needs a multiset).
	positive bool
	// insertOnly restricts every delta to insertions (an insert-only
	// table's changes).
	insertOnly bool
	// firstStepOnly marks inputs that change only in the first step
	// (constant relations).
	firstStepOnly []bool
	// make builds the incremental operator over state.
	make func(state State) Operator
	// stream computes the expected integrated output from integrated
	// inputs, recording errors in ctx.
	stream func(ctx *Context, integrated []zset.Batch) (zset.Batch, error)
}

// checkIncremental asserts I(op^Δ(Δ)) = stream(I(Δ)) at every step, for both
// the output and the evaluation errors. It also "restarts" at random steps:
// a fresh operator over the same store must continue correctly.
func checkIncremental(t *rapid.T, c incrementalCase) {
	store := kv.NewMemory()
	id := arrange.MakeID(1, 1)
	operator := c.make(State{ID: id, CacheEntriesMax: rapid.SampledFrom([]int{-1, 0, 1, 2}).Draw(t, "cache")})
	env := &expr.Env{}
	integrated := make([]zset.Batch, len(c.widths))
	var outputs, errs zset.Batch
	// partKeys are the partition keys of every input row so far
	// (checkStateBuckets).
	partKeys := map[string]bool{}
	steps := rapid.IntRange(1, stepsMax).Draw(t, "steps")
	for step := 0; step < steps; step++ {
		deltas := make([]zset.Batch, len(c.widths))
		for i, w := range c.widths {
			if step > 0 && i < len(c.firstStepOnly) && c.firstStepOnly[i] {
				continue
			}
			deltas[i] = genDelta(t, "in", w, c.nulls)
			if c.positive {
				deltas[i] = keepPositive(integrated[i], deltas[i])
			}
			if c.insertOnly {
				deltas[i] = keepInserts(deltas[i])
			}
			for _, row := range deltas[i].Rows {
				if p, ok := statePartitionKey(operator, i, row); ok {
					partKeys[string(p)] = true
				}
			}
			integrated[i] = zset.Consolidate(zset.Sum(integrated[i], deltas[i]))
		}
		if rapid.IntRange(0, 4).Draw(t, "restart") == 0 {
			operator = c.make(State{ID: id})
		}
		if rapid.IntRange(0, 5).Draw(t, "abort") == 0 {
			// The epoch's write batch is thrown away (a failed commit):
			// the operator's caches must not keep what the store never
			// saw, and the same deltas are stepped again below.
			if _, err := operator.Step(&Context{Txn: kv.NewTxn(store), Env: env}, deltas); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			if st, ok := operator.(Stateful); ok {
				for _, a := range st.Arrangements() {
					a.DiscardCache()
				}
			}
		}
		txn := kv.NewTxn(store)
		ctx := &Context{Txn: txn, Env: env}
		out, err := operator.Step(ctx, deltas)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		checkStateBuckets(t, store, operator, partKeys)
		outputs = zset.Consolidate(zset.Sum(outputs, out))
		errs = zset.Consolidate(zset.Sum(errs, ctx.Errors))
		want := &Context{Env: env}
		expected, err := c.stream(want, integrated)
		if err != nil {
			t.Fatalf("stream step %d: %v", step, err)
		}
		if !zset.Equal(outputs, expected) {
			t.Fatalf("step %d: inputs %v\nincremental %v\nstream      %v", step, integrated, outputs, zset.Consolidate(expected))
		}
		if !zset.Equal(errs, want.Errors) {
			t.Fatalf("step %d: errors incremental %v stream %v", step, errs, zset.Consolidate(want.Errors))
		}
	}
}

// keepInserts drops delta entries of negative weight.
func keepInserts(delta zset.Batch) zset.Batch {
	var out zset.Batch
	for i, r := range delta.Rows {
		if delta.Weights[i] > 0 {
			out.Add(r, delta.Weights[i])
		}
	}
	return out
}

// keepPositive drops delta entries that would make an integrated weight
// negative.
func keepPositive(integrated, delta zset.Batch) zset.Batch {
	weights := map[string]int64{}
	var buf []byte
	for i, r := range integrated.Rows {
		buf = zset.EncodeRow(buf[:0], r)
		weights[string(buf)] += integrated.Weights[i]
	}
	var out zset.Batch
	for i, r := range delta.Rows {
		buf = zset.EncodeRow(buf[:0], r)
		if weights[string(buf)]+delta.Weights[i] < 0 {
			continue
		}
		weights[string(buf)] += delta.Weights[i]
		out.Add(r, delta.Weights[i])
	}
	return out
}
