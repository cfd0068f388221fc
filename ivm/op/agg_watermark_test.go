package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// windowStride is the windows' length in the watermark tests: window
// values are multiples of it, and a window closes once the watermark
// reaches its value plus the stride.
const windowStride = 10

// TestAggregateWatermark checks a windowed aggregate against
// StreamAggregate over every row it was given, on tiny domains: windows
// {0, 10, 20, 30, NULL}, groups {0, 1, NULL}, a watermark that advances
// by 0, 5 or 10 per step, and deltas (insertions and retractions) only
// for windows still open at the step's start, as the shard guarantees
// (rows behind the watermark are dropped before any view). At every step
// the integrated output must equal the reference (closing a window keeps
// its final row), and no closed group may have state left, also across
// restarts and steps whose write batch was thrown away.
func TestAggregateWatermark(t *testing.T) {
	x := testexpr.IntCol(2)
	specs := map[string][]AggregateCall{
		"linear":  {{Func: AggCountStar, Name: "n"}, {Func: AggSum, Arg: x, Name: "s"}},
		"generic": {{Func: AggCountStar, Name: "n"}, {Func: AggMin, Arg: x, Name: "lo"}, {Func: AggMax, Arg: x, Name: "hi"}, {Func: AggCount, Arg: x, Distinct: true, Name: "cd"}},
	}
	for _, name := range []string{"linear", "generic"} {
		calls := specs[name]
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { checkAggregateWatermark(t, calls) })
		})
	}
}

func watermarkSchema() types.Schema {
	return types.Schema{
		{Name: "w", Type: types.TTimestampTZ, Nullable: true},
		{Name: "g", Type: types.TInt8, Nullable: true},
		{Name: "x", Type: types.TInt8, Nullable: true},
	}
}

func checkAggregateWatermark(t *rapid.T, calls []AggregateCall) {
	source := WatermarkSource{7}
	schema := watermarkSchema()
	spec := AggregateSpec{GroupBy: []int{0, 1}, Calls: calls, Watermark: &AggregateWatermark{Source: source, Key: 0, CloseAfterMicros: windowStride}}
	plain := AggregateSpec{GroupBy: spec.GroupBy, Calls: calls}
	store := kv.NewMemory()
	id := arrange.MakeID(1, 1)
	build := func(cache int) *Aggregate {
		a, err := NewAggregate(State{ID: id, CacheEntriesMax: cache}, schema, spec)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	agg := build(rapid.SampledFrom([]int{-1, 0, 1, 2}).Draw(t, "cache"))
	env := &expr.Env{}
	var integrated, outputs zset.Batch
	watermark := types.TimestampTZ(rapid.IntRange(-5, 5).Draw(t, "wm0"))
	steps := rapid.IntRange(1, stepsMax).Draw(t, "steps")
	for step := 0; step < steps; step++ {
		var delta zset.Batch
		for i, n := 0, rapid.IntRange(0, rowsPerStep).Draw(t, "rows"); i < n; i++ {
			var w types.Datum
			if v := rapid.IntRange(-1, 3).Draw(t, "w"); v >= 0 {
				if int64(v*windowStride)+windowStride <= int64(watermark) {
					continue // closed: the shard never lets such a row through
				}
				w = types.TimestampTZ(v * windowStride)
			}
			row := types.Row{w, genValue(t, "g", true), genValue(t, "x", true)}
			delta.Add(row, int64(rapid.SampledFrom([]int{-2, -1, 1, 1, 2}).Draw(t, "weight")))
		}
		delta = keepPositive(integrated, delta)
		integrated = zset.Consolidate(zset.Sum(integrated, delta))
		watermark += types.TimestampTZ(rapid.SampledFrom([]int{0, 5, 10}).Draw(t, "advance"))
		marks := map[WatermarkSource]types.TimestampTZ{source: watermark}
		if rapid.IntRange(0, 4).Draw(t, "restart") == 0 {
			agg = build(0)
		}
		if rapid.IntRange(0, 5).Draw(t, "abort") == 0 {
			if _, err := agg.Step(&Context{Txn: kv.NewTxn(store), Env: env, Watermarks: marks}, []zset.Batch{delta}); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for _, a := range agg.Arrangements() {
				a.DiscardCache()
			}
		}
		txn := kv.NewTxn(store)
		out, err := agg.Step(&Context{Txn: txn, Env: env, Watermarks: marks}, []zset.Batch{delta})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		outputs = zset.Consolidate(zset.Sum(outputs, out))
		expected, err := StreamAggregate(&Context{Env: env}, schema, plain, integrated)
		if err != nil {
			t.Fatal(err)
		}
		if !zset.Equal(outputs, expected) {
			t.Fatalf("step %d (watermark %d): inputs %v\nincremental %v\nstream      %v", step, watermark, integrated, outputs, zset.Consolidate(expected))
		}
		checkWindowsForgotten(t, store, agg, watermark)
	}
}

// checkWindowsForgotten fails if a group whose window closed at watermark
// still has accumulator, multiset or close-index state.
func checkWindowsForgotten(t *rapid.T, store kv.Store, agg *Aggregate, watermark types.TimestampTZ) {
	txn := kv.NewTxn(store)
	for v := int64(0); v < 4*windowStride; v += windowStride {
		if v+windowStride > int64(watermark) {
			continue
		}
		for _, g := range []types.Datum{nil, int64(0), int64(1), int64(2)} {
			row := types.Row{types.TimestampTZ(v), g}
			key := appendKey(nil, agg.keyTypes, row, []int{0, 1})
			fresh := arrange.New(arrange.Config{Namespace: kv.PrefixOpState, Kind: arrange.KindAggregate, ID: arrange.MakeID(1, 1), CacheEntriesMax: -1})
			if _, found, err := fresh.Get(txn, key); err != nil || found {
				t.Fatalf("window %d group %v: accumulator still stored at watermark %d (err %v)", v, g, watermark, err)
			}
			entries := 0
			if err := agg.multiset.ScanGroup(txn, key, nil, func(_, _ []byte) error { entries++; return nil }); err != nil {
				t.Fatal(err)
			}
			if entries > 0 {
				t.Fatalf("window %d group %v: %d multiset entries left at watermark %d", v, g, entries, watermark)
			}
		}
	}
	stale := 0
	err := agg.closeIndex.ScanGroup(txn, nil, []byte{windowCloseTag}, func(suffix, _ []byte) error {
		if int64(decodeCloseAt(suffix)) <= int64(watermark) {
			stale++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if stale > 0 {
		t.Fatalf("%d close-index entries at or before watermark %d left", stale, watermark)
	}
}

// TestAggregateWatermarkSpec refuses windows that cannot close.
func TestAggregateWatermarkSpec(t *testing.T) {
	schema := watermarkSchema()
	for _, w := range []AggregateWatermark{{Key: 1, CloseAfterMicros: 10}, {Key: 2, CloseAfterMicros: 10}} {
		if _, err := NewAggregate(State{}, schema, AggregateSpec{GroupBy: []int{0, 1}, Watermark: &w}); err == nil {
			t.Errorf("watermark %+v accepted", w)
		}
	}
}
