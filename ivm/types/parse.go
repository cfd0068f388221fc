package types

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/errcode"
)

// PostgreSQL SQLSTATEs raised by input functions and casts.
const (
	StateInvalidTextRepresentation = "22P02"
	StateNumericValueOutOfRange    = "22003"
	StateDatetimeFieldOverflow     = "22008"
	StateInvalidDatetimeFormat     = "22007"
	StateStringDataRightTruncation = "22001"
	StateIntervalFieldOverflow     = "22015"
	StateInvalidTimeZoneDisp       = "22009"
	StateInvalidParameterValue     = "22023"
	StateFeatureNotSupported       = "0A000"
)

// InputError makes a text-input error with a PostgreSQL SQLSTATE.
func InputError(state, format string, args ...any) *errcode.Error {
	return errcode.New(errcode.InvalidTextInput, format, args...).WithSQLState(state)
}

func errSyntax(typeName, s string) *errcode.Error {
	return InputError(StateInvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", typeName, s)
}

// Parse reads PostgreSQL's text form of a value of type t (the type's input
// function, typmod applied as an assignment would: varchar(n) overflow is an
// error, numeric(p,s) rounds). loc is the zone for timestamptz input without
// an explicit offset (nil means UTC). Errors are *errcode.Error with
// PostgreSQL's SQLSTATE (22P02, 22003, 22007, 22008, 22001).
func Parse(t Type, s string, loc *time.Location) (Datum, error) {
	return ParseStyle(t, s, InputStyle{Loc: loc})
}

// ParseStyle is Parse under the session settings of in: its zone, the
// DateStyle field order of dates and timestamps, and IntervalStyle.
func ParseStyle(t Type, s string, in InputStyle) (Datum, error) {
	loc := in.Loc
	if loc == nil {
		loc = time.UTC
	}
	switch t.Kind {
	case KindBool:
		return ParseBool(s)
	case KindInt2:
		return ParseInt(s, 16, "smallint")
	case KindInt4:
		return ParseInt(s, 32, "integer")
	case KindInt8:
		return ParseInt(s, 64, "bigint")
	case KindOID, KindRegClass, KindRegType, KindRegProc, KindRegNamespace:
		return parseOID(s)
	case KindFloat4:
		return ParseFloat(s, 32)
	case KindFloat8:
		return ParseFloat(s, 64)
	case KindNumeric:
		d, err := ParseNumeric(s)
		if err != nil {
			return nil, err
		}
		return ApplyNumericTypmod(d, t.Typmod)
	case KindText, KindUnknown:
		return s, nil
	case KindJSON:
		return ParseJSON(s)
	case KindJSONB:
		return ParseJSONB(s)
	case KindVarchar, KindChar:
		return ApplyStringTypmod(t, s, false)
	case KindName:
		return truncateBytes(s, 63), nil
	case KindBytea:
		return ParseBytea(s)
	case KindUUID:
		return ParseUUID(s)
	case KindDate:
		return ParseDateOrder(s, in.DateOrder)
	case KindTime:
		v, err := parseTime(s, in.DateOrder)
		if err != nil {
			return nil, err
		}
		return TimeOfDay(roundMicrosTypmod(int64(v), t.Typmod)), nil
	case KindTimestamp:
		v, err := ParseTimestampOrder(s, in.DateOrder)
		if err != nil {
			return nil, err
		}
		return ApplyTimestampTypmod(t, v)
	case KindTimestampTZ:
		v, err := ParseTimestampTZOrder(s, loc, in.DateOrder)
		if err != nil {
			return nil, err
		}
		return ApplyTimestampTypmod(t, v)
	case KindInterval:
		if t.Typmod >= 0 {
			return parseIntervalTypmodStyle(s, t.Typmod, in.IntervalStyle)
		}
		return ParseIntervalStyle(s, in.IntervalStyle)
	case KindArray:
		if t.Elem == nil {
			return nil, InputError(StateInvalidTextRepresentation, "cannot parse an array of unknown element type")
		}
		return parseArrayStyle(*t.Elem, s, InputStyle{Loc: loc, DateOrder: in.DateOrder, IntervalStyle: in.IntervalStyle})
	}
	return nil, InputError(StateFeatureNotSupported, "input of type %s is not supported", t)
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// ParseBool reads boolean input: t/true/y/yes/on/1 and f/false/n/no/off/0
// (case-insensitive, unique prefixes, surrounding spaces ignored).
func ParseBool(s string) (Datum, error) {
	v := strings.ToLower(trimSpace(s))
	if v != "" {
		switch v[0] {
		case 't':
			if strings.HasPrefix("true", v) {
				return true, nil
			}
		case 'f':
			if strings.HasPrefix("false", v) {
				return false, nil
			}
		case 'y':
			if strings.HasPrefix("yes", v) {
				return true, nil
			}
		case 'n':
			if strings.HasPrefix("no", v) {
				return false, nil
			}
		case 'o':
			if len(v) >= 2 && strings.HasPrefix("on", v) {
				return true, nil
			}
			if len(v) >= 2 && strings.HasPrefix("off", v) {
				return false, nil
			}
		case '1':
			if v == "1" {
				return true, nil
			}
		case '0':
			if v == "0" {
				return false, nil
			}
		}
	}
	return nil, errSyntax("boolean", s)
}

// ParseInt reads an integer of the given width, allowing surrounding
// whitespace and a sign (PostgreSQL 15 accepts neither underscores nor
// non-decimal bases).
func ParseInt(s string, bits int, typeName string) (Datum, error) {
	n, err := ParseInt64(s, bits, typeName)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// ParseInt64 is ParseInt returning the value unboxed.
func ParseInt64(s string, bits int, typeName string) (int64, error) {
	v := trimSpace(s)
	i := 0
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	if i == len(v) {
		return 0, errSyntax(typeName, s)
	}
	var acc uint64
	overflow := false
	for ; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, errSyntax(typeName, s)
		}
		if acc > (math.MaxUint64-9)/10 {
			overflow = true
			continue
		}
		acc = acc*10 + uint64(c-'0')
	}
	limit := uint64(1) << (bits - 1) // magnitude of the minimum
	if overflow || (neg && acc > limit) || (!neg && acc >= limit) {
		return 0, InputError(StateNumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, typeName)
	}
	if neg {
		return -int64(acc), nil
	}
	return int64(acc), nil
}

func parseOID(s string) (Datum, error) {
	v, err := ParseInt(s, 64, "oid")
	if err != nil {
		return nil, errSyntax("oid", s)
	}
	n := v.(int64)
	if n < math.MinInt32 || n > math.MaxUint32 {
		return nil, InputError(StateNumericValueOutOfRange, "value \"%s\" is out of range for type oid", s)
	}
	return int64(uint32(n)), nil
}

// ParseFloat reads a float8 (bits 64) or float4 (bits 32): decimal or
// hexadecimal notation, Infinity/inf/NaN in any case, surrounding spaces.
// Overflow and underflow to zero are 22003 errors, as in PostgreSQL.
func ParseFloat(s string, bits int) (Datum, error) {
	typeName := "double precision"
	if bits == 32 {
		typeName = "real"
	}
	v := trimSpace(s)
	if v == "" || strings.ContainsRune(v, '_') {
		return nil, errSyntax(typeName, s)
	}
	if len(v) == 4 && (v[0] == '+' || v[0] == '-') && strings.EqualFold(v[1:], "nan") {
		v = v[1:] // strtod accepts a signed NaN
	}
	f, err := strconv.ParseFloat(v, bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, InputError(StateNumericValueOutOfRange, "\"%s\" is out of range for type %s", v, typeName)
		}
		return nil, errSyntax(typeName, s)
	}
	if f == 0 && hasNonzeroMantissa(v) {
		return nil, InputError(StateNumericValueOutOfRange, "\"%s\" is out of range for type %s", v, typeName)
	}
	return f, nil
}

// hasNonzeroMantissa reports whether a decimal float literal has a nonzero
// digit before its exponent (so a zero result means underflow).
func hasNonzeroMantissa(v string) bool {
	lower := strings.ToLower(v)
	if strings.HasPrefix(strings.TrimLeft(lower, "+-"), "0x") {
		mant := strings.TrimLeft(lower, "+-")[2:]
		if i := strings.IndexByte(mant, 'p'); i >= 0 {
			mant = mant[:i]
		}
		return strings.ContainsAny(mant, "123456789abcdef")
	}
	if i := strings.IndexByte(lower, 'e'); i >= 0 {
		lower = lower[:i]
	}
	return strings.ContainsAny(lower, "123456789")
}

// ParseNumeric reads numeric input: [sign] digits [. digits] [e [sign]
// digits], NaN, [sign]Infinity/inf. The scale written is kept (1.50 has
// scale 2); a positive exponent is folded into the coefficient.
func ParseNumeric(s string) (*apd.Decimal, error) {
	v := trimSpace(s)
	if v == "" {
		return nil, errSyntax("numeric", s)
	}
	lower := strings.ToLower(v)
	switch lower {
	case "nan":
		return &apd.Decimal{Form: apd.NaN}, nil
	case "infinity", "+infinity", "inf", "+inf":
		return &apd.Decimal{Form: apd.Infinite}, nil
	case "-infinity", "-inf":
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	}
	i := 0
	neg := false
	if v[i] == '+' || v[i] == '-' {
		neg = v[i] == '-'
		i++
	}
	var digits strings.Builder
	sawDigit, sawPoint := false, false
	frac := 0
	for ; i < len(v); i++ {
		c := v[i]
		if c >= '0' && c <= '9' {
			digits.WriteByte(c)
			sawDigit = true
			if sawPoint {
				frac++
			}
			continue
		}
		if c == '.' && !sawPoint {
			sawPoint = true
			continue
		}
		break
	}
	if !sawDigit {
		return nil, errSyntax("numeric", s)
	}
	exp := int64(0)
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			eneg = v[i] == '-'
			i++
		}
		start := i
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			if exp > 1_000_000_000 {
				continue
			}
			exp = exp*10 + int64(v[i]-'0')
		}
		if i == start {
			return nil, errSyntax("numeric", s)
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(v) {
		return nil, errSyntax("numeric", s)
	}
	d := new(apd.Decimal)
	if _, ok := d.Coeff.SetString(digits.String(), 10); !ok {
		return nil, errSyntax("numeric", s)
	}
	d.Negative = neg && d.Coeff.Sign() != 0
	e := exp - int64(frac)
	if int64(digits.Len())+e > 131072 || -e > 16383 {
		return nil, InputError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	d.Exponent = int32(e)
	return NormalizeNumeric(d), nil
}

// NormalizeNumeric folds a positive exponent into the coefficient so that
// every stored numeric has Exponent <= 0 (its scale is -Exponent, as
// PostgreSQL's dscale). It modifies and returns d.
func NormalizeNumeric(d *apd.Decimal) *apd.Decimal {
	if d.Form != apd.Finite || d.Exponent <= 0 {
		if d.Form == apd.Finite && d.IsZero() {
			d.Negative = false
		}
		return d
	}
	var scale apd.BigInt
	scale.Exp(apd.NewBigInt(10), apd.NewBigInt(int64(d.Exponent)), nil)
	d.Coeff.Mul(&d.Coeff, &scale)
	d.Exponent = 0
	if d.IsZero() {
		d.Negative = false
	}
	return d
}

// NumericContext is the apd context for exact numeric work: precision far
// above anything PostgreSQL accepts, rounding half away from zero as
// PostgreSQL's round_var does.
//
//lint:immutable only read; apd contexts are values copied by callers.
var NumericContext = apd.Context{
	Precision:   200000,
	MaxExponent: 200000,
	MinExponent: -200000,
	Traps:       apd.DefaultTraps,
	Rounding:    apd.RoundHalfUp,
}

// NumericTypmod splits a numeric typmod into precision and scale; ok is
// false for "no modifier".
func NumericTypmod(typmod int32) (precision, scale int, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	tm := typmod - 4
	precision = int((tm >> 16) & 0xffff)
	scale = int(((tm & 0x7ff) ^ 1024) - 1024)
	return precision, scale, true
}

// MakeNumericTypmod encodes numeric(p,s).
func MakeNumericTypmod(precision, scale int) int32 {
	return int32(((precision << 16) | (scale & 0x7ff)) + 4)
}

// ApplyNumericTypmod rounds d to the scale of numeric(p,s) and checks it fits
// (PostgreSQL's apply_typmod): 22003 "numeric field overflow" otherwise.
func ApplyNumericTypmod(d *apd.Decimal, typmod int32) (*apd.Decimal, error) {
	precision, scale, ok := NumericTypmod(typmod)
	if !ok {
		return d, nil
	}
	if d.Form == apd.NaN || d.Form == apd.NaNSignaling {
		return d, nil
	}
	if d.Form == apd.Infinite {
		return nil, InputError(StateNumericValueOutOfRange, "numeric field overflow").
			WithDetail("A field with precision %d, scale %d cannot hold an infinite value.", precision, scale)
	}
	out := new(apd.Decimal)
	ctx := NumericContext
	if _, err := ctx.Quantize(out, d, int32(-scale)); err != nil {
		return nil, InputError(StateNumericValueOutOfRange, "numeric field overflow")
	}
	NormalizeNumeric(out)
	maxDigits := precision - scale
	// The number of digits before the decimal point must be <= maxDigits.
	if !out.IsZero() {
		intDigits := int(out.NumDigits()) + int(out.Exponent)
		if intDigits > maxDigits {
			detail := fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", precision, scale, maxDigits)
			if maxDigits == 0 {
				detail = fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than 1.", precision, scale)
			}
			e := InputError(StateNumericValueOutOfRange, "numeric field overflow")
			e.Detail = detail
			return nil, e
		}
	}
	return out, nil
}

// ApplyStringTypmod enforces varchar(n)/char(n) on s. On assignment
// (explicit false) a value longer than n is an error (22001) unless the
// excess is all spaces; an explicit cast truncates. char(n) pads with
// spaces to n characters.
func ApplyStringTypmod(t Type, s string, explicit bool) (Datum, error) {
	if t.Typmod < 4 {
		if t.Kind == KindChar {
			return strings.TrimRight(s, " "), nil // bpchar without length: keep as is minus nothing
		}
		return s, nil
	}
	n := int(t.Typmod - 4)
	length := utf8.RuneCountInString(s)
	if length > n {
		cut := runePrefix(s, n)
		if !explicit && strings.Trim(s[len(cut):], " ") != "" {
			name := "character varying"
			if t.Kind == KindChar {
				name = "character"
			}
			return nil, InputError(StateStringDataRightTruncation, "value too long for type %s(%d)", name, n)
		}
		s = cut
		length = n
	}
	if t.Kind == KindChar && length < n {
		s += strings.Repeat(" ", n-length)
	}
	return s, nil
}

func runePrefix(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// ParseBytea reads hex ("\x0a1b") or escape format ("a\\b\001").
func ParseBytea(s string) (Datum, error) {
	if len(s) >= 2 && s[0] == '\\' && (s[1] == 'x' || s[1] == 'X') {
		out := make([]byte, 0, (len(s)-2)/2)
		for i := 2; i < len(s); {
			c := s[i]
			if isSpace(c) {
				i++
				continue
			}
			hi, ok := unhex(c)
			if !ok {
				return nil, InputError(StateInvalidParameterValue, "invalid hexadecimal digit: \"%c\"", c)
			}
			if i+1 >= len(s) {
				return nil, InputError(StateInvalidParameterValue, "invalid hexadecimal data: odd number of digits")
			}
			lo, ok := unhex(s[i+1])
			if !ok {
				return nil, InputError(StateInvalidParameterValue, "invalid hexadecimal digit: \"%c\"", s[i+1])
			}
			out = append(out, hi<<4|lo)
			i += 2
		}
		return out, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i += 2
			continue
		}
		if i+3 < len(s) && isOctal(s[i+1]) && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
			continue
		}
		return nil, errSyntax("bytea", s)
	}
	return out, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ParseUUID reads a UUID: 32 hex digits, optionally in braces, with a hyphen
// allowed after any group of four digits (PostgreSQL's string_to_uuid).
func ParseUUID(s string) (Datum, error) {
	var u UUID
	src := s
	braces := false
	if strings.HasPrefix(src, "{") {
		src = src[1:]
		braces = true
	}
	for i := 0; i < 16; i++ {
		if len(src) < 2 {
			return nil, errSyntax("uuid", s)
		}
		if _, err := hex.Decode(u[i:i+1], []byte(src[:2])); err != nil {
			return nil, errSyntax("uuid", s)
		}
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < 15 {
			src = src[1:]
		}
	}
	if braces {
		if !strings.HasPrefix(src, "}") {
			return nil, errSyntax("uuid", s)
		}
		src = src[1:]
	}
	if src != "" {
		return nil, errSyntax("uuid", s)
	}
	return u, nil
}

// ParseArray reads a one-dimensional array literal ("{1,2,NULL}",
// "{\"a b\",c}").
func ParseArray(elem Type, s string, loc *time.Location) (Datum, error) {
	return parseArrayStyle(elem, s, InputStyle{Loc: loc})
}

func parseArrayStyle(elem Type, s string, in InputStyle) (Datum, error) {
	malformed := func() error {
		return InputError(StateInvalidTextRepresentation, "malformed array literal: \"%s\"", s)
	}
	v := trimSpace(s)
	if len(v) < 2 || v[0] != '{' || v[len(v)-1] != '}' {
		return nil, malformed()
	}
	body := v[1 : len(v)-1]
	out := Array{Elem: elem, Values: []Datum{}}
	if trimSpace(body) == "" {
		return out, nil
	}
	i := 0
	for {
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		var text strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			closed := false
			for i < len(body) {
				c := body[i]
				if c == '\\' && i+1 < len(body) {
					text.WriteByte(body[i+1])
					i += 2
					continue
				}
				if c == '"' {
					closed = true
					i++
					break
				}
				text.WriteByte(c)
				i++
			}
			if !closed {
				return nil, malformed()
			}
			for i < len(body) && isSpace(body[i]) {
				i++
			}
		} else {
			start := i
			for i < len(body) && body[i] != ',' {
				c := body[i]
				if c == '{' || c == '}' || c == '"' {
					return nil, malformed()
				}
				if c == '\\' && i+1 < len(body) {
					text.WriteByte(body[i+1])
					i += 2
					continue
				}
				text.WriteByte(c)
				i++
			}
			if start == i {
				return nil, malformed()
			}
		}
		elemText := text.String()
		if !quoted {
			elemText = trimSpace(elemText)
		}
		if !quoted && strings.EqualFold(elemText, "NULL") {
			out.Values = append(out.Values, nil)
		} else {
			d, err := ParseStyle(elem, elemText, in)
			if err != nil {
				return nil, err
			}
			out.Values = append(out.Values, d)
		}
		if i >= len(body) {
			break
		}
		if body[i] != ',' {
			return nil, malformed()
		}
		i++
	}
	return out, nil
}
