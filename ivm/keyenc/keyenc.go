// Package keyenc encodes typed SQL values as byte strings whose bytewise
// order (bytes.Compare) is PostgreSQL's ORDER BY order, and decodes them
// back; and encodes whole rows compactly (not order-preserving) for storing
// them as values.
//
// Key encoding (EncodeKey / DecodeKey): each column is a one-byte tag
// followed, for a non-NULL value, by the value's encoding:
//
//	tag 0x00  NULL, when the column sorts NULLS FIRST
//	tag 0x01  a value follows
//	tag 0x02  NULL, when the column sorts NULLS LAST
//
// A descending column stores the bitwise complement of the ascending value
// encoding (the tag is not complemented, so NULL placement is independent of
// the direction, as in SQL). Every value encoding is self-delimiting, so
// multi-column keys concatenate and a prefix of columns is a key prefix.
//
// Value encodings (ascending):
//
//	bool                 1 byte 0/1
//	int2/int4/int8, oid  2/4/8 bytes big-endian, sign bit flipped
//	float4/float8        8 bytes: -0 folded to 0, one NaN above +Infinity
//	numeric              form byte (-Inf, <0, 0, >0, +Inf, NaN); for nonzero
//	                     finite values a 4-byte adjusted exponent and base-100
//	                     digit pairs (each 1..100) ending in 0x00, all
//	                     complemented for negative numbers
//	text/varchar/name/json  bytes with 0x00 escaped as 00 FF, ending 00 01
//	jsonb                PostgreSQL's jsonb btree order (see jsonb.go)
//	char(n)              as text, trailing spaces removed
//	bytea                as text
//	date                 4 bytes; time, timestamp, timestamptz 8 bytes
//	interval             16 bytes: PostgreSQL's comparison span as whole
//	                     days (1 month = 30 days) and microseconds within day
//	uuid                 16 raw bytes
//	array                per element 01+value or 02 (NULL), ending 00
//
// Equal values (PostgreSQL equality) get identical keys, so a key can stand
// for a group: 1.0 and 1.00 share a key, and so do '1 mon' and '30 days'.
// Decoding therefore returns an equal value in canonical form (numeric
// without trailing fraction zeros, intervals as months/days/microseconds
// from the span, char(n) without padding); store the original row with
// EncodeRow when its exact text form matters.
package keyenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// Direction is one key column's sort order.
type Direction struct {
	// Descending reverses the order of values.
	Descending bool
	// NullsFirst places NULL before every value; otherwise after.
	NullsFirst bool
}

// Common directions. PostgreSQL's defaults are ASC NULLS LAST and DESC
// NULLS FIRST.
//
//lint:immutable constant values.
var (
	Asc  = Direction{}
	Desc = Direction{Descending: true, NullsFirst: true}
)

// Tags.
const (
	tagNullFirst byte = 0x00
	tagValue     byte = 0x01
	tagNullLast  byte = 0x02
)

// ErrCorrupt reports a key or row that is not a valid encoding.
var ErrCorrupt = errors.New("keyenc: corrupt encoding")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// EncodeKey appends the key of row's columns (all of them, in order) to dst.
// dirs may be nil (all ascending, NULLS LAST); otherwise len(dirs) ==
// len(ts).
func EncodeKey(dst []byte, ts []types.Type, row types.Row, dirs []Direction) []byte {
	for i, t := range ts {
		dir := Asc
		if dirs != nil {
			dir = dirs[i]
		}
		dst = EncodeColumn(dst, t, row[i], dir)
	}
	return dst
}

// EncodeColumn appends one column (tag and value) to dst.
func EncodeColumn(dst []byte, t types.Type, d types.Datum, dir Direction) []byte {
	if d == nil {
		if dir.NullsFirst {
			return append(dst, tagNullFirst)
		}
		return append(dst, tagNullLast)
	}
	dst = append(dst, tagValue)
	start := len(dst)
	dst = appendValue(dst, t, d)
	if dir.Descending {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

// DecodeKey decodes len(ts) columns from src into out (grown as needed) and
// returns the rest of src.
func DecodeKey(src []byte, ts []types.Type, dirs []Direction, out types.Row) (types.Row, []byte, error) {
	out = out[:0]
	for i, t := range ts {
		dir := Asc
		if dirs != nil {
			dir = dirs[i]
		}
		d, rest, err := DecodeColumn(src, t, dir)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, d)
		src = rest
	}
	return out, src, nil
}

// DecodeColumn decodes one column written by EncodeColumn.
func DecodeColumn(src []byte, t types.Type, dir Direction) (types.Datum, []byte, error) {
	if len(src) == 0 {
		return nil, nil, corrupt("missing column tag")
	}
	switch src[0] {
	case tagNullFirst, tagNullLast:
		return nil, src[1:], nil
	case tagValue:
	default:
		return nil, nil, corrupt("bad column tag %#x", src[0])
	}
	r := reader{buf: src[1:]}
	if dir.Descending {
		r.mask = 0xff
	}
	d := r.value(t)
	if r.err != nil {
		return nil, nil, r.err
	}
	return d, r.buf, nil
}

func appendUint16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }
func appendUint32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }
func appendUint64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

// appendEscaped writes b with 0x00 escaped and the 00 01 terminator.
func appendEscaped(dst []byte, b string) []byte {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == 0 {
			dst = append(dst, 0x00, 0xff)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, 0x00, 0x01)
}

func appendEscapedBytes(dst []byte, b []byte) []byte {
	for _, c := range b {
		if c == 0 {
			dst = append(dst, 0x00, 0xff)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, 0x00, 0x01)
}

// FloatKey maps a float to a uint64 whose unsigned order is PostgreSQL's
// float order (-0 = 0, NaN greatest).
func FloatKey(f float64) uint64 {
	if math.IsNaN(f) {
		return math.MaxUint64
	}
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b&(1<<63) != 0 {
		return ^b
	}
	return b | 1<<63
}

func floatFromKey(k uint64) float64 {
	if k == math.MaxUint64 {
		return math.NaN()
	}
	if k&(1<<63) != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// Numeric form bytes, in order.
const (
	numNegInf byte = 0x01
	numNeg    byte = 0x02
	numZero   byte = 0x03
	numPos    byte = 0x04
	numPosInf byte = 0x05
	numNaN    byte = 0x06
)

func appendValue(dst []byte, t types.Type, d types.Datum) []byte {
	switch t.Kind {
	case types.KindBool:
		if d.(bool) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case types.KindInt2:
		return appendUint16(dst, uint16(int16(d.(int64)))^0x8000)
	case types.KindInt4:
		return appendUint32(dst, uint32(int32(d.(int64)))^0x80000000)
	case types.KindInt8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return appendUint64(dst, uint64(d.(int64))^(1<<63))
	case types.KindFloat4, types.KindFloat8:
		return appendUint64(dst, FloatKey(d.(float64)))
	case types.KindNumeric:
		return appendNumeric(dst, d.(*apd.Decimal))
	case types.KindText, types.KindVarchar, types.KindName, types.KindUnknown, types.KindJSON:
		return appendEscaped(dst, d.(string))
	case types.KindJSONB:
		return appendJSONB(dst, d.(string))
	case types.KindChar:
		return appendEscaped(dst, types.TrimBpchar(d.(string)))
	case types.KindBytea:
		return appendEscapedBytes(dst, d.([]byte))
	case types.KindDate:
		return appendUint32(dst, uint32(int32(d.(types.Date)))^0x80000000)
	case types.KindTime:
		return appendUint64(dst, uint64(d.(types.TimeOfDay))^(1<<63))
	case types.KindTimestamp:
		return appendUint64(dst, uint64(d.(types.Timestamp))^(1<<63))
	case types.KindTimestampTZ:
		return appendUint64(dst, uint64(d.(types.TimestampTZ))^(1<<63))
	case types.KindInterval:
		s := d.(types.Interval).Span()
		dst = appendUint64(dst, uint64(s.Days)^(1<<63))
		return appendUint64(dst, uint64(s.Micros))
	case types.KindUUID:
		u := d.(types.UUID)
		return append(dst, u[:]...)
	case types.KindArray:
		a := d.(types.Array)
		elem := a.Elem
		if t.Elem != nil {
			elem = *t.Elem
		}
		for _, v := range a.Values {
			if v == nil {
				dst = append(dst, 0x02)
				continue
			}
			dst = append(dst, 0x01)
			dst = appendValue(dst, elem, v)
		}
		return append(dst, 0x00)
	}
	panic(fmt.Sprintf("keyenc: unsupported type %s", t))
}

// appendNumeric writes the order-preserving numeric encoding.
func appendNumeric(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, numNaN)
	case apd.Infinite:
		if d.Negative {
			return append(dst, numNegInf)
		}
		return append(dst, numPosInf)
	}
	if d.IsZero() {
		return append(dst, numZero)
	}
	// Digits of the coefficient without trailing zeros; value =
	// 0.d1d2...dn × 10^adjusted.
	var buf [40]byte
	var digits []byte
	if d.Coeff.IsInt64() {
		v := d.Coeff.Int64()
		if v < 0 {
			v = -v
		}
		digits = appendDecimalDigits(buf[:0], uint64(v))
	} else {
		var mag apd.BigInt
		mag.Abs(&d.Coeff)
		digits = []byte(mag.String())
	}
	exp := int64(d.Exponent)
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	adjusted := exp + int64(len(digits))
	neg := d.Negative
	if neg {
		dst = append(dst, numNeg)
	} else {
		dst = append(dst, numPos)
	}
	start := len(dst)
	dst = appendUint32(dst, uint32(int32(adjusted))^0x80000000)
	for i := 0; i < len(digits); i += 2 {
		hi := digits[i] - '0'
		lo := byte(0)
		if i+1 < len(digits) {
			lo = digits[i+1] - '0'
		}
		dst = append(dst, 1+hi*10+lo)
	}
	dst = append(dst, 0x00)
	if neg {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

func appendDecimalDigits(dst []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

// reader decodes value encodings, complementing bytes when mask is 0xff.
type reader struct {
	buf  []byte
	mask byte
	err  error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = corrupt(format, args...)
	}
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.buf) < n {
		r.fail("need %d bytes, have %d", n, len(r.buf))
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	if r.mask == 0 {
		return b
	}
	out := make([]byte, n)
	for i := range b {
		out[i] = b[i] ^ r.mask
	}
	return out
}

func (r *reader) byte1() byte {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// escaped reads an escaped string up to its 00 01 terminator.
func (r *reader) escaped() []byte {
	var out []byte
	for i := 0; ; i++ {
		if i >= len(r.buf) {
			r.fail("unterminated string")
			return nil
		}
		c := r.buf[i] ^ r.mask
		if c != 0 {
			out = append(out, c)
			continue
		}
		if i+1 >= len(r.buf) {
			r.fail("unterminated string escape")
			return nil
		}
		switch r.buf[i+1] ^ r.mask {
		case 0xff:
			out = append(out, 0)
			i++
		case 0x01:
			r.buf = r.buf[i+2:]
			if out == nil {
				out = []byte{}
			}
			return out
		default:
			r.fail("bad string escape")
			return nil
		}
	}
}

func (r *reader) value(t types.Type) types.Datum {
	switch t.Kind {
	case types.KindBool:
		switch r.byte1() {
		case 0:
			return false
		case 1:
			return true
		}
		r.fail("bad bool")
		return nil
	case types.KindInt2:
		return int64(int16(r.u16() ^ 0x8000))
	case types.KindInt4:
		return int64(int32(r.u32() ^ 0x80000000))
	case types.KindInt8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return int64(r.u64() ^ (1 << 63))
	case types.KindFloat4, types.KindFloat8:
		return floatFromKey(r.u64())
	case types.KindNumeric:
		return r.numeric()
	case types.KindText, types.KindVarchar, types.KindName, types.KindUnknown, types.KindJSON, types.KindChar:
		return string(r.escaped())
	case types.KindJSONB:
		return r.jsonb()
	case types.KindBytea:
		return r.escaped()
	case types.KindDate:
		return types.Date(int32(r.u32() ^ 0x80000000))
	case types.KindTime:
		return types.TimeOfDay(r.u64() ^ (1 << 63))
	case types.KindTimestamp:
		return types.Timestamp(r.u64() ^ (1 << 63))
	case types.KindTimestampTZ:
		return types.TimestampTZ(r.u64() ^ (1 << 63))
	case types.KindInterval:
		days := int64(r.u64() ^ (1 << 63))
		micros := int64(r.u64())
		return intervalFromSpan(days, micros)
	case types.KindUUID:
		var u types.UUID
		copy(u[:], r.bytes(16))
		return u
	case types.KindArray:
		elem := types.TUnknown
		if t.Elem != nil {
			elem = *t.Elem
		}
		a := types.Array{Elem: elem, Values: []types.Datum{}}
		for r.err == nil {
			switch r.byte1() {
			case 0x00:
				return a
			case 0x01:
				a.Values = append(a.Values, r.value(elem))
			case 0x02:
				a.Values = append(a.Values, nil)
			default:
				r.fail("bad array element tag")
			}
		}
		return nil
	}
	r.fail("unsupported type %s", t)
	return nil
}

// intervalFromSpan rebuilds a canonical interval equal to the span.
func intervalFromSpan(days, micros int64) types.Interval {
	months := days / types.DaysPerMonth
	rest := days - months*types.DaysPerMonth
	if months > math.MaxInt32 {
		rest += (months - math.MaxInt32) * types.DaysPerMonth
		months = math.MaxInt32
	} else if months < math.MinInt32 {
		rest += (months - math.MinInt32) * types.DaysPerMonth
		months = math.MinInt32
	}
	if rest > math.MaxInt32 || rest < math.MinInt32 {
		micros += rest * types.MicrosPerDay
		rest = 0
	}
	return types.Interval{Months: int32(months), Days: int32(rest), Micros: micros}
}

func (r *reader) numeric() types.Datum {
	switch form := r.byte1(); form {
	case numNaN:
		return &apd.Decimal{Form: apd.NaN}
	case numNegInf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}
	case numPosInf:
		return &apd.Decimal{Form: apd.Infinite}
	case numZero:
		return &apd.Decimal{}
	case numNeg, numPos:
		neg := form == numNeg
		mask := r.mask
		if neg {
			r.mask ^= 0xff
		}
		adjusted := int64(int32(r.u32() ^ 0x80000000))
		var digits []byte
		for r.err == nil {
			b := r.byte1()
			if b == 0 {
				break
			}
			if b > 100 {
				r.fail("bad numeric digit pair %d", b)
				break
			}
			v := b - 1
			digits = append(digits, '0'+v/10, '0'+v%10)
		}
		r.mask = mask
		if r.err != nil {
			return nil
		}
		for len(digits) > 1 && digits[len(digits)-1] == '0' {
			digits = digits[:len(digits)-1]
		}
		d := new(apd.Decimal)
		if _, ok := d.Coeff.SetString(string(digits), 10); !ok {
			r.fail("bad numeric digits")
			return nil
		}
		d.Exponent = int32(adjusted - int64(len(digits)))
		d.Negative = neg
		return types.NormalizeNumeric(d)
	}
	r.fail("bad numeric form")
	return nil
}
