package slate

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestIngestOverUnflushedMemtable: an ingest whose keys no memtable holds
// goes to L0 without flushing the memtable (LastL0Seq stays), yet a crash
// right after it keeps every batch before it (the WAL is flushed first),
// an open continues the sequence after it, a snapshot taken before it does
// not see it, and a reader opened after it sees it.
func TestIngestOverUnflushedMemtable(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(ctx, []byte("a"), []byte("1"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap := d.Snapshot()
	var b Batch
	b.Put([]byte("x1"), []byte("2"))
	b.Put([]byte("x2"), []byte("3"))
	seq, err := d.Ingest(ctx, &b)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Manifest().LastL0Seq; got != 0 {
		t.Fatalf("LastL0Seq %d after an ingest over an unflushed memtable, want 0 (no flush)", got)
	}
	if got, want := scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{Snapshot: snap})), []string{"a=1"}; len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("snapshot before the ingest reads %v, want %v", got, want)
	}
	snap.Release()
	if d.DurableSeq() != seq {
		t.Fatalf("durable seq %d after ingest %d", d.DurableSeq(), seq)
	}
	// A crash: the old writer's memory is gone.
	clock.advance(1)
	d2, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a=1", "x1=2", "x2=3"}
	if got := scanAll(t, d2.Scan(ctx, nil, nil, ReadOptions{})); len(got) != len(want) || got[0] != want[0] || got[2] != want[2] {
		t.Fatalf("after reopen %v, want %v", got, want)
	}
	if d2.LastSeq() != seq {
		t.Fatalf("reopened at seq %d, want %d (the ingest's)", d2.LastSeq(), seq)
	}
	r, err := OpenReader(ctx, store, "db", clock.now(), ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := r.Get(ctx, []byte("x2")); err != nil || !ok || string(v) != "3" {
		t.Fatalf("reader: x2 = %q %v %v, want 3", v, ok, err)
	}
	next, err := d2.Put(ctx, []byte("x1"), []byte("4"), WriteOptions{AwaitDurable: true})
	if err != nil || next <= seq {
		t.Fatalf("write after reopen got seq %d (ingest %d): %v", next, seq, err)
	}
	if v, _ := mustGet(t, ctx, d2, "x1"); v != "4" {
		t.Fatalf("x1 = %q after overwriting the ingested value, want 4", v)
	}
}
