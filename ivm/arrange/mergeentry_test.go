package arrange

import (
	"bytes"
	"testing"

	"github.com/rockstream/rockstream/ivm/kv"
)

// pointReads counts the point reads (Get) that reach a store.
type pointReads struct {
	kv.Reader
	gets int
}

func (r *pointReads) Get(key []byte) ([]byte, bool, error) {
	r.gets++
	return r.Reader.Get(key)
}

// TestMergeEntry: an entry whose group is not in memory is changed by a
// blind merge (no store read), one whose group is cached through the
// cache (which then shows the new value), and both reach the store as
// the same sums.
func TestMergeEntry(t *testing.T) {
	store := kv.NewMemory()
	cfg := Config{Namespace: kv.PrefixOpState, Kind: KindJoinLeft, ID: MakeID(1, 2), CacheEntriesMax: 8, Grouped: true}
	word := func(w int64) []byte { return kv.AppendWords(nil, kv.TagAddWords, []int64{w}) }
	add := func(dw int64) func(old []byte, ok bool) ([]byte, error) {
		return func(old []byte, ok bool) ([]byte, error) {
			if !ok {
				return word(dw), nil
			}
			return kv.MergeValues(nil, old, true, [][]byte{word(dw)})
		}
	}
	commit := func(txn kv.Txn) {
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	txn := kv.NewTxn(store)
	writer := New(cfg)
	for _, g := range []string{"big", "small"} {
		n := 1
		if g == "big" {
			n = 10 // more than the cache holds
		}
		for i := range n {
			if err := writer.SetEntry(txn, []byte(g), []byte{byte('a' + i)}, word(1), -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit(txn)

	// A restarted owner: its caches know nothing, and the store is not
	// empty, so the cache is not complete.
	a := New(cfg)
	reads := &pointReads{Reader: store}
	txn = kv.NewTxn(reads)
	if err := a.MergeEntry(txn, []byte("big"), []byte("a"), word(2), add(2)); err != nil {
		t.Fatal(err)
	}
	if err := a.MergeEntry(txn, []byte("big"), []byte("z"), word(5), add(5)); err != nil {
		t.Fatal(err)
	}
	if reads.gets != 0 {
		t.Errorf("%d point reads for merges into an uncached group", reads.gets)
	}
	// NB: a group read from the store is cached on its second miss.
	for range 2 {
		if _, err := a.Group(txn, []byte("small")); err != nil {
			t.Fatal(err)
		}
	}
	if _, cached, err := a.CachedGroup(txn, []byte("small")); err != nil || !cached {
		t.Fatalf("small group not cached: %v", err)
	}
	if err := a.MergeEntry(txn, []byte("small"), []byte("a"), word(4), add(4)); err != nil {
		t.Fatal(err)
	}
	small, err := a.Group(txn, []byte("small"))
	if err != nil || len(small.Entries()) != 1 || !bytes.Equal(small.Entries()[0].Value, word(5)) {
		t.Fatalf("cached small group after a merge: %v, %v; want one entry %x", small.Entries(), err, word(5))
	}
	commit(txn)
	for key, want := range map[string][]byte{"biga": word(3), "bigz": word(5), "smalla": word(5), "bigb": word(1)} {
		v, ok, err := New(cfg).GetEntry(kv.NewTxn(store), []byte(key[:len(key)-1]), []byte(key[len(key)-1:]))
		if err != nil || !ok || !bytes.Equal(v, want) {
			t.Errorf("%s = %x %v %v, want %x", key, v, ok, err, want)
		}
	}
}
