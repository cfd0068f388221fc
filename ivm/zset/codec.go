package zset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// NB: private fallback until ivm/keyenc lands (see doc.go). Tags identify
// the Go representation of a datum (types.go's table).
const (
	tagNull        byte = 0x00
	tagFalse       byte = 0x01
	tagTrue        byte = 0x02
	tagInt         byte = 0x03
	tagFloat       byte = 0x04
	tagNumeric     byte = 0x05
	tagString      byte = 0x06
	tagBytes       byte = 0x07
	tagDate        byte = 0x08
	tagTime        byte = 0x09
	tagTimestamp   byte = 0x0a
	tagTimestampTZ byte = 0x0b
	tagInterval    byte = 0x0c
	tagUUID        byte = 0x0d
	tagArray       byte = 0x0e
)

const microsPerDay = 86400 * 1000000

// EncodeRow appends the lossless encoding of row to buf. The encoding is
// self-delimiting, so encodings may be concatenated.
func EncodeRow(buf []byte, row types.Row) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(row)))
	for _, d := range row {
		buf = appendDatum(buf, d)
	}
	return buf
}

// AppendDatum appends the lossless encoding of one datum.
func AppendDatum(buf []byte, d types.Datum) []byte { return appendDatum(buf, d) }

// DecodeRow decodes one row produced by EncodeRow and returns
// the remaining bytes.
func DecodeRow(b []byte) (types.Row, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("zset: corrupt row header")
	}
	b = b[k:]
	row := make(types.Row, n)
	for i := range row {
		var err error
		row[i], b, err = decodeDatum(b)
		if err != nil {
			return nil, nil, err
		}
	}
	return row, b, nil
}

// DecodeDatum decodes one datum and returns the remaining bytes.
func DecodeDatum(b []byte) (types.Datum, []byte, error) { return decodeDatum(b) }

func appendDatum(buf []byte, d types.Datum) []byte {
	switch v := d.(type) {
	case nil:
		return append(buf, tagNull)
	case bool:
		if v {
			return append(buf, tagTrue)
		}
		return append(buf, tagFalse)
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, tagInt), uint64(v))
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(v))
	case *apd.Decimal:
		text := v.Text('f')
		buf = binary.AppendUvarint(append(buf, tagNumeric), uint64(len(text)))
		return append(buf, text...)
	case string:
		buf = binary.AppendUvarint(append(buf, tagString), uint64(len(v)))
		return append(buf, v...)
	case []byte:
		buf = binary.AppendUvarint(append(buf, tagBytes), uint64(len(v)))
		return append(buf, v...)
	case types.Date:
		return binary.BigEndian.AppendUint32(append(buf, tagDate), uint32(v))
	case types.TimeOfDay:
		return binary.BigEndian.AppendUint64(append(buf, tagTime), uint64(v))
	case types.Timestamp:
		return binary.BigEndian.AppendUint64(append(buf, tagTimestamp), uint64(v))
	case types.TimestampTZ:
		return binary.BigEndian.AppendUint64(append(buf, tagTimestampTZ), uint64(v))
	case types.Interval:
		buf = append(buf, tagInterval)
		buf = binary.BigEndian.AppendUint32(buf, uint32(v.Months))
		buf = binary.BigEndian.AppendUint32(buf, uint32(v.Days))
		return binary.BigEndian.AppendUint64(buf, uint64(v.Micros))
	case types.UUID:
		return append(append(buf, tagUUID), v[:]...)
	case types.Array:
		buf = binary.AppendUvarint(append(buf, tagArray), uint64(len(v.Values)))
		for _, e := range v.Values {
			buf = appendDatum(buf, e)
		}
		return buf
	}
	panic(fmt.Sprintf("zset: unsupported datum %T", d))
}

func decodeDatum(b []byte) (types.Datum, []byte, error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("zset: truncated datum")
	}
	tag, b := b[0], b[1:]
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("zset: truncated datum tag %#x", tag)
		}
		return nil
	}
	switch tag {
	case tagNull:
		return nil, b, nil
	case tagFalse:
		return false, b, nil
	case tagTrue:
		return true, b, nil
	case tagInt, tagFloat, tagTime, tagTimestamp, tagTimestampTZ:
		if err := need(8); err != nil {
			return nil, nil, err
		}
		u := binary.BigEndian.Uint64(b)
		b = b[8:]
		switch tag {
		case tagInt:
			return int64(u), b, nil
		case tagFloat:
			return math.Float64frombits(u), b, nil
		case tagTime:
			return types.TimeOfDay(u), b, nil
		case tagTimestamp:
			return types.Timestamp(u), b, nil
		default:
			return types.TimestampTZ(u), b, nil
		}
	case tagDate:
		if err := need(4); err != nil {
			return nil, nil, err
		}
		return types.Date(int32(binary.BigEndian.Uint32(b))), b[4:], nil
	case tagNumeric, tagString, tagBytes:
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, nil, fmt.Errorf("zset: corrupt length tag %#x", tag)
		}
		payload := b[k : k+int(n)]
		b = b[k+int(n):]
		switch tag {
		case tagString:
			return string(payload), b, nil
		case tagBytes:
			return bytes.Clone(payload), b, nil
		default:
			d, _, err := apd.NewFromString(string(payload))
			if err != nil {
				return nil, nil, fmt.Errorf("zset: corrupt numeric %q: %w", payload, err)
			}
			return d, b, nil
		}
	case tagInterval:
		if err := need(16); err != nil {
			return nil, nil, err
		}
		iv := types.Interval{
			Months: int32(binary.BigEndian.Uint32(b)),
			Days:   int32(binary.BigEndian.Uint32(b[4:])),
			Micros: int64(binary.BigEndian.Uint64(b[8:])),
		}
		return iv, b[16:], nil
	case tagUUID:
		if err := need(16); err != nil {
			return nil, nil, err
		}
		var u types.UUID
		copy(u[:], b)
		return u, b[16:], nil
	case tagArray:
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return nil, nil, fmt.Errorf("zset: corrupt array")
		}
		b = b[k:]
		arr := types.Array{Values: make([]types.Datum, n)}
		for i := range arr.Values {
			var err error
			arr.Values[i], b, err = decodeDatum(b)
			if err != nil {
				return nil, nil, err
			}
		}
		return arr, b, nil
	}
	return nil, nil, fmt.Errorf("zset: unknown datum tag %#x", tag)
}

// HasNull reports whether any of row's columns cols is NULL.
func HasNull(row types.Row, cols []int) bool {
	for _, c := range cols {
		if row[c] == nil {
			return true
		}
	}
	return false
}
