package shard

import (
	"testing"

	"pgregory.net/rapid"

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
