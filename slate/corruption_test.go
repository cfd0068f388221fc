package slate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// corruptionFixture builds a database with one L0 SST, one sorted run and a
// WAL tail, and returns the store, the expected full scan and its objects.
func corruptionFixture(t *testing.T) (*objstore.Memory, string, *Manifest) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	opts := testOptions(clock)
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		d.Put(ctx, []byte{byte('a' + i%26), byte('0' + i/26)}, i64(int64(i)), WriteOptions{})
		d.Merge(ctx, []byte("sum"), i64(1), WriteOptions{})
	}
	clock.advance(time.Second)
	d.FlushMemtable(ctx)
	d.CompactAll(ctx)
	for i := 0; i < 10; i++ {
		d.Put(ctx, []byte{'m', byte('0' + i)}, i64(int64(i)), WriteOptions{})
	}
	clock.advance(time.Second)
	d.FlushMemtable(ctx)
	d.Delete(ctx, []byte("a0"), WriteOptions{})
	d.Merge(ctx, []byte("sum"), i64(5), WriteOptions{AwaitDurable: true})
	want := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
	return store, want, d.Manifest()
}

// checkCorruptRead opens the database over store and scans it: the result
// must be an error naming key (a corruption or format error), or exactly
// the right data.
func checkCorruptRead(t *testing.T, store objstore.Store, key, want string, where int) {
	t.Helper()
	ctx := context.Background()
	clock := newTestClock()
	clock.advance(time.Hour)
	d, err := Open(ctx, store, "db", testOptions(clock))
	var got string
	if err == nil {
		it := d.Scan(ctx, nil, nil, ReadOptions{})
		for it.Next() {
		}
		err = it.Err()
		if err == nil {
			got = renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
		}
	}
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFormatVersion) {
			t.Fatalf("%s byte %d: error is not a corruption error: %v", key, where, err)
		}
		if !strings.Contains(err.Error(), strings.TrimPrefix(key, "db/")) {
			t.Fatalf("%s byte %d: error does not name the object: %v", key, where, err)
		}
		if e, ok := errcode.As(err); !ok || (e.Code != errcode.StorageObjectCorrupt && e.Code != errcode.StorageFormatVersionIncompatible) {
			t.Fatalf("%s byte %d: error has no storage RS code: %v", key, where, err)
		}
		return
	}
	if got != want {
		t.Fatalf("%s byte %d: WRONG DATA after corruption:\n got %q\nwant %q", key, where, got, want)
	}
}

// TestCorruptionIsDetected flips bytes in every SST, the WAL tail and the
// newest manifest. Every read either fails with an error naming the object
// or returns the right data; never wrong data.
func TestCorruptionIsDetected(t *testing.T) {
	ctx := context.Background()
	base, want, m := corruptionFixture(t)
	var keys []string
	for _, s := range m.allSSTs() {
		keys = append(keys, "db/"+s.Key)
	}
	wal, _ := base.List(ctx, "db/wal/")
	for _, o := range wal {
		if id, _ := parseWALKey(strings.TrimPrefix(o.Key, "db/")); id > m.ReplayAfterWALID && o.Size > walHeaderBytes {
			keys = append(keys, o.Key)
		}
	}
	keys = append(keys, "db/"+manifestKey(m.ID))
	if len(keys) < 4 {
		t.Fatalf("fixture too small: %v", keys)
	}
	detected := 0
	for _, key := range keys {
		orig, err := base.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		step := max(1, len(orig.Data)/150)
		for pos := 0; pos < len(orig.Data); pos += step {
			store := cloneMemory(t, base)
			bad := append([]byte(nil), orig.Data...)
			bad[pos] ^= 0x5a
			store.Put(ctx, key, bad)
			checkCorruptRead(t, store, key, want, pos)
			detected++
		}
		// Truncation too.
		store := cloneMemory(t, base)
		store.Put(ctx, key, orig.Data[:len(orig.Data)/2])
		checkCorruptRead(t, store, key, want, -1)
	}
	if detected < 300 {
		t.Fatalf("only %d corruptions tried", detected)
	}
}

func cloneMemory(t *testing.T, src *objstore.Memory) *objstore.Memory {
	ctx := context.Background()
	dst := objstore.NewMemory()
	infos, err := src.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range infos {
		obj, _ := src.Get(ctx, o.Key)
		dst.Put(ctx, o.Key, obj.Data)
	}
	return dst
}
