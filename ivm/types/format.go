package types

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// Format renders a non-NULL datum as PostgreSQL 15's text output does with
// DateStyle=ISO, MDY, IntervalStyle=postgres, extra_float_digits=1, printing
// timestamptz values in UTC. NULL renders as "" (callers that need to tell
// NULL apart check for nil first).
func Format(t Type, d Datum) string { return FormatTZ(t, d, time.UTC) }

// FormatTZ is Format with timestamptz values printed in loc (the session's
// TimeZone).
func FormatTZ(t Type, d Datum, loc *time.Location) string {
	if d == nil {
		return ""
	}
	return string(AppendFormat(nil, t, d, loc))
}

// AppendFormat appends the text form of d to dst (see Format).
func AppendFormat(dst []byte, t Type, d Datum, loc *time.Location) []byte {
	return AppendFormatStyle(dst, t, d, OutputStyle{Loc: loc, ExtraFloatDigits: 1})
}

// OutputStyle is what a value's text form depends on besides the value:
// the session's TimeZone (timestamptz), extra_float_digits (floats:
// above 0, PostgreSQL 12+'s default, the shortest form that reads back
// exactly; 0 and below, 15 + n significant digits for double precision
// and 6 + n for real), DateStyle (date, timestamp, timestamptz) and
// IntervalStyle. The zero values of the last three are PostgreSQL's
// defaults (ISO, MDY and postgres).
type OutputStyle struct {
	Loc              *time.Location
	ExtraFloatDigits int
	DateStyle        DateStyle
	DateOrder        DateOrder
	IntervalStyle    IntervalStyle
}

// FormatStyle is Format with the session settings of st.
func FormatStyle(t Type, d Datum, st OutputStyle) string {
	if d == nil {
		return ""
	}
	return string(AppendFormatStyle(nil, t, d, st))
}

// AppendFloatDigits appends f as float8out (bitSize 64) or float4out (32)
// print it under extra_float_digits = extra.
func AppendFloatDigits(dst []byte, f float64, bitSize, extra int) []byte {
	if extra > 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return AppendFloat(dst, f, bitSize)
	}
	prec := 15 + extra
	if bitSize == 32 {
		prec = 6 + extra
	}
	return strconv.AppendFloat(dst, f, 'g', max(prec, 1), bitSize)
}

// AppendFormatStyle appends the text form of d to dst under st.
func AppendFormatStyle(dst []byte, t Type, d Datum, st OutputStyle) []byte {
	loc := st.Loc
	if d == nil {
		return dst
	}
	switch t.Kind {
	case KindBool:
		if d.(bool) {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case KindInt2, KindInt4, KindInt8, KindOID, KindRegClass, KindRegType, KindRegProc, KindRegNamespace:
		return strconv.AppendInt(dst, d.(int64), 10)
	case KindFloat4:
		return AppendFloatDigits(dst, d.(float64), 32, st.ExtraFloatDigits)
	case KindFloat8:
		return AppendFloatDigits(dst, d.(float64), 64, st.ExtraFloatDigits)
	case KindNumeric:
		return AppendNumeric(dst, d.(*apd.Decimal))
	case KindText, KindVarchar, KindChar, KindName, KindUnknown, KindJSON, KindJSONB:
		return append(dst, d.(string)...)
	case KindBytea:
		b := d.([]byte)
		dst = append(dst, '\\', 'x')
		return hex.AppendEncode(dst, b)
	case KindDate:
		return AppendDateStyle(dst, d.(Date), st.DateStyle, st.DateOrder)
	case KindTime:
		return appendTimeOfDay(dst, int64(d.(TimeOfDay)))
	case KindTimestamp:
		return AppendTimestampStyle(dst, int64(d.(Timestamp)), st.DateStyle, st.DateOrder)
	case KindTimestampTZ:
		return AppendTimestampTZStyle(dst, d.(TimestampTZ), loc, st.DateStyle, st.DateOrder)
	case KindInterval:
		return AppendIntervalStyle(dst, d.(Interval), st.IntervalStyle)
	case KindUUID:
		u := d.(UUID)
		var buf [36]byte
		hex.Encode(buf[0:8], u[0:4])
		buf[8] = '-'
		hex.Encode(buf[9:13], u[4:6])
		buf[13] = '-'
		hex.Encode(buf[14:18], u[6:8])
		buf[18] = '-'
		hex.Encode(buf[19:23], u[8:10])
		buf[23] = '-'
		hex.Encode(buf[24:36], u[10:16])
		return append(dst, buf[:]...)
	case KindArray:
		return appendArray(dst, t, d.(Array), st)
	}
	return fmt.Appendf(dst, "%v", d)
}

// AppendFloat prints a float as PostgreSQL 12+ does with extra_float_digits
// > 0: the shortest string that reads back exactly, in %g style (exponent
// form when the decimal exponent is < -4 or >= 15 for float8, >= 6 for
// float4), "Infinity", "-Infinity", "NaN".
func AppendFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	maxExp := 15
	if bitSize == 32 {
		maxExp = 6
	}
	var buf [40]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bitSize)
	// e looks like "-1.2345e+05".
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	epos := 0
	for i, c := range e {
		if c == 'e' {
			epos = i
			break
		}
	}
	mant, expText := e[:epos], e[epos+1:]
	exp, _ := strconv.Atoi(string(expText))
	digits := make([]byte, 0, 20)
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if neg {
		dst = append(dst, '-')
	}
	if exp < -4 || exp >= maxExp {
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if exp < 0 {
		dst = append(dst, '0', '.')
		for i := -1; i > exp; i-- {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	// exp >= 0: integer part is digits[0..exp].
	if len(digits) <= exp+1 {
		dst = append(dst, digits...)
		for i := len(digits); i <= exp; i++ {
			dst = append(dst, '0')
		}
		return dst
	}
	dst = append(dst, digits[:exp+1]...)
	dst = append(dst, '.')
	return append(dst, digits[exp+1:]...)
}

// AppendNumeric prints a numeric in plain notation keeping its scale (1.50
// stays "1.50"), "NaN", "Infinity", "-Infinity".
func AppendNumeric(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, "NaN"...)
	case apd.Infinite:
		if d.Negative {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	var digitsBuf [24]byte
	var digits []byte
	if d.Coeff.IsInt64() {
		digits = strconv.AppendInt(digitsBuf[:0], d.Coeff.Int64(), 10)
	} else {
		digits = []byte(d.Coeff.String())
	}
	if d.Negative && !d.IsZero() {
		dst = append(dst, '-')
	}
	exp := int(d.Exponent)
	if exp >= 0 {
		dst = append(dst, digits...)
		if !(len(digits) == 1 && digits[0] == '0') {
			for i := 0; i < exp; i++ {
				dst = append(dst, '0')
			}
		}
		return dst
	}
	scale := -exp
	if len(digits) > scale {
		dst = append(dst, digits[:len(digits)-scale]...)
		dst = append(dst, '.')
		return append(dst, digits[len(digits)-scale:]...)
	}
	dst = append(dst, '0', '.')
	for i := len(digits); i < scale; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

func appendPadded(dst []byte, v int, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendYMD prints year-month-day in ISO style; the BC suffix is the
// caller's, since timestamps put it after the time.
func appendYMD(dst []byte, y, m, d int) ([]byte, bool) {
	bc := y <= 0
	if bc {
		y = -(y - 1)
	}
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, d, 2)
	return dst, bc
}

// AppendDate prints a date as YYYY-MM-DD ("infinity", "-infinity", " BC").
func AppendDate(dst []byte, d Date) []byte {
	switch d {
	case DatePosInfinity:
		return append(dst, "infinity"...)
	case DateNegInfinity:
		return append(dst, "-infinity"...)
	}
	y, m, dd := d.YMD()
	dst, bc := appendYMD(dst, y, m, dd)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendSeconds prints SS[.ffffff] with trailing fraction zeros trimmed.
func appendSeconds(dst []byte, sec int, micros int) []byte {
	dst = appendPadded(dst, sec, 2)
	if micros == 0 {
		return dst
	}
	var frac [6]byte
	v := micros
	for i := 5; i >= 0; i-- {
		frac[i] = byte('0' + v%10)
		v /= 10
	}
	n := 6
	for n > 0 && frac[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, frac[:n]...)
}

func appendTimeOfDay(dst []byte, us int64) []byte {
	h := us / MicrosPerHour
	m := us / MicrosPerMinute % 60
	s := us / MicrosPerSecond % 60
	dst = appendPadded(dst, int(h), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, int(m), 2)
	dst = append(dst, ':')
	return appendSeconds(dst, int(s), int(us%MicrosPerSecond))
}

// AppendTimestamp prints a timestamp without time zone.
func AppendTimestamp(dst []byte, us int64) []byte {
	switch us {
	case math.MaxInt64:
		return append(dst, "infinity"...)
	case math.MinInt64:
		return append(dst, "-infinity"...)
	}
	f := Fields(us)
	dst, bc := appendYMD(dst, f.Year, f.Month, f.Day)
	dst = append(dst, ' ')
	dst = appendPadded(dst, f.Hour, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, f.Minute, 2)
	dst = append(dst, ':')
	dst = appendSeconds(dst, f.Second, f.Micros)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// ZoneOffset returns loc's UTC offset in seconds at the instant ts.
func ZoneOffset(ts TimestampTZ, loc *time.Location) int {
	if loc == nil || loc == time.UTC {
		return 0
	}
	sec := floorDiv(int64(ts), MicrosPerSecond) + unixEpochOffsetSeconds
	_, off := time.Unix(sec, 0).In(loc).Zone()
	return off
}

// AppendTimestampTZ prints a timestamptz in loc with its UTC offset
// ("+00", "+05:30", "-04:56:02").
func AppendTimestampTZ(dst []byte, ts TimestampTZ, loc *time.Location) []byte {
	if !ts.IsFinite() {
		return AppendTimestamp(dst, int64(ts))
	}
	off := ZoneOffset(ts, loc)
	f := Fields(int64(ts) + int64(off)*MicrosPerSecond)
	dst, bc := appendYMD(dst, f.Year, f.Month, f.Day)
	dst = append(dst, ' ')
	dst = appendPadded(dst, f.Hour, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, f.Minute, 2)
	dst = append(dst, ':')
	dst = appendSeconds(dst, f.Second, f.Micros)
	dst = AppendZoneOffset(dst, off)
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// AppendZoneOffset prints a UTC offset in seconds as PostgreSQL does:
// +HH, +HH:MM or +HH:MM:SS.
func AppendZoneOffset(dst []byte, off int) []byte {
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	h, m, s := off/3600, off/60%60, off%60
	dst = appendPadded(dst, h, 2)
	if m != 0 || s != 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, m, 2)
	}
	if s != 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, s, 2)
	}
	return dst
}

func appendIntervalPart(dst []byte, value int64, unit string, isZero, isBefore *bool) []byte {
	if value == 0 {
		return dst
	}
	if !*isZero {
		dst = append(dst, ' ')
	}
	if *isBefore && value > 0 {
		dst = append(dst, '+')
	}
	dst = strconv.AppendInt(dst, value, 10)
	dst = append(dst, ' ')
	dst = append(dst, unit...)
	if value != 1 {
		dst = append(dst, 's')
	}
	*isBefore = value < 0
	*isZero = false
	return dst
}

// AppendInterval prints an interval in IntervalStyle=postgres
// ("1 year 2 mons 3 days 04:05:06.5", "-1 days +02:00:00", "00:00:00").
func AppendInterval(dst []byte, iv Interval) []byte {
	year := int64(iv.Months / 12)
	mon := int64(iv.Months % 12)
	t := iv.Micros
	hour := t / MicrosPerHour
	t -= hour * MicrosPerHour
	min := t / MicrosPerMinute
	t -= min * MicrosPerMinute
	sec := t / MicrosPerSecond
	fsec := t - sec*MicrosPerSecond
	isZero, isBefore := true, false
	dst = appendIntervalPart(dst, year, "year", &isZero, &isBefore)
	dst = appendIntervalPart(dst, mon, "mon", &isZero, &isBefore)
	dst = appendIntervalPart(dst, int64(iv.Days), "day", &isZero, &isBefore)
	if isZero || hour != 0 || min != 0 || sec != 0 || fsec != 0 {
		minus := hour < 0 || min < 0 || sec < 0 || fsec < 0
		if !isZero {
			dst = append(dst, ' ')
		}
		if minus {
			dst = append(dst, '-')
		} else if isBefore {
			dst = append(dst, '+')
		}
		dst = appendPadded(dst, int(abs64(hour)), 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, int(abs64(min)), 2)
		dst = append(dst, ':')
		dst = appendSeconds(dst, int(abs64(sec)), int(abs64(fsec)))
	}
	return dst
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// arrayNeedsQuotes reports whether an array element must be double-quoted
// (array_out's rule).
func arrayNeedsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "NULL") {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

func appendArray(dst []byte, t Type, a Array, st OutputStyle) []byte {
	elem := a.Elem
	if t.Elem != nil {
		elem = *t.Elem
	}
	dst = append(dst, '{')
	for i, v := range a.Values {
		if i > 0 {
			dst = append(dst, ',')
		}
		if v == nil {
			dst = append(dst, "NULL"...)
			continue
		}
		s := string(AppendFormatStyle(nil, elem, v, st))
		if !arrayNeedsQuotes(s) {
			dst = append(dst, s...)
			continue
		}
		dst = append(dst, '"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, s[j])
		}
		dst = append(dst, '"')
	}
	return append(dst, '}')
}
