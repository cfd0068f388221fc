package slate

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// notFoundWatch fails the test if any read of an object returns NotFound
// while checkReads is set: "no referenced object ever disappears".
type notFoundWatch struct {
	objstore.Store
	t *testing.T
}

func (w *notFoundWatch) Get(ctx context.Context, key string) (objstore.Object, error) {
	o, err := w.Store.Get(ctx, key)
	// Manifests are not watched: probing the id after the newest one is a
	// normal NotFound; a vanished pinned manifest fails GC or a read instead.
	if isNotFound(err) && bytes.Contains([]byte(key), []byte("compacted/")) {
		w.t.Errorf("referenced object vanished: %s", key)
	}
	return o, err
}
func (w *notFoundWatch) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := w.Store.GetRange(ctx, key, off, n)
	if isNotFound(err) {
		w.t.Errorf("referenced object vanished: %s", key)
	}
	return b, err
}

// TestReaderFollowsWithAggressiveGC runs a writer, its compactor, GC with
// min_age 0 on every step, and a polling reader. The reader must never
// error, never go backwards, and converge to the writer's durable state; no
// SST or manifest the reader or writer reads may vanish.
func TestReaderFollowsWithAggressiveGC(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMemory()
	store := &notFoundWatch{Store: mem, t: t}
	clock := newTestClock()
	opts := testOptions(clock)
	opts.MemtableBytesMax = 512
	opts.L0CompactionTrigger = 2
	opts.SizeTierMinRuns = 2
	opts.CompactionCheckpointLifetime = time.Minute
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReader(ctx, store, "db", clock.now(), ReaderOptions{MergeOperator: sumOperator, CheckpointLifetime: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lastSeq := r.Seq()
	total := int64(0)
	for step := 0; step < 400; step++ {
		clock.advance(7 * time.Second)
		d.Merge(ctx, []byte("total"), i64(1), WriteOptions{AwaitDurable: step%3 == 0})
		total++
		d.Put(ctx, []byte(fmt.Sprintf("k%02d", step%37)), i64(int64(step)), WriteOptions{})
		switch step % 5 {
		case 0:
			if err := d.FlushMemtable(ctx); err != nil {
				t.Fatal(err)
			}
		case 1:
			if _, err := d.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		case 2:
			d.FlushWAL(ctx)
		}
		if _, err := GC(ctx, store, "db", clock.now(), GCOptions{InstanceID: "gc"}); err != nil {
			t.Fatalf("step %d: gc: %v", step, err)
		}
		if step%4 != 3 { // the reader sometimes pauses across GC runs
			if err := r.Poll(ctx, clock.now()); err != nil {
				t.Fatalf("step %d: poll: %v", step, err)
			}
		}
		if r.Seq() < lastSeq {
			t.Fatalf("step %d: reader went backwards %d -> %d", step, lastSeq, r.Seq())
		}
		lastSeq = r.Seq()
		if r.Seq() > d.DurableSeq() {
			t.Fatalf("reader shows seq %d beyond durable %d", r.Seq(), d.DurableSeq())
		}
		v, ok, err := r.Get(ctx, []byte("total"))
		if err != nil {
			t.Fatalf("step %d: reader get: %v", step, err)
		}
		if ok && (int64(bytesToI64(v)) > total || int64(bytesToI64(v)) < 0) {
			t.Fatalf("reader total %d outside [0,%d]", bytesToI64(v), total)
		}
	}
	d.FlushWAL(ctx)
	clock.advance(time.Second)
	if err := r.Poll(ctx, clock.now()); err != nil {
		t.Fatal(err)
	}
	if r.Seq() != d.DurableSeq() {
		t.Fatalf("reader seq %d did not converge to durable %d", r.Seq(), d.DurableSeq())
	}
	want := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
	if got := renderScan(t, r.Scan(ctx, nil, nil)); got != want {
		t.Fatalf("reader scan %q\nwriter scan %q", got, want)
	}
	// The reader stalls past its lease: GC expires its checkpoint and
	// collects what it pinned. Its next Poll re-establishes a lease on the
	// newest state and converges again.
	for i := 0; i < 5; i++ {
		clock.advance(2 * time.Minute)
		d.Put(ctx, []byte(fmt.Sprintf("late%d", i)), i64(1), WriteOptions{})
		d.FlushMemtable(ctx)
		d.CompactAll(ctx)
		st, err := GC(ctx, store, "db", clock.now(), GCOptions{InstanceID: "gc"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && st.CheckpointsExpired == 0 {
			t.Fatal("the stalled reader's lease did not expire")
		}
	}
	if err := r.Poll(ctx, clock.now()); err != nil {
		t.Fatalf("poll after a lost lease: %v", err)
	}
	want = renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
	if got := renderScan(t, r.Scan(ctx, nil, nil)); got != want {
		t.Fatalf("after re-lease reader scan %q\nwriter scan %q", got, want)
	}
	if err := r.Close(ctx, clock.now()); err != nil {
		t.Fatal(err)
	}
}

func bytesToI64(b []byte) int64 {
	if len(b) != 8 {
		return -1 << 62
	}
	return int64(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
}

// TestCheckpointStableAcrossCompactionAndGC: a checkpoint's full scan stays
// byte-identical through hundreds of write+flush+compaction+GC cycles with
// min_age 0, and GC keeps deleting the unpinned files.
func TestCheckpointStableAcrossCompactionAndGC(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.L0CompactionTrigger = 2
	opts.SizeTierMinRuns = 2
	opts.CompactionCheckpointLifetime = time.Second
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		d.Put(ctx, []byte(fmt.Sprintf("k%03d", i)), i64(int64(i)), WriteOptions{})
		d.Merge(ctx, []byte("sum"), i64(int64(i)), WriteOptions{})
	}
	cp, err := d.CreateCheckpoint(ctx, CheckpointOptions{Name: "backfill"})
	if err != nil {
		t.Fatal(err)
	}
	scan := func() string {
		r, err := OpenReader(ctx, store, "db", clock.now(), ReaderOptions{MergeOperator: sumOperator, CheckpointID: cp.ID})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		it := r.Scan(ctx, nil, nil)
		for it.Next() {
			buf.Write(it.Key())
			buf.WriteByte(0)
			buf.Write(it.Value())
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		return buf.String()
	}
	want := scan()
	if len(want) == 0 {
		t.Fatal("empty checkpoint scan")
	}
	var deleted GCStats
	for cycle := 0; cycle < 300; cycle++ {
		clock.advance(2 * time.Second)
		for j := 0; j < 5; j++ {
			k := fmt.Sprintf("k%03d", (cycle*7+j)%120)
			if j == 4 {
				d.Delete(ctx, []byte(k), WriteOptions{})
			} else {
				d.Put(ctx, []byte(k), i64(int64(cycle)), WriteOptions{})
			}
			d.Merge(ctx, []byte("sum"), i64(1), WriteOptions{})
		}
		if err := d.FlushMemtable(ctx); err != nil {
			t.Fatal(err)
		}
		if cycle%10 == 9 {
			_, err = d.CompactAll(ctx)
		} else {
			_, err = d.Compact(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := d.GC(ctx, clock.now())
		if err != nil {
			t.Fatal(err)
		}
		deleted.SSTsDeleted += st.SSTsDeleted
		deleted.ManifestsDeleted += st.ManifestsDeleted
		deleted.WALDeleted += st.WALDeleted
		if cycle%50 == 49 {
			if got := scan(); got != want {
				t.Fatalf("cycle %d: checkpoint scan changed", cycle)
			}
		}
	}
	if got := scan(); got != want {
		t.Fatal("checkpoint scan changed")
	}
	if deleted.SSTsDeleted == 0 || deleted.ManifestsDeleted == 0 || deleted.WALDeleted == 0 {
		t.Fatalf("GC deleted nothing of some kind: %+v", deleted)
	}
	// Deleting the checkpoint lets GC reclaim what it pinned.
	if err := d.DeleteCheckpoint(ctx, cp.ID); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	d.FlushMemtable(ctx)
	st, err := d.GC(ctx, clock.now())
	if err != nil {
		t.Fatal(err)
	}
	if st.SSTsDeleted == 0 {
		t.Fatalf("GC reclaimed nothing after the checkpoint was deleted: %+v", st)
	}
	if _, err := OpenReader(ctx, store, "db", clock.now(), ReaderOptions{CheckpointID: cp.ID}); err == nil {
		t.Fatal("reader opened a deleted checkpoint")
	}
}

// TestGCStalledWriterStaleCommit: a writer stalled with an old manifest view
// while GC deleted manifests must not count a create of a deleted id as a
// successful commit (the boundary file catches it).
func TestGCStalledWriterStaleCommit(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	d, _ := Open(ctx, store, "db", testOptions(clock))
	ps := objstore.Prefixed(store, "db")
	stale, _ := latestManifest(ctx, ps)
	for i := 0; i < 5; i++ {
		d.Put(ctx, []byte("k"), i64(int64(i)), WriteOptions{})
		clock.advance(time.Second)
		d.FlushMemtable(ctx)
	}
	if _, err := d.GC(ctx, clock.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Get(ctx, manifestKey(stale.ID+1)); !isNotFound(err) {
		t.Fatalf("GC kept manifest %d: %v", stale.ID+1, err)
	}
	calls := 0
	m, err := commitManifest(ctx, ps, stale, manifestUpdate{putID: "stalled", nowMillis: 1, mutate: func(m *Manifest) error {
		calls++
		m.Checkpoints = append(m.Checkpoints, Checkpoint{ID: "late"})
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || m.ID <= stale.ID+1 {
		t.Fatalf("stale commit counted as success: id %d after %d attempts", m.ID, calls)
	}
	latest, _ := latestManifest(ctx, ps)
	if _, ok := findCheckpoint(latest, "late"); !ok || latest.ID != m.ID {
		t.Fatalf("retried commit not current: latest %d, committed %d", latest.ID, m.ID)
	}
}

// TestGCDuringFlushAndCompaction pauses the writer's flush and its
// compactor at every store call and runs GC with min_age 0 (after time has
// moved on) while they are paused: SSTs uploaded but not yet published must
// survive, and every key must stay readable.
func TestGCDuringFlushAndCompaction(t *testing.T) {
	ctx := context.Background()
	for at := 1; at < 60; at++ {
		mem := objstore.NewMemory()
		clock := newTestClock()
		hs := &hookStore{Store: mem}
		opts := testOptions(clock)
		opts.L0CompactionTrigger = 2
		opts.CompactionCheckpointLifetime = time.Second
		d, err := Open(ctx, hs, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		want := model{states: []modelState{{}}}
		for i := 0; i < 30; i++ {
			k := fmt.Sprintf("k%02d", i%11)
			d.Put(ctx, []byte(k), i64(int64(i)), WriteOptions{})
			want.apply([]modelOp{{KindValue, k, int64(i)}})
			if i%10 == 9 {
				clock.advance(time.Second)
				d.FlushMemtable(ctx)
			}
		}
		hs.calls, hs.at = 0, at
		hs.hook = func() {
			clock.advance(time.Hour)
			if _, err := GC(ctx, mem, "db", clock.now(), GCOptions{InstanceID: "gc"}); err != nil {
				t.Fatalf("at=%d: gc: %v", at, err)
			}
		}
		d.Put(ctx, []byte("last"), i64(1), WriteOptions{})
		want.apply([]modelOp{{KindValue, "last", 1}})
		if err := d.FlushMemtable(ctx); err != nil {
			t.Fatalf("at=%d: flush: %v", at, err)
		}
		// A standalone compactor paused at call `at`, while the writer
		// flushes a newer L0 (advancing the L0 watermark) and GC runs.
		c, err := OpenCompactor(ctx, hs, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		hs.calls, hs.at = 0, at
		hooked := false
		hs.hook = func() {
			hooked = true
			d.Put(ctx, []byte("during"), i64(int64(at)), WriteOptions{})
			clock.advance(time.Hour)
			if err := d.FlushMemtable(ctx); err != nil {
				t.Fatalf("at=%d: flush during compaction: %v", at, err)
			}
			clock.advance(time.Hour)
			if _, err := GC(ctx, mem, "db", clock.now(), GCOptions{InstanceID: "gc"}); err != nil {
				t.Fatalf("at=%d: gc: %v", at, err)
			}
		}
		did, err := c.CompactAll(ctx, clock.now())
		hs.hook = nil
		if err != nil {
			t.Fatalf("at=%d: compact: %v", at, err)
		}
		_ = did
		if hooked {
			want.apply([]modelOp{{KindValue, "during", int64(at)}})
		}
		d.RefreshManifest(ctx)
		if got := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{})); got != render(want.last()) {
			t.Fatalf("at=%d: scan %q, want %q", at, got, render(want.last()))
		}
		d2, err := Open(ctx, mem, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := renderScan(t, d2.Scan(ctx, nil, nil, ReadOptions{})); got != render(want.last()) {
			t.Fatalf("at=%d: after reopen scan %q, want %q", at, got, render(want.last()))
		}
	}
}
