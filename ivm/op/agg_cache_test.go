package op

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestLinCacheMatchesModel: whatever the cache holds is what was last
// stored for that key, every slot stays findable through evictions (the
// table's back-shifting deletes), and the cache never exceeds its limit.
func TestLinCacheMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c linCache
		limit := rapid.IntRange(1, 40).Draw(t, "limit")
		c.init(limit, 2)
		model := map[string][2]int64{}
		keyOf := func(i int) []byte {
			if i%3 == 0 {
				return []byte(fmt.Sprintf("%s%d", strings.Repeat("long", 5), i))
			}
			return []byte(fmt.Sprint(i))
		}
		for step := 0; step < 30; step++ {
			c.nextStep()
			for op := 0; op < rapid.IntRange(0, 20).Draw(t, "ops"); op++ {
				k := keyOf(rapid.IntRange(0, 80).Draw(t, "key"))
				h := hashKey(k)
				w := [2]int64{int64(step), int64(op)}
				if slot, ok := c.lookup(k, h); ok {
					got := c.wordsOf(slot)
					if want := model[string(k)]; got[0] != want[0] || got[1] != want[1] {
						t.Fatalf("key %q: got %v want %v", k, got, want)
					}
					c.pin(slot, 0)
					c.store(slot, w[:], true, 3)
					model[string(k)] = w
					continue
				}
				if slot := c.insert(k, h, w[:], true, 3, rapid.Bool().Draw(t, "evict"), 0); slot >= 0 {
					model[string(k)] = w
					if s, ok := c.lookup(k, h); !ok || s != slot {
						t.Fatalf("inserted %q not found", k)
					}
				}
			}
			live := 0
			for s := 0; s < c.slots; s++ {
				r := c.record(int32(s))
				kl := int(uint64(r[1]) >> 32)
				if kl == 0 {
					continue
				}
				live++
			}
			if live != c.n || c.n > limit {
				t.Fatalf("live %d, n %d, limit %d", live, c.n, limit)
			}
			// Every key in the model that is cached reads back right.
			for i := 0; i <= 80; i++ {
				k := keyOf(i)
				if slot, ok := c.lookup(k, hashKey(k)); ok {
					got, want := c.wordsOf(slot), model[string(k)]
					if got[0] != want[0] || got[1] != want[1] {
						t.Fatalf("key %q: got %v want %v", k, got, want)
					}
				}
			}
			found := 0
			for i := 0; i <= 80; i++ {
				k := keyOf(i)
				if _, ok := c.lookup(k, hashKey(k)); ok {
					found++
				}
			}
			if found != c.n {
				t.Fatalf("found %d keys, cache holds %d", found, c.n)
			}
		}
	})
}
