package shard

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// BenchmarkDecodeFusedSink measures a stateless view's whole epoch path as
// the shard runs it: stored rows (encodeStoredRow bytes, as in the delta
// log) decoded, WHERE v > 0 SELECT k, v * 2, s (a fused Filter→Map), and
// the view sink (consolidation, encoding, merge writes to a kv.Txn), for
// 10,000 new distinct rows per epoch (nexmark q1's shape). path=rows
// decodes into rows and steps the circuit over rows (the path before
// columnar deltas); path=columns decodes into Arrow columns and stays
// columnar to the sink. rows/cpu-s counts input rows per second of this
// process's CPU time in decode and step (the commit to kv.Memory is
// outside).
//
//	go test ./actors/shard -run '^$' -bench DecodeFusedSink -benchtime 100x -count 3
func BenchmarkDecodeFusedSink(b *testing.B) {
	const batchRows = 10000
	schema := types.Schema{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}, {Name: "s", Type: types.TText}}
	ts := []types.Type{types.TInt8, types.TInt8, types.TText}
	encoded := func(step int) [][]byte {
		out := make([][]byte, batchRows)
		for j := range out {
			k := int64(step*batchRows + j)
			out[j] = encodeStoredRow(nil, ts, types.Row{k, k%97 - 10, fmt.Sprintf("bidder-%d", k%1000)})
		}
		return out
	}
	build := func(b *testing.B) *circuit.Circuit {
		v := &expr.ColumnRef{Index: 1, Typ: types.TInt8}
		pos, err := expr.NewBinary(">", v, expr.NewConst(types.TInt8, int64(0)))
		if err != nil {
			b.Fatal(err)
		}
		twice, err := expr.NewBinary("*", v, expr.NewConst(types.TInt8, int64(2)))
		if err != nil {
			b.Fatal(err)
		}
		bl := circuit.NewBuilder()
		src := bl.Source(1, schema)
		bl.Sink(2, bl.Map(bl.Filter(src, pos), []expr.Expr{&expr.ColumnRef{Index: 0, Typ: types.TInt8}, twice, &expr.ColumnRef{Index: 2, Typ: types.TText}}, []string{"k", "x", "s"}))
		c, err := bl.Build(circuit.Config{ID: 1})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	for _, path := range []string{"rows", "columns"} {
		b.Run("path="+path, func(b *testing.B) {
			epochs := make([][][]byte, b.N)
			for i := range epochs {
				epochs[i] = encoded(i)
			}
			c := build(b)
			codec := tableCodec{ts: ts}
			store := kv.NewMemory()
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				txn := kv.NewTxn(store)
				start := cpuTime()
				var dec deltaDecoder = &rowDecoder{codec: codec}
				if path == "columns" {
					dec = newColumnDecoder(codec, schema)
				}
				for _, enc := range epochs[i] {
					if err := dec.add(enc, 1); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := c.StepDeltas(txn, map[circuit.SourceID]zset.Delta{1: dec.delta()}); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - start
				if err := store.Apply(txn.Batch()); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if path == "columns" && c.RowsMaterialized() != 0 {
				b.Fatalf("the columnar path built %d rows", c.RowsMaterialized())
			}
			if cpu > 0 {
				b.ReportMetric(float64(b.N*batchRows)/cpu.Seconds(), "rows/cpu-s")
			}
		})
	}
}

// cpuTime is this process's CPU time so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDecode measures decoding alone: 10,000 stored bid-like rows
// (bigint, bigint, bigint, varchar, varchar, timestamp, varchar) into rows
// or into columns, per epoch.
//
//	go test ./actors/shard -run '^$' -bench 'Decode$' -count 3 -benchmem
func BenchmarkDecode(b *testing.B) {
	const batchRows = 10000
	schema := types.Schema{{Name: "auction", Type: types.TInt8}, {Name: "bidder", Type: types.TInt8}, {Name: "price", Type: types.TInt8},
		{Name: "channel", Type: types.TVarchar}, {Name: "url", Type: types.TVarchar}, {Name: "date_time", Type: types.TTimestamp}, {Name: "extra", Type: types.TVarchar}}
	ts := make([]types.Type, len(schema))
	for j, c := range schema {
		ts[j] = c.Type
	}
	encoded := make([][]byte, batchRows)
	for j := range encoded {
		k := int64(j)
		encoded[j] = encodeStoredRow(nil, ts, types.Row{k, k % 1000, k * 7, "Google", "https://www.nexmark.com/abc/item.htm?query=1", types.Timestamp(k * 1000), ""})
	}
	codec := tableCodec{ts: ts}
	for _, path := range []string{"rows", "columns"} {
		b.Run("path="+path, func(b *testing.B) {
			start := cpuTime()
			for i := 0; i < b.N; i++ {
				var dec deltaDecoder = &rowDecoder{codec: codec}
				if path == "columns" {
					dec = newColumnDecoder(codec, schema)
				}
				dec.grow(len(encoded))
				for _, enc := range encoded {
					if err := dec.add(enc, 1); err != nil {
						b.Fatal(err)
					}
				}
				dec.delta()
			}
			if cpu := cpuTime() - start; cpu > 0 {
				b.ReportMetric(float64(b.N*batchRows)/cpu.Seconds(), "rows/cpu-s")
			}
		})
	}
}
