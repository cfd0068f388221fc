package op

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestAddScaleCountMatchesModel checks the per-scale counts kept beside a
// numeric SUM against a map of counts over random inserts and retractions,
// non-finite inputs included: same string, same largest scale.
func TestAddScaleCountMatchesModel(t *testing.T) {
	inputs := []types.Datum{int64(7)}
	for _, s := range []string{"1.5", "2.25", "-0.125", "10", "1e3", "NaN", "Infinity", "-Infinity", "0.0000001"} {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, d)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		var counts types.Datum
		model := map[int32]int64{}
		for step := 0; step < 30; step++ {
			v := inputs[r.IntN(len(inputs))]
			w := int64(r.IntN(5) - 2)
			counts = addScaleCount(counts, v, w)
			model[scaleOf(v)] += w
			var scales []int
			for sc, n := range model {
				if n != 0 {
					scales = append(scales, int(sc))
				}
			}
			sort.Ints(scales)
			var parts []string
			best, any := int32(0), false
			for _, sc := range scales {
				parts = append(parts, fmt.Sprintf("%d:%d", sc, model[int32(sc)]))
				if model[int32(sc)] > 0 && sc >= 0 {
					best, any = int32(sc), true
				}
			}
			want := types.Datum(nil)
			if len(parts) > 0 {
				want = strings.Join(parts, ",")
			}
			if counts != want {
				t.Fatalf("trial %d step %d: counts %v, want %v", trial, step, counts, want)
			}
			if b, ok := maxScale(counts); b != best || ok != any {
				t.Fatalf("maxScale(%v) = %d, %v; want %d, %v", counts, b, ok, best, any)
			}
		}
	}
}

// TestMultisetKeepsLiveRepresentation: MIN/MAX over numeric show the
// representation (display scale) of the value the multiset entry was
// (re)created with, as row-at-a-time updates do, when a step deletes the
// stored 1.0 and inserts 1.00, or inserts 2.50 then deletes and
// re-inserts it as 2.5: buffering a step's multiset changes must not keep
// a representation that went away within the step.
func TestMultisetKeepsLiveRepresentation(t *testing.T) {
	x := testexpr.Col{Index: 0, T: types.TNumeric}
	spec := AggregateSpec{Calls: []AggregateCall{{Func: AggMax, Arg: x, Name: "mx"}, {Func: AggMin, Arg: x, Name: "mn"}}}
	schema := types.Schema{{Name: "x", Type: types.TNumeric}}
	a, err := NewAggregate(State{}, schema, spec)
	if err != nil {
		t.Fatal(err)
	}
	run := newAggRun(t, a)
	batch := func(vw ...any) zset.Batch {
		var b zset.Batch
		for i := 0; i < len(vw); i += 2 {
			b.Add(types.Row{dec(vw[i].(string))}, int64(vw[i+1].(int)))
		}
		return b
	}
	for i, c := range []struct {
		delta  zset.Batch
		mx, mn string
	}{
		{batch("1.0", 1), "1.0", "1.0"},
		{batch("1.0", -1, "1.00", 1), "1.00", "1.00"},
		{batch("2.50", 1, "2.50", -1, "2.5", 1), "2.5", "1.00"},
		{batch("2.5", 1, "2.50", 1, "2.5", -2), "2.5", "1.00"},
	} {
		run.step(c.delta)
		if len(run.outputs.Rows) != 1 {
			t.Fatalf("step %d: output %v", i, run.outputs)
		}
		row := run.outputs.Rows[0]
		if got := row[0].(*apd.Decimal).String(); got != c.mx {
			t.Errorf("step %d: max %s, want %s", i, got, c.mx)
		}
		if got := row[1].(*apd.Decimal).String(); got != c.mn {
			t.Errorf("step %d: min %s, want %s", i, got, c.mn)
		}
	}
}
