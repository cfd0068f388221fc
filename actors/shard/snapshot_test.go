package shard

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestPinnedSnapshot: reads and lookups at a pinned snapshot see the
// tables and the (caught-up) views as of OpenSnapshot, not later commits;
// a released snapshot, or one from before a reopen, fails with 40001.
func TestPinnedSnapshot(t *testing.T) {
	h, view := newHarness(t)
	h.open = slateOpener(t, nil)
	h.start()
	put := func(k, v int64) {
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
	}
	read := func(at uint64) string {
		res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{h.table.ID, view}, At: at}).(ReadResult)
		return fmt.Sprint(zset.Consolidate(res.Batches[0]).Rows, zset.Consolidate(res.Batches[1]).Rows)
	}
	put(1, 10)
	// No drain: the view lags; OpenSnapshot must catch it up.
	opened := h.ask(OpenSnapshot{CatalogVersion: h.snap.Version}).(SnapshotOpened)
	pinned := read(0)
	put(1, 20)
	put(2, 5)
	h.drain()
	if got := read(opened.ID); got != pinned {
		t.Fatalf("pinned read %s, want %s as of the snapshot", got, pinned)
	}
	if now := read(0); now == pinned {
		t.Fatalf("current read %s still shows the snapshot", now)
	}
	lk := h.ask(Lookup{CatalogVersion: h.snap.Version, Table: h.table.ID, Keys: []types.Row{{int64(1)}, {int64(2)}}, At: opened.ID}).(LookupResult)
	if fmt.Sprint(lk.Rows) != "[[1 10] []]" {
		t.Fatalf("pinned lookup %v, want [[1 10] []]", lk.Rows)
	}
	h.ask(ReleaseSnapshot{ID: opened.ID})
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{h.table.ID}, At: opened.ID})
	if err, ok := h.ctx.reply.(error); !ok || func() bool { e, ok := errcode.As(err); return !ok || e.Code != errcode.SnapshotUnavailable }() {
		t.Fatalf("read of a released snapshot replied %v, want RS-2291", h.ctx.reply)
	}
}
