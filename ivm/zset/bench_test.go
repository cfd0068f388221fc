package zset

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/ivm/types"
)

// BenchmarkConsolidate sums 10,000 (int, int) rows with the given number
// of distinct rows (a view's output delta with many duplicates, and one
// with none):
//
//	go test ./ivm/zset -run '^$' -bench Consolidate
func BenchmarkConsolidate(b *testing.B) {
	for _, distinct := range []int64{100, 10000} {
		b.Run(fmt.Sprintf("distinct=%d", distinct), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var in Batch
			for i := range int64(10000) {
				k := rng.Int64N(distinct)
				if distinct == 10000 {
					k = i
				}
				in.Add(types.Row{k, k * 1000}, 1)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Consolidate(in)
			}
			b.ReportMetric(float64(b.N*len(in.Rows))/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestConsolidateLargeBatches: past the sample Consolidate sizes its table
// from (consolidateSampleRows), duplicate-heavy and all-distinct batches
// consolidate to the reference: per-row weights summed by encoding, zeros
// dropped, sorted by encoding.
func TestConsolidateLargeBatches(t *testing.T) {
	for _, distinct := range []int64{3, 100, 5000} {
		rng := rand.New(rand.NewPCG(uint64(distinct), 7))
		var in Batch
		for range 2 * consolidateSampleRows {
			k := rng.Int64N(distinct)
			in.Add(types.Row{k, fmt.Sprint(k)}, rng.Int64N(5)-2)
		}
		want := map[string]int64{}
		for i, r := range in.Rows {
			want[string(EncodeRow(nil, r))] += in.Weights[i]
		}
		got := Consolidate(in)
		var prev []byte
		for i, r := range got.Rows {
			key := EncodeRow(nil, r)
			if prev != nil && string(prev) >= string(key) {
				t.Fatalf("distinct=%d: rows out of order at %d", distinct, i)
			}
			prev = key
			if got.Weights[i] == 0 || got.Weights[i] != want[string(key)] {
				t.Fatalf("distinct=%d: row %v weight %d, want %d", distinct, r, got.Weights[i], want[string(key)])
			}
			delete(want, string(key))
		}
		//lint:maprange only checks that every remaining weight is zero
		for key, w := range want {
			if w != 0 {
				t.Fatalf("distinct=%d: row %x with weight %d missing", distinct, key, w)
			}
		}
	}
}
