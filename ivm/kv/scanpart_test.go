package kv

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestTxnNarrowScansMatchModel: Scans within one key head (an operator's
// group scans, answered from the scan parts) and wider ones (answered from
// the ordered index), interleaved with writes, return what a map model
// holds; the committed batch gives the model's state.
func TestTxnNarrowScansMatchModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		head := strings.Repeat("p", scanPartBytes-1)
		heads := []string{head + "\x00", head + "\x01", head + "\xff", strings.Repeat("q", scanPartBytes)}
		suffixes := []string{"", "a", "a\x00", "ab", "b", "\xff"}
		keyGen := rapid.Custom(func(t *rapid.T) string {
			if rapid.IntRange(0, 9).Draw(t, "short") == 0 {
				return head[:rapid.IntRange(0, scanPartBytes-1).Draw(t, "len")]
			}
			return rapid.SampledFrom(heads).Draw(t, "head") + rapid.SampledFrom(suffixes).Draw(t, "suffix")
		})
		base := NewMemory()
		model := map[string]string{}
		for i, n := 0, rapid.IntRange(0, 10).Draw(t, "baseOps"); i < n; i++ {
			k := keyGen.Draw(t, "k")
			_ = base.Put([]byte(k), []byte(fmt.Sprint("b", i)))
			model[k] = fmt.Sprint("b", i)
		}
		txn := NewTxn(base)
		for i, n := 0, rapid.IntRange(1, 30).Draw(t, "steps"); i < n; i++ {
			if rapid.Bool().Draw(t, "write") {
				k := keyGen.Draw(t, "k")
				if rapid.IntRange(0, 3).Draw(t, "del") == 0 {
					_ = txn.Delete([]byte(k))
					delete(model, k)
				} else {
					_ = txn.Put([]byte(k), []byte(fmt.Sprint("t", i)))
					model[k] = fmt.Sprint("t", i)
				}
				continue
			}
			var start, end []byte
			if rapid.Bool().Draw(t, "narrow") {
				// A group scan: from a key under one head to the end of
				// a prefix under it.
				h := rapid.SampledFrom(heads).Draw(t, "scanHead")
				start = []byte(h + rapid.SampledFrom(suffixes).Draw(t, "from"))
				end = PrefixEnd([]byte(h + rapid.SampledFrom(suffixes[1:]).Draw(t, "prefix")))
			} else {
				start = []byte(keyGen.Draw(t, "start"))
				if rapid.Bool().Draw(t, "bounded") {
					end = []byte(keyGen.Draw(t, "end"))
				}
			}
			checkScan(t, txn, model, start, end)
		}
		if err := base.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		checkScan(t, base, model, nil, nil)
	})
}

func checkScan(t *rapid.T, r Reader, model map[string]string, start, end []byte) {
	var keys, want, got []string
	for k := range model { //lint:maprange sorted below
		if k >= string(start) && (end == nil || k < string(end)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		want = append(want, k+"="+model[k])
	}
	if err := r.Scan(start, end, func(k, v []byte) error {
		got = append(got, string(k)+"="+string(v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Scan(%q, %q) = %q, want %q", start, end, got, want)
	}
}

// TestTxnNarrowScanOrdersOnlyItsHead: a Scan within one key head sorts the
// writes under that head only; the epoch's other writes are not ordered
// for it (they were, one B-tree insert each, for every Scan).
func TestTxnNarrowScanOrdersOnlyItsHead(t *testing.T) {
	txn := NewTxn(NewMemory()).(*overlayTxn)
	head := func(h int) string { return fmt.Sprintf("%0*d", scanPartBytes, h) }
	for h := range 100 {
		for i := range 10 {
			_ = txn.Put([]byte(head(h)+"g"+fmt.Sprint(i)), []byte("v"))
		}
	}
	var got []string
	// The scan of group "g" under head 7, as an operator's group scan.
	if err := txn.Scan([]byte(head(7)+"g"), PrefixEnd([]byte(head(7)+"g")), func(k, _ []byte) error {
		got = append(got, string(k))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0] != head(7)+"g0" || got[9] != head(7)+"g9" {
		t.Fatalf("scan of one head: %q", got)
	}
	if txn.orderedN != 0 {
		t.Fatalf("a scan within one head ordered %d writes into the index; want 0", txn.orderedN)
	}
	if p := txn.partList[txn.parts[[scanPartBytes]byte([]byte(head(8)))]]; p.sortedN != 0 {
		t.Fatalf("a scan of head 7 sorted head 8's writes (%d)", p.sortedN)
	}
}
