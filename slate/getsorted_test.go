package slate

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
	"pgregory.net/rapid"
)

// TestGetSortedMatchesGet checks the ordered multi-get against one Get
// per key: random puts, deletes and merges (several versions per key)
// spread over memtables, L0 and sorted runs by flushes and compactions,
// read at the latest state and at a snapshot, for random ascending key
// subsets (keys that share prefixes, absent keys, keys past the end).
func TestGetSortedMatchesGet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		opts := testOptions(newTestClock())
		d, err := Open(ctx, objstore.NewMemory(), "db", opts)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = d.Close(ctx) }()
		domain := rapid.IntRange(1, 200).Draw(t, "domain")
		key := func(n int) []byte { return []byte(fmt.Sprintf("k%d", n)) }
		var snap *Snapshot
		for step, steps := 0, rapid.IntRange(1, 30).Draw(t, "steps"); step < steps; step++ {
			var b Batch
			seen := map[int]bool{}
			for i, n := 0, rapid.IntRange(1, 40).Draw(t, "batch"); i < n; i++ {
				k := rapid.IntRange(0, domain).Draw(t, "k")
				if seen[k] {
					continue
				}
				seen[k] = true
				switch rapid.IntRange(0, 2).Draw(t, "op") {
				case 0:
					b.Put(key(k), i64(int64(k)))
				case 1:
					b.Delete(key(k))
				default:
					b.Merge(key(k), i64(1))
				}
			}
			if _, err := d.Write(ctx, &b, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			switch rapid.IntRange(0, 5).Draw(t, "maintain") {
			case 0:
				if err := d.FlushMemtable(ctx); err != nil {
					t.Fatal(err)
				}
			case 1:
				if _, err := d.CompactAll(ctx); err != nil {
					t.Fatal(err)
				}
			case 2:
				if snap == nil {
					snap = d.Snapshot()
				}
			}
		}
		readOpts := ReadOptions{}
		if snap != nil && rapid.Bool().Draw(t, "atSnapshot") {
			readOpts.Snapshot = snap
		}
		picked := map[string]bool{}
		var keys [][]byte
		for i, n := 0, rapid.IntRange(0, 60).Draw(t, "reads"); i < n; i++ {
			k := key(rapid.IntRange(0, domain+5).Draw(t, "read"))
			if !picked[string(k)] {
				picked[string(k)] = true
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return string(keys[i]) < string(keys[j]) })
		next := 0
		err = d.GetSorted(ctx, keys, readOpts, func(i int, v []byte, ok bool) error {
			if i != next {
				t.Fatalf("answer for key %d, want %d", i, next)
			}
			next++
			want, wantOK, err := d.Get(ctx, keys[i], readOpts)
			if err != nil {
				t.Fatal(err)
			}
			if ok != wantOK || string(v) != string(want) {
				t.Fatalf("GetSorted %q = %x %v, Get = %x %v", keys[i], v, ok, want, wantOK)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if next != len(keys) {
			t.Fatalf("%d answers for %d keys", next, len(keys))
		}
		if snap != nil {
			snap.Release()
		}
	})
}
