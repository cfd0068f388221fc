package expr

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"testing"

	"github.com/rockstream/rockstream/ivm/types"
)

// TestBoxerRoundTrip: Datums a Boxer makes are indistinguishable from
// ordinary int64 and string Datums (type switches, ==, map keys,
// printing), across several slabs and a garbage collection, and a later
// value never changes an earlier one.
func TestBoxerRoundTrip(t *testing.T) {
	var b Boxer
	const n = 3*boxerSlabLen + 7
	want := make([]types.Datum, 0, 2*n)
	got := make([]types.Datum, 0, 2*n)
	for i := 0; i < n; i++ {
		v := int64(i*7919) - 1000
		switch i {
		case 1:
			v = math.MinInt64
		case 2:
			v = math.MaxInt64
		case 3:
			v = 0
		}
		s := "s" + strconv.Itoa(i)
		want = append(want, v, s)
		got = append(got, b.Int64(v), b.String(s))
	}
	runtime.GC()
	seen := map[types.Datum]int{}
	for i, d := range got {
		w := want[i]
		if d != w || w != d {
			t.Fatalf("datum %d: %#v, want %#v", i, d, w)
		}
		switch x := d.(type) {
		case int64:
			if x != w.(int64) {
				t.Fatalf("datum %d: int64 %d, want %d", i, x, w)
			}
		case string:
			if x != w.(string) {
				t.Fatalf("datum %d: string %q, want %q", i, x, w)
			}
		default:
			t.Fatalf("datum %d: type switch missed %T", i, d)
		}
		if fmt.Sprint(d) != fmt.Sprint(w) {
			t.Fatalf("datum %d prints %s, want %s", i, fmt.Sprint(d), fmt.Sprint(w))
		}
		seen[d]++
	}
	for i, w := range want {
		if seen[w] != 1 {
			t.Fatalf("datum %d: map key %#v counted %d times", i, w, seen[w])
		}
	}
}
