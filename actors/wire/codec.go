package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// Codec encodes and decodes the registered message types. It is immutable
// once built (safe for concurrent use).
type Codec struct {
	byName map[string]reflect.Type
	byType map[reflect.Type]string
	names  []string // sorted
}

// Encoding markers of an `any` (see doc.go).
const (
	anyNil     byte = 0x00
	anyDatum   byte = 0x01
	anyError   byte = 0x02
	anyMessage byte = 0x03

	errorCoded byte = 0x01
	errorText  byte = 0x02

	absent  byte = 0x00
	present byte = 0x01
)

// depthMax bounds the nesting of a value (an error's causes, pointers
// inside pointers), so corrupt or cyclic input fails instead of
// recursing without end.
const depthMax = 64

// errCorrupt marks undecodable bytes.
var errCorrupt = errors.New("wire: corrupt message")

// NewCodec registers the dynamic type of each sample. A type must be a
// value (CheckValueType) and its name (package.Type) unique.
func NewCodec(samples ...runtime.Message) (*Codec, error) {
	c := &Codec{byName: map[string]reflect.Type{}, byType: map[reflect.Type]string{}}
	for _, m := range samples {
		t := reflect.TypeOf(m)
		if t == nil {
			return nil, fmt.Errorf("wire: nil sample")
		}
		if t.Kind() == reflect.Pointer {
			return nil, fmt.Errorf("wire: %s: register the value type, not a pointer (a pointer message is shared memory)", t)
		}
		if v := CheckValueType(t); len(v) > 0 {
			return nil, fmt.Errorf("wire: %s is not a value: %s", t, v[0])
		}
		name := TypeName(t)
		if prev, dup := c.byName[name]; dup {
			return nil, fmt.Errorf("wire: %s and %s share the tag %q", prev, t, name)
		}
		c.byName[name], c.byType[t] = t, name
		c.names = append(c.names, name)
	}
	sort.Strings(c.names)
	return c, nil
}

// TypeName is a type's tag: its package's name and its own, e.g.
// "shard.Commit"; "struct{}" for the empty struct.
func TypeName(t reflect.Type) string {
	if t.Name() == "" {
		return t.String()
	}
	pkg := t.PkgPath()
	if i := lastSlash(pkg); i >= 0 {
		pkg = pkg[i+1:]
	}
	if pkg == "" {
		return t.Name()
	}
	return pkg + "." + t.Name()
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// Names lists the registered tags, sorted.
func (c *Codec) Names() []string { return append([]string(nil), c.names...) }

// Type returns the registered type of a tag.
func (c *Codec) Type(name string) (reflect.Type, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Registered reports whether m's type is registered.
func (c *Codec) Registered(m runtime.Message) bool {
	_, ok := c.byType[reflect.TypeOf(m)]
	return ok
}

// Encode returns the bytes of a message: a registered type or an error.
func (c *Codec) Encode(m runtime.Message) (out []byte, err error) {
	defer recoverInto(&err)
	if m != nil {
		if _, ok := c.byType[reflect.TypeOf(m)]; !ok {
			if _, isErr := m.(error); !isErr {
				return nil, fmt.Errorf("wire: message type %T is not registered (add it to wire.Messages)", m)
			}
		}
	}
	e := encoder{c: c}
	e.any(reflect.ValueOf(&m).Elem(), 0)
	return e.buf, nil
}

// Decode rebuilds a message from Encode's bytes.
func (c *Codec) Decode(b []byte) (m runtime.Message, err error) {
	defer recoverInto(&err)
	d := decoder{c: c, buf: b}
	v := reflect.New(reflect.TypeOf((*any)(nil)).Elem()).Elem()
	d.any(v, 0)
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.buf))
	}
	return v.Interface(), nil
}

// wireError carries an encoding or decoding failure out of the recursion.
type wireError struct{ err error }

func fail(format string, args ...any) { panic(wireError{fmt.Errorf(format, args...)}) }

func corrupt(format string, args ...any) {
	panic(wireError{fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))})
}

func recoverInto(err *error) {
	if r := recover(); r != nil {
		w, ok := r.(wireError)
		if !ok {
			panic(r)
		}
		*err = w.err
	}
}

// RemoteError is an error that crossed the wire without a registered form
// (not an *errcode.Error): only its text survives.
type RemoteError struct{ Text string }

func (e *RemoteError) Error() string { return e.Text }

//lint:immutable the reflect type of a fixed Go type; never assigned after init.
var rowType = reflect.TypeOf(types.Row(nil))

// encoder appends a message's bytes to buf.
type encoder struct {
	c   *Codec
	buf []byte
}

func (e *encoder) uvarint(n uint64) { e.buf = binary.AppendUvarint(e.buf, n) }
func (e *encoder) varint(n int64)   { e.buf = binary.AppendVarint(e.buf, n) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.buf = append(e.buf, s...) }

// any encodes an interface value (see doc.go).
func (e *encoder) any(v reflect.Value, depth int) {
	if depth > depthMax {
		fail("wire: value nested deeper than %d", depthMax)
	}
	if v.IsNil() {
		e.buf = append(e.buf, anyNil)
		return
	}
	inner := v.Elem()
	if name, ok := e.c.byType[inner.Type()]; ok {
		e.buf = append(e.buf, anyMessage)
		e.str(name)
		e.value(inner, depth+1)
		return
	}
	if err, ok := inner.Interface().(error); ok {
		e.buf = append(e.buf, anyError)
		e.error(err, depth+1)
		return
	}
	if _, ok := datumKind(inner.Interface()); ok {
		e.buf = append(e.buf, anyDatum)
		e.row(types.Row{inner.Interface()})
		return
	}
	fail("wire: %s inside a message is neither a registered message, an error nor a datum", inner.Type())
}

func (e *encoder) error(err error, depth int) {
	if depth > depthMax {
		fail("wire: error chain deeper than %d", depthMax)
	}
	ce, ok := err.(*errcode.Error)
	if !ok || ce == nil || ce.Code == nil {
		e.buf = append(e.buf, errorText)
		e.str(err.Error())
		return
	}
	e.buf = append(e.buf, errorCoded)
	e.str(ce.Code.ID)
	e.str(ce.SQLState)
	e.str(ce.Message)
	e.str(ce.Detail)
	e.str(ce.Hint)
	e.varint(int64(ce.Position))
	if ce.Cause == nil {
		e.buf = append(e.buf, absent)
		return
	}
	e.buf = append(e.buf, present)
	e.error(ce.Cause, depth+1)
}

// value encodes v by its Go type.
func (e *encoder) value(v reflect.Value, depth int) {
	if depth > depthMax {
		fail("wire: value nested deeper than %d", depthMax)
	}
	t := v.Type()
	if t == rowType {
		if v.IsNil() {
			e.buf = append(e.buf, absent)
			return
		}
		e.buf = append(e.buf, present)
		e.row(v.Interface().(types.Row))
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		if v.Bool() {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.varint(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.uvarint(v.Uint())
	case reflect.Float32, reflect.Float64:
		e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v.Float()))
	case reflect.String:
		e.str(v.String())
	case reflect.Slice:
		if v.IsNil() {
			e.buf = append(e.buf, absent)
			return
		}
		e.buf = append(e.buf, present)
		e.uvarint(uint64(v.Len()))
		if t.Elem().Kind() == reflect.Uint8 {
			e.buf = append(e.buf, v.Bytes()...)
			return
		}
		for i := 0; i < v.Len(); i++ {
			e.value(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			e.value(v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !t.Field(i).IsExported() {
				fail("wire: %s.%s is unexported", t, t.Field(i).Name)
			}
			e.value(v.Field(i), depth+1)
		}
	case reflect.Pointer:
		if v.IsNil() {
			e.buf = append(e.buf, absent)
			return
		}
		e.buf = append(e.buf, present)
		e.value(v.Elem(), depth+1)
	case reflect.Map:
		if v.IsNil() {
			e.buf = append(e.buf, absent)
			return
		}
		e.buf = append(e.buf, present)
		e.uvarint(uint64(v.Len()))
		// NB: entries sorted by their encoded key, so map order never
		// reaches the bytes (STYLE.md 2).
		type entry struct{ key, value []byte }
		entries := make([]entry, 0, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			k := encoder{c: e.c}
			k.value(iter.Key(), depth+1)
			val := encoder{c: e.c}
			val.value(iter.Value(), depth+1)
			entries = append(entries, entry{k.buf, val.buf})
		}
		sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key, entries[j].key) < 0 })
		for _, en := range entries {
			e.buf = append(e.buf, en.key...)
			e.buf = append(e.buf, en.value...)
		}
	case reflect.Interface:
		e.any(v, depth+1)
	default:
		fail("wire: %s (%s) cannot be encoded", t, t.Kind())
	}
}

// decoder consumes a message's bytes from buf.
type decoder struct {
	c   *Codec
	buf []byte
}

func (d *decoder) byte1() byte {
	if len(d.buf) == 0 {
		corrupt("truncated")
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b
}

func (d *decoder) flag() bool {
	switch d.byte1() {
	case absent:
		return false
	case present:
		return true
	}
	corrupt("bad presence flag")
	return false
}

func (d *decoder) uvarint() uint64 {
	n, k := binary.Uvarint(d.buf)
	if k <= 0 {
		corrupt("bad uvarint")
	}
	d.buf = d.buf[k:]
	return n
}

func (d *decoder) varint() int64 {
	n, k := binary.Varint(d.buf)
	if k <= 0 {
		corrupt("bad varint")
	}
	d.buf = d.buf[k:]
	return n
}

// emptyElementsMax bounds a count of elements that encode to no bytes
// (struct{}), which the bytes left cannot bound.
const emptyElementsMax = 1 << 16

// length reads a count of items each at least minBytes long, bounded by
// what is left, so a corrupt count cannot allocate without limit.
func (d *decoder) length(minBytes int) int {
	n := d.uvarint()
	if minBytes > 0 && n > uint64(len(d.buf)/minBytes) {
		corrupt("length %d beyond the %d bytes left", n, len(d.buf))
	}
	if minBytes == 0 && n > emptyElementsMax {
		corrupt("length %d of empty elements", n)
	}
	return int(n)
}

// minEncoded is the fewest bytes a value of t encodes to.
func minEncoded(t reflect.Type) int {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() * minEncoded(t.Elem())
	case reflect.Struct:
		n := 0
		for i := 0; i < t.NumField(); i++ {
			n += minEncoded(t.Field(i).Type)
		}
		return n
	case reflect.Float32, reflect.Float64:
		return 8
	}
	return 1
}

func (d *decoder) bytes() []byte {
	n := d.length(1)
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) any(v reflect.Value, depth int) {
	if depth > depthMax {
		corrupt("nested deeper than %d", depthMax)
	}
	switch d.byte1() {
	case anyNil:
		v.SetZero()
	case anyMessage:
		name := d.str()
		t, ok := d.c.byName[name]
		if !ok {
			corrupt("unknown message tag %q", name)
		}
		inner := reflect.New(t).Elem()
		d.value(inner, depth+1)
		d.set(v, inner)
	case anyError:
		err := d.error(depth + 1)
		d.set(v, reflect.ValueOf(err))
	case anyDatum:
		row := d.row()
		if len(row) != 1 {
			corrupt("a datum holds %d columns", len(row))
		}
		if row[0] == nil {
			v.SetZero()
			return
		}
		d.set(v, reflect.ValueOf(row[0]))
	default:
		corrupt("bad interface marker")
	}
}

// set stores x into the interface v, failing when v's interface type does
// not admit x (bytes meant for another field).
func (d *decoder) set(v, x reflect.Value) {
	if !x.Type().AssignableTo(v.Type()) {
		corrupt("%s does not fit a %s", x.Type(), v.Type())
	}
	v.Set(x)
}

func (d *decoder) error(depth int) error {
	if depth > depthMax {
		corrupt("error chain deeper than %d", depthMax)
	}
	switch d.byte1() {
	case errorText:
		return &RemoteError{Text: d.str()}
	case errorCoded:
		id := d.str()
		code, ok := errcode.Lookup(id)
		if !ok {
			corrupt("unknown error code %s", id)
		}
		e := &errcode.Error{Code: code, SQLState: d.str(), Message: d.str(), Detail: d.str(), Hint: d.str(), Position: int(d.varint())}
		if d.flag() {
			e.Cause = d.error(depth + 1)
		}
		return e
	}
	corrupt("bad error marker")
	return nil
}

func (d *decoder) value(v reflect.Value, depth int) {
	if depth > depthMax {
		corrupt("nested deeper than %d", depthMax)
	}
	t := v.Type()
	if t == rowType {
		if d.flag() {
			v.Set(reflect.ValueOf(d.row()))
		}
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		switch d.byte1() {
		case 0:
			v.SetBool(false)
		case 1:
			v.SetBool(true)
		default:
			corrupt("bad bool")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := d.varint()
		if v.OverflowInt(n) {
			corrupt("%d overflows %s", n, t)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n := d.uvarint()
		if v.OverflowUint(n) {
			corrupt("%d overflows %s", n, t)
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		if len(d.buf) < 8 {
			corrupt("truncated float")
		}
		v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(d.buf)))
		d.buf = d.buf[8:]
	case reflect.String:
		v.SetString(d.str())
	case reflect.Slice:
		if !d.flag() {
			return
		}
		if t.Elem().Kind() == reflect.Uint8 {
			b := d.bytes()
			s := reflect.MakeSlice(t, len(b), len(b))
			reflect.Copy(s, reflect.ValueOf(b))
			v.Set(s)
			return
		}
		n := d.length(minEncoded(t.Elem()))
		s := reflect.MakeSlice(t, n, n)
		for i := 0; i < n; i++ {
			d.value(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			d.value(v.Index(i), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			d.value(v.Field(i), depth+1)
		}
	case reflect.Pointer:
		if !d.flag() {
			return
		}
		p := reflect.New(t.Elem())
		d.value(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Map:
		if !d.flag() {
			return
		}
		n := d.length(minEncoded(t.Key()) + minEncoded(t.Elem()))
		m := reflect.MakeMapWithSize(t, n)
		for i := 0; i < n; i++ {
			k := reflect.New(t.Key()).Elem()
			d.value(k, depth+1)
			val := reflect.New(t.Elem()).Elem()
			d.value(val, depth+1)
			m.SetMapIndex(k, val)
		}
		v.Set(m)
	case reflect.Interface:
		d.any(v, depth+1)
	default:
		fail("wire: %s (%s) cannot be decoded", t, t.Kind())
	}
}
