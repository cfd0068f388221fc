package op

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// BenchmarkGroupBySumInt8_1K is SUM/AVG/COUNT over an int8 column GROUP BY
// 1K keys: PostgreSQL's numeric sum of bigints, kept as exact merge words
// (agg_linear.go) rather than decimals.
func BenchmarkGroupBySumInt8_1K(b *testing.B) {
	spec := AggregateSpec{GroupBy: []int{0}, Calls: []AggregateCall{
		{Func: AggCountStar, Name: "n"},
		{Func: AggSum, Arg: testexpr.IntCol(1), Name: "s"},
		{Func: AggAvg, Arg: testexpr.IntCol(1), Name: "a"},
	}}
	const groups = 1000
	for _, kind := range benchStores {
		b.Run("kv="+kind, func(b *testing.B) {
			a, err := NewAggregate(State{ID: arrange.MakeID(1, 1)}, intSchema(2), spec)
			if err != nil {
				b.Fatal(err)
			}
			store := openBenchStore(b, kind)
			var warm zset.Batch
			for k := int64(0); k < groups; k++ {
				warm.Add(types.Row{k, int64(1)}, 1)
			}
			stepEpoch(b, store, a, []zset.Batch{warm})
			runEpochs(b, store, a, groups, 1, 0, groupByReference(groups))
		})
	}
}
