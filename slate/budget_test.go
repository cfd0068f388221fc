package slate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/fsstore"
)

func TestBackpressure(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MemtableBytesMax = 1 << 10
	opts.UnflushedBytesMax = 4 << 10
	opts.WALBufferBytesMax = 1 << 20
	d, err := Open(ctx, objstore.NewMemory(), "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 200)
	var bpErr error
	for i := 0; i < 100 && bpErr == nil; i++ {
		_, bpErr = d.Put(ctx, []byte(fmt.Sprintf("k%03d", i)), value, WriteOptions{})
	}
	if !errors.Is(bpErr, ErrBackpressure) {
		t.Fatalf("no backpressure within budget: %v", bpErr)
	}
	if e, ok := errcode.As(bpErr); !ok || e.Code != errcode.StorageMemoryBudgetExceeded {
		t.Fatalf("backpressure error has no RS code: %v", bpErr)
	}
	seq := d.LastSeq()
	if _, err := d.Put(ctx, []byte("x"), value, WriteOptions{}); !errors.Is(err, ErrBackpressure) || d.LastSeq() != seq {
		t.Fatalf("rejected write was applied: %v seq %d -> %d", err, seq, d.LastSeq())
	}
	if d.unflushedBytes() > opts.UnflushedBytesMax+300 {
		t.Fatalf("unflushed %d exceeds budget %d", d.unflushedBytes(), opts.UnflushedBytesMax)
	}
	if err := d.FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, []byte("x"), value, WriteOptions{}); err != nil {
		t.Fatalf("write after flush: %v", err)
	}
}

func TestMergeOperatorMissingIsAnError(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MergeOperator = nil
	store := objstore.NewMemory()
	d, _ := Open(ctx, store, "db", opts)
	d.Put(ctx, []byte("p"), []byte("plain"), WriteOptions{})
	if _, err := d.Merge(ctx, []byte("m"), i64(1), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Get(ctx, []byte("m"), ReadOptions{}); !errors.Is(err, ErrMergeOperatorMissing) {
		t.Fatalf("get of merge row without operator: %v", err)
	}
	if v, ok, err := d.Get(ctx, []byte("p"), ReadOptions{}); err != nil || !ok || string(v) != "plain" {
		t.Fatalf("plain key: %q %v %v", v, ok, err)
	}
	it := d.Scan(ctx, nil, nil, ReadOptions{})
	for it.Next() {
	}
	if !errors.Is(it.Err(), ErrMergeOperatorMissing) {
		t.Fatalf("scan over merge row without operator: %v", it.Err())
	}
	d.Merge(ctx, []byte("m"), i64(2), WriteOptions{})
	if err := d.FlushMemtable(ctx); !errors.Is(err, ErrMergeOperatorMissing) {
		t.Fatalf("flush folding merges without operator: %v", err)
	}
}

// failingWALStore fails WAL creates with the given error, applying them
// first when ambiguous.
type failingWALStore struct {
	objstore.Store
	failures  int
	ambiguous bool
}

func (f *failingWALStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	if strings.Contains(key, "wal/") && f.failures > 0 {
		f.failures--
		if f.ambiguous {
			f.Store.PutIfAbsent(ctx, key, data)
			return "", fmt.Errorf("lost response: %w", objstore.ErrAmbiguous)
		}
		return "", fmt.Errorf("injected: %w", objstore.ErrTransient)
	}
	return f.Store.PutIfAbsent(ctx, key, data)
}

func TestWALFlushFailureNeverAcksEarly(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	mem := objstore.NewMemory()
	fs := &failingWALStore{Store: mem}
	d, err := Open(ctx, fs, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	d.Put(ctx, []byte("a"), []byte("1"), WriteOptions{AwaitDurable: true})
	durable := d.DurableSeq()
	fs.failures = 100 // more than the verified put's retries
	seq, err := d.Put(ctx, []byte("b"), []byte("2"), WriteOptions{AwaitDurable: true})
	if err == nil {
		t.Fatal("AwaitDurable returned success although the WAL create failed")
	}
	if d.DurableSeq() != durable {
		t.Fatalf("durable seq advanced to %d on a failed flush", d.DurableSeq())
	}
	if _, ok, _ := d.Get(ctx, []byte("b"), ReadOptions{DurableOnly: true}); ok {
		t.Fatal("durable-only read saw an undurable write")
	}
	if _, ok, _ := d.Get(ctx, []byte("b"), ReadOptions{}); !ok {
		t.Fatal("committed write invisible to default reads")
	}
	// The store recovers: the same WAL object is retried, nothing skipped.
	fs.failures = 0
	if err := d.FlushWAL(ctx); err != nil {
		t.Fatal(err)
	}
	if d.DurableSeq() != seq {
		t.Fatalf("durable %d, want %d", d.DurableSeq(), seq)
	}
	// Ambiguous creates that landed are recognized by reading back.
	fs.failures, fs.ambiguous = 2, true
	if _, err := d.Put(ctx, []byte("c"), []byte("3"), WriteOptions{AwaitDurable: true}); err != nil {
		t.Fatalf("ambiguous WAL create that landed: %v", err)
	}
	d2, err := Open(ctx, mem, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(scanAll(t, d2.Scan(ctx, nil, nil, ReadOptions{}))); got != "[a=1 b=2 c=3]" {
		t.Fatalf("after reopen: %s", got)
	}
}

func TestFilesystemBackedDB(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs, err := fsstore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	clock := newTestClock()
	d, err := Open(ctx, fs, "shards/1", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		d.Put(ctx, []byte(fmt.Sprintf("k%03d", i)), i64(int64(i)), WriteOptions{})
		d.Merge(ctx, []byte("sum"), i64(1), WriteOptions{})
		if i%100 == 99 {
			clock.advance(time.Second)
			if err := d.FlushMemtable(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := d.CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	d.Put(ctx, []byte("tail"), i64(7), WriteOptions{AwaitDurable: true})
	clock.advance(time.Hour)
	if _, err := d.GC(ctx, clock.now()); err != nil {
		t.Fatal(err)
	}
	// Another "process": a fresh store handle on the same directory.
	fs2, _ := fsstore.New(dir)
	d2, err := Open(ctx, fs2, "shards/1", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	v, ok, err := d2.Get(ctx, []byte("sum"), ReadOptions{})
	if err != nil || !ok || bytesToI64(v) != 300 {
		t.Fatalf("sum = %v %v %v", bytesToI64(v), ok, err)
	}
	if n := len(scanAll(t, d2.Scan(ctx, []byte("k"), PrefixEnd([]byte("k")), ReadOptions{}))); n != 300 {
		t.Fatalf("%d keys", n)
	}
	if _, ok, _ := d2.Get(ctx, []byte("tail"), ReadOptions{}); !ok {
		t.Fatal("durable tail lost")
	}
	if _, err := d.Put(ctx, []byte("zombie"), i64(1), WriteOptions{AwaitDurable: true}); !errors.Is(err, ErrFenced) {
		t.Fatalf("old writer on the filesystem not fenced: %v", err)
	}
}

// countingGets counts data reads.
type countingGets struct {
	objstore.Store
	ranges int
}

func (c *countingGets) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	c.ranges++
	return c.Store.GetRange(ctx, key, off, n)
}

func TestBloomSkipsAndCacheIsBounded(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	cg := &countingGets{Store: objstore.NewMemory()}
	opts := testOptions(clock)
	opts.MemtableBytesMax = 1 << 20
	opts.BlockCacheBytes = 16 << 10
	d, err := Open(ctx, cg, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < 4; s++ {
		for i := 0; i < 500; i++ {
			d.Put(ctx, []byte(fmt.Sprintf("k%05d", i*4+s)), make([]byte, 32), WriteOptions{})
		}
		clock.advance(time.Second)
		d.FlushMemtable(ctx)
	}
	if len(d.manifest.L0) != 4 {
		t.Fatalf("%d L0 SSTs", len(d.manifest.L0))
	}
	for i := 0; i < 2000; i++ { // warm metadata; present keys
		if _, ok, err := d.Get(ctx, []byte(fmt.Sprintf("k%05d", i)), ReadOptions{}); err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
	}
	if d.tables.cache.usedBytes > opts.BlockCacheBytes {
		t.Fatalf("cache holds %d bytes, budget %d", d.tables.cache.usedBytes, opts.BlockCacheBytes)
	}
	// Absent keys inside every SST's range: the bloom filters must answer
	// almost all of them without reading a data block.
	for i := 0; i < 16; i++ { // make sure every SST's metadata is cached
		d.Get(ctx, []byte(fmt.Sprintf("k%05d", i)), ReadOptions{})
	}
	before := cg.ranges
	for i := 0; i < 1000; i++ {
		if _, ok, _ := d.Get(ctx, []byte(fmt.Sprintf("k%05dx", i)), ReadOptions{}); ok {
			t.Fatal("absent key found")
		}
	}
	reads := cg.ranges - before
	// 1000 lookups × 4 SSTs; a 10-bit bloom has ~1% false positives, plus
	// metadata evicted from the small cache.
	if reads > 400 {
		t.Fatalf("absent-key lookups made %d range reads: bloom filters not used", reads)
	}
}

func TestL0Backpressure(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.L0CompactionTrigger = 2
	opts.L0MaxSSTs = 3
	d, _ := Open(ctx, objstore.NewMemory(), "db", opts)
	var err error
	for i := 0; i < 4 && err == nil; i++ {
		d.Put(ctx, []byte{byte(i)}, i64(1), WriteOptions{})
		err = d.FlushMemtable(ctx)
	}
	if !errors.Is(err, ErrBackpressure) || len(d.Manifest().L0) != 3 {
		t.Fatalf("L0 limit not enforced: %v, %d L0 SSTs", err, len(d.Manifest().L0))
	}
	if _, err := d.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.FlushMemtable(ctx); err != nil {
		t.Fatalf("flush after compaction: %v", err)
	}
	if n := len(scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{}))); n != 4 {
		t.Fatalf("%d keys", n)
	}
}
