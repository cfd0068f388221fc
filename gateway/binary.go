package gateway

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// PostgreSQL's binary send/recv formats (RowDescription format 1, binary
// Bind parameters). RockStream's Datum representations of date, time,
// timestamp, timestamptz and interval use PostgreSQL's own epoch and units,
// so those are plain integer copies.

// appendBinary appends d's binary form to buf.
func appendBinary(buf []byte, t types.Type, d types.Datum) ([]byte, error) {
	if rv, ok := d.(RegValue); ok {
		d = rv.OID
	}
	switch t.Kind {
	case types.KindBool:
		v, ok := d.(bool)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		if v {
			return append(buf, 1), nil
		}
		return append(buf, 0), nil
	case types.KindInt2:
		v, ok := d.(int64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint16(buf, uint16(int16(v))), nil
	case types.KindInt4:
		v, ok := d.(int64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint32(buf, uint32(int32(v))), nil
	case types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		v, ok := d.(int64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint32(buf, uint32(v)), nil
	case types.KindInt8:
		v, ok := d.(int64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
	case types.KindFloat4:
		v, ok := d.(float64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(float32(v))), nil
	case types.KindFloat8:
		v, ok := d.(float64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint64(buf, math.Float64bits(v)), nil
	case types.KindNumeric:
		v, ok := d.(*apd.Decimal)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendNumericBinary(buf, v), nil
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindJSON, types.KindUnknown:
		v, ok := d.(string)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return append(buf, v...), nil
	case types.KindJSONB:
		v, ok := d.(string)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return append(append(buf, 1), v...), nil
	case types.KindBytea:
		v, ok := d.([]byte)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return append(buf, v...), nil
	case types.KindDate:
		v, ok := d.(types.Date)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint32(buf, uint32(int32(v))), nil
	case types.KindTime:
		v, ok := d.(types.TimeOfDay)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
	case types.KindTimestamp:
		v, ok := d.(types.Timestamp)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
	case types.KindTimestampTZ:
		v, ok := d.(types.TimestampTZ)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return binary.BigEndian.AppendUint64(buf, uint64(v)), nil
	case types.KindInterval:
		v, ok := d.(types.Interval)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(v.Micros))
		buf = binary.BigEndian.AppendUint32(buf, uint32(v.Days))
		return binary.BigEndian.AppendUint32(buf, uint32(v.Months)), nil
	case types.KindUUID:
		v, ok := d.(types.UUID)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return append(buf, v[:]...), nil
	case types.KindArray:
		v, ok := d.(types.Array)
		if !ok || t.Elem == nil {
			return nil, datumTypeError(t, d)
		}
		return appendArrayBinary(buf, *t.Elem, v)
	}
	return nil, fmt.Errorf("no binary output for type %s", t.SQLName())
}

// Numeric binary format: int16 ndigits, int16 weight, uint16 sign, int16
// dscale, then ndigits base-10000 digits, most significant first; the value
// is sum(digit[i] * 10000^(weight-i)).
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

func appendNumericBinary(buf []byte, v *apd.Decimal) []byte {
	header := func(ndigits, weight int16, sign uint16, dscale int16) {
		buf = binary.BigEndian.AppendUint16(buf, uint16(ndigits))
		buf = binary.BigEndian.AppendUint16(buf, uint16(weight))
		buf = binary.BigEndian.AppendUint16(buf, sign)
		buf = binary.BigEndian.AppendUint16(buf, uint16(dscale))
	}
	switch v.Form {
	case apd.NaN, apd.NaNSignaling:
		header(0, 0, numericNaN, 0)
		return buf
	case apd.Infinite:
		// PostgreSQL 15's numeric_send reports dscale 32 for infinities
		// (bits of the special-value header); match it byte for byte.
		if v.Negative {
			header(0, 0, numericNInf, 32)
		} else {
			header(0, 0, numericPInf, 32)
		}
		return buf
	}
	dscale := int32(0)
	if v.Exponent < 0 {
		dscale = -v.Exponent
	}
	// Digits of |v| as a decimal string without point, and the position of
	// the decimal point counted from the left.
	coeff := v.Coeff.String()
	exp := int(v.Exponent)
	if exp > 0 {
		coeff += strings.Repeat("0", exp)
		exp = 0
	}
	intLen := len(coeff) + exp // digits before the point (may be <= 0)
	// Pad the integer part on the left to a multiple of 4 and the fraction
	// on the right to a multiple of 4.
	leftPad := (4 - intLen%4) % 4
	if intLen <= 0 {
		leftPad = 0
		coeff = strings.Repeat("0", -intLen) + coeff
		intLen = 0
	}
	padded := strings.Repeat("0", leftPad) + coeff
	padded += strings.Repeat("0", (4-len(padded)%4)%4)
	groups := make([]int16, 0, len(padded)/4)
	for i := 0; i < len(padded); i += 4 {
		var g int16
		for _, c := range padded[i : i+4] {
			g = g*10 + int16(c-'0')
		}
		groups = append(groups, g)
	}
	weight := (intLen+leftPad)/4 - 1
	// Strip leading and trailing zero groups (PostgreSQL's canonical form).
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	sign := uint16(numericPos)
	if v.Negative && len(groups) > 0 {
		sign = numericNeg
	}
	if len(groups) == 0 {
		weight = 0
	}
	header(int16(len(groups)), int16(weight), sign, int16(dscale))
	for _, g := range groups {
		buf = binary.BigEndian.AppendUint16(buf, uint16(g))
	}
	return buf
}

func decodeNumericBinary(src []byte) (*apd.Decimal, error) {
	if len(src) < 8 {
		return nil, fmt.Errorf("numeric: %d bytes is too short", len(src))
	}
	ndigits := int(int16(binary.BigEndian.Uint16(src[0:])))
	weight := int(int16(binary.BigEndian.Uint16(src[2:])))
	sign := binary.BigEndian.Uint16(src[4:])
	dscale := int(int16(binary.BigEndian.Uint16(src[6:])))
	switch sign {
	case numericNaN:
		return &apd.Decimal{Form: apd.NaN}, nil
	case numericPInf:
		return &apd.Decimal{Form: apd.Infinite}, nil
	case numericNInf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	case numericPos, numericNeg:
	default:
		return nil, fmt.Errorf("numeric: invalid sign 0x%x", sign)
	}
	if ndigits < 0 || len(src) != 8+2*ndigits || dscale < 0 {
		return nil, fmt.Errorf("numeric: invalid length")
	}
	coeff := new(big.Int)
	base := big.NewInt(10000)
	for i := 0; i < ndigits; i++ {
		g := int64(binary.BigEndian.Uint16(src[8+2*i:]))
		if g >= 10000 {
			return nil, fmt.Errorf("numeric: invalid digit %d", g)
		}
		coeff.Mul(coeff, base)
		coeff.Add(coeff, big.NewInt(g))
	}
	// value = coeff * 10000^(weight - ndigits + 1)
	exp10 := 4 * (weight - ndigits + 1)
	d := new(apd.Decimal)
	d.Coeff.SetMathBigInt(coeff)
	d.Exponent = int32(exp10)
	d.Negative = sign == numericNeg
	// Rescale to dscale digits after the point, as numeric_recv does.
	if int32(-dscale) != d.Exponent {
		var out apd.Decimal
		ctx := apd.BaseContext.WithPrecision(1000)
		if _, err := ctx.Quantize(&out, d, int32(-dscale)); err != nil {
			return nil, fmt.Errorf("numeric: %v", err)
		}
		d = &out
	}
	return d, nil
}

// appendArrayBinary writes a one-dimensional array: ndim, hasnull, element
// OID, (size, lower bound), then each element as length + bytes.
func appendArrayBinary(buf []byte, elem types.Type, a types.Array) ([]byte, error) {
	hasNull := uint32(0)
	for _, v := range a.Values {
		if v == nil {
			hasNull = 1
		}
	}
	if len(a.Values) == 0 {
		buf = binary.BigEndian.AppendUint32(buf, 0)
		buf = binary.BigEndian.AppendUint32(buf, 0)
		return binary.BigEndian.AppendUint32(buf, elem.OID()), nil
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, elem.OID())
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(a.Values)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	for _, v := range a.Values {
		if v == nil {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
			continue
		}
		lenAt := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if buf, err = appendBinary(buf, elem, v); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
	}
	return buf, nil
}

// decodeBinary reads a binary parameter of type t. Integer parameters are
// read by their length (2, 4 or 8 bytes) and range-checked against t, so a
// client may send an int2 for an int8 parameter or vice versa.
func decodeBinary(t types.Type, src []byte) (types.Datum, error) {
	need := func(n int) error {
		if len(src) != n {
			return fmt.Errorf("incorrect binary data format: %d bytes for type %s", len(src), t.SQLName())
		}
		return nil
	}
	switch t.Kind {
	case types.KindBool:
		if err := need(1); err != nil {
			return nil, err
		}
		return src[0] != 0, nil
	case types.KindInt2, types.KindInt4, types.KindInt8:
		var n int64
		switch len(src) {
		case 2:
			n = int64(int16(binary.BigEndian.Uint16(src)))
		case 4:
			n = int64(int32(binary.BigEndian.Uint32(src)))
		case 8:
			n = int64(binary.BigEndian.Uint64(src))
		default:
			return nil, need(8)
		}
		return checkIntRange(t, n)
	case types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		if err := need(4); err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint32(src)), nil
	case types.KindFloat4, types.KindFloat8:
		switch len(src) {
		case 4:
			return float64(math.Float32frombits(binary.BigEndian.Uint32(src))), nil
		case 8:
			f := math.Float64frombits(binary.BigEndian.Uint64(src))
			if t.Kind == types.KindFloat4 {
				f = float64(float32(f))
			}
			return f, nil
		}
		return nil, need(8)
	case types.KindNumeric:
		return decodeNumericBinary(src)
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindJSON, types.KindUnknown:
		return string(src), nil
	case types.KindJSONB:
		if len(src) < 1 || src[0] != 1 {
			return nil, fmt.Errorf("unsupported jsonb version number")
		}
		return string(src[1:]), nil
	case types.KindBytea:
		// Never nil: a nil Datum is NULL, an empty bytea is not.
		out := make([]byte, len(src))
		copy(out, src)
		return out, nil
	case types.KindDate:
		if err := need(4); err != nil {
			return nil, err
		}
		return types.Date(int32(binary.BigEndian.Uint32(src))), nil
	case types.KindTime:
		if err := need(8); err != nil {
			return nil, err
		}
		return types.TimeOfDay(int64(binary.BigEndian.Uint64(src))), nil
	case types.KindTimestamp:
		if err := need(8); err != nil {
			return nil, err
		}
		return types.Timestamp(int64(binary.BigEndian.Uint64(src))), nil
	case types.KindTimestampTZ:
		if err := need(8); err != nil {
			return nil, err
		}
		return types.TimestampTZ(int64(binary.BigEndian.Uint64(src))), nil
	case types.KindInterval:
		if err := need(16); err != nil {
			return nil, err
		}
		return types.Interval{
			Micros: int64(binary.BigEndian.Uint64(src)),
			Days:   int32(binary.BigEndian.Uint32(src[8:])),
			Months: int32(binary.BigEndian.Uint32(src[12:])),
		}, nil
	case types.KindUUID:
		if err := need(16); err != nil {
			return nil, err
		}
		var u types.UUID
		copy(u[:], src)
		return u, nil
	case types.KindArray:
		if t.Elem == nil {
			return nil, fmt.Errorf("array of unknown element type")
		}
		return decodeArrayBinary(*t.Elem, src)
	}
	return nil, fmt.Errorf("no binary input for type %s", t.SQLName())
}

func decodeArrayBinary(elem types.Type, src []byte) (types.Datum, error) {
	bad := fmt.Errorf("invalid binary array")
	if len(src) < 12 {
		return nil, bad
	}
	ndim := binary.BigEndian.Uint32(src)
	elemOID := binary.BigEndian.Uint32(src[8:])
	out := types.Array{Elem: elem, Values: []types.Datum{}}
	if ndim == 0 {
		return out, nil
	}
	if ndim != 1 {
		return nil, fmt.Errorf("only one-dimensional arrays are supported")
	}
	if len(src) < 20 {
		return nil, bad
	}
	// The element type on the wire may be narrower than the declared one
	// (an int2[] for an int8[] parameter): decode by the declared kind,
	// which reads integers by length.
	if elemOID != elem.OID() {
		if sent, ok := types.FromOID(elemOID); !ok || !(sent.Kind.IsInteger() && elem.Kind.IsInteger()) &&
			!(sent.Kind.IsString() && elem.Kind.IsString()) {
			return nil, fmt.Errorf("wrong element type %d in binary array of %s", elemOID, elem.SQLName())
		}
	}
	n := int(binary.BigEndian.Uint32(src[12:]))
	pos := 20
	for i := 0; i < n; i++ {
		if pos+4 > len(src) {
			return nil, bad
		}
		l := int32(binary.BigEndian.Uint32(src[pos:]))
		pos += 4
		if l < 0 {
			out.Values = append(out.Values, nil)
			continue
		}
		if pos+int(l) > len(src) {
			return nil, bad
		}
		v, err := decodeBinary(elem, src[pos:pos+int(l)])
		if err != nil {
			return nil, err
		}
		out.Values = append(out.Values, v)
		pos += int(l)
	}
	if pos != len(src) {
		return nil, bad
	}
	return out, nil
}

// checkIntRange enforces int2/int4 ranges on a widened integer parameter
// (int8 is Go's int64).
func checkIntRange(t types.Type, n int64) (types.Datum, error) {
	switch t.Kind {
	case types.KindInt2:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return nil, fmt.Errorf("value %d is out of range for type smallint", n)
		}
	case types.KindInt4:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("value %d is out of range for type integer", n)
		}
	}
	return n, nil
}
