package gateway

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// PostgreSQL's text I/O for the types the gateway must format and parse
// (RowDescription format 0, text parameters, COPY). The output matches
// PostgreSQL 15 with DateStyle=ISO and IntervalStyle=postgres; the oracle
// test compares it with a real server.

// pgEpoch is 2000-01-01 00:00:00 UTC, PostgreSQL's date/time epoch.
//
//lint:immutable a constant.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	microsPerSecond = int64(1_000_000)
	microsPerDay    = 86_400 * microsPerSecond
	// infinity sentinels as PostgreSQL stores them.
	timestampInfinity    = math.MaxInt64
	timestampNegInfinity = math.MinInt64
	dateInfinity         = math.MaxInt32
	dateNegInfinity      = math.MinInt32
)

// appendText appends d's text form to buf.
func appendText(buf []byte, t types.Type, d types.Datum, s *Settings) ([]byte, error) {
	switch t.Kind {
	case types.KindBool:
		v, ok := d.(bool)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		if v {
			return append(buf, 't'), nil
		}
		return append(buf, 'f'), nil
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOID, types.KindRegClass,
		types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		v, ok := d.(int64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return strconv.AppendInt(buf, v, 10), nil
	case types.KindFloat4, types.KindFloat8:
		v, ok := d.(float64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendFloat(buf, v, t.Kind == types.KindFloat4, s.ExtraFloatDigits()), nil
	case types.KindNumeric:
		v, ok := d.(*apd.Decimal)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendNumeric(buf, v), nil
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindJSON,
		types.KindJSONB, types.KindUnknown:
		v, ok := d.(string)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return append(buf, v...), nil
	case types.KindBytea:
		v, ok := d.([]byte)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		buf = append(buf, '\\', 'x')
		return hex.AppendEncode(buf, v), nil
	case types.KindDate:
		v, ok := d.(types.Date)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendDate(buf, v), nil
	case types.KindTime:
		v, ok := d.(types.TimeOfDay)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendClock(buf, int64(v)), nil
	case types.KindTimestamp:
		v, ok := d.(types.Timestamp)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendTimestamp(buf, int64(v), nil), nil
	case types.KindTimestampTZ:
		v, ok := d.(types.TimestampTZ)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendTimestamp(buf, int64(v), s.Location()), nil
	case types.KindInterval:
		v, ok := d.(types.Interval)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendInterval(buf, v), nil
	case types.KindUUID:
		v, ok := d.(types.UUID)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendUUID(buf, v), nil
	case types.KindArray:
		v, ok := d.(types.Array)
		if !ok || t.Elem == nil {
			return nil, datumTypeError(t, d)
		}
		return appendArrayText(buf, *t.Elem, v, s)
	}
	return nil, fmt.Errorf("no text output for type %s", t.SQLName())
}

func datumTypeError(t types.Type, d types.Datum) error {
	return fmt.Errorf("internal: datum of Go type %T for SQL type %s", d, t.SQLName())
}

// appendFloat formats like PostgreSQL's float8out/float4out: with
// extra_float_digits > 0 the shortest representation that round-trips, in
// %g style with the exponent threshold at the type's precision; otherwise
// %.{DIG+extra}g.
func appendFloat(buf []byte, v float64, isFloat4 bool, extraDigits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(buf, "NaN"...)
	case math.IsInf(v, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(v, -1):
		return append(buf, "-Infinity"...)
	}
	bits, digitsMax := 64, 15
	if isFloat4 {
		bits, digitsMax = 32, 6
	}
	if extraDigits <= 0 {
		prec := digitsMax + extraDigits
		if prec < 1 {
			prec = 1
		}
		return strconv.AppendFloat(buf, v, 'g', prec, bits)
	}
	// Shortest round-trip digits, then PostgreSQL's choice of notation:
	// exponential when the decimal exponent is < -4 or >= the type's
	// precision (15 for float8, 6 for float4).
	e := strconv.FormatFloat(v, 'e', -1, bits)
	mantissa, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= digitsMax {
		buf = append(buf, mantissa...)
		buf = append(buf, 'e')
		if exp < 0 {
			buf = append(buf, '-')
			exp = -exp
		} else {
			buf = append(buf, '+')
		}
		if exp < 10 {
			buf = append(buf, '0')
		}
		return strconv.AppendInt(buf, int64(exp), 10)
	}
	return strconv.AppendFloat(buf, v, 'f', -1, bits)
}

// appendNumeric formats a decimal in plain notation, keeping its scale
// (numeric(10,2) 1.50 stays "1.50").
func appendNumeric(buf []byte, v *apd.Decimal) []byte {
	switch v.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(buf, "NaN"...)
	case apd.Infinite:
		if v.Negative {
			return append(buf, "-Infinity"...)
		}
		return append(buf, "Infinity"...)
	}
	if v.Exponent > 0 {
		// 1E+2 → "100": PostgreSQL never prints exponents for numeric.
		var scaled apd.Decimal
		_, _ = apd.BaseContext.Quantize(&scaled, v, 0)
		return append(buf, scaled.Text('f')...)
	}
	return append(buf, v.Text('f')...)
}

// civil converts days since 2000-01-01 to a proleptic Gregorian date.
func civil(days int64) (year int64, month, day int) {
	// Howard Hinnant's civil_from_days, shifted from the 1970 epoch to 2000.
	z := days + 10957 + 719468 // days since 0000-03-01
	era := z / 146097
	if z < 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	year = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		month = int(mp + 3)
	} else {
		month = int(mp - 9)
	}
	if month <= 2 {
		year++
	}
	return year, month, day
}

// daysFromCivil is civil's inverse.
func daysFromCivil(year int64, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	if year < 0 {
		era = (year - 399) / 400
	}
	yoe := year - era*400
	m := int64(month)
	var mp int64
	if m > 2 {
		mp = m - 3
	} else {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468 - 10957
}

// appendYMD writes YYYY-MM-DD; years before 1 are written as PostgreSQL's
// "YYYY-MM-DD BC" by the caller.
func appendYMD(buf []byte, year int64, month, day int) ([]byte, bool) {
	bc := year <= 0
	if bc {
		year = 1 - year
	}
	if year < 1000 {
		buf = append(buf, fmt.Sprintf("%04d", year)...)
	} else {
		buf = strconv.AppendInt(buf, year, 10)
	}
	buf = append(buf, '-', byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10))
	return buf, bc
}

func appendDate(buf []byte, d types.Date) []byte {
	switch d {
	case dateInfinity:
		return append(buf, "infinity"...)
	case dateNegInfinity:
		return append(buf, "-infinity"...)
	}
	y, m, dd := civil(int64(d))
	buf, bc := appendYMD(buf, y, m, dd)
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendClock writes HH:MM:SS[.ffffff] for micros within a day (hours may
// exceed 24 for intervals).
func appendClock(buf []byte, micros int64) []byte {
	secs := micros / microsPerSecond
	frac := micros % microsPerSecond
	h, m, sec := secs/3600, (secs/60)%60, secs%60
	if h < 10 {
		buf = append(buf, '0')
	}
	buf = strconv.AppendInt(buf, h, 10)
	buf = append(buf, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	if frac != 0 {
		f := fmt.Sprintf("%06d", frac)
		buf = append(buf, '.')
		buf = append(buf, strings.TrimRight(f, "0")...)
	}
	return buf
}

// floorDiv divides rounding toward negative infinity.
func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// appendTimestamp writes a timestamp; with loc != nil it is a timestamptz
// shown in loc with its UTC offset.
func appendTimestamp(buf []byte, micros int64, loc *time.Location) []byte {
	switch micros {
	case timestampInfinity:
		return append(buf, "infinity"...)
	case timestampNegInfinity:
		return append(buf, "-infinity"...)
	}
	offset := 0
	if loc != nil {
		secs, _ := floorDiv(micros, microsPerSecond)
		_, offset = time.Unix(secs+pgEpoch.Unix(), 0).In(loc).Zone()
		micros += int64(offset) * microsPerSecond
	}
	days, inDay := floorDiv(micros, microsPerDay)
	y, m, d := civil(days)
	buf, bc := appendYMD(buf, y, m, d)
	buf = append(buf, ' ')
	buf = appendClock(buf, inDay)
	if loc != nil {
		buf = appendOffset(buf, offset)
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendOffset writes +HH, +HH:MM or +HH:MM:SS as PostgreSQL does.
func appendOffset(buf []byte, offset int) []byte {
	sign := byte('+')
	if offset < 0 {
		sign, offset = '-', -offset
	}
	h, m, s := offset/3600, (offset/60)%60, offset%60
	buf = append(buf, sign, byte('0'+h/10), byte('0'+h%10))
	if m != 0 || s != 0 {
		buf = append(buf, ':', byte('0'+m/10), byte('0'+m%10))
	}
	if s != 0 {
		buf = append(buf, ':', byte('0'+s/10), byte('0'+s%10))
	}
	return buf
}

// appendInterval writes IntervalStyle=postgres: "1 year 2 mons -3 days
// 04:05:06.7", "00:00:00" for zero.
func appendInterval(buf []byte, v types.Interval) []byte {
	years, months := v.Months/12, v.Months%12
	start := len(buf)
	unit := func(n int64, singular, plural string) {
		if n == 0 {
			return
		}
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		buf = strconv.AppendInt(buf, n, 10)
		buf = append(buf, ' ')
		if n == 1 {
			buf = append(buf, singular...)
		} else {
			buf = append(buf, plural...)
		}
	}
	unit(int64(years), "year", "years")
	unit(int64(months), "mon", "mons")
	unit(int64(v.Days), "day", "days")
	if v.Micros != 0 || len(buf) == start {
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		micros := v.Micros
		if micros < 0 {
			buf = append(buf, '-')
			micros = -micros
		} else if (v.Months < 0 || v.Days < 0) && micros > 0 {
			// PostgreSQL marks a positive time part after negative fields.
			buf = append(buf, '+')
		}
		buf = appendClock(buf, micros)
	}
	return buf
}

func appendUUID(buf []byte, u types.UUID) []byte {
	var dst [36]byte
	hex.Encode(dst[0:8], u[0:4])
	dst[8] = '-'
	hex.Encode(dst[9:13], u[4:6])
	dst[13] = '-'
	hex.Encode(dst[14:18], u[6:8])
	dst[18] = '-'
	hex.Encode(dst[19:23], u[8:10])
	dst[23] = '-'
	hex.Encode(dst[24:], u[10:16])
	return append(buf, dst[:]...)
}

// appendArrayText writes {a,b,NULL} with PostgreSQL's quoting.
func appendArrayText(buf []byte, elem types.Type, a types.Array, s *Settings) ([]byte, error) {
	buf = append(buf, '{')
	for i, v := range a.Values {
		if i > 0 {
			buf = append(buf, ',')
		}
		if v == nil {
			buf = append(buf, "NULL"...)
			continue
		}
		text, err := appendText(nil, elem, v, s)
		if err != nil {
			return nil, err
		}
		buf = appendArrayElement(buf, string(text))
	}
	return append(buf, '}'), nil
}

func appendArrayElement(buf []byte, text string) []byte {
	needQuote := text == "" || strings.EqualFold(text, "NULL")
	for i := 0; i < len(text) && !needQuote; i++ {
		switch text[i] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			needQuote = true
		}
	}
	if !needQuote {
		return append(buf, text...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(text); i++ {
		if text[i] == '"' || text[i] == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, text[i])
	}
	return append(buf, '"')
}

// parseText reads a value in PostgreSQL's text input syntax.
func parseText(t types.Type, text string, s *Settings) (types.Datum, error) {
	trimmed := strings.TrimSpace(text)
	switch t.Kind {
	case types.KindBool:
		switch strings.ToLower(trimmed) {
		case "t", "true", "yes", "y", "on", "1":
			return true, nil
		case "f", "false", "no", "n", "off", "0":
			return false, nil
		}
		return nil, fmt.Errorf("invalid input syntax for type boolean: %q", text)
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOID, types.KindRegClass,
		types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		n, err := strconv.ParseInt(trimmed, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return nil, fmt.Errorf("value %q is out of range for type %s", text, t.SQLName())
			}
			return nil, fmt.Errorf("invalid input syntax for type %s: %q", t.SQLName(), text)
		}
		return checkIntRange(t, n)
	case types.KindFloat4, types.KindFloat8:
		bits := 64
		if t.Kind == types.KindFloat4 {
			bits = 32
		}
		switch strings.ToLower(trimmed) {
		case "nan":
			return math.NaN(), nil
		case "infinity", "+infinity", "inf", "+inf":
			return math.Inf(1), nil
		case "-infinity", "-inf":
			return math.Inf(-1), nil
		}
		f, err := strconv.ParseFloat(trimmed, bits)
		if err != nil {
			return nil, fmt.Errorf("invalid input syntax for type %s: %q", t.SQLName(), text)
		}
		return f, nil
	case types.KindNumeric:
		switch strings.ToLower(trimmed) {
		case "nan":
			return &apd.Decimal{Form: apd.NaN}, nil
		case "infinity", "+infinity", "inf":
			return &apd.Decimal{Form: apd.Infinite}, nil
		case "-infinity", "-inf":
			return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
		}
		d, _, err := apd.NewFromString(trimmed)
		if err != nil || d.Form != apd.Finite {
			return nil, fmt.Errorf("invalid input syntax for type numeric: %q", text)
		}
		return d, nil
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindJSON,
		types.KindJSONB, types.KindUnknown:
		return text, nil
	case types.KindBytea:
		return parseByteaText(text)
	case types.KindDate:
		return parseDate(trimmed)
	case types.KindTime:
		micros, err := parseClock(trimmed)
		if err != nil {
			return nil, err
		}
		return types.TimeOfDay(micros), nil
	case types.KindTimestamp:
		micros, err := parseTimestamp(trimmed, nil)
		if err != nil {
			return nil, err
		}
		return types.Timestamp(micros), nil
	case types.KindTimestampTZ:
		micros, err := parseTimestamp(trimmed, s.Location())
		if err != nil {
			return nil, err
		}
		return types.TimestampTZ(micros), nil
	case types.KindInterval:
		return parseInterval(trimmed)
	case types.KindUUID:
		return parseUUID(trimmed)
	case types.KindArray:
		if t.Elem == nil {
			return nil, fmt.Errorf("array of unknown element type")
		}
		return parseArrayText(*t.Elem, trimmed, s)
	}
	return nil, fmt.Errorf("no text input for type %s", t.SQLName())
}

// checkIntRange enforces int2/int4 ranges (int8 is Go's int64).
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
	case types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		if n < math.MinInt32 || n > math.MaxUint32 {
			return nil, fmt.Errorf("value %d is out of range for type oid", n)
		}
		if n < 0 {
			n += 1 << 32
		}
	}
	return n, nil
}

func parseByteaText(text string) (types.Datum, error) {
	if strings.HasPrefix(text, "\\x") || strings.HasPrefix(text, "\\X") {
		out, err := hex.DecodeString(strings.Join(strings.Fields(text[2:]), ""))
		if err != nil {
			return nil, fmt.Errorf("invalid hexadecimal data in bytea: %q", text)
		}
		return out, nil
	}
	// Traditional escape format: \\ and \ooo.
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(text) && text[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+3 < len(text) {
			n, err := strconv.ParseUint(text[i+1:i+4], 8, 8)
			if err == nil {
				out = append(out, byte(n))
				i += 3
				continue
			}
		}
		return nil, fmt.Errorf("invalid input syntax for type bytea")
	}
	return out, nil
}

// splitDateSuffix removes a trailing " BC"/" AD".
func splitDateSuffix(s string) (string, bool) {
	upper := strings.ToUpper(s)
	if strings.HasSuffix(upper, " BC") {
		return strings.TrimSpace(s[:len(s)-3]), true
	}
	if strings.HasSuffix(upper, " AD") {
		return strings.TrimSpace(s[:len(s)-3]), false
	}
	return s, false
}

// parseYMD reads YYYY-MM-DD (ISO) or MM/DD/YYYY (DateStyle MDY).
func parseYMD(s string) (int64, error) {
	var y, m, d int
	var err error
	switch {
	case strings.Count(s, "-") == 2:
		parts := strings.Split(s, "-")
		if y, err = strconv.Atoi(parts[0]); err != nil {
			return 0, err
		}
		if m, err = strconv.Atoi(parts[1]); err != nil {
			return 0, err
		}
		if d, err = strconv.Atoi(parts[2]); err != nil {
			return 0, err
		}
	case strings.Count(s, "/") == 2:
		parts := strings.Split(s, "/")
		if m, err = strconv.Atoi(parts[0]); err != nil {
			return 0, err
		}
		if d, err = strconv.Atoi(parts[1]); err != nil {
			return 0, err
		}
		if y, err = strconv.Atoi(parts[2]); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("bad date")
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(int64(y), m) {
		return 0, fmt.Errorf("date/time field value out of range")
	}
	return daysFromCivil(int64(y), m, d), nil
}

func daysIn(year int64, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func parseDate(s string) (types.Datum, error) {
	switch strings.ToLower(s) {
	case "infinity", "+infinity":
		return types.Date(dateInfinity), nil
	case "-infinity":
		return types.Date(dateNegInfinity), nil
	case "epoch":
		return types.Date(-10957), nil
	}
	body, bc := splitDateSuffix(s)
	if bc {
		// Year N BC is astronomical year 1-N.
		y, rest, _ := strings.Cut(body, "-")
		n, err := strconv.Atoi(y)
		if err != nil {
			return nil, fmt.Errorf("invalid input syntax for type date: %q", s)
		}
		body = strconv.Itoa(1-n) + "-" + rest
	}
	days, err := parseYMD(body)
	if err != nil {
		return nil, fmt.Errorf("invalid input syntax for type date: %q", s)
	}
	return types.Date(days), nil
}

// parseClock reads HH:MM[:SS[.ffffff]] into micros.
func parseClock(s string) (int64, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("invalid input syntax for time: %q", s)
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || m > 59 || m < 0 || h < 0 {
		return 0, fmt.Errorf("invalid input syntax for time: %q", s)
	}
	micros := (h*3600 + m*60) * microsPerSecond
	if len(parts) == 3 {
		secText, fracText, _ := strings.Cut(parts[2], ".")
		sec, err := strconv.ParseInt(secText, 10, 64)
		if err != nil || sec > 60 || sec < 0 {
			return 0, fmt.Errorf("invalid input syntax for time: %q", s)
		}
		micros += sec * microsPerSecond
		if fracText != "" {
			frac, err := parseFraction(fracText)
			if err != nil {
				return 0, fmt.Errorf("invalid input syntax for time: %q", s)
			}
			micros += frac
		}
	}
	return micros, nil
}

// parseFraction reads the digits after a decimal point as microseconds,
// rounding half away from zero past six digits as PostgreSQL does.
func parseFraction(digits string) (int64, error) {
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad fraction")
		}
	}
	padded := digits + "000000"
	n, _ := strconv.ParseInt(padded[:6], 10, 64)
	if len(digits) > 6 && digits[6] >= '5' {
		n++
	}
	return n, nil
}

// parseTimestamp reads "YYYY-MM-DD[ T]HH:MM[:SS[.f]][zone][ BC]". With loc
// set (timestamptz) a missing zone means the session zone, and the result is
// UTC micros; without loc any zone is ignored, as PostgreSQL does for
// timestamp without time zone.
func parseTimestamp(s string, loc *time.Location) (int64, error) {
	switch strings.ToLower(s) {
	case "infinity", "+infinity":
		return timestampInfinity, nil
	case "-infinity":
		return timestampNegInfinity, nil
	case "epoch":
		return -10957 * microsPerDay, nil
	}
	bad := fmt.Errorf("invalid input syntax for type timestamp: %q", s)
	body, bc := splitDateSuffix(s)
	datePart, rest, found := strings.Cut(body, " ")
	if !found {
		datePart, rest, _ = strings.Cut(body, "T")
	}
	if bc {
		y, tail, _ := strings.Cut(datePart, "-")
		n, err := strconv.Atoi(y)
		if err != nil {
			return 0, bad
		}
		datePart = strconv.Itoa(1-n) + "-" + tail
	}
	days, err := parseYMD(datePart)
	if err != nil {
		return 0, bad
	}
	rest = strings.TrimSpace(rest)
	clock, zone := rest, ""
	if i := strings.IndexAny(rest, "+-Zz "); i >= 0 {
		clock, zone = rest[:i], strings.TrimSpace(rest[i:])
	}
	var micros int64
	if clock != "" {
		if micros, err = parseClock(clock); err != nil {
			return 0, bad
		}
	}
	local := days*microsPerDay + micros
	if loc == nil {
		return local, nil
	}
	if zone != "" {
		if strings.EqualFold(zone, "z") || strings.EqualFold(zone, "utc") {
			return local, nil
		}
		if offset, ok := parseZoneOffset(zone); ok {
			return local - int64(offset)*microsPerSecond, nil
		}
		zl, err := time.LoadLocation(zone)
		if err != nil {
			return 0, bad
		}
		loc = zl
	}
	// Resolve the local wall time in loc: Go's time.Date picks the offset in
	// force at that wall time, as PostgreSQL does (DST gaps move forward).
	secs, frac := floorDiv(local, microsPerSecond)
	wall := time.Unix(secs+pgEpoch.Unix(), 0).UTC()
	inZone := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc)
	return (inZone.Unix()-pgEpoch.Unix())*microsPerSecond + frac, nil
}

// parseInterval reads the postgres style ("1 year 2 mons 3 days 04:05:06",
// "-1 days +02:00:00", "1 day ago") and ISO 8601 durations' common forms are
// left to the engine's cast.
func parseInterval(s string) (types.Datum, error) {
	bad := fmt.Errorf("invalid input syntax for type interval: %q", s)
	fields := strings.Fields(strings.ToLower(s))
	var out types.Interval
	ago := false
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "ago" {
			ago = true
			continue
		}
		if strings.Contains(f, ":") {
			neg := strings.HasPrefix(f, "-")
			micros, err := parseClock(strings.TrimLeft(f, "+-"))
			if err != nil {
				return nil, bad
			}
			if neg {
				micros = -micros
			}
			out.Micros += micros
			continue
		}
		num, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, bad
		}
		unit := "second"
		if i+1 < len(fields) {
			unit = strings.TrimSuffix(fields[i+1], "s")
			i++
		}
		switch unit {
		case "microsecond", "usec", "us":
			out.Micros += int64(num)
		case "millisecond", "msec", "ms":
			out.Micros += int64(num * 1000)
		case "second", "sec", "secs":
			out.Micros += int64(math.Round(num * 1e6))
		case "minute", "min", "mins":
			out.Micros += int64(math.Round(num * 60e6))
		case "hour", "hr", "h":
			out.Micros += int64(math.Round(num * 3600e6))
		case "day", "d":
			out.Days += int32(num)
		case "week", "w":
			out.Days += int32(num * 7)
		case "mon", "month", "mons":
			out.Months += int32(num)
		case "year", "yr", "y":
			out.Months += int32(num * 12)
		default:
			return nil, bad
		}
	}
	if len(fields) == 0 {
		return nil, bad
	}
	if ago {
		out = types.Interval{Months: -out.Months, Days: -out.Days, Micros: -out.Micros}
	}
	return out, nil
}

func parseUUID(s string) (types.Datum, error) {
	clean := strings.ReplaceAll(strings.Trim(s, "{}"), "-", "")
	if len(clean) != 32 {
		return nil, fmt.Errorf("invalid input syntax for type uuid: %q", s)
	}
	var u types.UUID
	if _, err := hex.Decode(u[:], []byte(clean)); err != nil {
		return nil, fmt.Errorf("invalid input syntax for type uuid: %q", s)
	}
	return u, nil
}

// parseArrayText reads a one-dimensional array literal {a,"b c",NULL}.
func parseArrayText(elem types.Type, s string, settings *Settings) (types.Datum, error) {
	bad := fmt.Errorf("malformed array literal: %q", s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, bad
	}
	body := s[1 : len(s)-1]
	out := types.Array{Elem: elem, Values: []types.Datum{}}
	if strings.TrimSpace(body) == "" {
		return out, nil
	}
	i := 0
	for {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var text strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				text.WriteByte(body[i])
				i++
			}
			if i >= len(body) {
				return nil, bad
			}
			i++
		} else {
			for i < len(body) && body[i] != ',' {
				if body[i] == '{' || body[i] == '}' || body[i] == '"' {
					return nil, bad
				}
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				text.WriteByte(body[i])
				i++
			}
		}
		raw := text.String()
		if !quoted {
			raw = strings.TrimSpace(raw)
		}
		if !quoted && strings.EqualFold(raw, "NULL") {
			out.Values = append(out.Values, nil)
		} else {
			v, err := parseText(elem, raw, settings)
			if err != nil {
				return nil, err
			}
			out.Values = append(out.Values, v)
		}
		for i < len(body) && body[i] == ' ' {
			i++
		}
		if i >= len(body) {
			return out, nil
		}
		if body[i] != ',' {
			return nil, bad
		}
		i++
	}
}
