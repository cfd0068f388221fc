package shard

import (
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/runtime"
)

// TestViewShardRestartsLostStreamedExport: a view shard fills a view from
// its table's export as the chunks arrive; when the export is lost after
// some rows were fed (no progress for exportTimeout: the table shard
// restarted), the view shard asks again, and the view equals its query
// over the table: the rows fed from the lost attempt are not counted
// twice. A chunk of the lost attempt arriving late is ignored; an export
// whose rows are being fed (slowly) is not lost; with every row fed, the
// fill ends once the exchange brings the frontier to the export's epoch.
func TestViewShardRestartsLostStreamedExport(t *testing.T) {
	const rows = 40
	// The table's rows as the table shard stores (and exports) them.
	th, _, _ := backfillHarness(t, false, rows)
	var keys, values [][]byte
	err := kv.ScanPrefix(th.store, tablePrefix(th.table.ID), func(k, v []byte) error {
		keys, values = append(keys, append([]byte(nil), k...)), append(values, append([]byte(nil), v...))
		return nil
	})
	if err != nil || len(keys) != rows {
		t.Fatalf("%d table rows (%v)", len(keys), err)
	}
	withView, table, view := testSnapshot(t)
	value := withView.Value()
	value.BucketMap = partition.NewMap(1, []partition.ShardID{0, 1}).Encode()
	h := &harness{t: t, store: kv.NewMemory(), snap: control.SnapshotOf(value), table: table}
	h.ctx = &testCtx{}
	h.actor = New(Config{ID: 1, OpenStore: func(runtime.Context) (kv.Store, error) { return h.store, nil }, Planner: sumPlanner{table: table}})().(*Actor)
	h.ctx.id = ActorOf(1)
	h.actor.Receive(h.ctx, runtime.Started{})
	h.actor.cfg.BackfillRowsPerChunkMax = 4
	h.ctx.tag = "sync"
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: value})
	h.ctx.tag = ""
	request := func() ExportRequest {
		t.Helper()
		h.deliverOne(isChunk)
		for i, e := range h.ctx.out {
			if r, ok := e.msg.(ExportRequest); ok && r.View == view {
				h.ctx.out = append(h.ctx.out[:i:i], h.ctx.out[i+1:]...)
				return r
			}
		}
		t.Fatal("the view shard asked for no export")
		return ExportRequest{}
	}
	chunk := func(r ExportRequest, seq uint64, from, to int) ExportChunk {
		return ExportChunk{View: view, Attempt: r.Attempt, Epoch: 1, Seq: seq, Keys: keys[from:to], Values: values[from:to], Last: to == rows}
	}
	acked := func(r ExportRequest, seq uint64) bool {
		for _, e := range h.ctx.out {
			if a, ok := e.msg.(ExportAck); ok && a.Attempt == r.Attempt && a.Seq == seq {
				return true
			}
		}
		return false
	}
	first := request()
	h.actor.Receive(h.ctx, chunk(first, 1, 0, 16))
	// Feed some of the chunk's rows (chunks of at most 4 rows).
	for range 3 {
		if !h.deliverOne(isChunk) {
			t.Fatal("no backfill chunk queued with rows received")
		}
	}
	if st := h.actor.backfilling(view); st == nil || st.rowsRead == 0 || acked(first, 1) {
		t.Fatalf("the backfill fed no rows, or acknowledged a chunk before feeding it whole")
	}
	asked := func() bool {
		for _, e := range h.ctx.out {
			if _, ok := e.msg.(ExportRequest); ok {
				return true
			}
		}
		return false
	}
	// Slow, not lost: rows fed between two ticks are progress.
	h.actor.Receive(h.ctx, exportTick{View: view, Attempt: first.Attempt})
	h.deliverOne(isChunk)
	h.actor.Receive(h.ctx, exportTick{View: view, Attempt: first.Attempt})
	if asked() {
		t.Fatal("an export whose rows were being fed was asked for again")
	}
	// Lost: no progress between two ticks.
	h.actor.Receive(h.ctx, exportTick{View: view, Attempt: first.Attempt})
	second := request()
	if second.Attempt == first.Attempt {
		t.Fatal("the lost export was not asked for again")
	}
	// A late chunk of the lost attempt changes nothing.
	h.actor.Receive(h.ctx, chunk(first, 2, 16, 32))
	for seq, at := uint64(1), 0; at < rows; seq++ {
		to := min(rows, at+16)
		h.actor.Receive(h.ctx, chunk(second, seq, at, to))
		for to < rows && !acked(second, seq) {
			if !h.deliverOne(isChunk) {
				t.Fatalf("chunk %d of the export was never fed whole", seq)
			}
		}
		at = to
	}
	// Every row fed, the fill waits for the frontier to reach the
	// export's epoch (1): the exchange brings it.
	for h.deliverOne(isChunk) {
	}
	if len(h.syncAnswers()) != 0 || h.actor.frontier != 0 {
		t.Fatalf("the view was filled (%v) at frontier %d, below the export's epoch", h.syncAnswers(), h.actor.frontier)
	}
	h.actor.Receive(h.ctx, ExchangeFrame{Collected: true, After: 0, Through: 1})
	for len(h.syncAnswers()) == 0 {
		if !h.deliverOne(isChunk) {
			t.Fatal("the backfill stopped before the view was filled (the frontier reached the export's epoch)")
		}
	}
	if got := h.syncAnswers()[0]; got != (Synced{Version: value.Version}) {
		t.Fatalf("sync answered %#v", got)
	}
	// NB: read from the store: a Read on a view shard waits for the table
	// shard's frontier, which this test has no table shard to publish.
	prefix, decode, err := h.actor.sourceRows(view)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	err = kv.ScanPrefix(h.store, prefix, func(k, v []byte) error {
		row, w, err := decode(k[len(prefix):], v)
		if err != nil || w != 1 {
			t.Fatalf("view row %v of weight %d (%v)", row, w, err)
		}
		got[row[0].(int64)] = row[1].(int64)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rows {
		t.Fatalf("view has %d groups, want %d", len(got), rows)
	}
	for k := int64(1); k <= rows; k++ {
		if got[k] != k {
			t.Fatalf("view group %d sums to %d, want %d (rows fed twice or lost)", k, got[k], k)
		}
	}
	if st := h.actor.stats; st.BackfillRowsStaged != 0 {
		t.Fatalf("%d rows staged", st.BackfillRowsStaged)
	}
}
