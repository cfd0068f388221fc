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

// TestSessionIncremental checks Integrate(Session^Δ) = StreamSession(I)
// over rows (key, time, x) with times in 0..3 (NULLs too): gap 1 keeps
// only equal times together, gap 2 and 3 merge and split sessions as
// rows bridging them come and go.
func TestSessionIncremental(t *testing.T) {
	cases := []SessionSpec{
		{Time: 1, Keys: []int{0}, Gap: 2},
		{Time: 1, Keys: []int{0}, Gap: 1},
		{Time: 1, Gap: 2},
		{Time: 0, Keys: []int{2, 1}, Gap: 3},
	}
	for i, spec := range cases {
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{3}, nulls: true, positive: rapid.Bool().Draw(t, "positive"),
					make: func(s State) Operator {
						o, err := NewSession(s, intSchema(3), spec)
						if err != nil {
							panic(err)
						}
						return o
					},
					stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamSession(intSchema(3), spec, in[0])
					},
				})
			})
		})
	}
}

// TestStreamSession pins the reference: a row less than gap after the
// previous one joins its session, one gap or more after starts a new one
// (18 → 28);
// the window is [first, last + gap).
func TestStreamSession(t *testing.T) {
	row := func(k, tm int64) types.Row { return types.Row{k, tm} }
	in := zset.Batch{}
	for _, r := range []types.Row{row(1, 0), row(1, 9), row(1, 18), row(1, 28), row(1, 37), row(2, 5)} {
		in.Add(r, 1)
	}
	in.Add(types.Row{int64(1), nil}, 1)
	got, err := StreamSession(intSchema(2), SessionSpec{Time: 1, Keys: []int{0}, Gap: 10}, in)
	if err != nil {
		t.Fatal(err)
	}
	want := zset.Batch{}
	for _, r := range []types.Row{
		{int64(1), int64(0), int64(0), int64(28)}, {int64(1), int64(9), int64(0), int64(28)},
		{int64(1), int64(18), int64(0), int64(28)}, {int64(1), int64(28), int64(28), int64(47)},
		{int64(1), int64(37), int64(28), int64(47)},
		{int64(2), int64(5), int64(5), int64(15)},
	} {
		want.Add(r, 1)
	}
	if !zset.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", zset.Consolidate(got), want)
	}
}

// TestSessionEmitsOnlyChangedSessions: a row inside a session whose
// bounds stay emits only itself; the untouched session emits nothing.
func TestSessionEmitsOnlyChangedSessions(t *testing.T) {
	o, err := NewSession(State{}, intSchema(2), SessionSpec{Time: 1, Keys: []int{0}, Gap: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &Context{Txn: kv.NewTxn(kv.NewMemory()), Env: &expr.Env{}}
	first := zset.Batch{}
	for _, tm := range []int64{0, 5, 100} {
		first.Add(types.Row{int64(1), tm}, 1)
	}
	if _, err := o.Step(ctx, []zset.Batch{first}); err != nil {
		t.Fatal(err)
	}
	got, err := o.Step(ctx, []zset.Batch{{Rows: []types.Row{{int64(1), int64(3)}}, Weights: []int64{1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := zset.Batch{Rows: []types.Row{{int64(1), int64(3), int64(0), int64(15)}}, Weights: []int64{1}}
	if !zset.Equal(got, want) {
		t.Fatalf("got %v want %v", zset.Consolidate(got), want)
	}
}

// TestSessionManySessions checks Integrate(Session^Δ) = StreamSession(I)
// with times in 0..39 and gap 3, so a key has many sessions and a step's
// changes reach only some of them (affectedRange); weights may go
// negative.
func TestSessionManySessions(t *testing.T) {
	spec := SessionSpec{Time: 1, Keys: []int{0}, Gap: 3}
	schema := intSchema(3)
	rapid.Check(t, func(t *rapid.T) {
		store := kv.NewMemory()
		o, err := NewSession(State{ID: arrange.MakeID(1, 1), CacheEntriesMax: rapid.SampledFrom([]int{-1, 0, 4}).Draw(t, "cache")}, schema, spec)
		if err != nil {
			t.Fatal(err)
		}
		var integrated, outputs zset.Batch
		for step := rapid.IntRange(1, 20).Draw(t, "steps"); step > 0; step-- {
			var delta zset.Batch
			for n := rapid.IntRange(0, 4).Draw(t, "rows"); n > 0; n-- {
				row := types.Row{int64(rapid.IntRange(0, 1).Draw(t, "key")), int64(rapid.IntRange(0, 39).Draw(t, "time")), int64(rapid.IntRange(0, 1).Draw(t, "x"))}
				delta.Add(row, int64(rapid.SampledFrom([]int{-1, 1, 1, 2}).Draw(t, "w")))
			}
			integrated = zset.Consolidate(zset.Sum(integrated, delta))
			txn := kv.NewTxn(store)
			out, err := o.Step(&Context{Txn: txn, Env: &expr.Env{}}, []zset.Batch{delta})
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			outputs = zset.Consolidate(zset.Sum(outputs, out))
			want, err := StreamSession(schema, spec, integrated)
			if err != nil {
				t.Fatal(err)
			}
			if !zset.Equal(outputs, want) {
				t.Fatalf("inputs %v\nincremental %v\nstream      %v", integrated, outputs, zset.Consolidate(want))
			}
		}
	})
}
