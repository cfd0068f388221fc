package shard

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestHistoryEntryRoundTrip pairs encodeHistory with decodeHistory (the
// two sides of the durable boundary): rows with NULLs and any weights come
// back as written, and the entry's time is kept.
func TestHistoryEntryRoundTrip(t *testing.T) {
	ts := []types.Type{types.TInt8, types.TText}
	rapid.Check(t, func(t *rapid.T) {
		var b zset.Batch
		for range rapid.IntRange(0, 6).Draw(t, "rows") {
			row := types.Row{nil, nil}
			if rapid.Bool().Draw(t, "int") {
				row[0] = rapid.Int64Range(-2, 2).Draw(t, "i")
			}
			if rapid.Bool().Draw(t, "text") {
				row[1] = rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "s")
			}
			b.Add(row, rapid.Int64Range(-3, 3).Filter(func(w int64) bool { return w != 0 }).Draw(t, "w"))
		}
		at := rapid.Int64().Draw(t, "at")
		enc := encodeHistory(at, ts, b)
		got, err := decodeHistory(enc, ts)
		if err != nil {
			t.Fatal(err)
		}
		if gotAt, _ := historyTime(enc); gotAt != at {
			t.Fatalf("time %d, want %d", gotAt, at)
		}
		if len(got.Rows) != len(b.Rows) {
			t.Fatalf("%d rows, want %d", len(got.Rows), len(b.Rows))
		}
		for i := range b.Rows {
			if got.Weights[i] != b.Weights[i] || types.CompareRows(ts, got.Rows[i], b.Rows[i]) != 0 {
				t.Fatalf("row %d: %v ×%d, want %v ×%d", i, got.Rows[i], got.Weights[i], b.Rows[i], b.Weights[i])
			}
		}
		if _, err := decodeHistory(enc[:len(enc)-1], ts); len(b.Rows) > 0 && err == nil {
			t.Fatal("a truncated entry decoded")
		}
	})
}

// TestHistoryPrunedBoundedPerStep: a view's history keeps one entry per
// step that changed it; entries older than the window are deleted by the
// epoch steps, at most HistoryDeletesPerStepMax per step, oldest first, and
// the durable floor follows the deletions. Dropping the view drops its
// history.
func TestHistoryPrunedBoundedPerStep(t *testing.T) {
	h, view := newHarness(t)
	rel, _ := h.snap.RelationByID(view)
	withHistory := *rel
	withHistory.RetainHistory = time.Hour
	h.snap = control.NewSnapshot(catalog.NamespaceID{}, 1, h.table, &withHistory)
	h.start()
	h.actor.cfg.HistoryDeletesPerStepMax = 2
	entries := func() []uint64 {
		t.Helper()
		var out []uint64
		err := kv.ScanPrefix(h.store, historyPrefix(view), func(k, _ []byte) error {
			e, err := historyEpochOf(k)
			out = append(out, e)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	commit := func(k, v int64) {
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
		h.drain()
	}
	for i := int64(1); i <= 6; i++ {
		commit(i%3, i)
	}
	if got := entries(); len(got) != 6 || got[0] != 1 || got[5] != 6 {
		t.Fatalf("history within the window: epochs %v, want 1..6", got)
	}
	// Two hours later every entry is expired: each step deletes two of
	// them (and adds its own).
	h.ctx.now = h.ctx.now.Add(2 * time.Hour)
	for step, want := range [][]uint64{{3, 4, 5, 6, 7}, {5, 6, 7, 8}, {7, 8, 9}} {
		commit(1, int64(100+step))
		got := entries()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after step %d: history epochs %v, want %v", step, got, want)
		}
		floor, ok, err := h.actor.historyFloor(view)
		if err != nil || !ok || floor != want[0]-1 {
			t.Fatalf("after step %d: floor %d (%v, %v), want %d", step, floor, ok, err, want[0]-1)
		}
	}
	h.snap = control.NewSnapshot(catalog.NamespaceID{}, 2, h.table)
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	if got := entries(); len(got) != 0 {
		t.Fatalf("the dropped view left history entries %v", got)
	}
	if _, ok, _ := h.actor.historyFloor(view); ok {
		t.Fatal("the dropped view left its history floor")
	}
}
