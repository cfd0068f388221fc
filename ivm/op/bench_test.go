package op

// Benchmarks (reported, not asserted): rows per CPU-second for the
// incremental operators over the in-memory kv and over slate on local disk,
// each beside a plain Go map-based reference loop doing the same logical
// work (the "physical limit"), measured in the same run:
//
//	go test ./ivm/op -run '^$' -bench . -benchtime 20x
//
// Metrics: rows/cpu-s is the operator's per-core rate, ref-rows/cpu-s the
// reference loop's (over the same deltas, in the same order), and x-ref = rows/cpu-s ÷ ref-rows/cpu-s (1 = as fast as
// the plain map loop). The machine is shared, so CPU time (getrusage), not
// wall time, is the per-core measure.
//
// The stateless benchmarks (Filter*) run each chain fused (chain=fused,
// the op.Fused a circuit builds) and as separate operators
// (chain=separate); BenchmarkFilterMapArrow (arrow_bench_test.go) compares
// the row path with Arrow kernels in the same run:
//
//	go test ./ivm/op -run '^$' -bench 'Filter' -benchtime 2000x

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// referenceCPUSecondsMin is how long the reference loop runs at least, so
// its rate is not lost in getrusage's resolution.
const referenceCPUSecondsMin = 0.05

// rateMeter reports the timed part of a benchmark against a reference loop.
type rateMeter struct {
	b        *testing.B
	cpuStart float64
}

func startRate(b *testing.B) *rateMeter {
	b.ResetTimer()
	return &rateMeter{b: b, cpuStart: cpuSeconds()}
}

// report stops the timer, reports the operator's rate over rows, then runs
// reference (which processes epochs·benchBatchRows rows per call) until it
// used referenceCPUSecondsMin and reports its rate and the ratio.
func (m *rateMeter) report(rows int, reference func(epochs int)) {
	m.b.StopTimer()
	cpu := cpuSeconds() - m.cpuStart
	m.b.ReportMetric(float64(rows)/m.b.Elapsed().Seconds(), "rows/s")
	if cpu <= 0 {
		return
	}
	rate := float64(rows) / cpu
	m.b.ReportMetric(rate, "rows/cpu-s")
	if reference == nil {
		return
	}
	refRows, refCPU := 0, 0.0
	for epochs := 1; refCPU < referenceCPUSecondsMin; epochs *= 2 {
		start := cpuSeconds()
		reference(epochs)
		refCPU += cpuSeconds() - start
		refRows += epochs * benchBatchRows
	}
	refRate := float64(refRows) / refCPU
	m.b.ReportMetric(refRate, "ref-rows/cpu-s")
	m.b.ReportMetric(rate/refRate, "x-ref")
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

// benchBatches are the deltas runEpochs feeds an operator in turn (and
// its reference loop the same ones, so both touch the same keys).
func benchBatches(keys int64) []zset.Batch {
	rng := rand.New(rand.NewPCG(1, 2))
	batches := make([]zset.Batch, 8)
	for i := range batches {
		batches[i] = benchBatch(rng, keys)
	}
	return batches
}

// benchStores are the stores stateful benchmarks run over.
//
//lint:immutable a constant table of benchmark variants.
var benchStores = []string{"memory", "slate"}

// openBenchStore opens an empty store of the given kind: slate runs on a
// local-disk object store in a temporary directory with its defaults.
func openBenchStore(b *testing.B, kind string) *benchStore {
	if kind == "memory" {
		return &benchStore{Store: kv.NewMemory()}
	}
	fs, err := fsstore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	store, err := storage.Open(context.Background(), fs, "bench", storage.Options{InstanceID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = store.Close() })
	return &benchStore{Store: store}
}

// benchStore is a store and the length of the last batch committed to it.
type benchStore struct {
	kv.Store
	lastWrites int
}

// stepEpoch runs one epoch of o over inputs and commits its write batch.
// Like the shard, it reserves the Txn's room for as many writes as the
// previous epoch made (kv.NewTxnSized).
func stepEpoch(b *testing.B, store *benchStore, o Operator, inputs []zset.Batch) {
	txn := kv.NewTxnSized(store, store.lastWrites)
	if _, err := o.Step(&Context{Txn: txn, Env: &expr.Env{}}, inputs); err != nil {
		b.Fatal(err)
	}
	batch := txn.Batch()
	store.lastWrites = batch.Len()
	if err := store.Apply(batch); err != nil {
		b.Fatal(err)
	}
}

// runEpochs steps an operator once per benchmark iteration over a fresh
// delta on input side (of inputs inputs), committing each epoch's write
// batch, and reports against reference.
func runEpochs(b *testing.B, store *benchStore, o Operator, keys int64, inputs, side int, reference func(epochs int)) {
	batches := benchBatches(keys)
	in := make([]zset.Batch, inputs)
	meter := startRate(b)
	for i := 0; i < b.N; i++ {
		in[side] = batches[i%len(batches)]
		stepEpoch(b, store, o, in)
	}
	meter.report(b.N*benchBatchRows, reference)
}

// BenchmarkFilterProject is WHERE v > 0 then SELECT v with ivm/expr nodes
// (the vectorized path). Sub-benchmarks: chain=fused is what a circuit
// runs (ivm/circuit fuses a Filter feeding a Project into one op.Fused),
// chain=separate steps the two operators one after the other.
func BenchmarkFilterProject(b *testing.B) {
	benchFilterProject(b, mustBinary(b, ">", int8Col(1), int8Const(0)))
}

// BenchmarkFilterProjectRowAtATime is the same query through an expression
// that does not vectorize (the row-at-a-time path, for comparison).
func BenchmarkFilterProjectRowAtATime(b *testing.B) {
	benchFilterProject(b, testexpr.Binary{Op: ">", L: testexpr.IntCol(1), R: testexpr.Int(0)})
}

func benchFilterProject(b *testing.B, pred expr.Expr) {
	benchStatelessChain(b, func() (Operator, Operator) {
		return NewFilter(intSchema(2), pred), NewProject(intSchema(2), []int{1})
	}, filterProjectReference())
}

// benchStatelessChain runs a Filter and the Map or Project it feeds over
// the same delta every iteration, fused and separately.
func benchStatelessChain(b *testing.B, chain func() (Operator, Operator), reference func(epochs int)) {
	rng := rand.New(rand.NewPCG(1, 2))
	batch := benchBatch(rng, 1000)
	ctx := &Context{Env: &expr.Env{}}
	b.Run("chain=fused", func(b *testing.B) {
		fused, ok := Fuse(chain())
		if !ok {
			b.Fatal("chain does not fuse")
		}
		meter := startRate(b)
		for i := 0; i < b.N; i++ {
			if _, err := fused.Step(ctx, []zset.Batch{batch}); err != nil {
				b.Fatal(err)
			}
		}
		meter.report(b.N*benchBatchRows, reference)
	})
	b.Run("chain=separate", func(b *testing.B) {
		first, second := chain()
		meter := startRate(b)
		for i := 0; i < b.N; i++ {
			f, err := first.Step(ctx, []zset.Batch{batch})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := second.Step(ctx, []zset.Batch{f}); err != nil {
				b.Fatal(err)
			}
		}
		meter.report(b.N*benchBatchRows, reference)
	})
}

// BenchmarkFilterMap is WHERE k >= 0 AND v > 0 then SELECT k + v * 2
// (vectorized arithmetic with overflow checks).
func BenchmarkFilterMap(b *testing.B) {
	benchStatelessChain(b, func() (Operator, Operator) {
		pred := &expr.And{Args: []expr.Expr{mustBinary(b, ">=", int8Col(0), int8Const(0)), mustBinary(b, ">", int8Col(1), int8Const(0))}}
		return NewFilter(intSchema(2), pred), NewMap([]expr.Expr{mustBinary(b, "+", int8Col(0), mustBinary(b, "*", int8Col(1), int8Const(2)))}, []string{"x"})
	}, filterMapReference())
}

// filterMapReference is WHERE k >= 0 AND v > 0 then SELECT k + v * 2 over
// plain structs.
func filterMapReference() func(epochs int) {
	type row struct{ k, v int64 }
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]row, benchBatchRows)
	for i := range in {
		in[i] = row{rng.Int64N(1000), rng.Int64N(100) - 10}
	}
	out := make([]int64, 0, benchBatchRows)
	return func(epochs int) {
		for range epochs {
			out = out[:0]
			for _, r := range in {
				if r.k >= 0 && r.v > 0 {
					out = append(out, r.k+r.v*2)
				}
			}
		}
	}
}

// filterProjectReference is WHERE v > 0 then SELECT v over plain structs.
func filterProjectReference() func(epochs int) {
	type row struct{ k, v int64 }
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]row, benchBatchRows)
	for i := range in {
		in[i] = row{rng.Int64N(1000), rng.Int64N(100) - 10}
	}
	out := make([]int64, 0, benchBatchRows)
	return func(epochs int) {
		for range epochs {
			out = out[:0]
			for _, r := range in {
				if r.v > 0 {
					out = append(out, r.v)
				}
			}
		}
	}
}

func sumCountSpec() AggregateSpec {
	return AggregateSpec{GroupBy: []int{0}, Calls: []AggregateCall{
		{Func: AggCountStar, Name: "n"}, {Func: AggSum, Arg: testexpr.Col{Index: 1, T: types.TInt4}, Name: "s"},
	}}
}

// benchGroupBy runs SUM/COUNT GROUP BY over groups keys with a read cache
// of cacheEntries (0: the default).
func benchGroupBy(b *testing.B, groups int64, cacheEntries int) {
	for _, kind := range benchStores {
		b.Run("kv="+kind, func(b *testing.B) {
			a, err := NewAggregate(State{ID: arrange.MakeID(1, 1), CacheEntriesMax: cacheEntries}, intSchema(2), sumCountSpec())
			if err != nil {
				b.Fatal(err)
			}
			store := openBenchStore(b, kind)
			// Warm up: every group exists (and is cached, when it fits)
			// before timing, so the timed epochs update existing groups.
			for start := int64(0); start < groups; start += benchBatchRows {
				var warm zset.Batch
				for k := start; k < min(start+benchBatchRows, groups); k++ {
					warm.Add(types.Row{k, int64(1)}, 1)
				}
				stepEpoch(b, store, a, []zset.Batch{warm})
			}
			runEpochs(b, store, a, groups, 1, 0, groupByReference(groups))
		})
	}
}

// groupByReference is SUM/COUNT per key in a Go map that already holds
// every group.
func groupByReference(groups int64) func(epochs int) {
	type acc struct{ sum, count int64 }
	state := make(map[int64]*acc, groups)
	for k := range groups {
		state[k] = &acc{}
	}
	batches := benchBatches(groups)
	next := 0
	return func(epochs int) {
		for range epochs {
			batch := batches[next%len(batches)]
			next++
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
	}
}

func BenchmarkGroupBySumCount1K(b *testing.B) { benchGroupBy(b, 1000, 0) }

// BenchmarkGroupBySumCount1M has a cache that holds every group ("while
// state fits in the cache").
func BenchmarkGroupBySumCount1M(b *testing.B) { benchGroupBy(b, 1000000, 2000000) }

// BenchmarkGroupBySumCount1MSmallCache is 1M groups with the default
// (64K-entry) cache: most group reads miss and go to the store.
func BenchmarkGroupBySumCount1MSmallCache(b *testing.B) { benchGroupBy(b, 1000000, 0) }

// joinArrangedRows is the size of the probed (right) arrangement.
const joinArrangedRows = 1000000

// BenchmarkJoinInner1M has a cache that holds both arrangements ("while
// state fits in the cache"): every probe is served from cached groups.
func BenchmarkJoinInner1M(b *testing.B) { benchJoinInner(b, 4*joinArrangedRows) }

// BenchmarkJoinInner1MSmallCache is the same join with the default
// (64K-unit) cache: most probes miss and read the store.
func BenchmarkJoinInner1MSmallCache(b *testing.B) { benchJoinInner(b, 0) }

// benchJoinInner probes a 1M-row right arrangement with 10K-row left
// deltas (each row matches one arranged row and is arranged itself).
func benchJoinInner(b *testing.B, cacheEntries int) {
	for _, kind := range benchStores {
		b.Run("kv="+kind, func(b *testing.B) {
			j, err := NewJoin(State{ID: arrange.MakeID(1, 1), CacheEntriesMax: cacheEntries}, intSchema(2), intSchema(2), JoinSpec{Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}})
			if err != nil {
				b.Fatal(err)
			}
			store := openBenchStore(b, kind)
			// Fill the right arrangement with 1M rows, one per key, in
			// 10K-row epochs.
			for start := int64(0); start < joinArrangedRows; start += benchBatchRows {
				right := zset.Batch{}
				for k := start; k < start+benchBatchRows; k++ {
					right.Add(types.Row{k, k % 7}, 1)
				}
				stepEpoch(b, store, j, []zset.Batch{{}, right})
			}
			runEpochs(b, store, j, joinArrangedRows, 2, 0, joinReference())
		})
	}
}

// joinReference probes a 1M-key Go map per left row, emits the matches and
// adds the row's weight to the left side's map (keyed by row, as the
// arrangement is).
func joinReference() func(epochs int) {
	right := make(map[int64][][2]int64, joinArrangedRows)
	for k := int64(0); k < joinArrangedRows; k++ {
		right[k] = append(right[k], [2]int64{k, k % 7})
	}
	left := map[[2]int64]int64{}
	batches := benchBatches(joinArrangedRows)
	next := 0
	out := make([][4]int64, 0, benchBatchRows)
	return func(epochs int) {
		for range epochs {
			batch := batches[next%len(batches)]
			next++
			out = out[:0]
			for i, r := range batch.Rows {
				k, v := r[0].(int64), r[1].(int64)
				for _, m := range right[k] {
					out = append(out, [4]int64{k, v, m[0], m[1]})
				}
				left[[2]int64{k, v}] += batch.Weights[i]
			}
		}
	}
}

// distinctKeys is the key domain of the Distinct benchmark.
const distinctKeys = 100000

func BenchmarkDistinct(b *testing.B) {
	for _, kind := range benchStores {
		b.Run("kv="+kind, func(b *testing.B) {
			d := NewDistinct(State{ID: arrange.MakeID(1, 1)}, intSchema(2))
			runEpochs(b, openBenchStore(b, kind), d, distinctKeys, 1, 0, distinctReference())
		})
	}
}

// distinctReference counts rows in a Go map and counts the rows whose
// presence changed.
func distinctReference() func(epochs int) {
	counts := map[[2]int64]int64{}
	batches := benchBatches(distinctKeys)
	next := 0
	var emitted int
	return func(epochs int) {
		for range epochs {
			batch := batches[next%len(batches)]
			next++
			for j, r := range batch.Rows {
				k := [2]int64{r[0].(int64), r[1].(int64)}
				before := counts[k] > 0
				counts[k] += batch.Weights[j]
				if before != (counts[k] > 0) {
					emitted++
				}
			}
		}
	}
}
