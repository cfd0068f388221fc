package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"time"
)

// Trace is the running hash of everything that happened in a run: every
// delivered message (time, sender, receiver and contents), every timer
// firing, every random draw, every crash and restart. Two runs of the same
// seed must end with the same Hash; TestDeterminism checks that.
//
// It is FNV-1a (64 bit), fixed so hashes compare across runs and machines.
type Trace struct {
	hash   uint64
	events uint64
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
	// traceDepthMax bounds how deep message contents are hashed, so cyclic
	// or huge structures cannot make hashing unbounded.
	traceDepthMax = 12
)

func newTrace() Trace { return Trace{hash: fnvOffset64} }

// Hash is the running hash so far.
func (t *Trace) Hash() uint64 { return t.hash }

// Events is the number of events recorded.
func (t *Trace) Events() uint64 { return t.events }

func (t *Trace) byte1(b byte) {
	t.hash ^= uint64(b)
	t.hash *= fnvPrime64
}

func (t *Trace) u64(v uint64) {
	for i := 0; i < 8; i++ {
		t.byte1(byte(v >> (8 * i)))
	}
}

func (t *Trace) str(s string) {
	t.u64(uint64(len(s)))
	for i := 0; i < len(s); i++ {
		t.byte1(s[i])
	}
}

// record starts one event: its kind and virtual time.
func (t *Trace) record(kind string, at time.Duration) {
	t.events++
	t.str(kind)
	t.u64(uint64(at))
}

// value hashes an arbitrary message deterministically: it follows pointers
// (never hashing addresses), sorts map entries, and hashes time.Time by its
// instant.
func (t *Trace) value(v any) {
	t.reflectValue(reflect.ValueOf(v), 0)
}

//lint:immutable a type descriptor, never assigned.
var timeType = reflect.TypeOf(time.Time{})

func (t *Trace) reflectValue(v reflect.Value, depth int) {
	if !v.IsValid() {
		t.byte1(0)
		return
	}
	if depth > traceDepthMax {
		t.byte1(1)
		return
	}
	if v.Type() == timeType {
		if v.CanInterface() {
			t.u64(uint64(v.Interface().(time.Time).UnixNano()))
		} else {
			// Unexported field: hash the wall and ext words, never the
			// location pointer (its caches change lazily).
			t.u64(v.Field(0).Uint())
			t.u64(uint64(v.Field(1).Int()))
		}
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			t.byte1(1)
		} else {
			t.byte1(2)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		t.u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		t.u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		t.u64(math.Float64bits(v.Float()))
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		t.u64(math.Float64bits(real(c)))
		t.u64(math.Float64bits(imag(c)))
	case reflect.String:
		t.str(v.String())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			t.byte1(3)
			return
		}
		t.u64(uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			t.reflectValue(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() {
			t.byte1(3)
			return
		}
		// NB: entries are hashed separately and sorted, so map order
		// never reaches the trace (STYLE.md 2).
		entries := make([]uint64, 0, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			sub := newTrace()
			sub.reflectValue(iter.Key(), depth+1)
			sub.reflectValue(iter.Value(), depth+1)
			entries = append(entries, sub.hash)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i] < entries[j] })
		t.u64(uint64(len(entries)))
		for _, e := range entries {
			t.u64(e)
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			t.byte1(3)
			return
		}
		if v.Kind() == reflect.Interface {
			t.str(v.Elem().Type().String())
		}
		t.reflectValue(v.Elem(), depth+1)
	case reflect.Struct:
		t.str(v.Type().String())
		for i := 0; i < v.NumField(); i++ {
			t.reflectValue(v.Field(i), depth+1)
		}
	default: // Func, Chan, UnsafePointer: identity only, never an address.
		t.str(v.Type().String())
	}
}

// tracedSource is a rand.Source that records every draw in the trace, so a
// draw added or moved anywhere changes the hash.
type tracedSource struct {
	source rand.Source
	trace  *Trace
	stream uint64 // hash of the stream name
}

func (s *tracedSource) Uint64() uint64 {
	v := s.source.Uint64()
	s.trace.events++
	s.trace.u64(s.stream)
	s.trace.u64(v)
	return v
}

// streamSeed derives the two PCG words of a named stream from the seed.
func streamSeed(seed uint64, name string) (uint64, uint64) {
	t := newTrace()
	t.u64(seed)
	t.str(name)
	a := t.hash
	t.byte1(0xff)
	return a, t.hash
}

// newStream returns the named random stream of seed, recorded in trace.
func newStream(seed uint64, name string, trace *Trace) *rand.Rand {
	a, b := streamSeed(seed, name)
	nameHash := newTrace()
	nameHash.str(name)
	return rand.New(&tracedSource{source: rand.NewPCG(a, b), trace: trace, stream: nameHash.hash})
}

// NewStream returns the named random stream of seed, independent of every
// other name (a hash of seed and name seeds it). For code outside a
// simulation that needs a seeded stream, e.g. a test of FaultyStore.
func NewStream(seed uint64, name string) *rand.Rand {
	a, b := streamSeed(seed, name)
	return rand.New(rand.NewPCG(a, b))
}
