package arrange

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
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
				checkCache(t, a.cache)
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
		err := a.Scan(store, func(k, v []byte) error {
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
	if len(ops) != 1 || ops[0].Key[0] != kv.PrefixOpState || ops[0].Key[1] != KindAggregate || len(ops[0].Key) != 2+16+2+1 {
		t.Fatalf("key %x", ops[0].Key)
	}
}

// TestKeysCarryTheirPartitionBucket: every key an arrangement writes,
// through any write method, grouped or not, is prefix ++ bucket of its
// partition key ++ partition key ++ suffix, so one group's entries are
// one range of its bucket; ScanGroup reads exactly that range (narrowed
// by a suffix prefix) and Scan reads every entry, bucket by bucket.
func TestKeysCarryTheirPartitionBucket(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		grouped := rapid.Bool().Draw(t, "grouped")
		a := New(Config{Namespace: kv.PrefixOpState, Kind: KindMultiset, ID: MakeID(3, 4), Grouped: grouped, CacheEntriesMax: rapid.IntRange(-1, 4).Draw(t, "limit")})
		store := kv.NewMemory()
		txn := kv.NewTxn(store)
		type entry struct{ group, suffix string }
		model := map[entry]string{}
		for i, n := 0, rapid.IntRange(1, 20).Draw(t, "ops"); i < n; i++ {
			e := entry{group: groupKeyString(rapid.IntRange(0, 5).Draw(t, "g")), suffix: rapid.StringMatching(`[ab]{0,2}`).Draw(t, "s")}
			old, had := model[e]
			oldLen := -1
			if had {
				oldLen = len(old)
			}
			var err error
			switch {
			case rapid.IntRange(0, 3).Draw(t, "delete") == 0:
				err = a.DeleteEntry(txn, []byte(e.group), []byte(e.suffix), oldLen)
				delete(model, e)
			case !grouped && e.suffix == "" && rapid.Bool().Draw(t, "point"):
				err = a.Set(txn, []byte(e.group), []byte("v"), oldLen)
				model[e] = "v"
			default:
				v := rapid.StringMatching(`[xyz]{1,3}`).Draw(t, "v")
				err = a.SetEntry(txn, []byte(e.group), []byte(e.suffix), []byte(v), oldLen)
				model[e] = v
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		// The raw keys: each carries its group's bucket after the prefix.
		stored := 0
		err := kv.ScanPrefix(store, a.Prefix(), func(k, v []byte) error {
			rest := k[len(a.Prefix()):]
			b, ok := partition.ReadBucket(rest)
			if !ok {
				t.Fatalf("key %x carries no bucket", k)
			}
			var found bool
			for e, mv := range model { //lint:maprange a lookup; at most one entry matches
				if string(rest[partition.BucketBytes:]) == e.group+e.suffix && (partition.BucketOf([]byte(e.group)) == b) && mv == string(v) {
					found = true
				}
			}
			if !found {
				t.Fatalf("stored key %x = %q matches no entry of the model with its group's bucket", k, v)
			}
			stored++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if stored != len(model) {
			t.Fatalf("%d keys stored, model has %d", stored, len(model))
		}
		// ScanGroup by group and suffix prefix.
		for g := range 6 {
			group := groupKeyString(g)
			for _, sp := range []string{"", "a", "b"} {
				want := map[string]string{}
				for e, v := range model { //lint:maprange compared as a map
					if e.group == group && len(e.suffix) >= len(sp) && e.suffix[:len(sp)] == sp {
						want[e.suffix] = v
					}
				}
				got := map[string]string{}
				var last []byte
				err := a.ScanGroup(store, []byte(group), []byte(sp), func(suffix, v []byte) error {
					if last != nil && string(suffix) <= string(last) {
						t.Fatalf("ScanGroup out of order: %q after %q", suffix, last)
					}
					last = append([]byte{}, suffix...)
					got[string(suffix)] = string(v)
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("ScanGroup(%q, %q) = %v, want %v", group, sp, got, want)
				}
			}
		}
		// Scan: every entry, its key relative to prefix and bucket.
		scanned := 0
		err = a.Scan(store, func(k, v []byte) error {
			scanned++
			return nil
		})
		if err != nil || scanned != len(model) {
			t.Fatalf("Scan read %d entries (%v), want %d", scanned, err, len(model))
		}
	})
}

// groupKeyString is group i's key; the keys are prefixes of one another,
// so a scan of one group that ignored the bucket would read the others.
func groupKeyString(i int) string { return strings.Repeat("g", i) }

// checkCache checks a point cache's invariants: at most limit slots, and
// the table holds exactly the live slots, each reachable from its home
// position.
func checkCache(t *rapid.T, c *cache) {
	if len(c.slots) > c.limit {
		t.Fatalf("cache has %d slots, limit %d", len(c.slots), c.limit)
	}
	live := 0
	for i := range c.slots {
		s := &c.slots[i]
		if !s.live {
			continue
		}
		live++
		if at, ok := c.find(c.key(s), s.hash); !ok || uint32(c.table[at])-1 != uint32(i) {
			t.Fatalf("slot %d (key %q) not found from its home position", i, c.key(s))
		}
	}
	if live != c.n {
		t.Fatalf("%d live slots, table counts %d", live, c.n)
	}
}

// TestCacheArenaCompacts rewrites a few keys' values until the point
// cache's arena is compacted many times: cached values stay current,
// values handed out earlier keep their bytes, and the arena stays bounded.
func TestCacheArenaCompacts(t *testing.T) {
	c := newCache(3)
	last := map[string][]byte{}
	type held struct{ got, want []byte }
	var handed []held
	for i := range 4000 {
		// Mostly rewrites of three cached keys, with a fourth key now
		// and then evicting one.
		key := []byte(fmt.Sprint(i % 3))
		if i%11 == 0 {
			key = []byte(fmt.Sprint(3 + i%2))
		}
		value := bytes.Repeat([]byte{byte(i)}, 100+i%7)
		c.put(key, value, true)
		last[string(key)] = value
		v, present, hit := c.get(key)
		if !hit || !present || !bytes.Equal(v, value) {
			t.Fatalf("write %d: get(%s) = %x, %v, %v", i, key, v, present, hit)
		}
		if i%97 == 0 {
			handed = append(handed, held{got: v, want: value})
		}
		for k, want := range last { //lint:maprange each key checked independently
			if v, _, hit := c.get([]byte(k)); hit && !bytes.Equal(v, want) {
				t.Fatalf("write %d: get(%s) = %x, want %x", i, k, v, want)
			}
		}
	}
	for k, want := range last { //lint:maprange each key checked independently
		if v, _, hit := c.get([]byte(k)); hit && !bytes.Equal(v, want) {
			t.Fatalf("get(%s) = %x, want %x", k, v, want)
		}
	}
	for _, h := range handed {
		if !bytes.Equal(h.got, h.want) {
			t.Fatalf("a value handed out earlier changed: %x, want %x", h.got, h.want)
		}
	}
	if len(c.arena) > 2*cacheArenaGarbageMinBytes+3*200 {
		t.Fatalf("arena holds %d bytes for 3 entries", len(c.arena))
	}
}
