package slate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

var errCrashed = errors.New("test: process crashed")

// crashingStore forwards calls to the real store until failAfter calls have
// been made; from then on every call fails, as if the process died. When
// ambiguous is set, the call that crosses the limit is applied before it
// fails (a write whose response was lost).
type crashingStore struct {
	inner     objstore.Store
	calls     int
	failAfter int
	ambiguous bool
}

func (c *crashingStore) gate() (apply bool, err error) {
	c.calls++
	if c.failAfter < 0 || c.calls <= c.failAfter {
		return true, nil
	}
	if c.calls == c.failAfter+1 && c.ambiguous {
		return true, fmt.Errorf("%w: response lost", errCrashed)
	}
	return false, errCrashed
}

func (c *crashingStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if _, err := c.gate(); err != nil {
		return objstore.Object{}, err
	}
	return c.inner.Get(ctx, key)
}
func (c *crashingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if _, err := c.gate(); err != nil {
		return nil, err
	}
	return c.inner.GetRange(ctx, key, off, n)
}
func (c *crashingStore) write(f func() (objstore.Version, error)) (objstore.Version, error) {
	apply, err := c.gate()
	if apply {
		v, werr := f()
		if err == nil {
			return v, werr
		}
	}
	return "", err
}
func (c *crashingStore) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	return c.write(func() (objstore.Version, error) { return c.inner.Put(ctx, key, data) })
}
func (c *crashingStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	return c.write(func() (objstore.Version, error) { return c.inner.PutIfAbsent(ctx, key, data) })
}
func (c *crashingStore) PutIfMatch(ctx context.Context, key string, data []byte, v objstore.Version) (objstore.Version, error) {
	return c.write(func() (objstore.Version, error) { return c.inner.PutIfMatch(ctx, key, data, v) })
}
func (c *crashingStore) Delete(ctx context.Context, key string) error {
	_, err := c.write(func() (objstore.Version, error) { return "", c.inner.Delete(ctx, key) })
	return err
}
func (c *crashingStore) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	if _, err := c.gate(); err != nil {
		return nil, err
	}
	return c.inner.List(ctx, prefix)
}

// crashWorkload reopens an existing database (fencing + replay) and runs
// writes, flushes, a compaction, a checkpoint and GC. It stops at the first
// error, returning the model and how many batches were acknowledged durable.
func crashWorkload(ctx context.Context, store objstore.Store, clock *testClock, m *model) (acked int, err error) {
	opts := testOptions(clock)
	opts.MemtableBytesMax = 300
	opts.L0CompactionTrigger = 2
	d, err := Open(ctx, store, "db", opts)
	if err != nil {
		return 0, err
	}
	write := func(i int, durable bool) error {
		var b Batch
		ops := []modelOp{
			{KindValue, fmt.Sprintf("k%d", i%5), int64(i)},
			{KindMerge, "sum", 1},
			{KindTombstone, fmt.Sprintf("k%d", (i+2)%5), 0},
		}
		b.Put([]byte(ops[0].key), i64(ops[0].n))
		b.Merge([]byte("sum"), i64(1))
		b.Delete([]byte(ops[2].key))
		_, err := d.Write(ctx, &b, WriteOptions{AwaitDurable: durable})
		m.apply(ops)
		if err != nil {
			return err
		}
		if durable {
			acked = len(m.states) - 1
		}
		return nil
	}
	// ingest puts a batch straight into L0 (Ingest): acknowledged durable
	// when it returns nil; after an error it may or may not be there. Its
	// keys are the writes' (prefix "k": the memtables are flushed first)
	// or keys no write touches (prefix "x": ingested over them).
	ingest := func(i int, prefix string) error {
		var b Batch
		ops := []modelOp{
			{KindValue, fmt.Sprintf("%s%d", prefix, (i+1)%5), int64(i)},
			{KindMerge, prefix + "sum", 10},
			{KindTombstone, fmt.Sprintf("%s%d", prefix, (i+3)%5), 0},
		}
		b.Put([]byte(ops[0].key), i64(ops[0].n))
		b.Merge([]byte(prefix+"sum"), i64(10))
		b.Delete([]byte(ops[2].key))
		_, err := d.Ingest(ctx, &b)
		m.apply(ops)
		if err != nil {
			return err
		}
		acked = len(m.states) - 1
		return nil
	}
	steps := []func(i int) error{
		func(i int) error { return write(i, true) },
		func(i int) error { return write(i, false) },
		func(i int) error {
			if err := d.FlushWAL(ctx); err != nil {
				return err
			}
			acked = len(m.states) - 1
			return nil
		},
		func(i int) error { return write(i, true) },
		func(i int) error { clock.advance(time.Second); return ingest(i, "x") },
		func(i int) error { return write(i, false) },
		func(i int) error { clock.advance(time.Second); return d.FlushMemtable(ctx) },
		func(i int) error { return write(i, true) },
		func(i int) error { clock.advance(time.Second); _, err := d.Compact(ctx); return err },
		func(i int) error { _, err := d.CreateCheckpoint(ctx, CheckpointOptions{}); return err },
		func(i int) error { return write(i, true) },
		func(i int) error { return ingest(i, "k") },
		func(i int) error { clock.advance(time.Hour); _, err := d.GC(ctx, clock.now()); return err },
		func(i int) error { return write(i, true) },
	}
	for round := 0; round < 2; round++ {
		for i, step := range steps {
			if err := step(round*100 + i); err != nil {
				return acked, err
			}
		}
	}
	return acked, nil
}

// TestCrashAtEveryStep crashes the workload after every possible number of
// object-store calls (with and without the last write landing), reopens, and
// checks: every batch is all-or-nothing, every acknowledged batch survived,
// the recovered state is exactly the model after some prefix of batches, and
// new writes get higher seqs.
func TestCrashAtEveryStep(t *testing.T) {
	ctx := context.Background()
	// Count the calls of a clean run.
	base := objstore.NewMemory()
	clock := newTestClock()
	seed := &model{states: []modelState{{}}}
	if _, err := crashWorkload(ctx, base, clock, seed); err != nil {
		t.Fatal(err)
	}
	probe := &crashingStore{inner: objstore.NewMemory(), failAfter: -1}
	if _, err := crashWorkload(ctx, probe, newTestClock(), &model{states: []modelState{{}}}); err != nil {
		t.Fatal(err)
	}
	total := probe.calls
	t.Logf("workload: %d store calls", total)
	if total < 50 {
		t.Fatalf("workload made only %d store calls", total)
	}
	for n := 0; n <= total; n++ {
		for _, ambiguous := range []bool{false, true} {
			inner := objstore.NewMemory()
			clock := newTestClock()
			// A database with history, then the crashing incarnation.
			pre := &model{states: []modelState{{}}}
			if _, err := crashWorkload(ctx, inner, clock, pre); err != nil {
				t.Fatal(err)
			}
			preSeq := len(pre.states) - 1
			m := &model{states: append([]modelState(nil), pre.states...)}
			cs := &crashingStore{inner: inner, failAfter: n, ambiguous: ambiguous}
			acked, err := crashWorkload(ctx, cs, clock, m)
			if err != nil && !errors.Is(err, errCrashed) {
				t.Fatalf("n=%d ambiguous=%v: unexpected error %v", n, ambiguous, err)
			}
			acked = max(acked, preSeq)
			// Recover.
			clock.advance(time.Minute)
			d, err := Open(ctx, inner, "db", testOptions(clock))
			if err != nil {
				t.Fatalf("n=%d ambiguous=%v: reopen: %v", n, ambiguous, err)
			}
			got := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{}))
			recovered := -1
			for k := len(m.states) - 1; k >= 0; k-- {
				if render(m.states[k]) == got {
					recovered = k
					break
				}
			}
			if recovered < 0 {
				t.Fatalf("n=%d ambiguous=%v: recovered state %q matches no batch prefix", n, ambiguous, got)
			}
			if recovered < acked {
				t.Fatalf("n=%d ambiguous=%v: recovered prefix %d < acknowledged %d: lost a durable batch", n, ambiguous, recovered, acked)
			}
			if d.LastSeq() < uint64(acked) {
				t.Fatalf("n=%d: last seq %d < acked %d", n, d.LastSeq(), acked)
			}
			seq, err := d.Put(ctx, []byte("after"), i64(1), WriteOptions{AwaitDurable: true})
			if err != nil || seq <= uint64(recovered) {
				t.Fatalf("n=%d: new write seq %d (recovered %d) err %v", n, seq, recovered, err)
			}
			// Background work still works after recovery.
			clock.advance(time.Hour)
			if err := d.FlushMemtable(ctx); err != nil {
				t.Fatalf("n=%d: flush after recovery: %v", n, err)
			}
			if _, err := d.CompactAll(ctx); err != nil {
				t.Fatalf("n=%d: compact after recovery: %v", n, err)
			}
			if _, err := d.GC(ctx, clock.now()); err != nil {
				t.Fatalf("n=%d: gc after recovery: %v", n, err)
			}
			if got2 := renderScan(t, d.Scan(ctx, []byte("k"), nil, ReadOptions{})); got2 != renderRange(m.states[recovered], "k", "") {
				t.Fatalf("n=%d: after recovery+compaction+gc %q, want %q", n, got2, renderRange(m.states[recovered], "k", ""))
			}
		}
	}
}

// staleListStore answers every LIST with the answer of the previous LIST of
// the same prefix (an eventually consistent store one step behind).
type staleListStore struct {
	objstore.Store
	last map[string][]objstore.ObjectInfo
}

func (s *staleListStore) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	fresh, err := s.Store.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	old, seen := s.last[prefix]
	s.last[prefix] = fresh
	if !seen {
		return fresh, nil
	}
	return old, nil
}

func TestStaleListings(t *testing.T) {
	ctx := context.Background()
	store := &staleListStore{Store: objstore.NewMemory(), last: map[string][]objstore.ObjectInfo{}}
	clock := newTestClock()
	m := &model{states: []modelState{{}}}
	for round := 0; round < 3; round++ {
		if _, err := crashWorkload(ctx, store, clock, m); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	if got := renderScan(t, d.Scan(ctx, nil, nil, ReadOptions{})); got != render(m.last()) {
		t.Fatalf("scan %q, want %q", got, render(m.last()))
	}
}
