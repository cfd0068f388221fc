package slate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// sumOperator adds little-endian int64s; associative and commutative.
func sumOperator(_ []byte, base []byte, hasBase bool, operands [][]byte) ([]byte, error) {
	var total int64
	if hasBase {
		if len(base) != 8 {
			return nil, fmt.Errorf("sum base has %d bytes", len(base))
		}
		total = int64(binary.LittleEndian.Uint64(base))
	}
	for _, o := range operands {
		if len(o) != 8 {
			return nil, fmt.Errorf("sum operand has %d bytes", len(o))
		}
		total += int64(binary.LittleEndian.Uint64(o))
	}
	return binary.LittleEndian.AppendUint64(nil, uint64(total)), nil
}

func i64(n int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(n)) }

// testClock is a manual clock for tests.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time          { return c.t }
func (c *testClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newTestClock() *testClock               { return &testClock{t: time.Unix(1_700_000_000, 0)} }
func testOptions(clock *testClock) Options {
	return Options{MergeOperator: sumOperator, Clock: clock.now, MemtableBytesMax: 4 << 10, BlockBytes: 256}
}

func mustGet(t *testing.T, ctx context.Context, d *DB, key string) (string, bool) {
	t.Helper()
	v, ok, err := d.Get(ctx, []byte(key), ReadOptions{})
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v), ok
}

func scanAll(t *testing.T, it *Iterator) []string {
	t.Helper()
	var out []string
	for it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func TestWriteReopenGetScan(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	b.Put([]byte("a"), []byte("1"))
	b.Put([]byte("b"), []byte("2"))
	b.Put([]byte("c"), []byte("3"))
	seq, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: true})
	if err != nil || seq != 1 {
		t.Fatalf("write: seq %d err %v", seq, err)
	}
	d.Delete(ctx, []byte("b"), WriteOptions{})
	d.Put(ctx, []byte("d"), []byte("4"), WriteOptions{AwaitDurable: true})
	if got := fmt.Sprint(scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{}))); got != "[a=1 c=3 d=4]" {
		t.Fatalf("scan = %s", got)
	}
	// Reopen without Close: the WAL alone must carry everything durable.
	d2, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(scanAll(t, d2.Scan(ctx, nil, nil, ReadOptions{}))); got != "[a=1 c=3 d=4]" {
		t.Fatalf("scan after reopen = %s", got)
	}
	if v, ok := mustGet(t, ctx, d2, "c"); !ok || v != "3" {
		t.Fatalf("get c = %q %v", v, ok)
	}
	// The old writer is fenced.
	if _, err := d.Put(ctx, []byte("z"), []byte("9"), WriteOptions{AwaitDurable: true}); !errors.Is(err, ErrFenced) {
		t.Fatalf("old writer write: %v, want ErrFenced", err)
	}
	if _, err := d.Put(ctx, []byte("z"), []byte("9"), WriteOptions{}); !errors.Is(err, ErrFenced) {
		t.Fatalf("fenced is terminal: %v", err)
	}
	// Flush, compact, and read again.
	for i := 0; i < 200; i++ {
		if _, err := d2.Put(ctx, []byte(fmt.Sprintf("k%03d", i)), []byte(fmt.Sprint(i)), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			if err := d2.FlushMemtable(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if did, err := d2.CompactAll(ctx); err != nil || !did {
		t.Fatalf("compact: %v %v", did, err)
	}
	if v, ok := mustGet(t, ctx, d2, "k123"); !ok || v != "123" {
		t.Fatalf("get k123 = %q %v", v, ok)
	}
	if n := len(scanAll(t, d2.Scan(ctx, []byte("k"), PrefixEnd([]byte("k")), ReadOptions{}))); n != 200 {
		t.Fatalf("prefix scan: %d keys", n)
	}
	d2.Merge(ctx, []byte("m"), i64(5), WriteOptions{})
	d2.FlushMemtable(ctx)
	d2.Merge(ctx, []byte("m"), i64(7), WriteOptions{})
	v, ok, err := d2.Get(ctx, []byte("m"), ReadOptions{})
	if err != nil || !ok || binary.LittleEndian.Uint64(v) != 12 {
		t.Fatalf("merge get: %v %v %v", v, ok, err)
	}
}

// TestManifestsGoneUnderAnOpenDB: a store emptied under an open database
// (its directory deleted while the server runs) makes a manifest refresh
// and GC fail with RS-5002 naming the manifests, never panic.
func TestManifestsGoneUnderAnOpenDB(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	infos, err := store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range infos {
		if err := store.Delete(ctx, o.Key); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.RefreshManifest(ctx); !errcode.Has(err, errcode.StorageObjectCorrupt) || !strings.Contains(err.Error(), "manifest/") {
		t.Fatalf("refresh with every object gone: %v, want RS-5002 naming the manifests", err)
	}
	if _, err := d.GC(ctx, clock.now().Add(time.Hour)); err == nil {
		t.Fatal("GC with every object gone succeeded")
	}
}

// TestTickBoundsWALReplay: small durable writes (one WAL object each) into
// a memtable far from full: Tick flushes the memtable once
// WALObjectsUnflushedMax objects were written since the last flush, so an
// open replays at most about that many objects (the manifest's replay
// point moves), and every write reads back after it.
func TestTickBoundsWALReplay(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MemtableBytesMax = 64 << 20
	opts.WALObjectsUnflushedMax = 16
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 200
	for i := range writes {
		if _, err := d.Put(ctx, fmt.Appendf(nil, "k%03d", i), []byte("v"), WriteOptions{AwaitDurable: true}); err != nil {
			t.Fatal(err)
		}
		clock.advance(time.Millisecond)
		if err := d.Tick(ctx, clock.now()); err != nil {
			t.Fatal(err)
		}
	}
	unreplayed := d.nextWALID - 1 - d.manifest.ReplayAfterWALID
	if unreplayed > uint64(opts.WALObjectsUnflushedMax)+1 {
		t.Fatalf("%d WAL objects after the replay point after %d durable writes with ticks, want at most %d", unreplayed, writes, opts.WALObjectsUnflushedMax+1)
	}
	d2, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(scanAll(t, d2.Scan(ctx, nil, nil, ReadOptions{}))); got != writes {
		t.Fatalf("%d keys after the reopen, want %d", got, writes)
	}
}

// flakyWALGets fails the first Get of every WAL object transiently (a
// throttled object store).
type flakyWALGets struct {
	objstore.Store
	failed map[string]bool
}

func (f *flakyWALGets) Get(ctx context.Context, key string) (objstore.Object, error) {
	if strings.Contains(key, "/wal/") && !f.failed[key] {
		f.failed[key] = true
		return objstore.Object{}, objstore.ErrTransient
	}
	return f.Store.Get(ctx, key)
}

// TestReplayRetriesTransientReads: an open replaying many WAL objects
// tries a read that failed transiently again, instead of failing the
// open (which, one object in thirty failing, would almost never succeed).
func TestReplayRetriesTransientReads(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MemtableBytesMax = 64 << 20
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 20
	for i := range writes {
		if _, err := d.Put(ctx, fmt.Appendf(nil, "k%03d", i), []byte("v"), WriteOptions{AwaitDurable: true}); err != nil {
			t.Fatal(err)
		}
	}
	flaky := &flakyWALGets{Store: store, failed: map[string]bool{}}
	d2, err := Open(ctx, flaky, "db", opts)
	if err != nil {
		t.Fatalf("open over WAL reads failing once each: %v", err)
	}
	if len(flaky.failed) < writes {
		t.Fatalf("only %d WAL reads failed, the replay read fewer than %d objects", len(flaky.failed), writes)
	}
	if got := len(scanAll(t, d2.Scan(ctx, nil, nil, ReadOptions{}))); got != writes {
		t.Fatalf("%d keys after the reopen, want %d", got, writes)
	}
}
