package kv

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestGetSortedMatchesGet checks the ordered multi-get of an overlay Txn
// against one Get per key: committed state in a Memory store, a middle
// Txn's pending puts, deletes and merge operands, and a top Txn over it
// (so the middle Txn answers the top one's base reads through its own
// GetSorted), for random ascending key subsets.
func TestGetSortedMatchesGet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := []string{"a", "a\x00", "ab", "b", "ba", "c", "d"}
		keyGen := rapid.SampledFrom(keys)
		write := func(w interface {
			Writer
			Merger
		}, label string) {
			k := []byte(keyGen.Draw(t, "k"))
			v := AppendWords(nil, TagAddWords, []int64{rapid.Int64Range(-3, 3).Draw(t, "w")})
			switch rapid.IntRange(0, 2).Draw(t, label) {
			case 0:
				_ = w.Put(k, v)
			case 1:
				_ = w.Delete(k)
			default:
				if err := w.Merge(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		base := NewMemory()
		for i, n := 0, rapid.IntRange(0, 6).Draw(t, "baseOps"); i < n; i++ {
			txn := NewTxn(base)
			write(txn.(*overlayTxn), "baseOp")
			if err := base.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
		}
		mid := NewTxn(base)
		for i, n := 0, rapid.IntRange(0, 8).Draw(t, "midOps"); i < n; i++ {
			write(mid.(*overlayTxn), "midOp")
		}
		top := NewTxn(mid)
		for i, n := 0, rapid.IntRange(0, 8).Draw(t, "topOps"); i < n; i++ {
			write(top.(*overlayTxn), "topOp")
		}
		for _, r := range []Reader{base, mid, top} {
			var read [][]byte
			for _, k := range keys {
				if rapid.Bool().Draw(t, "read") {
					read = append(read, []byte(k))
				}
			}
			slices.SortFunc(read, bytes.Compare)
			next := 0
			err := GetSorted(r, read, func(i int, v []byte, ok bool) error {
				if i != next {
					t.Fatalf("answer for key %d, want %d", i, next)
				}
				next++
				want, wantOK, err := r.Get(read[i])
				if err != nil {
					t.Fatal(err)
				}
				if ok != wantOK || string(v) != string(want) {
					t.Fatalf("GetSorted %q = %x %v, Get = %x %v", read[i], v, ok, want, wantOK)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if next != len(read) {
				t.Fatalf("%d answers for %d keys", next, len(read))
			}
		}
	})
}
