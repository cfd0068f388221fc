package zset_test

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/ivm/zset/zsettest"
)

// encodings returns each entry's EncodeRow bytes and weight as text.
func encodings(b zset.Batch) []string {
	out := make([]string, len(b.Rows))
	for i, r := range b.Rows {
		out[i] = string(zset.EncodeRow(nil, r)) + "/" + string(rune('a'+b.Weights[i]+2))
	}
	return out
}

func equalEntries(t *rapid.T, what string, got, want zset.Batch) {
	g, w := encodings(got), encodings(want)
	if len(g) != len(w) {
		t.Fatalf("%s: %d entries, want %d", what, len(g), len(w))
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("%s: entry %d is %v, want %v", what, i, got.Rows[i], want.Rows[i])
		}
	}
}

// TestColumnsRoundTrip: a batch in columnar form gives back the same rows
// (the same Go values: equal EncodeRow bytes), entry by entry, and
// AppendEncodedRow writes exactly EncodeRow's bytes; Take and Select give
// the entries and columns asked for; Record is ArrowSchema's layout.
func TestColumnsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		schema := zsettest.Schema(t, 4)
		b := zsettest.Batch(t, schema)
		c := zsettest.Columns(t, schema, b)
		if c.Len() != b.Len() {
			t.Fatalf("Len %d, want %d", c.Len(), b.Len())
		}
		equalEntries(t, "Rows", c.Rows(), b)
		for i, r := range b.Rows {
			if got, want := c.AppendEncodedRow([]byte("x"), i), zset.EncodeRow([]byte("x"), r); !bytes.Equal(got, want) {
				t.Fatalf("row %d %v: AppendEncodedRow %x, EncodeRow %x", i, r, got, want)
			}
			equalEntries(t, "Row", zset.Batch{Rows: []types.Row{c.Row(i)}, Weights: []int64{1}}, zset.Batch{Rows: []types.Row{r}, Weights: []int64{1}})
		}
		var sel []int32
		for range rapid.IntRange(0, 6).Draw(t, "take") {
			if b.Len() > 0 {
				sel = append(sel, int32(rapid.IntRange(0, b.Len()-1).Draw(t, "i")))
			}
		}
		var want zset.Batch
		for _, i := range sel {
			want.Rows = append(want.Rows, b.Rows[i])
			want.Weights = append(want.Weights, b.Weights[i])
		}
		equalEntries(t, "Take", c.Take(sel, nil).Rows(), want)
		cols := rapid.SliceOf(rapid.IntRange(0, len(schema)-1)).Draw(t, "select")
		proj := zset.StreamProjectForTest(cols, b)
		equalEntries(t, "Select", c.Select(cols).Rows(), proj)
		rec, err := c.Record()
		if err != nil {
			t.Fatal(err)
		}
		back, err := zset.FromArrow(schema, rec)
		if err != nil {
			t.Fatal(err)
		}
		equalEntries(t, "Record", back, b)
	})
}
