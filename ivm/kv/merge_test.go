package kv

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestMergeMatchesModel checks merge operands through the overlay Txn and
// Memory.Apply against a model that adds word vectors: random puts,
// deletes and merges on a base, then on a Txn (interleaved with Gets and
// Scans, which resolve pending operands), then the batch committed.
func TestMergeMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keyGen := rapid.SampledFrom([]string{"a", "a\x00", "ab", "b", "ba", "c"})
		model := map[string]string{}
		apply := func(w interface {
			Writer
			Merger
		}, label string) {
			k := keyGen.Draw(t, "k")
			words := []int64{rapid.Int64Range(-3, 3).Draw(t, "w0"), rapid.Int64Range(-3, 3).Draw(t, "w1")}
			v := AppendWords(nil, TagAddWords, words)
			switch rapid.IntRange(0, 2).Draw(t, label) {
			case 0:
				_ = w.Put([]byte(k), v)
				model[k] = string(v)
			case 1:
				_ = w.Delete([]byte(k))
				delete(model, k)
			default:
				if err := w.Merge([]byte(k), v); err != nil {
					t.Fatal(err)
				}
				if old, ok := model[k]; ok {
					base, _, err := DecodeWords(nil, []byte(old))
					if err != nil {
						t.Fatal(err)
					}
					words[0] += base[0]
					words[1] += base[1]
				}
				model[k] = string(AppendWords(nil, TagAddWords, words))
			}
		}
		base := NewMemory()
		for i, n := 0, rapid.IntRange(0, 6).Draw(t, "baseOps"); i < n; i++ {
			txn := NewTxn(base)
			apply(txn.(*overlayTxn), "baseOp")
			if err := base.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
		}
		check(t, base, model)
		txn := NewTxn(base)
		for i, n := 0, rapid.IntRange(0, 12).Draw(t, "txnOps"); i < n; i++ {
			apply(txn.(*overlayTxn), "txnOp")
			if rapid.Bool().Draw(t, "check") {
				check(t, txn, model)
			}
		}
		check(t, txn, model)
		if err := base.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		check(t, base, model)
	})
}

func TestMergeRejectsNonMergeable(t *testing.T) {
	words := AppendWords(nil, TagWords, []int64{1})
	if _, err := MergeValues([]byte("k"), words, true, [][]byte{AppendWords(nil, TagAddWords, []int64{1})}); err == nil {
		t.Fatal("merge onto a non-mergeable value must fail")
	}
	if _, err := MergeValues([]byte("k"), nil, false, [][]byte{AppendWords(nil, TagAddWords, []int64{1}), AppendWords(nil, TagAddWords, []int64{1, 2})}); err == nil {
		t.Fatal("merge of different lengths must fail")
	}
}

// TestMemoryManyKeys drives Memory's hash index through growth and
// back-shifting deletes with thousands of keys, against a map.
func TestMemoryManyKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := NewMemory()
		model := map[string]string{}
		domain := rapid.IntRange(1, 3000).Draw(t, "domain")
		for i := 0; i < 4000; i++ {
			k := fmt.Sprint(rapid.IntRange(0, domain).Draw(t, "k"))
			if rapid.IntRange(0, 2).Draw(t, "op") == 0 {
				_ = m.Delete([]byte(k))
				delete(model, k)
			} else {
				_ = m.Put([]byte(k), []byte(k+"v"))
				model[k] = k + "v"
			}
		}
		if m.Len() != len(model) {
			t.Fatalf("len %d want %d", m.Len(), len(model))
		}
		for k, v := range model { //lint:maprange every key is checked; order does not matter
			got, ok, _ := m.Get([]byte(k))
			if !ok || string(got) != v {
				t.Fatalf("get %q = %q %v", k, got, ok)
			}
		}
		n, prev := 0, ""
		_ = m.Scan(nil, nil, func(k, v []byte) error {
			if n > 0 && string(k) <= prev {
				t.Fatalf("scan order %q after %q", k, prev)
			}
			if model[string(k)] != string(v) {
				t.Fatalf("scan %q = %q", k, v)
			}
			prev = string(k)
			n++
			return nil
		})
		if n != len(model) {
			t.Fatalf("scan saw %d keys want %d", n, len(model))
		}
	})
}
