package slate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
	"pgregory.net/rapid"
)

// TestScanNoCacheFillMatchesGet checks scans that do not fill the block
// cache (which decode each block into the previous block's rows) against
// one Get per key: random puts, deletes and merges spread over memtables,
// L0 and sorted runs of many small blocks, scanned from random starts with
// the cache cold, filled by a scan before, or partly filled by point
// reads.
func TestScanNoCacheFillMatchesGet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		d, err := Open(ctx, objstore.NewMemory(), "db", testOptions(newTestClock()))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = d.Close(ctx) }()
		domain := rapid.IntRange(1, 400).Draw(t, "domain")
		key := func(n int) []byte { return []byte(fmt.Sprintf("k%04d", n)) }
		for step, steps := 0, rapid.IntRange(1, 20).Draw(t, "steps"); step < steps; step++ {
			var b Batch
			seen := map[int]bool{}
			for i, n := 0, rapid.IntRange(1, 80).Draw(t, "batch"); i < n; i++ {
				k := rapid.IntRange(0, domain).Draw(t, "k")
				if seen[k] {
					continue
				}
				seen[k] = true
				switch rapid.IntRange(0, 3).Draw(t, "op") {
				case 0, 1:
					b.Put(key(k), i64(int64(k)))
				case 2:
					b.Delete(key(k))
				default:
					b.Merge(key(k), i64(1))
				}
			}
			if _, err := d.Write(ctx, &b, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			switch rapid.IntRange(0, 3).Draw(t, "maintain") {
			case 0:
				if err := d.FlushMemtable(ctx); err != nil {
					t.Fatal(err)
				}
			case 1:
				if _, err := d.CompactAll(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		switch rapid.IntRange(0, 2).Draw(t, "cache") {
		case 0:
			for it := d.Scan(ctx, nil, nil, ReadOptions{}); it.Next(); {
			}
		case 1:
			for i := 0; i <= domain; i += rapid.IntRange(1, 50).Draw(t, "stride") {
				if _, _, err := d.Get(ctx, key(i), ReadOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		start := rapid.IntRange(0, domain).Draw(t, "start")
		var got []string
		it := d.Scan(ctx, key(start), nil, ReadOptions{NoCacheFill: true})
		for it.Next() {
			got = append(got, fmt.Sprintf("%s=%x", it.Key(), it.Value()))
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		var want []string
		for k := start; k <= domain; k++ {
			v, ok, err := d.Get(ctx, key(k), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				want = append(want, fmt.Sprintf("%s=%x", key(k), v))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("uncached scan from %s:\n%v\nwant\n%v", key(start), got, want)
		}
	})
}
