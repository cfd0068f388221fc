package zset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/rockstream/rockstream/ivm/types"
)

// Columns is a Z-set batch in columnar form: one Arrow array per column,
// laid out as ArrowSchema(schema) says, plus the weights as the weight
// column (see Record). Entry i is (row i, weight i), as in a Batch.
//
// A Columns is never a Batch: code that wants rows must ask for them
// (Rows, Row, Delta.Batch), so a column-only batch cannot be read as an
// empty Rows slice by mistake. Only schemas whose every column type
// round-trips exactly through its Arrow form (Columnar) have a columnar
// form; NUMERIC (travels as text), float4, interval (nanoseconds overflow)
// and arrays stay row-oriented.
//
// Like Batches, Columns are immutable once built; arrays are shared, not
// copied, by Select and by an all-rows Take. Arrays are allocated by Go
// (memory.DefaultAllocator is never used): the garbage collector frees
// them, so no Release is needed.
type Columns struct {
	schema  types.Schema
	cols    []arrow.Array
	weights []int64
}

// Columnar reports whether values of t have an exact columnar form.
func Columnar(t types.Type) bool {
	switch t.Kind {
	case types.KindBool, types.KindInt2, types.KindInt4, types.KindInt8, types.KindFloat8,
		types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindBytea,
		types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ, types.KindUUID:
		return true
	}
	return false
}

// ColumnarSchema reports whether every column of schema is Columnar.
func ColumnarSchema(schema types.Schema) bool {
	for _, c := range schema {
		if !Columnar(c.Type) {
			return false
		}
	}
	return true
}

// NewColumns returns the batch of the given arrays (one per column of
// schema, each of weights' length, of the type ArrowType gives) and
// weights. It panics on a malformed batch: callers build both.
func NewColumns(schema types.Schema, cols []arrow.Array, weights []int64) *Columns {
	// INVARIANT: one array per column, each with one entry per weight.
	if len(cols) != len(schema) {
		panic(fmt.Sprintf("zset: %d arrays for %d columns", len(cols), len(schema)))
	}
	for _, a := range cols {
		if a.Len() != len(weights) {
			panic(fmt.Sprintf("zset: array of %d entries for %d weights", a.Len(), len(weights)))
		}
	}
	return &Columns{schema: schema, cols: cols, weights: weights}
}

// ColumnsFromRows converts a row batch to columnar form.
func ColumnsFromRows(schema types.Schema, b Batch) (*Columns, error) {
	cols := make([]arrow.Array, len(schema))
	for j, c := range schema {
		if !Columnar(c.Type) {
			return nil, fmt.Errorf("zset: column %q of type %s has no columnar form", c.Name, c.Type.SQLName())
		}
		cb := NewColumnBuilder(c.Type, len(b.Rows))
		for _, row := range b.Rows {
			if err := cb.AppendDatum(row[j]); err != nil {
				return nil, fmt.Errorf("zset: column %q: %w", c.Name, err)
			}
		}
		cols[j] = cb.Finish()
	}
	return NewColumns(schema, cols, append([]int64(nil), b.Weights...)), nil
}

// Len is the number of (row, weight) entries.
func (c *Columns) Len() int { return len(c.weights) }

// Schema is the rows' schema.
func (c *Columns) Schema() types.Schema { return c.schema }

// Column is column j's array.
func (c *Columns) Column(j int) arrow.Array { return c.cols[j] }

// Weights are the entries' weights (shared: do not modify).
func (c *Columns) Weights() []int64 { return c.weights }

// Record returns the batch as an Arrow record batch of ArrowSchema(schema):
// the columns, then the weights.
func (c *Columns) Record() (arrow.RecordBatch, error) {
	as, err := ArrowSchema(c.schema)
	if err != nil {
		return nil, err
	}
	arrs := append(append(make([]arrow.Array, 0, len(c.cols)+1), c.cols...), int64Array(c.weights, nil, 0))
	return array.NewRecordBatch(as, arrs, int64(len(c.weights))), nil
}

// Datum is column j of row i as a row would hold it.
func (c *Columns) Datum(j, i int) types.Datum {
	a := c.cols[j]
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return bytes.Clone(a.Value(i))
	case *array.Date32:
		return types.Date(int32(a.Value(i)) - pgEpochDays)
	case *array.Time64:
		return types.TimeOfDay(a.Value(i))
	case *array.Timestamp:
		if c.schema[j].Type.Kind == types.KindTimestampTZ {
			return types.TimestampTZ(int64(a.Value(i)) - pgEpochMicros)
		}
		return types.Timestamp(int64(a.Value(i)) - pgEpochMicros)
	case *array.FixedSizeBinary:
		var u types.UUID
		copy(u[:], a.Value(i))
		return u
	}
	// INVARIANT: NewColumns's callers build only Columnar types' arrays.
	panic(fmt.Sprintf("zset: unsupported array %T", a))
}

// Row builds row i (a materialization: the point of Columns is not to).
func (c *Columns) Row(i int) types.Row {
	row := make(types.Row, len(c.cols))
	for j := range row {
		row[j] = c.Datum(j, i)
	}
	return row
}

// Rows materializes the batch as rows.
func (c *Columns) Rows() Batch {
	n, width := c.Len(), len(c.cols)
	out := Batch{Rows: make([]types.Row, n), Weights: c.weights}
	values := make([]types.Datum, n*width)
	for i := range out.Rows {
		out.Rows[i] = values[i*width : (i+1)*width : (i+1)*width]
	}
	for j := range c.cols {
		for i := 0; i < n; i++ {
			values[i*width+j] = c.Datum(j, i)
		}
	}
	return out
}

// Select returns the columns cols (in that order) of every entry, sharing
// the arrays and weights.
func (c *Columns) Select(cols []int) *Columns {
	out := &Columns{schema: make(types.Schema, len(cols)), cols: make([]arrow.Array, len(cols)), weights: c.weights}
	for k, j := range cols {
		out.schema[k], out.cols[k] = c.schema[j], c.cols[j]
	}
	return out
}

// Take returns the entries sel (any order, repeats allowed) with the given
// weights (nil: the entries' own weights).
func (c *Columns) Take(sel []int32, weights []int64) *Columns {
	if weights == nil {
		weights = make([]int64, len(sel))
		for k, i := range sel {
			weights[k] = c.weights[i]
		}
	}
	out := &Columns{schema: c.schema, cols: make([]arrow.Array, len(c.cols)), weights: weights}
	for j, a := range c.cols {
		out.cols[j] = TakeArray(c.schema[j].Type, a, sel)
	}
	return out
}

// TakeArray returns the entries sel of a, an array of a Columnar type t.
func TakeArray(t types.Type, a arrow.Array, sel []int32) arrow.Array {
	cb := NewColumnBuilder(t, len(sel))
	switch a := a.(type) {
	case *array.Int64:
		vals := a.Int64Values()
		for _, i := range sel {
			cb.ints = append(cb.ints, vals[i])
		}
	case *array.Float64:
		vals := a.Float64Values()
		for _, i := range sel {
			cb.floats = append(cb.floats, vals[i])
		}
	default:
		for _, i := range sel {
			cb.appendFrom(a, int(i))
		}
		return cb.Finish()
	}
	if a.NullN() > 0 {
		for k, i := range sel {
			if a.IsNull(int(i)) {
				cb.nullAt = append(cb.nullAt, k)
			}
		}
	}
	cb.n = len(sel)
	return cb.Finish()
}

// AppendEncodedRow appends EncodeRow(Row(i)) without building the row: the
// same bytes, so stored keys do not depend on the batch's form. To encode
// many rows, use RowEncoder once.
func (c *Columns) AppendEncodedRow(buf []byte, i int) []byte { return c.RowEncoder()(buf, i) }

// RowEncoder returns a function that appends EncodeRow(Row(i)) for any
// entry i, with each column's encoder chosen once (not per value).
func (c *Columns) RowEncoder() func(buf []byte, i int) []byte {
	encs := make([]func([]byte, int) []byte, len(c.cols))
	for j := range c.cols {
		encs[j] = c.columnEncoder(j)
	}
	header := binary.AppendUvarint(nil, uint64(len(c.cols)))
	return func(buf []byte, i int) []byte {
		buf = append(buf, header...)
		for _, enc := range encs {
			buf = enc(buf, i)
		}
		return buf
	}
}

// columnEncoder returns the appender of column j's values in EncodeRow's
// datum encoding (tag, then the value).
func (c *Columns) columnEncoder(j int) func([]byte, int) []byte {
	var value func(buf []byte, i int) []byte
	switch a := c.cols[j].(type) {
	case *array.Boolean:
		value = func(buf []byte, i int) []byte {
			if a.Value(i) {
				return append(buf, tagTrue)
			}
			return append(buf, tagFalse)
		}
	case *array.Int16:
		vals := a.Int16Values()
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tagInt), uint64(int64(vals[i])))
		}
	case *array.Int32:
		vals := a.Int32Values()
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tagInt), uint64(int64(vals[i])))
		}
	case *array.Int64:
		vals := a.Int64Values()
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tagInt), uint64(vals[i]))
		}
	case *array.Float64:
		vals := a.Float64Values()
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(vals[i]))
		}
	case *array.String:
		value = func(buf []byte, i int) []byte {
			v := a.Value(i)
			buf = binary.AppendUvarint(append(buf, tagString), uint64(len(v)))
			return append(buf, v...)
		}
	case *array.Binary:
		value = func(buf []byte, i int) []byte {
			v := a.Value(i)
			buf = binary.AppendUvarint(append(buf, tagBytes), uint64(len(v)))
			return append(buf, v...)
		}
	case *array.Date32:
		vals := a.Date32Values()
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint32(append(buf, tagDate), uint32(int32(vals[i])-pgEpochDays))
		}
	case *array.Time64:
		vals := a.Time64Values()
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tagTime), uint64(vals[i]))
		}
	case *array.Timestamp:
		vals := a.TimestampValues()
		tag := tagTimestamp
		if c.schema[j].Type.Kind == types.KindTimestampTZ {
			tag = tagTimestampTZ
		}
		value = func(buf []byte, i int) []byte {
			return binary.BigEndian.AppendUint64(append(buf, tag), uint64(int64(vals[i])-pgEpochMicros))
		}
	case *array.FixedSizeBinary:
		value = func(buf []byte, i int) []byte { return append(append(buf, tagUUID), a.Value(i)...) }
	default:
		// INVARIANT: NewColumns's callers build only Columnar types' arrays.
		panic(fmt.Sprintf("zset: unsupported array %T", a))
	}
	a := c.cols[j]
	if a.NullN() == 0 {
		return value
	}
	return func(buf []byte, i int) []byte {
		if a.IsNull(i) {
			return append(buf, tagNull)
		}
		return value(buf, i)
	}
}

// ColumnBuilder builds one column's array from values appended in entry
// order: typed appends (no boxing) for decoders and kernels, AppendDatum
// for a row's value.
type ColumnBuilder struct {
	t types.Type
	n int
	// Values by physical form; NULL positions hold a zero value.
	ints   []int64 // integers, date, time, timestamps (row Datum values)
	floats []float64
	bools  []bool
	data   []byte  // strings, bytea, uuid
	ends   []int32 // strings, bytea: end offset of each value in data
	nullAt []int   // NULL positions, ascending
}

// NewColumnBuilder returns a builder for a Columnar type with room for n
// values.
func NewColumnBuilder(t types.Type, n int) *ColumnBuilder {
	b := &ColumnBuilder{t: t}
	switch t.Kind {
	case types.KindBool:
		b.bools = make([]bool, 0, n)
	case types.KindFloat8:
		b.floats = make([]float64, 0, n)
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindBytea:
		b.ends = make([]int32, 0, n)
	case types.KindUUID:
		b.data = make([]byte, 0, 16*n)
	default:
		b.ints = make([]int64, 0, n)
	}
	return b
}

// Grow makes room for n more values without reallocating.
func (b *ColumnBuilder) Grow(n int) {
	switch b.t.Kind {
	case types.KindBool:
		b.bools = slices.Grow(b.bools, n)
	case types.KindFloat8:
		b.floats = slices.Grow(b.floats, n)
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindBytea:
		b.ends = slices.Grow(b.ends, n)
	case types.KindUUID:
		b.data = slices.Grow(b.data, 16*n)
	default:
		b.ints = slices.Grow(b.ints, n)
	}
}

// Type is the column's type.
func (b *ColumnBuilder) Type() types.Type { return b.t }

// Len is the number of values appended.
func (b *ColumnBuilder) Len() int { return b.n }

// AppendNull appends a NULL.
func (b *ColumnBuilder) AppendNull() {
	b.nullAt = append(b.nullAt, b.n)
	switch b.t.Kind {
	case types.KindBool:
		b.bools = append(b.bools, false)
	case types.KindFloat8:
		b.floats = append(b.floats, 0)
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindBytea:
		b.ends = append(b.ends, int32(len(b.data)))
	case types.KindUUID:
		var zero types.UUID
		b.data = append(b.data, zero[:]...)
	default:
		b.ints = append(b.ints, 0)
	}
	b.n++
}

// AppendInt appends an integer, date, time or timestamp value (the int64
// of the row Datum: days or microseconds since 2000-01-01).
func (b *ColumnBuilder) AppendInt(v int64) { b.ints = append(b.ints, v); b.n++ }

// AppendIntsSel appends values[i] (NULL where nulls[i]) for each i in sel:
// AppendInt and AppendNull in one loop, for kernel results.
func (b *ColumnBuilder) AppendIntsSel(values []int64, nulls []bool, sel []int32) {
	start := len(b.ints)
	b.ints = slices.Grow(b.ints, len(sel))[:start+len(sel)]
	out := b.ints[start:]
	for k, i := range sel {
		if nulls[i] {
			out[k] = 0
			b.nullAt = append(b.nullAt, b.n+k)
			continue
		}
		out[k] = values[i]
	}
	b.n += len(sel)
}

// AppendFloat appends a float8.
func (b *ColumnBuilder) AppendFloat(v float64) { b.floats = append(b.floats, v); b.n++ }

// AppendBool appends a bool.
func (b *ColumnBuilder) AppendBool(v bool) { b.bools = append(b.bools, v); b.n++ }

// AppendBytes appends a string, bytea or uuid value (copied).
func (b *ColumnBuilder) AppendBytes(v []byte) {
	b.data = append(b.data, v...)
	if b.t.Kind != types.KindUUID {
		b.ends = append(b.ends, int32(len(b.data)))
	}
	b.n++
}

// AppendString appends a string value.
func (b *ColumnBuilder) AppendString(v string) {
	b.data = append(b.data, v...)
	b.ends = append(b.ends, int32(len(b.data)))
	b.n++
}

// AppendDatum appends a row's value.
func (b *ColumnBuilder) AppendDatum(d types.Datum) error {
	if d == nil {
		b.AppendNull()
		return nil
	}
	ok := true
	switch b.t.Kind {
	case types.KindBool:
		var v bool
		v, ok = d.(bool)
		b.AppendBool(v)
	case types.KindInt2, types.KindInt4, types.KindInt8:
		ok = b.appendIntOf(datumInt[int64](d))
	case types.KindFloat8:
		var v float64
		v, ok = d.(float64)
		b.AppendFloat(v)
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName:
		var v string
		v, ok = d.(string)
		b.AppendString(v)
	case types.KindBytea:
		var v []byte
		v, ok = d.([]byte)
		b.AppendBytes(v)
	case types.KindDate:
		ok = b.appendIntOf(datumInt[types.Date](d))
	case types.KindTime:
		ok = b.appendIntOf(datumInt[types.TimeOfDay](d))
	case types.KindTimestamp:
		ok = b.appendIntOf(datumInt[types.Timestamp](d))
	case types.KindTimestampTZ:
		ok = b.appendIntOf(datumInt[types.TimestampTZ](d))
	case types.KindUUID:
		var v types.UUID
		v, ok = d.(types.UUID)
		b.AppendBytes(v[:])
	default:
		return fmt.Errorf("type %s has no columnar form", b.t.SQLName())
	}
	if !ok {
		return fmt.Errorf("datum %T does not match type %s", d, b.t.SQLName())
	}
	return nil
}

// datumInt returns d as the int64 of its Go type T.
func datumInt[T ~int32 | ~int64](d types.Datum) (int64, bool) {
	v, ok := d.(T)
	return int64(v), ok
}

// appendIntOf appends v and returns ok.
func (b *ColumnBuilder) appendIntOf(v int64, ok bool) bool {
	b.AppendInt(v)
	return ok
}

// appendFrom appends entry i of a (an array of this builder's type).
func (b *ColumnBuilder) appendFrom(a arrow.Array, i int) {
	if a.IsNull(i) {
		b.AppendNull()
		return
	}
	switch a := a.(type) {
	case *array.Boolean:
		b.AppendBool(a.Value(i))
	case *array.Int16:
		b.AppendInt(int64(a.Value(i)))
	case *array.Int32:
		b.AppendInt(int64(a.Value(i)))
	case *array.Int64:
		b.AppendInt(a.Value(i))
	case *array.Float64:
		b.AppendFloat(a.Value(i))
	case *array.String:
		b.AppendString(a.Value(i))
	case *array.Binary:
		b.AppendBytes(a.Value(i))
	case *array.Date32:
		b.AppendInt(int64(int32(a.Value(i)) - pgEpochDays))
	case *array.Time64:
		b.AppendInt(int64(a.Value(i)))
	case *array.Timestamp:
		b.AppendInt(int64(a.Value(i)) - pgEpochMicros)
	case *array.FixedSizeBinary:
		b.AppendBytes(a.Value(i))
	default:
		// INVARIANT: NewColumns's callers build only Columnar types' arrays.
		panic(fmt.Sprintf("zset: unsupported array %T", a))
	}
}

// Finish returns the array (the builder must not be used afterwards).
func (b *ColumnBuilder) Finish() arrow.Array {
	n := b.n
	var valid *memory.Buffer
	if len(b.nullAt) > 0 {
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.SetBitsTo(bits, 0, int64(n), true)
		for _, i := range b.nullAt {
			bitutil.ClearBit(bits, i)
		}
		valid = memory.NewBufferBytes(bits)
	}
	nulls := len(b.nullAt)
	data := func(dt arrow.DataType, bufs ...*memory.Buffer) arrow.ArrayData {
		return array.NewData(dt, n, append([]*memory.Buffer{valid}, bufs...), nil, nulls, 0)
	}
	switch b.t.Kind {
	case types.KindBool:
		bits := make([]byte, bitutil.BytesForBits(int64(n)))
		for i, v := range b.bools {
			if v {
				bitutil.SetBit(bits, i)
			}
		}
		return array.NewBooleanData(data(arrow.FixedWidthTypes.Boolean, memory.NewBufferBytes(bits)))
	case types.KindInt2:
		vals := make([]int16, n)
		for i, v := range b.ints {
			vals[i] = int16(v)
		}
		return array.NewInt16Data(data(arrow.PrimitiveTypes.Int16, memory.NewBufferBytes(arrow.Int16Traits.CastToBytes(vals))))
	case types.KindInt4:
		vals := make([]int32, n)
		for i, v := range b.ints {
			vals[i] = int32(v)
		}
		return array.NewInt32Data(data(arrow.PrimitiveTypes.Int32, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals))))
	case types.KindInt8:
		return int64Array(b.ints, valid, nulls)
	case types.KindFloat8:
		return array.NewFloat64Data(data(arrow.PrimitiveTypes.Float64, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(b.floats))))
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindBytea:
		offsets := make([]int32, n+1)
		copy(offsets[1:], b.ends)
		dt := arrow.BinaryTypes.String
		if b.t.Kind == types.KindBytea {
			dt = arrow.BinaryTypes.Binary
		}
		d := data(dt, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(b.data))
		if b.t.Kind == types.KindBytea {
			return array.NewBinaryData(d)
		}
		return array.NewStringData(d)
	case types.KindDate:
		vals := make([]int32, n)
		for i, v := range b.ints {
			vals[i] = int32(v) + pgEpochDays
		}
		return array.NewDate32Data(data(arrow.FixedWidthTypes.Date32, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals))))
	case types.KindTime:
		return array.NewTime64Data(data(arrow.FixedWidthTypes.Time64us, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(b.ints))))
	case types.KindTimestamp, types.KindTimestampTZ:
		for i := range b.ints {
			b.ints[i] += pgEpochMicros
		}
		dt, _ := ArrowType(b.t)
		return array.NewTimestampData(data(dt, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(b.ints))))
	case types.KindUUID:
		return array.NewFixedSizeBinaryData(data(&arrow.FixedSizeBinaryType{ByteWidth: 16}, memory.NewBufferBytes(b.data)))
	}
	// INVARIANT: NewColumnBuilder's callers pass Columnar types.
	panic(fmt.Sprintf("zset: no columnar form for %s", b.t.SQLName()))
}

// int64Array wraps values as an Arrow int64 array without copying.
func int64Array(values []int64, valid *memory.Buffer, nulls int) *array.Int64 {
	buf := memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(values))
	return array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, len(values), []*memory.Buffer{valid, buf}, nil, nulls, 0))
}
