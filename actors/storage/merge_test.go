package storage

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestMergeThroughSlate: merge operands written through Apply resolve on
// read from the memtable, after a flush, after compaction and after a
// reopen of the database.
func TestMergeThroughSlate(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	db, err := Open(ctx, store, "m", Options{InstanceID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	words := func(w ...int64) []byte { return kv.AppendWords(nil, kv.TagAddWords, w) }
	key := []byte("k")
	want := []int64{0, 0}
	check := func(label string) {
		t.Helper()
		v, ok, err := db.Get(key)
		if err != nil || !ok {
			t.Fatalf("%s: get: %v %v", label, ok, err)
		}
		got, _, err := kv.DecodeWords(nil, v)
		if err != nil || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("%s: got %v want %v (%v)", label, got, want, err)
		}
		n := 0
		if err := db.Scan([]byte("a"), nil, func(k, v []byte) error {
			n++
			got, _, err := kv.DecodeWords(nil, v)
			if err != nil || got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("%s: scan got %v want %v (%v)", label, got, want, err)
			}
			return nil
		}); err != nil || n != 1 {
			t.Fatalf("%s: scan %d keys, %v", label, n, err)
		}
	}
	merge := func(w0, w1 int64) {
		t.Helper()
		if err := db.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: key, Value: words(w0, w1), Merge: true}}}); err != nil {
			t.Fatal(err)
		}
		want[0] += w0
		want[1] += w1
	}
	merge(3, 1)
	check("no base")
	merge(-1, 5)
	check("memtable")
	if err := db.DB().FlushMemtable(ctx); err != nil {
		t.Fatal(err)
	}
	merge(10, -2)
	check("flushed base")
	if _, err := db.DB().CompactAll(ctx); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	merge(1, 1)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, store, "m", Options{InstanceID: "b"}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check("reopened")
}
