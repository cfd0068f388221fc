package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestJoinWatermark checks a windowed join (keyed by a window column on
// both sides) against StreamJoin over every row it was given, for each
// join kind, on tiny domains: windows {0, 10, 20, 30, NULL}, a watermark
// advancing by 0, 5 or 10 per step, and deltas on both sides only for
// windows open at the step's start (as the shard guarantees). The
// integrated output must equal the reference at every step (closing keeps
// the joined rows), and no closed key may keep arranged rows.
func TestJoinWatermark(t *testing.T) {
	for _, kind := range []JoinKind{JoinInner, JoinLeft, JoinFull, JoinSemi, JoinAnti} {
		t.Run(kind.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) { checkJoinWatermark(t, kind) })
		})
	}
}

func checkJoinWatermark(t *rapid.T, kind JoinKind) {
	source := WatermarkSource{9}
	schema := types.Schema{{Name: "w", Type: types.TTimestampTZ, Nullable: true}, {Name: "x", Type: types.TInt8, Nullable: true}}
	spec := JoinSpec{Kind: kind, LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}, Watermark: &JoinWatermark{Source: source, Key: 0, CloseAfterMicros: windowStride}}
	plain := spec
	plain.Watermark = nil
	store := kv.NewMemory()
	id := arrange.MakeID(1, 2)
	build := func(cache int) *Join {
		j, err := NewJoin(State{ID: id, CacheEntriesMax: cache}, schema, schema, spec)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	join := build(rapid.SampledFrom([]int{-1, 0, 1, 2}).Draw(t, "cache"))
	env := &expr.Env{}
	var left, right, outputs zset.Batch
	watermark := types.TimestampTZ(rapid.IntRange(-5, 5).Draw(t, "wm0"))
	delta := func(integrated zset.Batch, label string) zset.Batch {
		var d zset.Batch
		for i, n := 0, rapid.IntRange(0, 6).Draw(t, label); i < n; i++ {
			var w types.Datum
			if v := rapid.IntRange(-1, 3).Draw(t, "w"); v >= 0 {
				if int64(v*windowStride)+windowStride <= int64(watermark) {
					continue
				}
				w = types.TimestampTZ(v * windowStride)
			}
			d.Add(types.Row{w, genValue(t, "x", true)}, int64(rapid.SampledFrom([]int{-1, 1, 1, 2}).Draw(t, "weight")))
		}
		return keepPositive(integrated, d)
	}
	steps := rapid.IntRange(1, stepsMax).Draw(t, "steps")
	for step := 0; step < steps; step++ {
		dl, dr := delta(left, "left"), delta(right, "right")
		left = zset.Consolidate(zset.Sum(left, dl))
		right = zset.Consolidate(zset.Sum(right, dr))
		watermark += types.TimestampTZ(rapid.SampledFrom([]int{0, 5, 10}).Draw(t, "advance"))
		marks := map[WatermarkSource]types.TimestampTZ{source: watermark}
		if rapid.IntRange(0, 4).Draw(t, "restart") == 0 {
			join = build(0)
		}
		if rapid.IntRange(0, 5).Draw(t, "abort") == 0 {
			if _, err := join.Step(&Context{Txn: kv.NewTxn(store), Env: env, Watermarks: marks}, []zset.Batch{dl, dr}); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for _, a := range join.Arrangements() {
				a.DiscardCache()
			}
		}
		txn := kv.NewTxn(store)
		out, err := join.Step(&Context{Txn: txn, Env: env, Watermarks: marks}, []zset.Batch{dl, dr})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		outputs = zset.Consolidate(zset.Sum(outputs, out))
		expected, err := StreamJoin(&Context{Env: env}, plain, schema, schema, left, right)
		if err != nil {
			t.Fatal(err)
		}
		if !zset.Equal(outputs, expected) {
			t.Fatalf("step %d (watermark %d): left %v right %v\nincremental %v\nstream      %v", step, watermark, left, right, outputs, zset.Consolidate(expected))
		}
		// No closed key keeps arranged rows.
		check := kv.NewTxn(store)
		for v := int64(0); v+windowStride <= int64(watermark) && v < 4*windowStride; v += windowStride {
			for _, x := range []types.Datum{nil, int64(0), int64(1), int64(2)} {
				key := appendKey(nil, join.leftTypes, types.Row{types.TimestampTZ(v), x}, []int{0, 1})
				for _, side := range []*arrange.Arrangement{join.left, join.right} {
					n := 0
					if err := side.ScanGroup(check, key, nil, func(_, _ []byte) error { n++; return nil }); err != nil {
						t.Fatal(err)
					}
					if n > 0 {
						t.Fatalf("step %d: key (%d, %v) closed at watermark %d still has %d arranged rows", step, v, x, watermark, n)
					}
				}
			}
		}
	}
}
