package slate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestDeferCompaction: while compaction is deferred, Tick leaves L0's
// flushes alone until they reach half of L0MaxSSTs (never letting writes
// meet L0's backpressure), and compacts them at the first Tick after the
// deferral ends; a long deferral still merges its sorted runs past
// 2*SizeTierMinRuns; the rows read the same throughout.
func TestDeferCompaction(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.AutoCompact, opts.L0CompactionTrigger, opts.L0MaxSSTs = true, 2, 8
	d, err := Open(ctx, objstore.NewMemory(), "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	flushes := 0
	flush := func() {
		t.Helper()
		if _, err := d.Put(ctx, fmt.Appendf(nil, "k%03d", flushes), []byte("v"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := d.FlushMemtable(ctx); err != nil {
			t.Fatal(err)
		}
		flushes++
	}
	tick := func() int {
		t.Helper()
		clock.advance(100 * time.Millisecond)
		if err := d.Tick(ctx, clock.now()); err != nil {
			t.Fatal(err)
		}
		return d.Manifest().l0Groups()
	}
	d.DeferCompaction(true)
	for range 3 {
		flush()
		if n := tick(); n != flushes {
			t.Fatalf("deferred: %d L0 flushes after %d flushed and a tick, want them left alone", n, flushes)
		}
	}
	flush() // 4: half of L0MaxSSTs
	if n := tick(); n != 0 {
		t.Fatalf("deferred: %d L0 flushes left at half of L0MaxSSTs, want them compacted", n)
	}
	flush()
	flush()
	if n := tick(); n != 2 {
		t.Fatalf("deferred: %d L0 flushes after 2 and a tick, want 2", n)
	}
	d.DeferCompaction(false)
	if n := tick(); n != 0 {
		t.Fatalf("resumed: %d L0 flushes after a tick, want them compacted", n)
	}
	// A long deferral: the sorted runs its L0 compactions make are
	// merged once there are more than 2*SizeTierMinRuns of them.
	d.DeferCompaction(true)
	runsMax := 2*d.opts.SizeTierMinRuns + 1
	for round := range 4 * runsMax {
		for range 4 {
			flush()
		}
		tick()
		tick()
		if runs := len(d.Manifest().SortedRuns); runs > runsMax {
			t.Fatalf("deferred: %d sorted runs after %d L0 compactions, want at most %d", runs, round+1, runsMax)
		}
	}
	if got := len(scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{}))); got != flushes {
		t.Fatalf("%d rows, want %d", got, flushes)
	}
}
