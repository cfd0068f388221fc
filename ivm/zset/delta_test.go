package zset_test

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestDeltaForms: the zero Delta is the empty row batch; a columnar Delta
// gives its rows only through Batch; a TakeDelta has the entries and the
// weights it was given, gathered when asked for.
func TestDeltaForms(t *testing.T) {
	var zero zset.Delta
	if zero.Len() != 0 || zero.Columnar() || zero.Columns() != nil || zero.Batch().Len() != 0 {
		t.Fatalf("zero Delta: len %d columnar %v", zero.Len(), zero.Columnar())
	}
	schema := types.Schema{{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TText}}
	rows := zset.Batch{Rows: []types.Row{{int64(1), "a"}, {int64(2), nil}, {nil, "c"}}, Weights: []int64{1, -1, 2}}
	c, err := zset.ColumnsFromRows(schema, rows)
	if err != nil {
		t.Fatal(err)
	}
	d := zset.ColumnDelta(c)
	if !d.Columnar() || d.Len() != 3 || !zset.Equal(d.Batch(), rows) {
		t.Fatalf("column delta: %v, want %v", d.Batch(), rows)
	}
	taken := zset.TakeDelta(c, []int32{2, 0}, []int64{5, -3})
	want := zset.Batch{Rows: []types.Row{{nil, "c"}, {int64(1), "a"}}, Weights: []int64{5, -3}}
	if !taken.Columnar() || taken.Len() != 2 || !zset.Equal(taken.Batch(), want) {
		t.Fatalf("take delta: %v, want %v", taken.Batch(), want)
	}
	if taken.Columns() != taken.Columns() {
		t.Fatal("a TakeDelta gathers again on every call")
	}
	if empty := zset.TakeDelta(c, nil, nil); empty.Len() != 0 || empty.Batch().Len() != 0 {
		t.Fatalf("empty take: %v", empty.Batch())
	}
}
