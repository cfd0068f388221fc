package types

import (
	"strconv"
	"time"
)

// Date and time output under the DateStyle and IntervalStyle settings
// other than PostgreSQL's defaults (EncodeDateOnly, EncodeDateTime and
// EncodeInterval). time and timetz print the same in every style.

//lint:immutable a constant table.
var weekdayAbbrevs = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

//lint:immutable a constant table.
var monthAbbrevs = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// appendYear prints a year as AD/BC years are printed: at least four
// digits, 1 BC for year 0.
func appendYear(dst []byte, y int) []byte {
	if y <= 0 {
		y = -(y - 1)
	}
	return appendPadded(dst, y, 4)
}

// appendDateFields prints year, month and day in style and order, without
// the BC suffix.
func appendDateFields(dst []byte, y, m, d int, style DateStyle, order DateOrder) []byte {
	switch style {
	case DateStyleSQL, DateStylePostgres:
		sep := byte('/')
		if style == DateStylePostgres {
			sep = '-'
		}
		if order == DateOrderDMY {
			dst = appendPadded(dst, d, 2)
			dst = append(dst, sep)
			dst = appendPadded(dst, m, 2)
		} else {
			dst = appendPadded(dst, m, 2)
			dst = append(dst, sep)
			dst = appendPadded(dst, d, 2)
		}
		dst = append(dst, sep)
		return appendYear(dst, y)
	case DateStyleGerman:
		dst = appendPadded(dst, d, 2)
		dst = append(dst, '.')
		dst = appendPadded(dst, m, 2)
		dst = append(dst, '.')
		return appendYear(dst, y)
	}
	dst, _ = appendYMD(dst, y, m, d)
	return dst
}

// AppendDateStyle prints a date in style and order (date_out).
func AppendDateStyle(dst []byte, d Date, style DateStyle, order DateOrder) []byte {
	if style == DateStyleISO || !d.IsFinite() {
		return AppendDate(dst, d)
	}
	y, m, dd := d.YMD()
	dst = appendDateFields(dst, y, m, dd, style, order)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendTimestampStyle prints the wall-clock fields f in a non-ISO style;
// zone is the abbreviation to print after the time ("" for a timestamp
// without time zone).
func appendTimestampStyle(dst []byte, f TimestampFields, style DateStyle, order DateOrder, zone string) []byte {
	clock := func(dst []byte) []byte {
		dst = appendPadded(dst, f.Hour, 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, f.Minute, 2)
		dst = append(dst, ':')
		return appendSeconds(dst, f.Second, f.Micros)
	}
	if style == DateStylePostgres {
		wd := (date2j(f.Year, f.Month, f.Day) + 1) % 7
		dst = append(dst, weekdayAbbrevs[wd]...)
		dst = append(dst, ' ')
		if order == DateOrderDMY {
			dst = appendPadded(dst, f.Day, 2)
			dst = append(dst, ' ')
			dst = append(dst, monthAbbrevs[f.Month-1]...)
		} else {
			dst = append(dst, monthAbbrevs[f.Month-1]...)
			dst = append(dst, ' ')
			dst = appendPadded(dst, f.Day, 2)
		}
		dst = append(dst, ' ')
		dst = clock(dst)
		dst = append(dst, ' ')
		dst = appendYear(dst, f.Year)
	} else {
		dst = appendDateFields(dst, f.Year, f.Month, f.Day, style, order)
		dst = append(dst, ' ')
		dst = clock(dst)
	}
	if zone != "" {
		dst = append(dst, ' ')
		dst = append(dst, zone...)
	}
	if f.Year <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// AppendTimestampStyle prints a timestamp without time zone in style and
// order.
func AppendTimestampStyle(dst []byte, us int64, style DateStyle, order DateOrder) []byte {
	if style == DateStyleISO || !Timestamp(us).IsFinite() {
		return AppendTimestamp(dst, us)
	}
	return appendTimestampStyle(dst, Fields(us), style, order, "")
}

// AppendTimestampTZStyle prints a timestamptz in loc, in style and order.
// The SQL, German and Postgres styles end with the zone's abbreviation
// ("UTC", "EST") where ISO prints the offset.
func AppendTimestampTZStyle(dst []byte, ts TimestampTZ, loc *time.Location, style DateStyle, order DateOrder) []byte {
	if style == DateStyleISO || !ts.IsFinite() {
		return AppendTimestampTZ(dst, ts, loc)
	}
	if loc == nil {
		loc = time.UTC
	}
	sec := floorDiv(int64(ts), MicrosPerSecond) + unixEpochOffsetSeconds
	abbrev, off := time.Unix(sec, 0).In(loc).Zone()
	if abbrev == "" {
		abbrev = string(AppendZoneOffset(nil, off))
	}
	return appendTimestampStyle(dst, Fields(int64(ts)+int64(off)*MicrosPerSecond), style, order, abbrev)
}

// intervalFields splits an interval as interval2itm does: years and
// months from the months, hours, minutes, seconds and microseconds from
// the time, each keeping the sign of what it came from.
func intervalFields(iv Interval) (year, mon, day, hour, min, sec, fsec int64) {
	year = int64(iv.Months / 12)
	mon = int64(iv.Months % 12)
	day = int64(iv.Days)
	t := iv.Micros
	hour = t / MicrosPerHour
	t -= hour * MicrosPerHour
	min = t / MicrosPerMinute
	t -= min * MicrosPerMinute
	sec = t / MicrosPerSecond
	fsec = t - sec*MicrosPerSecond
	return
}

// appendIntervalSeconds prints |sec|[.|fsec|] with the fraction's trailing
// zeros trimmed; zeroPad pads the seconds to two digits.
func appendIntervalSeconds(dst []byte, sec, fsec int64, zeroPad bool) []byte {
	if zeroPad {
		return appendSeconds(dst, int(abs64(sec)), int(abs64(fsec)))
	}
	dst = strconv.AppendInt(dst, abs64(sec), 10)
	if fsec == 0 {
		return dst
	}
	var tmp []byte
	tmp = appendSeconds(tmp, 0, int(abs64(fsec)))
	return append(dst, tmp[2:]...)
}

// AppendIntervalStyle prints an interval in style (interval_out).
func AppendIntervalStyle(dst []byte, iv Interval, style IntervalStyle) []byte {
	switch style {
	case IntervalStyleSQLStandard:
		return appendIntervalSQLStandard(dst, iv)
	case IntervalStyleISO8601:
		return appendIntervalISO8601(dst, iv)
	case IntervalStylePostgresVerbose:
		return appendIntervalVerbose(dst, iv)
	}
	return AppendInterval(dst, iv)
}

// appendIntervalSQLStandard prints "Y-M", "D H:MM:SS" or "H:MM:SS" with
// one leading sign when the value is expressible in the standard's
// forms, and every part signed ("+1-2 -3 +4:05:06") when it mixes signs
// or year-month with day-time parts.
func appendIntervalSQLStandard(dst []byte, iv Interval) []byte {
	year, mon, day, hour, min, sec, fsec := intervalFields(iv)
	hasNegative := year < 0 || mon < 0 || day < 0 || hour < 0 || min < 0 || sec < 0 || fsec < 0
	hasPositive := year > 0 || mon > 0 || day > 0 || hour > 0 || min > 0 || sec > 0 || fsec > 0
	hasYearMonth := year != 0 || mon != 0
	hasDayTime := day != 0 || hour != 0 || min != 0 || sec != 0 || fsec != 0
	standard := !(hasNegative && hasPositive) && !(hasYearMonth && hasDayTime)
	if hasNegative && standard {
		dst = append(dst, '-')
		year, mon, day, hour, min, sec, fsec = -year, -mon, -day, -hour, -min, -sec, -fsec
	}
	switch {
	case !hasNegative && !hasPositive:
		return append(dst, '0')
	case !standard:
		sign := func(neg bool) byte {
			if neg {
				return '-'
			}
			return '+'
		}
		dst = append(dst, sign(year < 0 || mon < 0))
		dst = strconv.AppendInt(dst, abs64(year), 10)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, abs64(mon), 10)
		dst = append(dst, ' ', sign(day < 0))
		dst = strconv.AppendInt(dst, abs64(day), 10)
		dst = append(dst, ' ', sign(hour < 0 || min < 0 || sec < 0 || fsec < 0))
		dst = strconv.AppendInt(dst, abs64(hour), 10)
		dst = append(dst, ':')
		dst = appendPadded(dst, int(abs64(min)), 2)
		dst = append(dst, ':')
		return appendIntervalSeconds(dst, sec, fsec, true)
	case hasYearMonth:
		dst = strconv.AppendInt(dst, year, 10)
		dst = append(dst, '-')
		return strconv.AppendInt(dst, mon, 10)
	}
	if day != 0 {
		dst = strconv.AppendInt(dst, day, 10)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, hour, 10)
	dst = append(dst, ':')
	dst = appendPadded(dst, int(min), 2)
	dst = append(dst, ':')
	return appendIntervalSeconds(dst, sec, fsec, true)
}

// appendIntervalISO8601 prints ISO 8601's duration form, each part with
// its own sign ("P1Y-2M3DT-4H5M-6.5S", "PT0S").
func appendIntervalISO8601(dst []byte, iv Interval) []byte {
	year, mon, day, hour, min, sec, fsec := intervalFields(iv)
	if year == 0 && mon == 0 && day == 0 && hour == 0 && min == 0 && sec == 0 && fsec == 0 {
		return append(dst, "PT0S"...)
	}
	part := func(dst []byte, v int64, unit byte) []byte {
		if v == 0 {
			return dst
		}
		dst = strconv.AppendInt(dst, v, 10)
		return append(dst, unit)
	}
	dst = append(dst, 'P')
	dst = part(dst, year, 'Y')
	dst = part(dst, mon, 'M')
	dst = part(dst, day, 'D')
	if hour != 0 || min != 0 || sec != 0 || fsec != 0 {
		dst = append(dst, 'T')
	}
	dst = part(dst, hour, 'H')
	dst = part(dst, min, 'M')
	if sec != 0 || fsec != 0 {
		if sec < 0 || fsec < 0 {
			dst = append(dst, '-')
		}
		dst = appendIntervalSeconds(dst, sec, fsec, false)
		dst = append(dst, 'S')
	}
	return dst
}

// appendIntervalVerbose prints PostgreSQL's pre-8.4 form: "@ 1 year 2
// mons -3 days 4 hours 5 mins 6.5 secs", a negative leading part written
// as "ago" at the end with the signs of the others flipped.
func appendIntervalVerbose(dst []byte, iv Interval) []byte {
	year, mon, day, hour, min, sec, fsec := intervalFields(iv)
	isZero, isBefore := true, false
	part := func(dst []byte, v int64, unit string) []byte {
		if v == 0 {
			return dst
		}
		if isZero {
			isBefore = v < 0
			v = abs64(v)
		} else if isBefore {
			v = -v
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if v != 1 {
			dst = append(dst, 's')
		}
		isZero = false
		return dst
	}
	dst = append(dst, '@')
	dst = part(dst, year, "year")
	dst = part(dst, mon, "mon")
	dst = part(dst, day, "day")
	dst = part(dst, hour, "hour")
	dst = part(dst, min, "min")
	if sec != 0 || fsec != 0 {
		dst = append(dst, ' ')
		if sec < 0 || (sec == 0 && fsec < 0) {
			if isZero {
				isBefore = true
			} else if !isBefore {
				dst = append(dst, '-')
			}
		} else if isBefore {
			dst = append(dst, '-')
		}
		dst = appendIntervalSeconds(dst, sec, fsec, false)
		dst = append(dst, " sec"...)
		if abs64(sec) != 1 || fsec != 0 {
			dst = append(dst, 's')
		}
		isZero = false
	}
	if isZero {
		dst = append(dst, " 0"...)
	}
	if isBefore {
		dst = append(dst, " ago"...)
	}
	return dst
}
