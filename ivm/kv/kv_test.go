package kv

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestTxnMatchesModel checks the overlay Txn and Memory against a plain map
// model: random puts/deletes on a base, then on a Txn, with Get and Scan
// compared after every step, and the committed batch giving the same state.
func TestTxnMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		long := strings.Repeat("k", 32)
		keyGen := rapid.SampledFrom([]string{"", "a", "a\x00", "a\x00\x00", "ab", "b", "ba", "c", "\xff", long, long + "a", long + "\x00", long[:31] + "\x00"})
		base := NewMemory()
		model := map[string]string{}
		for i, n := 0, rapid.IntRange(0, 8).Draw(t, "baseOps"); i < n; i++ {
			k := keyGen.Draw(t, "k")
			if rapid.Bool().Draw(t, "del") {
				_ = base.Delete([]byte(k))
				delete(model, k)
			} else {
				// NB: values of many lengths, so rewrites change a
				// stored value's length.
				v := fmt.Sprint(i) + strings.Repeat("v", rapid.IntRange(0, 12).Draw(t, "pad"))
				_ = base.Put([]byte(k), []byte(v))
				model[k] = v
			}
		}
		// Room reserved or not (NewTxnSized), the Txn behaves the same.
		txn := NewTxnSized(base, rapid.IntRange(0, 20).Draw(t, "room"))
		for i, n := 0, rapid.IntRange(0, 12).Draw(t, "txnOps"); i < n; i++ {
			k := keyGen.Draw(t, "k")
			op := Op{Key: []byte(k), Delete: rapid.Bool().Draw(t, "del")}
			if !op.Delete {
				op.Value = []byte(fmt.Sprint("t", i) + strings.Repeat("v", rapid.IntRange(0, 12).Draw(t, "pad")))
			}
			_, had := model[k]
			switch {
			case rapid.Bool().Draw(t, "applyOp"):
				// ApplyOp writes as Put and Delete do, and says whether
				// the key existed.
				existed, err := txn.(OpApplier).ApplyOp(op)
				if err != nil || existed != had {
					t.Fatalf("ApplyOp(%q) = %v, %v; the key existed: %v", k, existed, err, had)
				}
			case op.Delete:
				_ = txn.Delete(op.Key)
			default:
				_ = txn.Put(op.Key, op.Value)
			}
			if op.Delete {
				delete(model, k)
			} else {
				model[k] = string(op.Value)
			}
			check(t, txn, model)
		}
		if err := base.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		check(t, base, model)
	})
}

func check(t *rapid.T, r Reader, model map[string]string) {
	keys := make([]string, 0, len(model))
	for k := range model { //lint:maprange sorted below
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok, err := r.Get([]byte(k))
		if err != nil || !ok || string(v) != model[k] {
			t.Fatalf("Get(%q) = %q,%v,%v want %q", k, v, ok, err, model[k])
		}
	}
	for _, start := range []string{"", "a", "b"} {
		for _, end := range []string{"", "b", "c"} {
			var want, got []string
			for _, k := range keys {
				if k >= start && (end == "" || k < end) {
					want = append(want, k+"="+model[k])
				}
			}
			var e []byte
			if end != "" {
				e = []byte(end)
			}
			err := r.Scan([]byte(start), e, func(k, v []byte) error {
				got = append(got, string(k)+"="+string(v))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("Scan(%q,%q) = %v want %v", start, end, got, want)
			}
			// Early stop after the first key.
			var first [][]byte
			_ = r.Scan([]byte(start), e, func(k, v []byte) error {
				first = append(first, append([]byte(nil), k...))
				return ErrStop
			})
			if len(want) > 0 && (len(first) != 1 || !bytes.HasPrefix([]byte(want[0]), first[0])) {
				t.Fatalf("stop scan got %q want first of %v", first, want)
			}
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	if got := PrefixEnd([]byte{1, 0xff}); !bytes.Equal(got, []byte{2}) {
		t.Fatalf("got %x", got)
	}
	if got := PrefixEnd([]byte{0xff}); got != nil {
		t.Fatalf("got %x", got)
	}
}

// TestBatchIsSorted checks the order of a Txn's batch, whether Scans
// ordered some of its writes first or none (Batch sorts them itself, by
// the bytes after their common prefix): strictly ascending keys, each
// written key once, with its last write.
func TestBatchIsSorted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefixes := rapid.SliceOfN(rapid.SampledFrom([]string{"", "\x01\xa1", "\x01\xa2", strings.Repeat("p", 18), strings.Repeat("p", 17) + "q"}), 1, 3).Draw(t, "prefixes")
		prefix := rapid.SampledFrom(prefixes)
		suffix := rapid.SampledFrom([]string{"", "a", "a\x00", "a\x00\x00", "ab", "b", "\x00", "\xff", "\xff\xff", "12345678", "123456789", "12345678\x00", "1234567\xff"})
		txn := NewTxn(NewMemory())
		last := map[string]string{}
		// Up to 400 distinct keys, so large batches take the radix sort,
		// and many agree in the eight bytes after their common prefix (or
		// after the prefix of the keys of one of a few key prefixes).
		for i, n := 0, rapid.IntRange(0, 600).Draw(t, "ops"); i < n; i++ {
			k := prefix.Draw(t, "prefix") + suffix.Draw(t, "k") + strings.Repeat("x", rapid.IntRange(0, 30).Draw(t, "tail"))
			v := fmt.Sprint(i)
			_ = txn.Put([]byte(k), []byte(v))
			last[k] = v
			if rapid.IntRange(0, 200).Draw(t, "scan") == 0 {
				// A Scan orders the writes so far (Batch then walks the
				// ordered index or sorts all, by how many it holds).
				_ = txn.Scan(nil, nil, func(_, _ []byte) error { return nil })
			}
		}
		ops := txn.Batch().Ops
		if len(ops) != len(last) {
			t.Fatalf("%d ops for %d keys", len(ops), len(last))
		}
		// UnsortedBatch holds the same writes.
		unsorted := slices.Clone(txn.(UnsortedBatcher).UnsortedBatch().Ops)
		slices.SortFunc(unsorted, func(x, y Op) int { return bytes.Compare(x.Key, y.Key) })
		if fmt.Sprint(unsorted) != fmt.Sprint(ops) {
			t.Fatalf("unsorted batch %v, batch %v", unsorted, ops)
		}
		for i, op := range ops {
			if i > 0 && bytes.Compare(ops[i-1].Key, op.Key) >= 0 {
				t.Fatalf("op %d key %q not after %q", i, op.Key, ops[i-1].Key)
			}
			if last[string(op.Key)] != string(op.Value) {
				t.Fatalf("key %q has %q, want %q", op.Key, op.Value, last[string(op.Key)])
			}
		}
	})
}

// TestRadixSortHeads checks Batch's radix sort of key heads against a
// stable comparison sort, on batches large enough to be radix sorted,
// with heads that agree in some bytes and tie often.
func TestRadixSortHeads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 700).Draw(t, "n")
		mask := rapid.Uint64().Draw(t, "mask")
		base := rapid.Uint64().Draw(t, "base")
		items := make([]sortItem, n)
		for i := range items {
			items[i] = sortItem{head: base ^ (rapid.Uint64().Draw(t, "h") & mask & 0x0000ff0000ff00ff), n: int32(i)}
		}
		want := slices.Clone(items)
		slices.SortStableFunc(want, func(x, y sortItem) int { return cmp.Compare(x.head, y.head) })
		if got := radixSortHeads(items, make([]sortItem, n)); !slices.Equal(got, want) {
			t.Fatalf("radix sort gave %v, want %v", got, want)
		}
	})
}

// TestSortKeysFrom checks Batch's key sort (SortOrder) against a comparison sort on
// batches of up to a few thousand distinct keys over a small alphabet,
// so long runs agree on their first eight, sixteen or more bytes and the
// sort recurses into them; some keys end inside such a run (a prefix of
// another key, or equal to it but for trailing zero bytes).
func TestSortKeysFrom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.SampledFrom([]string{"", strings.Repeat("p", 18)}).Draw(t, "prefix")
		// Keys are two segments of a few choices each, then a tail: runs
		// of hundreds of keys agree on 8, 16 and more bytes.
		segment := rapid.SampledFrom([]string{"", "abcdefgh", "abcdefghi", "abcdefgh\x00", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "abcdefg"})
		alphabet := rapid.SampledFrom([]byte{0, 1, 0xff})
		n := rapid.IntRange(0, 3000).Draw(t, "n")
		seen := map[string]bool{}
		var keys []string
		for range n {
			k := []byte(prefix + segment.Draw(t, "s1") + segment.Draw(t, "s2"))
			for range rapid.IntRange(0, 12).Draw(t, "len") {
				k = append(k, alphabet.Draw(t, "b"))
			}
			if !seen[string(k)] {
				seen[string(k)] = true
				keys = append(keys, string(k))
			}
		}
		encoded := make([][]byte, len(keys))
		for i, k := range keys {
			encoded[i] = []byte(k)
		}
		got := SortOrder(encoded)
		want := slices.Clone(keys)
		slices.Sort(want)
		if len(got) != len(want) {
			t.Fatalf("%d positions for %d keys", len(got), len(want))
		}
		for i, n := range got {
			if keys[n] != want[i] {
				t.Fatalf("key %d is %x, want %x", i, keys[n], want[i])
			}
		}
	})
}
