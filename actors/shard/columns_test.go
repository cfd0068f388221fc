package shard

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/ivm/zset/zsettest"
)

// TestColumnDecoderMatchesRows: stored rows decoded straight into columns
// give the rows the row decoder gives (the same Go values, so the same
// EncodeRow bytes), entry by entry, for every columnar type with NULLs,
// rows stored before columns were added (padded with the default) and
// zero weights (skipped).
func TestColumnDecoderMatchesRows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema := zsettest.Schema(t, 4)
		ts := make([]types.Type, len(schema))
		for j, c := range schema {
			ts[j] = c.Type
		}
		pads := make([]types.Datum, len(schema))
		for j, c := range schema {
			pads[j] = rapid.SampledFrom(zsettest.Domain(c.Type)).Draw(t, "default")
		}
		codec := tableCodec{ts: ts, pad: func(i int) (types.Datum, error) { return pads[i], nil }}
		rows, cols := &rowDecoder{codec: codec}, newColumnDecoder(codec, schema)
		in := zsettest.Batch(t, schema)
		for i, r := range in.Rows {
			// Rows stored before ALTER TABLE ADD COLUMN are narrower.
			width := rapid.IntRange(0, len(r)).Draw(t, "stored width")
			enc := encodeStoredRow(nil, ts, r[:width])
			w := in.Weights[i]
			if rapid.IntRange(0, 5).Draw(t, "zero") == 0 {
				w = 0
			}
			for _, d := range []deltaDecoder{rows, cols} {
				if err := d.add(enc, w); err != nil {
					t.Fatal(err)
				}
			}
		}
		want, got := rows.delta(), cols.delta()
		if got.Columns() == nil {
			t.Fatal("the column decoder gave rows")
		}
		wb, gb := want.Batch(), got.Batch()
		if wb.Len() != gb.Len() {
			t.Fatalf("%d entries from columns, %d from rows", gb.Len(), wb.Len())
		}
		for i := range wb.Rows {
			if g, w := zset.EncodeRow(nil, gb.Rows[i]), zset.EncodeRow(nil, wb.Rows[i]); !bytes.Equal(g, w) || gb.Weights[i] != wb.Weights[i] {
				t.Fatalf("entry %d: columns %v:%d, rows %v:%d", i, gb.Rows[i], gb.Weights[i], wb.Rows[i], wb.Weights[i])
			}
		}
	})
}

// filterMapPlanner plans every view as SELECT k, v * 2 FROM t WHERE v > 0,
// except the view named "agg": SELECT k, sum(v), count(*) FROM t GROUP BY
// k (sumPlanner), whose aggregate takes rows.
type filterMapPlanner struct{ table *catalog.Relation }

func (p filterMapPlanner) PlanView(b *circuit.Builder, cat catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	if view.Name == "agg" {
		return sumPlanner(p).PlanView(b, cat, view)
	}
	v := &expr.ColumnRef{Index: 1, Typ: types.TInt4}
	pos, err := expr.NewBinary(">", v, expr.NewConst(types.TInt4, int64(0)))
	if err != nil {
		return PlannedView{}, err
	}
	twice, err := expr.NewBinary("*", v, expr.NewConst(types.TInt4, int64(2)))
	if err != nil {
		return PlannedView{}, err
	}
	src := b.Source(SourceID(p.table.ID), Schema(p.table))
	b.Sink(ViewID(view.ID), b.Map(b.Filter(src, pos), []expr.Expr{&expr.ColumnRef{Index: 0, Typ: types.TInt8}, twice}, []string{"k", "x"}))
	return PlannedView{Sources: []catalog.ID{p.table.ID}}, nil
}

func (filterMapPlanner) ColumnDefault(catalog.Column) (types.Datum, error) { return nil, nil }

// TestFilterMapViewRunsColumnar: a shard maintaining only a filter-map
// view decodes the table's deltas into columns and the view's circuit
// builds no row; its contents are right through inserts, updates and
// deletes (a retraction of a row the filter drops included). Adding a view
// whose aggregate takes rows switches the table back to row decoding.
func TestFilterMapViewRunsColumnar(t *testing.T) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "fm", SQL: "SELECT k, v * 2 FROM t WHERE v > 0", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "x", Type: types.TInt4},
	}}
	agg := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "agg", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}
	// NB: the later snapshot first, so it gives every relation its id.
	withAgg := control.NewSnapshot(catalog.NamespaceID{}, 2, table, view, agg)
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, view)
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table, planner: filterMapPlanner{table: table}}
	h.start()
	commit := func(writes ...RowWrite) {
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes})
		h.drain()
	}
	row := func(k int64, v types.Datum) types.Row { return types.Row{k, v} }
	if !h.actor.columnarTable(table.ID, Schema(table)) {
		t.Fatal("a table read only by a filter-map view is not decoded into columns")
	}
	commit(RowWrite{Table: table.ID, Row: row(1, int64(10)), MustNotExist: true},
		RowWrite{Table: table.ID, Row: row(2, int64(-5)), MustNotExist: true},
		RowWrite{Table: table.ID, Row: row(3, nil), MustNotExist: true})
	if got := h.view(view.ID); got[1] != 20 || len(got) != 1 {
		t.Fatalf("view after inserts: %v, want map[1:20]", got)
	}
	commit(RowWrite{Table: table.ID, Key: types.Row{int64(1)}, Row: row(1, int64(7))},
		RowWrite{Table: table.ID, Key: types.Row{int64(2)}, Row: row(2, int64(4))})
	commit(RowWrite{Table: table.ID, Key: types.Row{int64(3)}})
	if got := h.view(view.ID); got[1] != 14 || got[2] != 8 || len(got) != 2 {
		t.Fatalf("view after updates: %v, want map[1:14 2:8]", got)
	}
	fm := h.actor.views[0].circuit
	if n := fm.ColumnarRowsIn(); n != 8 {
		t.Fatalf("the filter-map view got %d entries in columnar deltas, want all 8", n)
	}
	if n := fm.RowsMaterialized(); n != 0 {
		t.Fatalf("the filter-map view built %d rows", n)
	}

	h.snap = withAgg
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	h.drain()
	if h.actor.columnarTable(table.ID, Schema(table)) {
		t.Fatal("a table also read by an aggregate is still decoded into columns")
	}
	fm = h.actor.views[0].circuit
	before := fm.ColumnarRowsIn()
	commit(RowWrite{Table: table.ID, Key: types.Row{int64(2)}, Row: row(2, int64(9))})
	if got := h.view(view.ID); got[1] != 14 || got[2] != 18 || len(got) != 2 {
		t.Fatalf("view after the aggregate was added: %v, want map[1:14 2:18]", got)
	}
	if got := h.view(agg.ID); got[1] != 7 || got[2] != 9 {
		t.Fatalf("aggregate view: %v", got)
	}
	if n := fm.ColumnarRowsIn(); n != before {
		t.Fatalf("the filter-map view got %d entries in columnar deltas after the aggregate was added, want none", n-before)
	}
}
