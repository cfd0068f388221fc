package op

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
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
