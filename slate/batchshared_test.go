package slate

import (
	"context"
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestBatchShared: a batch of PutShared and DeleteShared ops (keys and
// values the caller keeps, unsorted, with a key written twice) reads
// back like Put and Delete, also after a reopen replays its WAL object,
// and appending to a key or value the caller passed cannot write into
// the next one.
func TestBatchShared(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, []byte("gone"), []byte("x"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// One backing array for every key and value, back to back.
	arena := []byte("bb2aa1cc3bb4gone")
	var b Batch
	b.PutShared(arena[0:2], arena[2:3])
	b.PutShared(arena[3:5], arena[5:6])
	b.PutShared(arena[6:8], arena[8:9])
	b.PutShared(arena[9:11], arena[11:12]) // bb again: the last write wins
	b.DeleteShared(arena[12:16])
	if _, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: true}); err != nil {
		t.Fatal(err)
	}
	want := "[aa=1 bb=4 cc=3]"
	if got := fmt.Sprint(scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{}))); got != want {
		t.Fatalf("scan = %s, want %s", got, want)
	}
	if k := b.ops[0].key; cap(k) != len(k) {
		t.Fatalf("shared key has room past its end (cap %d, len %d)", cap(k), len(k))
	}
	d2, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(scanAll(t, d2.Scan(ctx, nil, nil, ReadOptions{}))); got != want {
		t.Fatalf("scan after reopen = %s, want %s", got, want)
	}
}
