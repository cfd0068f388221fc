package keyenc

import (
	"encoding/binary"
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// Row encoding (EncodeRow / DecodeRow): compact, exact (numeric scale and
// interval fields kept), not order-preserving. Layout:
//
//	null bitmap: ceil(n/8) bytes, bit i set when column i is NULL
//	then each non-NULL column:
//	  bool         1 byte
//	  integers     zigzag varint
//	  floats       8 bytes little-endian IEEE bits
//	  numeric      form byte; finite: sign byte, zigzag varint exponent,
//	               uvarint length + big-endian magnitude bytes
//	  strings      uvarint length + bytes
//	  date/time/timestamps  zigzag varint
//	  interval     zigzag varints months, days, micros
//	  uuid         16 bytes
//	  array        uvarint count, null bitmap, elements

// EncodeRow appends the compact encoding of row (typed by ts) to dst.
func EncodeRow(dst []byte, ts []types.Type, row types.Row) []byte {
	dst = appendNullBitmap(dst, row)
	for i, t := range ts {
		if row[i] != nil {
			dst = appendRowValue(dst, t, row[i])
		}
	}
	return dst
}

func appendNullBitmap(dst []byte, vals []types.Datum) []byte {
	n := (len(vals) + 7) / 8
	start := len(dst)
	for i := 0; i < n; i++ {
		dst = append(dst, 0)
	}
	for i, v := range vals {
		if v == nil {
			dst[start+i/8] |= 1 << (i % 8)
		}
	}
	return dst
}

func appendZigzag(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

func appendRowValue(dst []byte, t types.Type, d types.Datum) []byte {
	switch t.Kind {
	case types.KindBool:
		if d.(bool) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return appendZigzag(dst, d.(int64))
	case types.KindFloat4, types.KindFloat8:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(d.(float64)))
	case types.KindNumeric:
		n := d.(*apd.Decimal)
		dst = append(dst, byte(n.Form))
		if n.Form != apd.Finite {
			if n.Negative {
				return append(dst, 1)
			}
			return append(dst, 0)
		}
		if n.Negative {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
		dst = appendZigzag(dst, int64(n.Exponent))
		if n.Coeff.IsInt64() {
			v := n.Coeff.Int64()
			if v < 0 {
				v = -v
			}
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], uint64(v))
			i := 0
			for i < 8 && b[i] == 0 {
				i++
			}
			dst = binary.AppendUvarint(dst, uint64(8-i))
			return append(dst, b[i:]...)
		}
		var mag apd.BigInt
		mag.Abs(&n.Coeff)
		b := mag.MathBigInt().Bytes()
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindUnknown, types.KindJSON, types.KindJSONB:
		s := d.(string)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case types.KindBytea:
		b := d.([]byte)
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		return append(dst, b...)
	case types.KindDate:
		return appendZigzag(dst, int64(d.(types.Date)))
	case types.KindTime:
		return appendZigzag(dst, int64(d.(types.TimeOfDay)))
	case types.KindTimestamp:
		return appendZigzag(dst, int64(d.(types.Timestamp)))
	case types.KindTimestampTZ:
		return appendZigzag(dst, int64(d.(types.TimestampTZ)))
	case types.KindInterval:
		iv := d.(types.Interval)
		dst = appendZigzag(dst, int64(iv.Months))
		dst = appendZigzag(dst, int64(iv.Days))
		return appendZigzag(dst, iv.Micros)
	case types.KindUUID:
		u := d.(types.UUID)
		return append(dst, u[:]...)
	case types.KindArray:
		a := d.(types.Array)
		elem := a.Elem
		if t.Elem != nil {
			elem = *t.Elem
		}
		dst = binary.AppendUvarint(dst, uint64(len(a.Values)))
		dst = appendNullBitmap(dst, a.Values)
		for _, v := range a.Values {
			if v != nil {
				dst = appendRowValue(dst, elem, v)
			}
		}
		return dst
	}
	panic("keyenc: EncodeRow: unsupported type " + t.String())
}

// DecodeRow decodes a row written by EncodeRow into out (reused when it has
// capacity). Strings and byte slices are copied: the result does not alias
// src.
func DecodeRow(src []byte, ts []types.Type, out types.Row) (types.Row, error) {
	out = out[:0]
	r := rowReader{buf: src}
	bitmap := r.bytes((len(ts) + 7) / 8)
	if r.err != nil {
		return nil, r.err
	}
	for i, t := range ts {
		if bitmap[i/8]&(1<<(i%8)) != 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, r.value(t))
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.buf) != 0 {
		return nil, corrupt("%d trailing bytes after row", len(r.buf))
	}
	return out, nil
}

type rowReader struct {
	buf []byte
	err error
}

func (r *rowReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = corrupt(format, args...)
	}
}

func (r *rowReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.buf) < n {
		r.fail("need %d bytes, have %d", n, len(r.buf))
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

func (r *rowReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *rowReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf)
	if n <= 0 {
		r.fail("bad uvarint")
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *rowReader) length() int {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.fail("length %d beyond buffer", n)
		return 0
	}
	return int(n)
}

func (r *rowReader) value(t types.Type) types.Datum {
	switch t.Kind {
	case types.KindBool:
		b := r.bytes(1)
		if b == nil {
			return nil
		}
		return b[0] != 0
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return r.varint()
	case types.KindFloat4, types.KindFloat8:
		b := r.bytes(8)
		if b == nil {
			return nil
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	case types.KindNumeric:
		hdr := r.bytes(2)
		if hdr == nil {
			return nil
		}
		d := &apd.Decimal{Form: apd.Form(hdr[0]), Negative: hdr[1] != 0}
		if d.Form != apd.Finite {
			return d
		}
		d.Exponent = int32(r.varint())
		mag := r.bytes(r.length())
		if r.err != nil {
			return nil
		}
		if len(mag) <= 8 {
			var v uint64
			for _, c := range mag {
				v = v<<8 | uint64(c)
			}
			d.Coeff.SetUint64(v)
		} else {
			d.Coeff.SetBytes(mag)
		}
		return d
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindUnknown, types.KindJSON, types.KindJSONB:
		return string(r.bytes(r.length()))
	case types.KindBytea:
		b := r.bytes(r.length())
		if b == nil {
			return nil
		}
		return append([]byte{}, b...)
	case types.KindDate:
		return types.Date(r.varint())
	case types.KindTime:
		return types.TimeOfDay(r.varint())
	case types.KindTimestamp:
		return types.Timestamp(r.varint())
	case types.KindTimestampTZ:
		return types.TimestampTZ(r.varint())
	case types.KindInterval:
		m := r.varint()
		d := r.varint()
		us := r.varint()
		return types.Interval{Months: int32(m), Days: int32(d), Micros: us}
	case types.KindUUID:
		var u types.UUID
		copy(u[:], r.bytes(16))
		return u
	case types.KindArray:
		elem := types.TUnknown
		if t.Elem != nil {
			elem = *t.Elem
		}
		n64 := r.uvarint()
		if n64 > 8*uint64(len(r.buf)) {
			r.fail("array length %d beyond buffer", n64)
			return nil
		}
		n := int(n64)
		bitmap := r.bytes((n + 7) / 8)
		if r.err != nil {
			return nil
		}
		a := types.Array{Elem: elem, Values: make([]types.Datum, n)}
		for i := 0; i < n; i++ {
			if bitmap[i/8]&(1<<(i%8)) == 0 {
				a.Values[i] = r.value(elem)
			}
		}
		return a
	}
	r.fail("unsupported type %s", t)
	return nil
}
