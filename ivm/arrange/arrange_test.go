package arrange

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/kv"
)

// TestCacheIsWriteThrough: with any cache size, reads through the
// arrangement equal reads of the store, across epochs, and the cache never
// exceeds its bound.
func TestCacheIsWriteThrough(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(-1, 3).Draw(t, "limit")
		store := kv.NewMemory()
		a := New(Config{Namespace: kv.PrefixOpState, Kind: KindDistinct, ID: MakeID(1, 2), CacheEntriesMax: limit})
		model := map[string]int64{}
		if rapid.Bool().Draw(t, "prefilled") {
			// State written by an earlier process: the cache starts
			// incomplete.
			txn := kv.NewTxn(store)
			pre := New(Config{Namespace: kv.PrefixOpState, Kind: KindDistinct, ID: MakeID(1, 2)})
			k := fmt.Sprint(rapid.IntRange(0, 4).Draw(t, "pre"))
			if _, _, err := pre.AddWeight(txn, []byte(k), 1); err != nil {
				t.Fatal(err)
			}
			model[k] = 1
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
		}
		for epoch, n := 0, rapid.IntRange(1, 5).Draw(t, "epochs"); epoch < n; epoch++ {
			txn := kv.NewTxn(store)
			committed := map[string]int64{}
			for k, w := range model { //lint:maprange copy
				committed[k] = w
			}
			for i, m := 0, rapid.IntRange(0, 10).Draw(t, "ops"); i < m; i++ {
				k := fmt.Sprint(rapid.IntRange(0, 4).Draw(t, "k"))
				dw := int64(rapid.IntRange(-2, 2).Draw(t, "dw"))
				old, nw, err := a.AddWeight(txn, []byte(k), dw)
				if err != nil {
					t.Fatal(err)
				}
				if old != model[k] || nw != old+dw {
					t.Fatalf("AddWeight(%s, %d) = %d, %d; model %d", k, dw, old, nw, model[k])
				}
				model[k] = nw
				if limit > 0 && len(a.cache.entries) > limit {
					t.Fatalf("cache holds %d entries, limit %d", len(a.cache.entries), limit)
				}
			}
			if rapid.IntRange(0, 3).Draw(t, "abort") == 0 {
				// The epoch's batch is thrown away.
				a.DiscardCache()
				model = committed
				continue
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
		}
		var scanned int
		err := a.Scan(store, nil, func(k, v []byte) error {
			w, err := DecodeWeight(v)
			if err != nil || w != model[string(k)] || w == 0 {
				t.Fatalf("stored %s=%d model %d", k, w, model[string(k)])
			}
			scanned++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, w := range model { //lint:maprange counting only
			if w != 0 {
				live++
			}
		}
		if scanned != live {
			t.Fatalf("%d stored keys, model has %d", scanned, live)
		}
		// A store that never saw the writes must not be served from cache
		// after DiscardCache.
		a.DiscardCache()
		for k := range model { //lint:maprange each key checked independently
			v, ok, err := a.Get(kv.NewMemory(), []byte(k))
			if err != nil || ok {
				t.Fatalf("after DiscardCache: %s=%x present=%v", k, v, ok)
			}
		}
	})
}

func TestKeysUnderShardPrefix(t *testing.T) {
	a := New(Config{Namespace: kv.PrefixOpState, Kind: KindAggregate, ID: MakeID(7, 1)})
	store := kv.NewMemory()
	txn := kv.NewTxn(store)
	if err := a.Set(txn, []byte("g"), []byte("v"), -1); err != nil {
		t.Fatal(err)
	}
	ops := txn.Batch().Ops
	if len(ops) != 1 || ops[0].Key[0] != kv.PrefixOpState || ops[0].Key[1] != KindAggregate || len(ops[0].Key) != 2+16+1 {
		t.Fatalf("key %x", ops[0].Key)
	}
}
