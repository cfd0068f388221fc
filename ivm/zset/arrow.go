package zset

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// WeightColumn is the name of the weight column of an Arrow Z-set batch.
const WeightColumn = "__weight"

// Offsets between PostgreSQL's epoch (2000-01-01) and Arrow's (1970-01-01).
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * microsPerDay
)

// ArrowType is the Arrow type a SQL type travels as. NUMERIC travels as its
// exact decimal text (Arrow's decimal128 cannot hold every numeric).
func ArrowType(t types.Type) (arrow.DataType, error) {
	switch t.Kind {
	case types.KindBool:
		return arrow.FixedWidthTypes.Boolean, nil
	case types.KindInt2:
		return arrow.PrimitiveTypes.Int16, nil
	case types.KindInt4:
		return arrow.PrimitiveTypes.Int32, nil
	case types.KindInt8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return arrow.PrimitiveTypes.Int64, nil
	case types.KindFloat4:
		return arrow.PrimitiveTypes.Float32, nil
	case types.KindFloat8:
		return arrow.PrimitiveTypes.Float64, nil
	case types.KindNumeric, types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindJSON, types.KindJSONB, types.KindUnknown:
		return arrow.BinaryTypes.String, nil
	case types.KindBytea:
		return arrow.BinaryTypes.Binary, nil
	case types.KindDate:
		return arrow.FixedWidthTypes.Date32, nil
	case types.KindTime:
		return arrow.FixedWidthTypes.Time64us, nil
	case types.KindTimestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}, nil
	case types.KindTimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, nil
	case types.KindInterval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval, nil
	case types.KindUUID:
		return &arrow.FixedSizeBinaryType{ByteWidth: 16}, nil
	}
	return nil, fmt.Errorf("zset: no Arrow representation for %s", t.SQLName())
}

// ArrowSchema is the Arrow schema of a Z-set batch of rows of schema: one
// field per column plus the int64 weight column last.
func ArrowSchema(schema types.Schema) (*arrow.Schema, error) {
	fields := make([]arrow.Field, 0, len(schema)+1)
	for _, c := range schema {
		t, err := ArrowType(c.Type)
		if err != nil {
			return nil, err
		}
		fields = append(fields, arrow.Field{Name: c.Name, Type: t, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: WeightColumn, Type: arrow.PrimitiveTypes.Int64})
	return arrow.NewSchema(fields, nil), nil
}

// ToArrow converts a batch to an Arrow record batch (the caller releases
// it). mem may be nil (Go allocator).
func ToArrow(schema types.Schema, b Batch, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.NewGoAllocator()
	}
	as, err := ArrowSchema(schema)
	if err != nil {
		return nil, err
	}
	rb := array.NewRecordBuilder(mem, as)
	defer rb.Release()
	for c, col := range schema {
		if err := appendColumn(rb.Field(c), col.Type, b.Rows, c); err != nil {
			return nil, fmt.Errorf("zset: column %q: %w", col.Name, err)
		}
	}
	rb.Field(len(schema)).(*array.Int64Builder).AppendValues(b.Weights, nil)
	return rb.NewRecordBatch(), nil
}

func appendColumn(fb array.Builder, t types.Type, rows []types.Row, c int) error {
	for _, row := range rows {
		d := row[c]
		if d == nil {
			fb.AppendNull()
			continue
		}
		ok := true
		switch b := fb.(type) {
		case *array.BooleanBuilder:
			var v bool
			v, ok = d.(bool)
			b.Append(v)
		case *array.Int16Builder:
			var v int64
			v, ok = d.(int64)
			b.Append(int16(v))
		case *array.Int32Builder:
			var v int64
			v, ok = d.(int64)
			b.Append(int32(v))
		case *array.Int64Builder:
			var v int64
			v, ok = d.(int64)
			b.Append(v)
		case *array.Float32Builder:
			var v float64
			v, ok = d.(float64)
			b.Append(float32(v))
		case *array.Float64Builder:
			var v float64
			v, ok = d.(float64)
			b.Append(v)
		case *array.StringBuilder:
			if t.Kind == types.KindNumeric {
				var v *apd.Decimal
				v, ok = d.(*apd.Decimal)
				if ok {
					b.Append(v.Text('f'))
				}
			} else {
				var v string
				v, ok = d.(string)
				b.Append(v)
			}
		case *array.BinaryBuilder:
			var v []byte
			v, ok = d.([]byte)
			b.Append(v)
		case *array.Date32Builder:
			var v types.Date
			v, ok = d.(types.Date)
			b.Append(arrow.Date32(int32(v) + pgEpochDays))
		case *array.Time64Builder:
			var v types.TimeOfDay
			v, ok = d.(types.TimeOfDay)
			b.Append(arrow.Time64(v))
		case *array.TimestampBuilder:
			switch v := d.(type) {
			case types.Timestamp:
				b.Append(arrow.Timestamp(int64(v) + pgEpochMicros))
			case types.TimestampTZ:
				b.Append(arrow.Timestamp(int64(v) + pgEpochMicros))
			default:
				ok = false
			}
		case *array.MonthDayNanoIntervalBuilder:
			var v types.Interval
			v, ok = d.(types.Interval)
			b.Append(arrow.MonthDayNanoInterval{Months: v.Months, Days: v.Days, Nanoseconds: v.Micros * 1000})
		case *array.FixedSizeBinaryBuilder:
			var v types.UUID
			v, ok = d.(types.UUID)
			b.Append(v[:])
		default:
			return fmt.Errorf("unsupported Arrow builder %T", fb)
		}
		if !ok {
			return fmt.Errorf("datum %T does not match type %s", d, t.SQLName())
		}
	}
	return nil
}

// FromArrow converts an Arrow record batch made by ToArrow (or any batch
// with the same layout) back to a Batch of rows of schema.
func FromArrow(schema types.Schema, rec arrow.RecordBatch) (Batch, error) {
	if int(rec.NumCols()) != len(schema)+1 {
		return Batch{}, fmt.Errorf("zset: record has %d columns, want %d plus weight", rec.NumCols(), len(schema))
	}
	n := int(rec.NumRows())
	weights, ok := rec.Column(len(schema)).(*array.Int64)
	if !ok {
		return Batch{}, fmt.Errorf("zset: weight column is %s, want int64", rec.Column(len(schema)).DataType())
	}
	out := Batch{Rows: make([]types.Row, n), Weights: make([]int64, n)}
	values := make([]types.Datum, n*len(schema))
	for i := range out.Rows {
		out.Rows[i] = values[i*len(schema) : (i+1)*len(schema) : (i+1)*len(schema)]
		out.Weights[i] = weights.Value(i)
	}
	for c, col := range schema {
		arr := rec.Column(c)
		for i := 0; i < n; i++ {
			if arr.IsNull(i) {
				continue
			}
			var d types.Datum
			switch a := arr.(type) {
			case *array.Boolean:
				d = a.Value(i)
			case *array.Int16:
				d = int64(a.Value(i))
			case *array.Int32:
				d = int64(a.Value(i))
			case *array.Int64:
				d = a.Value(i)
			case *array.Float32:
				d = float64(a.Value(i))
			case *array.Float64:
				d = a.Value(i)
			case *array.String:
				if col.Type.Kind == types.KindNumeric {
					v, _, err := apd.NewFromString(a.Value(i))
					if err != nil {
						return Batch{}, fmt.Errorf("zset: column %q: %w", col.Name, err)
					}
					d = v
				} else {
					d = a.Value(i)
				}
			case *array.Binary:
				d = append([]byte(nil), a.Value(i)...)
			case *array.Date32:
				d = types.Date(int32(a.Value(i)) - pgEpochDays)
			case *array.Time64:
				d = types.TimeOfDay(a.Value(i))
			case *array.Timestamp:
				if col.Type.Kind == types.KindTimestampTZ {
					d = types.TimestampTZ(int64(a.Value(i)) - pgEpochMicros)
				} else {
					d = types.Timestamp(int64(a.Value(i)) - pgEpochMicros)
				}
			case *array.MonthDayNanoInterval:
				v := a.Value(i)
				d = types.Interval{Months: v.Months, Days: v.Days, Micros: v.Nanoseconds / 1000}
			case *array.FixedSizeBinary:
				var u types.UUID
				copy(u[:], a.Value(i))
				d = u
			default:
				return Batch{}, fmt.Errorf("zset: column %q: unsupported Arrow type %s", col.Name, arr.DataType())
			}
			out.Rows[i][c] = d
		}
	}
	return out, nil
}
