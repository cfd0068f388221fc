package shard

import (
	"fmt"
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

// deadLetterPlanner plans view "v" as windowPlanner does over the
// watermarked table, and every other view as its dead-letter table's rows.
type deadLetterPlanner struct{ table, deadLetter *catalog.Relation }

func (p deadLetterPlanner) PlanView(b *circuit.Builder, c catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	if view.Name == "v" {
		return windowPlanner{table: p.table}.PlanView(b, c, view)
	}
	b.Sink(ViewID(view.ID), b.Source(SourceID(p.deadLetter.ID), Schema(p.deadLetter)))
	return PlannedView{Sources: []catalog.ID{p.deadLetter.ID}}, nil
}

func (deadLetterPlanner) ColumnDefault(catalog.Column) (types.Datum, error) { return nil, nil }

// TestWatermarkLateRowsIntoDeadLetterTable: with late_rows naming a
// dead-letter table, a late row is counted and inserted into that table in
// the commit that brought it (a view over it follows), never into the
// watermarked table, across a restart.
func TestWatermarkLateRowsIntoDeadLetterTable(t *testing.T) {
	cols := []catalog.Column{{Name: "w", Type: types.TTimestampTZ}, {Name: "x", Type: types.TInt8}}
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", InsertOnly: true, Watermark: &catalog.Watermark{Column: 0, LatenessMicros: 5}, Columns: cols}
	deadLetter := &catalog.Relation{Kind: catalog.KindTable, Name: "t_late", Columns: cols}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT w, count(*) FROM t GROUP BY w",
		Columns: []catalog.Column{{Name: "w", Type: types.TTimestampTZ}, {Name: "n", Type: types.TInt8}}}
	lateView := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "lv", SQL: "SELECT * FROM t_late", Columns: cols}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, deadLetter, table, view, lateView)
	id := deadLetter.ID
	table.Watermark.LateRows = &id
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table, planner: deadLetterPlanner{table: table, deadLetter: deadLetter}}
	h.start()
	commit := func(ws ...int64) {
		t.Helper()
		var writes []RowWrite
		for i, w := range ws {
			writes = append(writes, RowWrite{Table: table.ID, Row: types.Row{types.TimestampTZ(w), int64(i)}})
		}
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes})
		h.drain()
	}
	times := func(rel catalog.ID) []int64 {
		t.Helper()
		res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{rel}}).(ReadResult)
		b := zset.Consolidate(res.Batches[0])
		var got []int64
		for i, r := range b.Rows {
			for n := int64(0); n < b.Weights[i]; n++ {
				got = append(got, int64(r[0].(types.TimestampTZ)))
			}
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		return got
	}
	check := func(when string, wantTable, wantLate []int64) {
		t.Helper()
		for _, c := range []struct {
			what string
			rel  catalog.ID
			want []int64
		}{{"table", table.ID, wantTable}, {"dead-letter table", deadLetter.ID, wantLate}, {"view over the dead-letter table", lateView.ID, wantLate}} {
			if got := times(c.rel); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("%s: %s holds %v, want %v", when, c.what, got, c.want)
			}
		}
		st := h.ask(GetStatus{}).(Status)
		if len(st.Watermarks) != 1 || st.Watermarks[0].LateRows != uint64(len(wantLate)) {
			t.Fatalf("%s: watermarks %+v, want %d late rows", when, st.Watermarks, len(wantLate))
		}
	}
	commit(10, 20, 3)
	check("first commit", []int64{3, 10, 20}, nil)
	commit(14, 15, 30, 14) // 14 twice behind the watermark 15: equal late rows are both kept
	check("second commit", []int64{3, 10, 15, 20, 30}, []int64{14, 14})
	h.ctx.self = nil
	h.start()
	check("after a restart", []int64{3, 10, 15, 20, 30}, []int64{14, 14})
	commit(24, 26, 27)
	check("after more rows", []int64{3, 10, 15, 20, 26, 27, 30}, []int64{14, 14, 24})
}
