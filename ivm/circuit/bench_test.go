package circuit

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// BenchmarkCircuitFilterProject steps a whole circuit, Source → WHERE v > 0
// → SELECT v, over 10,000-row deltas (the same query as ivm/op's
// BenchmarkFilterProject), with fusion on and off (Config.Unfused) in the
// same run, with the projection as a view (sink=view: consolidating the
// delta and adding it to the view's stored output, one kv write per
// distinct row) and without a sink (sink=none: the operators alone):
//
//	go test ./ivm/circuit -run '^$' -bench CircuitFilterProject -benchtime 200x
//
// rows/cpu-s is input rows per second of this process's CPU time (the
// machine is shared, so wall time is no per-core measure); compare
// sub-benchmarks of one run.
func BenchmarkCircuitFilterProject(b *testing.B) {
	const batchRows = 10000
	rng := rand.New(rand.NewPCG(1, 2))
	deltas := make([]zset.Batch, 8)
	for d := range deltas {
		for range batchRows {
			deltas[d].Add(types.Row{rng.Int64N(1000), rng.Int64N(100) - 10}, 1)
		}
	}
	pred, err := expr.NewBinary(">", &expr.ColumnRef{Index: 1, Typ: types.TInt8}, expr.NewConst(types.TInt8, int64(0)))
	if err != nil {
		b.Fatal(err)
	}
	for _, fusion := range []string{"on", "off"} {
		for _, sink := range []string{"view", "none"} {
			b.Run("fusion="+fusion+"/sink="+sink, func(b *testing.B) {
				builder := NewBuilder()
				out := builder.Project(builder.Filter(builder.Source(tableT, kvSchema), pred), []int{1})
				if sink == "view" {
					builder.Sink(viewSums, out)
				}
				c, err := builder.Build(Config{ID: 1, Unfused: fusion == "off"})
				if err != nil {
					b.Fatal(err)
				}
				store := kv.NewMemory()
				var before, after syscall.Rusage
				b.ResetTimer()
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				for i := 0; i < b.N; i++ {
					txn := kv.NewTxn(store)
					if _, err := c.Step(txn, map[SourceID]zset.Batch{tableT: deltas[i%len(deltas)]}); err != nil {
						b.Fatal(err)
					}
					if err := store.Apply(txn.Batch()); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
				if cpu > 0 {
					b.ReportMetric(float64(b.N*batchRows)/cpu.Seconds(), "rows/cpu-s")
				}
			})
		}
	}
}
