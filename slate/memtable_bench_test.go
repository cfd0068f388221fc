package slate

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"syscall"
	"testing"
	"time"
)

// processCPU is this process's user+system CPU time (the machine is
// shared, so wall time would measure the neighbours).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMemtableInsert fills one memtable the way a 1M-group GROUP BY
// does through Write: 100 batches of 10K sorted random keys out of 1M
// (16-byte keys, 16-byte values), each resolved and added as one batch.
// Then it forces a GC with the memtable live. Reported per op (one full
// memtable): cpu-ns/row for the inserts (process CPU time, GC included),
// heap-objects live after the GC, gc-forced-cpu-ms (process CPU time of
// the forced GC: the mark work a memtable costs every cycle) and
// gc-cpu-ms (GC CPU time over the whole op, runtime/metrics). Run:
//
//	go test ./slate -run '^$' -bench MemtableInsert -benchtime 5x
func BenchmarkMemtableInsert(b *testing.B) {
	const batches, perBatch, keys = 100, 10_000, 1_000_000
	samples := []metrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/cpu/classes/gc/total:cpu-seconds"}}
	var insert, pause time.Duration
	var objects, gcCPU float64
	for b.Loop() {
		rng := rand.New(rand.NewPCG(1, 2))
		runtime.GC()
		metrics.Read(samples)
		gcStart := samples[1].Value.Float64()
		start := processCPU()
		m := newMemtable()
		ids := make([]uint64, perBatch)
		for seq := uint64(1); seq <= batches; seq++ {
			for i := range ids {
				ids[i] = rng.Uint64N(keys)
			}
			slices.Sort(ids)
			benchAddSorted(b, m, slices.Compact(ids), seq)
		}
		insert += processCPU() - start
		start = processCPU()
		runtime.GC()
		pause += processCPU() - start
		metrics.Read(samples)
		objects += float64(samples[0].Value.Uint64())
		gcCPU += samples[1].Value.Float64() - gcStart
		runtime.KeepAlive(m)
	}
	n := float64(b.N)
	b.ReportMetric(float64(insert.Nanoseconds())/(n*batches*perBatch), "cpu-ns/row")
	b.ReportMetric(objects/n, "heap-objects")
	b.ReportMetric(float64(pause.Microseconds())/1000/n, "gc-forced-cpu-ms")
	b.ReportMetric(gcCPU*1000/n, "gc-cpu-ms")
}

// benchFilledMemtable is a memtable of n rows with 16-byte keys and 100-byte
// values, written in sorted batches of 1,000.
func benchFilledMemtable(n int) *memtable {
	m := newMemtable()
	rng := rand.New(rand.NewPCG(3, 4))
	perm := rng.Perm(n)
	value := make([]byte, 100)
	for start := 0; start < n; start += 1000 {
		ids := slices.Clone(perm[start:min(start+1000, n)])
		slices.Sort(ids)
		var batch Batch
		for _, id := range ids {
			batch.Put(benchMemtableKey(id), value)
		}
		rows, _ := batch.resolve(nil, uint64(start/1000+1))
		m.addSorted(rows)
	}
	// The reads measure a memtable whose rows are indexed (as after the
	// first lookups; findPointHashed), not the indexing.
	m.indexPending()
	return m
}

func benchMemtableKey(id int) []byte {
	k := binary.BigEndian.AppendUint64(nil, 0x0102030405060708)
	return binary.BigEndian.AppendUint64(k, uint64(id))
}

// BenchmarkMemtableReads: point lookups (findGE + the version walk a Get
// does) and 1,000-row range scans on a 200K-row memtable. Run:
//
//	go test ./slate -run '^$' -bench MemtableReads
func BenchmarkMemtableReads(b *testing.B) {
	const n = 200_000
	m := benchFilledMemtable(n)
	b.Run("get", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(5, 6))
		v := view{memtables: []*memtable{m}, readSeq: ^uint64(0)}
		for b.Loop() {
			if _, ok, err := v.get(nil, benchMemtableKey(rng.IntN(n))); !ok || err != nil {
				b.Fatal("missing key")
			}
		}
	})
	b.Run("getsorted1000", func(b *testing.B) {
		// One ordered pass (GetSorted) over 1,000 sorted random keys, half
		// of them absent (odd ids are never written); cpu-ns/key is the
		// process CPU time (the machine is shared) per key looked up.
		rng := rand.New(rand.NewPCG(5, 6))
		v := view{memtables: []*memtable{m}, readSeq: ^uint64(0)}
		keys := make([][]byte, 1000)
		var cpu time.Duration
		looked := 0
		for b.Loop() {
			ids := make([]int, len(keys))
			for i := range ids {
				ids[i] = rng.IntN(n)*2 + rng.IntN(2)
			}
			slices.Sort(ids)
			ids = slices.Compact(ids)
			keys = keys[:len(ids)]
			for i, id := range ids {
				keys[i] = benchMemtableKey(id / 2)
				if id%2 == 1 {
					keys[i] = append(keys[i], 0)
				}
			}
			start := processCPU()
			if err := v.getSorted(nil, keys, func(int, []byte, bool) error { return nil }); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU() - start
			looked += len(keys)
		}
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(looked), "cpu-ns/key")
	})
	b.Run("scan1000", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(5, 6))
		for b.Loop() {
			start := rng.IntN(n - 1000)
			it := m.iter(benchMemtableKey(start), benchMemtableKey(start+1000))
			rows := 0
			for _, ok, _ := it.next(); ok; _, ok, _ = it.next() {
				rows++
			}
			if rows != 1000 {
				b.Fatalf("%d rows", rows)
			}
		}
	})
}

// BenchmarkMemtableInsertAppend fills one memtable the way COPY into a
// table with an increasing key does: 100 sorted batches of 10K new keys,
// each batch past the previous one (16-byte keys, 16-byte values). The
// skiplist insert then follows its finger and costs little; what remains
// is mostly the point index (cpu-ns/row, process CPU time). Run:
//
//	go test ./slate -run '^$' -bench MemtableInsertAppend -benchtime 5x
func BenchmarkMemtableInsertAppend(b *testing.B) {
	const batches, perBatch = 100, 10_000
	var insert time.Duration
	for b.Loop() {
		runtime.GC()
		start := processCPU()
		m := newMemtable()
		ids := make([]uint64, perBatch)
		for seq := uint64(1); seq <= batches; seq++ {
			for i := range ids {
				ids[i] = seq*perBatch + uint64(i)
			}
			benchAddSorted(b, m, ids, seq)
		}
		insert += processCPU() - start
		runtime.KeepAlive(m)
	}
	b.ReportMetric(float64(insert.Nanoseconds())/(float64(b.N)*batches*perBatch), "cpu-ns/row")
}

// benchAddSorted adds one batch of ascending, distinct ids to m at seq, as
// 16-byte keys and 16-byte values.
func benchAddSorted(b *testing.B, m *memtable, ids []uint64, seq uint64) {
	var batch Batch
	var k, v [16]byte
	for _, id := range ids {
		binary.BigEndian.PutUint64(k[:8], 0x0102030405060708)
		binary.BigEndian.PutUint64(k[8:], id)
		binary.LittleEndian.PutUint64(v[:8], id)
		binary.LittleEndian.PutUint64(v[8:], seq)
		batch.Put(k[:], v[:])
	}
	rows, err := batch.resolve(nil, seq)
	if err != nil {
		b.Fatal(err)
	}
	m.addSorted(rows)
}
