package arrange

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/kv"
)

// TestGroupCacheIsWriteThrough: with any cache size, starting empty or
// from stored state, with epochs committed or thrown away, a grouped
// arrangement's Group, GetEntry and UpdateEntry answers equal a model of
// the store (also after PrefetchEntries loaded entries into the entry
// cache), and the caches never exceed their bounds.
func TestGroupCacheIsWriteThrough(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(-1, 6).Draw(t, "limit")
		store := kv.NewMemory()
		cfg := Config{Namespace: kv.PrefixOpState, Kind: KindJoinLeft, ID: MakeID(1, 2), CacheEntriesMax: limit, Grouped: true}
		a := New(cfg)
		// committed is the store's content, model the current epoch's view.
		committed := map[string]string{}
		if rapid.Bool().Draw(t, "prefilled") {
			// State written by an earlier process (and a neighbour's key,
			// which must not count).
			txn := kv.NewTxn(store)
			pre := New(cfg)
			for i, n := 0, rapid.IntRange(1, 4).Draw(t, "pre"); i < n; i++ {
				g, s := groupKey(rapid.IntRange(0, 3).Draw(t, "g")), fmt.Sprint(rapid.IntRange(0, 2).Draw(t, "s"))
				if err := pre.SetEntry(txn, g, []byte(s), []byte("p"), -1); err != nil {
					t.Fatal(err)
				}
				committed[string(g)+s] = "p"
			}
			other := New(Config{Namespace: kv.PrefixOpState, Kind: KindJoinRight, ID: MakeID(1, 2)})
			_ = other.Set(txn, []byte("x"), []byte("y"), -1)
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
		}
		for epoch, n := 0, rapid.IntRange(1, 6).Draw(t, "epochs"); epoch < n; epoch++ {
			txn := kv.NewTxn(store)
			model := map[string]string{}
			for k, v := range committed { //lint:maprange copy
				model[k] = v
			}
			for i, m := 0, rapid.IntRange(0, 12).Draw(t, "ops"); i < m; i++ {
				g := groupKey(rapid.IntRange(0, 3).Draw(t, "g"))
				s := []byte(fmt.Sprint(rapid.IntRange(0, 2).Draw(t, "s")))
				old, had := model[string(g)+string(s)]
				switch rapid.IntRange(0, 5).Draw(t, "op") {
				case 0:
					v := []byte(rapid.StringMatching(`[a-c]{0,6}`).Draw(t, "v"))
					oldLen := -1
					if had {
						oldLen = len(old)
					}
					if err := a.SetEntry(txn, g, s, v, oldLen); err != nil {
						t.Fatal(err)
					}
					model[string(g)+string(s)] = string(v)
				case 1:
					if err := a.DeleteEntry(txn, g, s, -1); err != nil {
						t.Fatal(err)
					}
					delete(model, string(g)+string(s))
				case 2:
					v, ok, err := a.GetEntry(txn, g, s)
					if err != nil || ok != had || string(v) != old {
						t.Fatalf("GetEntry(%x, %s) = %q, %v, %v; model %q, %v", g, s, v, ok, err, old, had)
					}
				case 3:
					grp, err := a.Group(txn, g)
					if err != nil {
						t.Fatal(err)
					}
					var got, want []string
					for _, e := range grp.Entries() {
						got = append(got, string(e.Suffix)+"="+string(e.Value))
					}
					for k, v := range model { //lint:maprange sorted below
						if bytes.HasPrefix([]byte(k), g) {
							want = append(want, k[len(g):]+"="+v)
						}
					}
					sort.Strings(want)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("Group(%x) = %v; model %v", g, got, want)
					}
				case 4:
					// Name a batch of entries (duplicates allowed, often
					// more than the cache holds) for later GetEntry calls.
					var groups, suffixes [][]byte
					for j, k := 0, rapid.IntRange(0, 8).Draw(t, "prefetch"); j < k; j++ {
						groups = append(groups, groupKey(rapid.IntRange(0, 3).Draw(t, "pg")))
						suffixes = append(suffixes, []byte(fmt.Sprint(rapid.IntRange(0, 2).Draw(t, "ps"))))
					}
					if err := a.PrefetchEntries(txn, groups, suffixes); err != nil {
						t.Fatal(err)
					}
				case 5:
					// UpdateEntry sees the model's value and writes (or,
					// given nil, deletes) what it returns.
					var v []byte
					if !rapid.Bool().Draw(t, "updateDeletes") {
						v = []byte(rapid.StringMatching(`[a-c]{0,6}`).Draw(t, "uv"))
					}
					err := a.UpdateEntry(txn, g, s, func(got []byte, ok bool) ([]byte, error) {
						if ok != had || string(got) != old {
							t.Fatalf("UpdateEntry(%x, %s) saw %q, %v; model %q, %v", g, s, got, ok, old, had)
						}
						return v, nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if v == nil {
						delete(model, string(g)+string(s))
					} else {
						model[string(g)+string(s)] = string(v)
					}
				}
				checkGroupCacheBound(t, a)
			}
			if rapid.IntRange(0, 3).Draw(t, "abort") == 0 {
				a.DiscardCache()
				continue
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			committed = model
		}
	})
}

// groupKey is a self-delimiting group key (a length byte, then bytes) so
// no group key is a prefix of another, as with keyenc keys.
func groupKey(i int) []byte {
	return append([]byte{byte(i)}, bytes.Repeat([]byte{'g'}, i)...)
}

func checkGroupCacheBound(t *rapid.T, a *Arrangement) {
	c := a.groups
	units, n := 0, 0
	for _, slot := range c.table {
		g := slot.group
		if g == nil {
			continue
		}
		n++
		if !g.cached || slot.hash != g.hash {
			t.Fatalf("group %x in the table but not marked cached (or under hash %x, not %x)", g.key, slot.hash, g.hash)
		}
		// INVARIANT: a probe from the group's home position reaches it.
		if _, ok := c.find(nil, g.hash, g); !ok {
			t.Fatalf("group %x not reachable from its home position", g.key)
		}
		units += 1 + len(g.entries)
	}
	if n != c.n {
		t.Fatalf("table holds %d groups, counted %d", n, c.n)
	}
	if a.entries.n > max(a.entries.limit, 0) {
		t.Fatalf("entry cache holds %d entries, limit %d", a.entries.n, a.entries.limit)
	}
	if units != c.units || (units > c.limit && c.limit >= 0) {
		t.Fatalf("cache holds %d units (counted %d), limit %d", units, c.units, c.limit)
	}
}
