package expr

import (
	"unsafe"

	"github.com/rockstream/rockstream/ivm/types"
)

// Boxing a batch of int64 results into Datums without one allocation per
// value.
//
// A Datum is an interface: a type word and a pointer to the value. Go's own
// conversion (runtime.convT64) allocates 8 bytes per int64 outside 0..255,
// which made boxing Map's results the largest cost of a vectorized Map
// step (allocation plus the garbage collection it drives). boxInts instead
// stores a batch's values in ONE []int64 slab and makes each Datum point
// at its slot, so a batch of n results costs one allocation of 8n bytes.
//
// NB: this relies on the layout of an empty interface (type word, data
// word), which the Go runtime has kept since Go 1.4 and which reflect and
// the compiler depend on; TestBoxIntsRoundTrip checks that such Datums are
// indistinguishable from ordinary ones (type switches, ==, map keys). The
// slab is never written after boxing (each call allocates a fresh one), so
// the Datums stay immutable values like any other int64 Datum. Interior
// pointers keep the whole slab alive as long as any of its Datums lives.

// eface is the memory layout of an empty interface (any).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// int64TypeWord returns the type word of an int64 held in an interface.
func int64TypeWord() unsafe.Pointer {
	// NB: converting a constant does not allocate (static data).
	d := any(int64(0))
	return (*eface)(unsafe.Pointer(&d)).typ
}

// boxInt64 returns a Datum holding *p (an int64 of the given type word)
// without copying it: the Datum points at p.
//
// INVARIANT: *p is never written after boxing.
func boxInt64(typ unsafe.Pointer, p *int64) types.Datum {
	var d any
	e := (*eface)(unsafe.Pointer(&d))
	e.typ, e.data = typ, unsafe.Pointer(p)
	return d
}

// BoxInt64s writes values[k] as a Datum to dst[k*stride] for every k,
// backed by one fresh slab (values is copied, so the caller may reuse it).
// Callers materializing rows from typed columns (Arrow arrays) use it and
// store nil over the NULL positions afterwards.
func BoxInt64s(dst []types.Datum, stride int, values []int64) {
	slab := make([]int64, len(values))
	copy(slab, values)
	typ := int64TypeWord()
	for k := range slab {
		dst[k*stride] = boxInt64(typ, &slab[k])
	}
}

// stringTypeWord returns the type word of a string held in an interface.
func stringTypeWord() unsafe.Pointer {
	d := any("")
	return (*eface)(unsafe.Pointer(&d)).typ
}

// boxerSlabLen is the most values per slab of a Boxer; slabs start at
// boxerSlabMin values and double, so a few values cost a small slab.
const (
	boxerSlabMin = 16
	boxerSlabLen = 512
)

// nextSlab is the length of the slab after one of capacity c.
func nextSlab(c int) int { return min(boxerSlabLen, max(boxerSlabMin, 2*c)) }

// Boxer boxes int64 and string values into Datums one at a time without
// an allocation per value (boxInt64): the values are stored in slabs (of
// up to boxerSlabLen) it allocates as they fill, each slot written once,
// before its Datum is made, and never again. A COPY's rows use it: their datums
// live until the transaction commits, and one object per value was a
// third of the objects the garbage collector traced meanwhile.
//
// NB: a Datum keeps its whole slab alive; use it for values that live
// and die together (the rows of one statement), not for a few values kept
// long after the rest.
type Boxer struct {
	ints    []int64
	strs    []string
	intTyp  unsafe.Pointer
	strTyp  unsafe.Pointer
	started bool
}

func (b *Boxer) start() {
	if !b.started {
		b.intTyp, b.strTyp, b.started = int64TypeWord(), stringTypeWord(), true
	}
}

// Int64 returns v as a Datum (an int64).
func (b *Boxer) Int64(v int64) types.Datum {
	b.start()
	if len(b.ints) == cap(b.ints) {
		b.ints = make([]int64, 0, nextSlab(cap(b.ints)))
	}
	b.ints = append(b.ints, v)
	return boxInt64(b.intTyp, &b.ints[len(b.ints)-1])
}

// String returns s as a Datum (a string).
func (b *Boxer) String(s string) types.Datum {
	b.start()
	if len(b.strs) == cap(b.strs) {
		b.strs = make([]string, 0, nextSlab(cap(b.strs)))
	}
	b.strs = append(b.strs, s)
	var d any
	e := (*eface)(unsafe.Pointer(&d))
	e.typ, e.data = b.strTyp, unsafe.Pointer(&b.strs[len(b.strs)-1])
	return d
}

// sameBox reports whether a and b are the same boxed value (the same
// interface data pointer), as a Datum returned unchanged from a row is.
func sameBox(a, b types.Datum) bool {
	return (*eface)(unsafe.Pointer(&a)).data == (*eface)(unsafe.Pointer(&b)).data &&
		(*eface)(unsafe.Pointer(&a)).typ == (*eface)(unsafe.Pointer(&b)).typ
}

// rebox returns a string or int64 Datum d boxed in its own allocation
// (any other d unchanged).
//
//go:noinline
func rebox(d types.Datum) types.Datum {
	switch v := d.(type) {
	case string:
		return v
	case int64:
		return v
	}
	return d
}
