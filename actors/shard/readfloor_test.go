package shard

import (
	"testing"

	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestReadShowsStepsWithoutSyncAndNeverLess: a read of a view runs the
// epoch step over a durable commit and is answered without a sync of its
// own (one WAL write per commit, none per read); a crash then takes the
// step back, and the first read after the restart (asking for no epoch
// in particular) still shows that epoch and its rows, never the older
// state the durable frontier describes.
func TestReadShowsStepsWithoutSyncAndNeverLess(t *testing.T) {
	h, view, db := slateHarnessWithView(t)
	h.start()
	h.drain()
	row := func(k, v int64) RowWrite {
		return RowWrite{Table: h.table.ID, Row: types.Row{k, v}, MustNotExist: true}
	}
	e := h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{row(1, 10), row(2, 5)}}).(Committed).Epoch
	h.ctx.self = nil // the queued step: the read runs it
	wal := db().DB().Stats().WALObjectsWritten
	res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view}, MinEpoch: e}).(ReadResult)
	if res.Frontier != e || zset.Consolidate(res.Batches[0]).Len() != 2 {
		t.Fatalf("read at epoch %d: frontier %d, %d rows", e, res.Frontier, res.Batches[0].Len())
	}
	if got := db().DB().Stats().WALObjectsWritten - wal; got != 0 {
		t.Fatalf("the read wrote %d WAL objects, want none (its epoch was durable)", got)
	}
	if h.actor.durableFrontier >= e {
		t.Fatalf("durable frontier %d: the step was synced, the test shows nothing", h.actor.durableFrontier)
	}
	// Crash: the step was never synced, the commit was.
	h.ctx.self = nil
	h.boot()
	if h.actor.frontier >= e || h.actor.readFloor != e {
		t.Fatalf("frontier %d and read floor %d read back at open: want the step lost and the floor at epoch %d", h.actor.frontier, h.actor.readFloor, e)
	}
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	h.ctx.deferred = nil
	res = h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view}}).(ReadResult)
	if res.Frontier < e {
		t.Fatalf("after the restart a read showed frontier %d, below the %d shown before", res.Frontier, e)
	}
	if got := h.view(view); got[1] != 10 || got[2] != 5 || len(got) != 2 {
		t.Fatalf("view after the restart: %v", got)
	}
}

// slateHarnessWithView is slateHarness with its view's id.
func slateHarnessWithView(t *testing.T) (*harness, catalog.ID, func() *storage.KV) {
	h, view := newHarness(t)
	var cur *storage.KV
	h.open = slateOpener(t, func(db *storage.KV) { cur = db })
	return h, view, func() *storage.KV { return cur }
}
