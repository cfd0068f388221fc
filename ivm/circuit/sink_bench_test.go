package circuit

import (
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// BenchmarkCircuitSink measures the view-output path alone, the shape of
// nexmark q0: Source → view, every step 10,000 new distinct rows (so the
// view grows and nearly every row is a store miss), committed to a
// kv.Memory each step. rows/cpu-s is input rows per second of this
// process's CPU time spent in the step (the commit to kv.Memory, whose
// growth is not the sink's cost, is outside). sink=view steps the circuit; sink=reference is the
// "physical limit" loop in the same run: encode each row once into a Go map
// of encoded row → weight, then write those keys to a kv.Txn and commit it.
// sink=view-columns is sink=view fed the deltas as columns (zset.Columns):
// rows encoded straight from the arrays.
//
//	go test ./ivm/circuit -run '^$' -bench CircuitSink -benchtime 100x -count 3
//
// Compare the two sub-benchmarks of one run.
func BenchmarkCircuitSink(b *testing.B) {
	const batchRows = 10000
	delta := func(step int) zset.Batch {
		var d zset.Batch
		for j := range batchRows {
			id := int64(step*batchRows + j)
			d.Add(types.Row{id, id % 97}, 1)
		}
		return d
	}
	for _, sink := range []string{"view", "view-columns", "reference"} {
		b.Run("sink="+sink, func(b *testing.B) {
			deltas := make([]zset.Batch, b.N)
			columns := make([]*zset.Columns, b.N)
			for i := range deltas {
				deltas[i] = delta(i)
				if sink == "view-columns" {
					c, err := zset.ColumnsFromRows(kvSchema, deltas[i])
					if err != nil {
						b.Fatal(err)
					}
					columns[i] = c
				}
			}
			builder := NewBuilder()
			builder.Sink(viewSums, builder.Source(tableT, kvSchema))
			c, err := builder.Build(Config{ID: 1})
			if err != nil {
				b.Fatal(err)
			}
			store := kv.NewMemory()
			var before, after syscall.Rusage
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				txn := kv.NewTxn(store)
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				switch sink {
				case "view":
					if _, err := c.Step(txn, map[SourceID]zset.Batch{tableT: deltas[i]}); err != nil {
						b.Fatal(err)
					}
				case "view-columns":
					if _, err := c.StepDeltas(txn, map[SourceID]zset.Delta{tableT: zset.ColumnDelta(columns[i])}); err != nil {
						b.Fatal(err)
					}
				default:
					referenceSink(b, txn, deltas[i])
				}
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				cpu += time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
				if err := store.Apply(txn.Batch()); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if cpu > 0 {
				b.ReportMetric(float64(b.N*batchRows)/cpu.Seconds(), "rows/cpu-s")
			}
		})
	}
}

// referenceSink consolidates d in a Go map keyed by encoded row and writes
// each key blindly (no read, no sort, no output batch).
func referenceSink(b *testing.B, txn kv.Txn, d zset.Batch) {
	sums := make(map[string]int64, d.Len())
	var buf []byte
	for i, r := range d.Rows {
		buf = zset.EncodeRow(buf[:0], r)
		sums[string(buf)] += d.Weights[i]
	}
	var w [1]byte
	//lint:maprange benchmark reference: write order does not matter to the Txn
	for k, v := range sums {
		w[0] = byte(v)
		if err := txn.Put([]byte(k), w[:]); err != nil {
			b.Fatal(err)
		}
	}
}
