package types

import (
	"strings"
)

// Interval type modifiers, as PostgreSQL encodes them (atttypmod): the
// fields' range mask in the high 16 bits and the fractional-second
// precision in the low 16 (0xFFFF: unrestricted). `interval '90' day`,
// `interval '1-2' year to month`, `interval day to second(2)`.
const (
	IntervalMaskMonth  = 1 << 1
	IntervalMaskYear   = 1 << 2
	IntervalMaskDay    = 1 << 3
	IntervalMaskHour   = 1 << 10
	IntervalMaskMinute = 1 << 11
	IntervalMaskSecond = 1 << 12
	// IntervalFullRange is the range of an interval without field words
	// (`interval(2)`).
	IntervalFullRange = 0x7FFF
	// IntervalFullPrecision is the precision of an interval without one.
	IntervalFullPrecision = 0xFFFF
	// intervalPrecisionMax is PostgreSQL's MAX_INTERVAL_PRECISION.
	intervalPrecisionMax = 6
)

// intervalRanges lists the field ranges SQL can write, with their
// format_type spelling and the unit a bare number is read in (PostgreSQL's
// DecodeInterval: the range's last field).
//
//lint:immutable a constant table.
var intervalRanges = []struct {
	mask       int
	name, unit string
}{
	{IntervalMaskYear, "year", "year"},
	{IntervalMaskMonth, "month", "month"},
	{IntervalMaskDay, "day", "day"},
	{IntervalMaskHour, "hour", "hour"},
	{IntervalMaskMinute, "minute", "minute"},
	{IntervalMaskSecond, "second", "second"},
	{IntervalMaskYear | IntervalMaskMonth, "year to month", "month"},
	{IntervalMaskDay | IntervalMaskHour, "day to hour", "hour"},
	{IntervalMaskDay | IntervalMaskHour | IntervalMaskMinute, "day to minute", "minute"},
	{IntervalMaskDay | IntervalMaskHour | IntervalMaskMinute | IntervalMaskSecond, "day to second", "second"},
	{IntervalMaskHour | IntervalMaskMinute, "hour to minute", "minute"},
	{IntervalMaskHour | IntervalMaskMinute | IntervalMaskSecond, "hour to second", "second"},
	{IntervalMaskMinute | IntervalMaskSecond, "minute to second", "second"},
}

// IntervalTypmod builds an interval typmod from a range mask and a
// precision, validating them as PostgreSQL's intervaltypmodin does; ok is
// false for a range SQL cannot write or a negative precision. A precision
// above 6 is reduced to 6, as PostgreSQL does (with a warning).
func IntervalTypmod(rangeMask, precision int64) (int32, bool) {
	if rangeMask != IntervalFullRange && intervalRangeIndex(int(rangeMask)) < 0 {
		return 0, false
	}
	if precision != IntervalFullPrecision {
		if precision < 0 {
			return 0, false
		}
		if rangeMask != IntervalFullRange && rangeMask&IntervalMaskSecond == 0 {
			// "interval precision specified twice" or on a range without
			// seconds: the grammar refuses both.
			return 0, false
		}
		precision = min(precision, intervalPrecisionMax)
	}
	if rangeMask == IntervalFullRange && precision == IntervalFullPrecision {
		return -1, true
	}
	return int32(rangeMask<<16 | precision), true
}

func intervalRangeIndex(mask int) int {
	for i, r := range intervalRanges {
		if r.mask == mask {
			return i
		}
	}
	return -1
}

// intervalTypmodParts splits a typmod (−1: unrestricted).
func intervalTypmodParts(typmod int32) (rangeMask, precision int) {
	if typmod < 0 {
		return IntervalFullRange, IntervalFullPrecision
	}
	return int(typmod>>16) & 0x7FFF, int(typmod & 0xFFFF)
}

// intervalTypmodSuffix is what format_type adds to "interval": " minute",
// " day to second(2)", "(2)".
func intervalTypmodSuffix(typmod int32) string {
	rangeMask, precision := intervalTypmodParts(typmod)
	var b strings.Builder
	if i := intervalRangeIndex(rangeMask); i >= 0 {
		b.WriteString(" " + intervalRanges[i].name)
	}
	if precision != IntervalFullPrecision {
		b.WriteString("(" + itoa(precision) + ")")
	}
	return b.String()
}

// IntervalTypmodSuffix is what format_type adds to "interval" for typmod:
// " hour to minute", " day to second(2)", "(2)", or "".
func IntervalTypmodSuffix(typmod int32) string { return intervalTypmodSuffix(typmod) }

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// ParseIntervalTypmod reads interval input for a restricted interval type:
// a bare number is read in the range's last field (`interval '90' day`,
// `interval '1.5' minute`), "m:s" is minutes and seconds under MINUTE TO
// SECOND, and the value is then cut to the range and precision
// (ApplyIntervalTypmod).
func ParseIntervalTypmod(s string, typmod int32) (Datum, error) {
	return parseIntervalTypmodStyle(s, typmod, IntervalStylePostgres)
}

func parseIntervalTypmodStyle(s string, typmod int32, style IntervalStyle) (Datum, error) {
	rangeMask, _ := intervalTypmodParts(typmod)
	bareUnit := "second"
	if i := intervalRangeIndex(rangeMask); i >= 0 {
		bareUnit = intervalRanges[i].unit
	}
	v, err := parseInterval(s, bareUnit, rangeMask == IntervalMaskMinute|IntervalMaskSecond, style)
	if err != nil {
		return nil, err
	}
	return ApplyIntervalTypmod(v.(Interval), typmod)
}

// intervalScales[p] is 10^(6−p): the microseconds of one unit of
// precision p.
//
//lint:immutable a constant table.
var intervalScales = [...]int64{1000000, 100000, 10000, 1000, 100, 10, 1}

// ApplyIntervalTypmod cuts an interval to a typmod as PostgreSQL's
// AdjustIntervalForTypmod does: fields below the range are dropped (toward
// zero; YEAR keeps whole years of the months), and the time is rounded to
// the precision, half away from zero.
func ApplyIntervalTypmod(iv Interval, typmod int32) (Datum, error) {
	if typmod < 0 {
		return iv, nil
	}
	const hour, minute = 3600 * 1000000, 60 * 1000000
	rangeMask, precision := intervalTypmodParts(typmod)
	switch rangeMask {
	case IntervalMaskYear:
		iv.Months = (iv.Months / 12) * 12
		iv.Days, iv.Micros = 0, 0
	case IntervalMaskMonth, IntervalMaskYear | IntervalMaskMonth:
		iv.Days, iv.Micros = 0, 0
	case IntervalMaskDay:
		iv.Micros = 0
	case IntervalMaskHour, IntervalMaskDay | IntervalMaskHour:
		iv.Micros = (iv.Micros / hour) * hour
	case IntervalMaskMinute, IntervalMaskHour | IntervalMaskMinute, IntervalMaskDay | IntervalMaskHour | IntervalMaskMinute:
		iv.Micros = (iv.Micros / minute) * minute
	}
	if precision != IntervalFullPrecision && precision < intervalPrecisionMax {
		scale := intervalScales[precision]
		if iv.Micros >= 0 {
			iv.Micros = ((iv.Micros + scale/2) / scale) * scale
		} else {
			iv.Micros = -(((-iv.Micros + scale/2) / scale) * scale)
		}
	}
	return iv, nil
}
