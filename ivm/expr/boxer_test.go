package expr

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

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

// boxerTestColumns is a columnar batch of one text and one int8 column.
type boxerTestColumns struct{ arrs []arrow.Array }

func (c boxerTestColumns) Len() int                 { return c.arrs[0].Len() }
func (c boxerTestColumns) Column(j int) arrow.Array { return c.arrs[j] }
func (c boxerTestColumns) Datum(j, i int) types.Datum {
	switch a := c.arrs[j].(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	}
	panic("unreachable")
}
func (c boxerTestColumns) Row(i int) types.Row { return types.Row{c.Datum(0, i), c.Datum(1, i)} }

// TestSparseResultsOwnTheirBoxes: a fallback kernel boxes the columns it
// reads into its Boxer's slabs, but a result that is one of those values
// (COALESCE(col, …)) comes back boxed on its own, so results never keep a
// slab alive; the values are those of Eval.
func TestSparseResultsOwnTheirBoxes(t *testing.T) {
	mem := memory.NewGoAllocator()
	sb, ib := array.NewStringBuilder(mem), array.NewInt64Builder(mem)
	const n = 100
	for i := range n {
		sb.Append("s" + strconv.Itoa(i))
		ib.Append(int64(1000 + i))
	}
	cols := boxerTestColumns{arrs: []arrow.Array{sb.NewArray(), ib.NewArray()}}
	for col, e := range []Expr{
		&Coalesce{Args: []Expr{&ColumnRef{Index: 0, Typ: types.TText}, &Const{Value: "x", Typ: types.TText}}, Typ: types.TText},
		&Coalesce{Args: []Expr{&ColumnRef{Index: 1, Typ: types.TInt8}, &Const{Value: int64(7), Typ: types.TInt8}}, Typ: types.TInt8},
	} {
		p := CompileVector(e)
		f, ok := p.root.(*fallbackKernel)
		if !ok || !f.sparse {
			t.Fatalf("%s: not a sparse fallback kernel", e)
		}
		res := p.EvalColumnsSel(&Env{}, cols, AllRows(nil, n))
		for i := range n {
			d := res.Datum(i)
			if d != cols.Datum(col, i) {
				t.Fatalf("%s row %d: %v, want %v", e, i, d, cols.Datum(col, i))
			}
			ptr := (*eface)(unsafe.Pointer(&d)).data
			if s := f.boxer.strs; len(s) > 0 && uintptr(ptr) >= uintptr(unsafe.Pointer(&s[0])) && uintptr(ptr) <= uintptr(unsafe.Pointer(&s[len(s)-1])) {
				t.Fatalf("%s row %d: result points into the kernel's string slab", e, i)
			}
			if s := f.boxer.ints; len(s) > 0 && uintptr(ptr) >= uintptr(unsafe.Pointer(&s[0])) && uintptr(ptr) <= uintptr(unsafe.Pointer(&s[len(s)-1])) {
				t.Fatalf("%s row %d: result points into the kernel's int slab", e, i)
			}
		}
	}
}
