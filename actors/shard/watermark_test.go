package shard

import (
	"sort"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// windowPlanner plans every view as SELECT w, count(*) FROM t GROUP BY w,
// w being t's event-time column (each value its own window).
type windowPlanner struct{ table *catalog.Relation }

func (p windowPlanner) PlanView(b *circuit.Builder, _ catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	src := b.Source(SourceID(p.table.ID), Schema(p.table))
	agg := b.Aggregate(src, op.AggregateSpec{GroupBy: []int{0}, Calls: []op.AggregateCall{{Func: op.AggCountStar, Name: "n"}},
		Watermark: &op.AggregateWatermark{Source: op.WatermarkSource(p.table.ID.Object), Key: 0, CloseAfterMicros: 1}})
	b.Sink(ViewID(view.ID), agg)
	return PlannedView{Sources: []catalog.ID{p.table.ID}}, nil
}

func (windowPlanner) ColumnDefault(catalog.Column) (types.Datum, error) { return nil, nil }

// TestWatermarkDropsLateRowsAndClosesWindows: the table shard drops (and
// counts) rows behind max(event time) − lateness as of before their
// commit, keeps the watermark across a restart, and the view's windowed
// aggregate keeps its rows while its state holds only the open windows.
func TestWatermarkDropsLateRowsAndClosesWindows(t *testing.T) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", InsertOnly: true, Watermark: &catalog.Watermark{Column: 0, LatenessMicros: 5},
		Columns: []catalog.Column{{Name: "w", Type: types.TTimestampTZ}, {Name: "x", Type: types.TInt8}}}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT w, count(*) FROM t GROUP BY w",
		Columns: []catalog.Column{{Name: "w", Type: types.TTimestampTZ}, {Name: "n", Type: types.TInt8}}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, view)
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table, planner: windowPlanner{table: table}}
	h.start()
	commit := func(ws ...int64) {
		t.Helper()
		var writes []RowWrite
		for _, w := range ws {
			writes = append(writes, RowWrite{Table: table.ID, Row: types.Row{types.TimestampTZ(w), int64(1)}})
		}
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes})
		h.drain()
	}
	check := func(when string, wantRows []int64, wantMark int64, wantLate uint64, stateRowsMax int64) {
		t.Helper()
		res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view.ID}}).(ReadResult)
		b := zset.Consolidate(res.Batches[0])
		var got []int64
		for _, r := range b.Rows {
			got = append(got, int64(r[0].(types.TimestampTZ)))
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if len(got) != len(wantRows) {
			t.Fatalf("%s: view windows %v, want %v", when, got, wantRows)
		}
		for i := range got {
			if got[i] != wantRows[i] {
				t.Fatalf("%s: view windows %v, want %v", when, got, wantRows)
			}
		}
		st := h.ask(GetStatus{}).(Status)
		if len(st.Watermarks) != 1 || !st.Watermarks[0].Set || int64(st.Watermarks[0].Watermark) != wantMark || st.Watermarks[0].LateRows != wantLate {
			t.Fatalf("%s: watermarks %+v, want %d with %d late rows", when, st.Watermarks, wantMark, wantLate)
		}
		if len(st.Views) != 1 || st.Views[0].StateRows > stateRowsMax {
			t.Fatalf("%s: view status %+v, want at most %d state rows (the open windows)", when, st.Views, stateRowsMax)
		}
	}
	commit(10, 20, 3) // one transaction: 3 is not late against its own rows
	check("first commit", []int64{3, 10, 20}, 15, 0, 2*2)
	commit(14, 15, 30) // 14 is behind the watermark 15; 15 is not
	check("second commit", []int64{3, 10, 15, 20, 30}, 25, 1, 2*2)
	// A crash: both sides' watermarks come back from the store.
	h.ctx.self = nil
	h.start()
	commit(24, 26, 27)
	check("after a restart", []int64{3, 10, 15, 20, 26, 27, 30}, 25, 2, 2*3)
	commit(40)
	check("windows closed", []int64{3, 10, 15, 20, 26, 27, 30, 40}, 35, 2, 2*1)
}
