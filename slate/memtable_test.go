package slate

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestMemtableAddSortedMatchesAdd: inserting a sorted batch with the finger
// search builds exactly the skiplist (every level's links) that adding its
// rows one by one builds, on top of any earlier contents.
func TestMemtableAddSortedMatchesAdd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOfN(rapid.ByteRange('a', 'e'), 1, 3)
		a, b := newMemtable(), newMemtable()
		seq := uint64(0)
		for _, batch := range rapid.SliceOfN(rapid.SliceOfN(key, 0, 12), 1, 6).Draw(t, "batches") {
			seq++
			slices.SortFunc(batch, bytes.Compare)
			batch = slices.CompactFunc(batch, bytes.Equal)
			rows := make([]row, len(batch))
			for i, k := range batch {
				rows[i] = row{key: k, seq: seq, kind: KindValue, value: []byte{byte(seq)}}
			}
			for _, r := range rows {
				a.add(r)
			}
			b.addSorted(rows)
		}
		if a.levels != b.levels || a.rows != b.rows || a.bytes != b.bytes || a.minSeq != b.minSeq || a.maxSeq != b.maxSeq {
			t.Fatalf("counters differ: %+v vs %+v", a, b)
		}
		for l := 0; l < memtableLevelsMax; l++ {
			x, y := a.head.next[l], b.head.next[l]
			for x != nil && y != nil {
				if !bytes.Equal(x.r.key, y.r.key) || x.r.seq != y.r.seq || len(x.next) != len(y.next) {
					t.Fatalf("level %d: %q@%d vs %q@%d", l, x.r.key, x.r.seq, y.r.key, y.r.seq)
				}
				x, y = x.next[l], y.next[l]
			}
			if x != nil || y != nil {
				t.Fatalf("level %d lengths differ", l)
			}
		}
	})
}
