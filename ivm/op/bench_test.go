package op

// Benchmarks (reported, not asserted): rows/s per core for the incremental
// operators over the in-memory kv, each beside a plain Go map-based
// reference loop doing the same logical work (the "physical limit").
//
//	go test ./ivm/op -run '^$' -bench . -benchtime 20x

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// cpuSeconds is this process's user+system CPU time: the machine is shared,
// so rows per CPU-second ("rows/cpu-s") is the per-core rate, while rows/s
// is wall-clock and includes waiting for a core.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// rateMeter reports rows/s and rows/cpu-s over the timed part of a
// benchmark.
type rateMeter struct {
	b        *testing.B
	cpuStart float64
}

func startRate(b *testing.B) *rateMeter {
	b.ResetTimer()
	return &rateMeter{b: b, cpuStart: cpuSeconds()}
}

func (m *rateMeter) report(rows int) {
	m.b.StopTimer()
	m.b.ReportMetric(float64(rows)/m.b.Elapsed().Seconds(), "rows/s")
	if cpu := cpuSeconds() - m.cpuStart; cpu > 0 {
		m.b.ReportMetric(float64(rows)/cpu, "rows/cpu-s")
	}
}

// benchBatchRows is the delta size per epoch.
const benchBatchRows = 10000

func benchBatch(rng *rand.Rand, keys int64) zset.Batch {
	b := zset.Batch{Rows: make([]types.Row, benchBatchRows), Weights: make([]int64, benchBatchRows)}
	for i := range b.Rows {
		b.Rows[i] = types.Row{rng.Int64N(keys), rng.Int64N(100) - 10}
		b.Weights[i] = 1
	}
	return b
}

// runEpochs steps an operator once per benchmark iteration over a fresh
// delta, committing each epoch's write batch.
func runEpochs(b *testing.B, store *kv.Memory, o Operator, keys int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([]zset.Batch, 8)
	for i := range batches {
		batches[i] = benchBatch(rng, keys)
	}
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		txn := kv.NewTxn(store)
		ctx := &Context{Txn: txn, Env: &expr.Env{}}
		if _, err := o.Step(ctx, []zset.Batch{batches[i%len(batches)]}); err != nil {
			b.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			b.Fatal(err)
		}
	}
	meter.report(b.N * benchBatchRows)
}

func BenchmarkFilterProject(b *testing.B) {
	pred := testexpr.Binary{Op: ">", L: testexpr.IntCol(1), R: testexpr.Int(0)}
	filter := NewFilter(intSchema(2), pred)
	project := NewProject(intSchema(2), []int{1})
	rng := rand.New(rand.NewPCG(1, 2))
	batch := benchBatch(rng, 1000)
	ctx := &Context{Env: &expr.Env{}}
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		f, err := filter.Step(ctx, []zset.Batch{batch})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := project.Step(ctx, []zset.Batch{f}); err != nil {
			b.Fatal(err)
		}
	}
	meter.report(b.N * benchBatchRows)
}

func BenchmarkFilterProjectReference(b *testing.B) {
	type row struct{ k, v int64 }
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]row, benchBatchRows)
	for i := range in {
		in[i] = row{rng.Int64N(1000), rng.Int64N(100) - 10}
	}
	out := make([]int64, 0, benchBatchRows)
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		out = out[:0]
		for _, r := range in {
			if r.v > 0 {
				out = append(out, r.v)
			}
		}
	}
	meter.report(b.N * benchBatchRows)
}

func sumCountSpec() AggregateSpec {
	return AggregateSpec{GroupBy: []int{0}, Calls: []AggregateCall{
		{Func: AggCountStar, Name: "n"}, {Func: AggSum, Arg: testexpr.Col{Index: 1, T: types.TInt4}, Name: "s"},
	}}
}

// benchGroupBy runs SUM/COUNT GROUP BY over groups keys with a read cache
// large enough to hold every group's state ("while state fits in the
// cache").
func benchGroupBy(b *testing.B, groups int64) {
	a, err := NewAggregate(State{ID: arrange.MakeID(1, 1), CacheEntriesMax: int(2 * groups)}, intSchema(2), sumCountSpec())
	if err != nil {
		b.Fatal(err)
	}
	store := kv.NewMemory()
	// Warm up: every group exists and is cached before timing, so the
	// timed epochs are updates of existing groups.
	for start := int64(0); start < groups; start += benchBatchRows {
		var warm zset.Batch
		for k := start; k < min(start+benchBatchRows, groups); k++ {
			warm.Add(types.Row{k, int64(1)}, 1)
		}
		txn := kv.NewTxn(store)
		if _, err := a.Step(&Context{Txn: txn, Env: &expr.Env{}}, []zset.Batch{warm}); err != nil {
			b.Fatal(err)
		}
		_ = store.Apply(txn.Batch())
	}
	runEpochs(b, store, a, groups)
}

func BenchmarkGroupBySumCount1K(b *testing.B) { benchGroupBy(b, 1000) }
func BenchmarkGroupBySumCount1M(b *testing.B) { benchGroupBy(b, 1000000) }

// BenchmarkGroupBySumCount1MSmallCache is 1M groups with the default
// (64K-entry) cache: most group reads miss and go to the store.
func BenchmarkGroupBySumCount1MSmallCache(b *testing.B) {
	a, err := NewAggregate(State{ID: arrange.MakeID(1, 1)}, intSchema(2), sumCountSpec())
	if err != nil {
		b.Fatal(err)
	}
	runEpochs(b, kv.NewMemory(), a, 1000000)
}

func benchGroupByReference(b *testing.B, groups int64) {
	type acc struct{ sum, count int64 }
	state := map[int64]*acc{}
	rng := rand.New(rand.NewPCG(1, 2))
	batch := benchBatch(rng, groups)
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		for j, r := range batch.Rows {
			k := r[0].(int64)
			a := state[k]
			if a == nil {
				a = &acc{}
				state[k] = a
			}
			a.sum += r[1].(int64) * batch.Weights[j]
			a.count += batch.Weights[j]
		}
	}
	meter.report(b.N * benchBatchRows)
}

func BenchmarkGroupBySumCount1KReference(b *testing.B) { benchGroupByReference(b, 1000) }
func BenchmarkGroupBySumCount1MReference(b *testing.B) { benchGroupByReference(b, 1000000) }

// joinArrangedRows is the size of the probed (right) arrangement.
const joinArrangedRows = 1000000

func BenchmarkJoinInner1M(b *testing.B) {
	j, err := NewJoin(State{ID: arrange.MakeID(1, 1)}, intSchema(2), intSchema(2), JoinSpec{Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}})
	if err != nil {
		b.Fatal(err)
	}
	store := kv.NewMemory()
	// Fill the right arrangement with 1M rows, one per key, in 10K-row epochs.
	for start := int64(0); start < joinArrangedRows; start += benchBatchRows {
		right := zset.Batch{}
		for k := start; k < start+benchBatchRows; k++ {
			right.Add(types.Row{k, k % 7}, 1)
		}
		txn := kv.NewTxn(store)
		if _, err := j.Step(&Context{Txn: txn}, []zset.Batch{{}, right}); err != nil {
			b.Fatal(err)
		}
		_ = store.Apply(txn.Batch())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([]zset.Batch, 8)
	for i := range batches {
		batches[i] = benchBatch(rng, joinArrangedRows)
	}
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		txn := kv.NewTxn(store)
		if _, err := j.Step(&Context{Txn: txn}, []zset.Batch{batches[i%len(batches)], {}}); err != nil {
			b.Fatal(err)
		}
		_ = store.Apply(txn.Batch())
	}
	meter.report(b.N * benchBatchRows)
}

func BenchmarkJoinInner1MReference(b *testing.B) {
	right := make(map[int64][][2]int64, joinArrangedRows)
	for k := int64(0); k < joinArrangedRows; k++ {
		right[k] = append(right[k], [2]int64{k, k % 7})
	}
	left := map[int64][][2]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	batch := benchBatch(rng, joinArrangedRows)
	out := make([][4]int64, 0, benchBatchRows)
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		out = out[:0]
		for _, r := range batch.Rows {
			k, v := r[0].(int64), r[1].(int64)
			for _, m := range right[k] {
				out = append(out, [4]int64{k, v, m[0], m[1]})
			}
			left[k] = append(left[k], [2]int64{k, v})
		}
	}
	meter.report(b.N * benchBatchRows)
}

func BenchmarkDistinct(b *testing.B) {
	runEpochs(b, kv.NewMemory(), NewDistinct(State{ID: arrange.MakeID(1, 1)}, intSchema(2)), 100000)
}

func BenchmarkDistinctReference(b *testing.B) {
	counts := map[[2]int64]int64{}
	rng := rand.New(rand.NewPCG(1, 2))
	batch := benchBatch(rng, 100000)
	var emitted int
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		for j, r := range batch.Rows {
			k := [2]int64{r[0].(int64), r[1].(int64)}
			before := counts[k] > 0
			counts[k] += batch.Weights[j]
			if before != (counts[k] > 0) {
				emitted++
			}
		}
	}
	meter.report(b.N * benchBatchRows)
}
