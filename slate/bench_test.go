package slate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

// Benchmarks: slate on the local filesystem store vs Pebble on the same disk.
// Reported, not asserted. Run:
//
//	go test ./slate -run '^$' -bench . -benchtime 3s
//
// Each engine runs with the same budgets: 64 MiB memtable, 128 MiB of
// unflushed memtables, 64 MiB block cache, 16 MiB metadata cache; the Go
// runtime gets a soft memory limit of their sum (benchBudgetBytes), as an
// owner deploying slate would set, and peak RSS is reported against it.

const (
	benchValueBytes = 1024
	benchBatchPuts  = 1000
	benchKeys       = 32_000
	benchCacheBytes = 64 << 20
	benchMemtable   = 64 << 20
	benchUnflushed  = 128 << 20
	benchMetaCache  = 16 << 20
	// benchBudgetBytes is the configured memory budget of one engine.
	benchBudgetBytes = benchUnflushed + benchCacheBytes + benchMetaCache
)

type benchKV interface {
	write(keys, values [][]byte) error
	get(key []byte) ([]byte, bool, error)
	scan(start, end []byte) (int, error)
	settle() error // flush everything and compact (setup only)
	physicalBytesWritten() int64
	close()
}

// countingStore counts bytes written to the store (write amplification).
type countingStore struct {
	objstore.Store
	written atomic.Int64
}

func (c *countingStore) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	c.written.Add(int64(len(data)))
	return c.Store.Put(ctx, key, data)
}
func (c *countingStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	c.written.Add(int64(len(data)))
	return c.Store.PutIfAbsent(ctx, key, data)
}

type slateKV struct {
	ctx   context.Context
	store *countingStore
	db    *DB
	now   time.Time
}

func newSlateKV(b *testing.B, cacheBytes int64) *slateKV {
	fs, err := fsstore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := &slateKV{ctx: context.Background(), store: &countingStore{Store: fs}, now: time.Unix(1_700_000_000, 0)}
	s.db, err = Open(s.ctx, s.store, "bench", Options{
		InstanceID: "bench", MemtableBytesMax: benchMemtable, BlockCacheBytes: cacheBytes,
		UnflushedBytesMax: benchUnflushed, MetaCacheBytes: benchMetaCache,
		AutoCompact: true, Clock: func() time.Time { return s.now },
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func (s *slateKV) write(keys, values [][]byte) error {
	var batch Batch
	for i := range keys {
		batch.Put(keys[i], values[i])
	}
	for {
		_, err := s.db.Write(s.ctx, &batch, WriteOptions{AwaitDurable: true})
		if errors.Is(err, ErrBackpressure) {
			if err := s.db.FlushMemtable(s.ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	s.now = s.now.Add(time.Millisecond)
	return s.db.Tick(s.ctx, s.now) // the owner's timer: flush frozen memtables, compact
}

func (s *slateKV) get(key []byte) ([]byte, bool, error) { return s.db.Get(s.ctx, key, ReadOptions{}) }

func (s *slateKV) scan(start, end []byte) (int, error) {
	it := s.db.Scan(s.ctx, start, end, ReadOptions{})
	n := 0
	for it.Next() {
		n++
	}
	return n, it.Err()
}

func (s *slateKV) settle() error {
	if err := s.db.FlushMemtable(s.ctx); err != nil {
		return err
	}
	_, err := s.db.CompactAll(s.ctx)
	return err
}

func (s *slateKV) physicalBytesWritten() int64 { return s.store.written.Load() }
func (s *slateKV) close()                      { s.db.Close(s.ctx) }

type pebbleKV struct {
	db *pebble.DB
}

func newPebbleKV(b *testing.B, cacheBytes int64) *pebbleKV {
	cache := pebble.NewCache(max(cacheBytes, 1))
	defer cache.Unref()
	db, err := pebble.Open(b.TempDir(), &pebble.Options{Cache: cache, MemTableSize: benchMemtable})
	if err != nil {
		b.Fatal(err)
	}
	return &pebbleKV{db: db}
}

func (p *pebbleKV) write(keys, values [][]byte) error {
	batch := p.db.NewBatch()
	for i := range keys {
		batch.Set(keys[i], values[i], nil)
	}
	return batch.Commit(pebble.Sync)
}

func (p *pebbleKV) get(key []byte) ([]byte, bool, error) {
	v, closer, err := p.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, true, nil
}

func (p *pebbleKV) scan(start, end []byte) (int, error) {
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return 0, err
	}
	n := 0
	for it.First(); it.Valid(); it.Next() {
		_ = it.Value()
		n++
	}
	return n, it.Close()
}

func (p *pebbleKV) settle() error {
	if err := p.db.Flush(); err != nil {
		return err
	}
	return p.db.Compact(context.Background(), []byte("key"), []byte("kez"), true)
}

func (p *pebbleKV) physicalBytesWritten() int64 {
	m := p.db.Metrics()
	t := m.Total()
	return int64(m.WAL.BytesWritten + t.TableBytesFlushed + t.TableBytesCompacted)
}

func (p *pebbleKV) close() { p.db.Close() }

func benchKey(i int) []byte { return []byte(fmt.Sprintf("key%06d", i)) }

func benchValue(rng *rand.Rand) []byte {
	v := make([]byte, benchValueBytes)
	for i := range v {
		v[i] = byte(rng.IntN(256))
	}
	return v
}

func engines(b *testing.B, cacheBytes int64) map[string]func() benchKV {
	return map[string]func() benchKV{
		"slate":  func() benchKV { return newSlateKV(b, cacheBytes) },
		"pebble": func() benchKV { return newPebbleKV(b, cacheBytes) },
	}
}

// peakRSSMiB reads the process's peak resident set (VmHWM).
func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func preload(b *testing.B, kv benchKV) {
	rng := rand.New(rand.NewPCG(1, 2))
	perm := rng.Perm(benchKeys)
	for start := 0; start < benchKeys; start += benchBatchPuts {
		var keys, values [][]byte
		for _, i := range perm[start:min(start+benchBatchPuts, benchKeys)] {
			keys = append(keys, benchKey(i))
			values = append(values, benchValue(rng))
		}
		if err := kv.write(keys, values); err != nil {
			b.Fatal(err)
		}
	}
	if err := kv.settle(); err != nil {
		b.Fatal(err)
	}
}

func forEngines(b *testing.B, cacheBytes int64, f func(b *testing.B, kv benchKV)) {
	for _, name := range []string{"slate", "pebble"} {
		mk := engines(b, cacheBytes)[name]
		b.Run(name, func(b *testing.B) {
			if os.Getenv("RS_BENCH_NO_MEMLIMIT") == "" {
				debug.SetMemoryLimit(benchBudgetBytes)
			}
			kv := mk()
			defer kv.close()
			f(b, kv)
			b.ReportMetric(peakRSSMiB(), "peakRSS-MiB")
			b.ReportMetric(float64(benchBudgetBytes>>20), "budget-MiB")
		})
	}
}

// BenchmarkBatchedPuts: one op = one durable batch of 1,000 puts of 1 KiB.
func BenchmarkBatchedPuts(b *testing.B) {
	forEngines(b, benchCacheBytes, func(b *testing.B, kv benchKV) {
		rng := rand.New(rand.NewPCG(3, 4))
		values := make([][]byte, benchBatchPuts)
		for i := range values {
			values[i] = benchValue(rng)
		}
		logical := int64(0)
		b.SetBytes(int64(benchBatchPuts * (benchValueBytes + 9)))
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			keys := make([][]byte, benchBatchPuts)
			for i := range keys {
				keys[i] = benchKey(rng.IntN(1_000_000))
				logical += int64(len(keys[i]) + benchValueBytes)
			}
			if err := kv.write(keys, values); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(kv.physicalBytesWritten())/float64(logical), "write-amp")
	})
}

func benchGets(b *testing.B, cacheBytes int64) {
	forEngines(b, cacheBytes, func(b *testing.B, kv benchKV) {
		preload(b, kv)
		rng := rand.New(rand.NewPCG(5, 6))
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			k := benchKey(rng.IntN(benchKeys))
			v, ok, err := kv.get(k)
			if err != nil || !ok || len(v) != benchValueBytes {
				b.Fatalf("get %s: %v %v", k, ok, err)
			}
		}
	})
}

// BenchmarkGetWarm: random point gets with a 64 MiB block cache (the data set
// of ~33 MB fits).
func BenchmarkGetWarm(b *testing.B) { benchGets(b, benchCacheBytes) }

// BenchmarkGetCold: random point gets with no block cache (every get reads
// and verifies its block; the OS page cache is warm for both engines).
func BenchmarkGetCold(b *testing.B) { benchGets(b, -1) }

// BenchmarkPrefixScan: one op scans a random 1,000-key prefix.
func BenchmarkPrefixScan(b *testing.B) {
	forEngines(b, benchCacheBytes, func(b *testing.B, kv benchKV) {
		preload(b, kv)
		rng := rand.New(rand.NewPCG(7, 8))
		b.SetBytes(1000 * (benchValueBytes + 9))
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			p := []byte(fmt.Sprintf("key%03d", rng.IntN(benchKeys/1000)))
			count, err := kv.scan(p, PrefixEnd(p))
			if err != nil || count != 1000 {
				b.Fatalf("scan %s: %d %v", p, count, err)
			}
		}
	})
}

// BenchmarkMixed: one op = 1 random get; every 100th op also writes a
// durable batch of 100 puts.
func BenchmarkMixed(b *testing.B) {
	forEngines(b, benchCacheBytes, func(b *testing.B, kv benchKV) {
		preload(b, kv)
		rng := rand.New(rand.NewPCG(9, 10))
		value := benchValue(rng)
		b.ResetTimer()
		for n := 0; n < b.N; n++ {
			if _, _, err := kv.get(benchKey(rng.IntN(benchKeys))); err != nil {
				b.Fatal(err)
			}
			if n%100 == 99 {
				var keys, values [][]byte
				for i := 0; i < 100; i++ {
					keys = append(keys, benchKey(rng.IntN(benchKeys)))
					values = append(values, value)
				}
				if err := kv.write(keys, values); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkVsPebble runs the same workloads on slate and on Pebble back to
// back in this process (same disk, same moment, same load from neighbours)
// and reports slate's speed as a fraction of Pebble's: x-<workload> =
// Pebble's time ÷ slate's time (1 = parity, 0.5 = slate takes twice as
// long). One op = one round of every workload on both engines. Run:
//
//	go test ./slate -run '^$' -bench VsPebble -benchtime 5x
func BenchmarkVsPebble(b *testing.B) {
	type workload struct {
		name string
		run  func(kv benchKV, rng *rand.Rand) error
	}
	value := benchValue(rand.New(rand.NewPCG(11, 12)))
	workloads := []workload{
		{"puts", func(kv benchKV, rng *rand.Rand) error { // 10 durable batches of 1,000 × 1 KiB
			for n := 0; n < 10; n++ {
				keys, values := make([][]byte, benchBatchPuts), make([][]byte, benchBatchPuts)
				for i := range keys {
					keys[i], values[i] = benchKey(rng.IntN(1_000_000)), value
				}
				if err := kv.write(keys, values); err != nil {
					return err
				}
			}
			return nil
		}},
		{"small-commits", func(kv benchKV, rng *rand.Rand) error { // 100 durable batches of 10 × 100 B
			for n := 0; n < 100; n++ {
				var keys, values [][]byte
				for i := 0; i < 10; i++ {
					keys, values = append(keys, benchKey(rng.IntN(1_000_000))), append(values, value[:100])
				}
				if err := kv.write(keys, values); err != nil {
					return err
				}
			}
			return nil
		}},
		{"gets", func(kv benchKV, rng *rand.Rand) error { // 20,000 random point gets
			for n := 0; n < 20_000; n++ {
				if _, _, err := kv.get(benchKey(rng.IntN(benchKeys))); err != nil {
					return err
				}
			}
			return nil
		}},
		{"scans", func(kv benchKV, rng *rand.Rand) error { // 100 prefix scans of 1,000 keys
			for n := 0; n < 100; n++ {
				p := []byte(fmt.Sprintf("key%03d", rng.IntN(benchKeys/1000)))
				if _, err := kv.scan(p, PrefixEnd(p)); err != nil {
					return err
				}
			}
			return nil
		}},
	}
	kvs := map[string]benchKV{"slate": newSlateKV(b, benchCacheBytes), "pebble": newPebbleKV(b, benchCacheBytes)}
	for _, name := range []string{"slate", "pebble"} {
		defer kvs[name].close()
		preload(b, kvs[name])
	}
	spent := map[string]time.Duration{}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for _, w := range workloads {
			// Alternate which engine goes first so neither always runs on
			// the other's leftovers (page cache, GC debt).
			order := []string{"slate", "pebble"}
			if n%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, name := range order {
				rng := rand.New(rand.NewPCG(uint64(n), 99))
				start := time.Now()
				if err := w.run(kvs[name], rng); err != nil {
					b.Fatalf("%s on %s: %v", w.name, name, err)
				}
				spent[name+"/"+w.name] += time.Since(start)
			}
		}
	}
	b.StopTimer()
	for _, w := range workloads {
		b.ReportMetric(spent["pebble/"+w.name].Seconds()/spent["slate/"+w.name].Seconds(), "x-"+w.name)
	}
}
