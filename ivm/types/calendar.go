package types

import "math"

// Calendar arithmetic in PostgreSQL's terms: Julian day numbers (date2j and
// j2date from PostgreSQL's datetime.c), the 2000-01-01 epoch, and the valid
// ranges of date and timestamp values.

// Microsecond and day constants.
const (
	MicrosPerSecond int64 = 1_000_000
	MicrosPerMinute int64 = 60 * MicrosPerSecond
	MicrosPerHour   int64 = 60 * MicrosPerMinute
	MicrosPerDay    int64 = 24 * MicrosPerHour
	// DaysPerMonth is how long a month counts in interval comparison and
	// arithmetic that must convert (PostgreSQL's DAYS_PER_MONTH).
	DaysPerMonth = 30
)

// postgresEpochJDate is the Julian day of 2000-01-01.
const postgresEpochJDate = 2451545

// unixEpochOffsetSeconds is 2000-01-01 minus 1970-01-01 in seconds.
const unixEpochOffsetSeconds int64 = 946684800

// Special values: PostgreSQL's DATEVAL_NOBEGIN/NOEND and DT_NOBEGIN/NOEND.
const (
	DateNegInfinity Date = math.MinInt32
	DatePosInfinity Date = math.MaxInt32

	TimestampNegInfinity Timestamp = math.MinInt64
	TimestampPosInfinity Timestamp = math.MaxInt64

	TimestampTZNegInfinity TimestampTZ = math.MinInt64
	TimestampTZPosInfinity TimestampTZ = math.MaxInt64
)

// Valid ranges (PostgreSQL's datatype/timestamp.h). Dates run from Julian
// day 0 (4714-11-24 BC) to 5874897-12-31; timestamps to 294276-12-31.
const (
	datetimeMinJulian  = 0
	dateEndJulian      = 2147483494 // 5874898-01-01
	timestampEndJulian = 109203528  // 294277-01-01

	minDate Date = datetimeMinJulian - postgresEpochJDate
	endDate Date = dateEndJulian - postgresEpochJDate

	minTimestamp int64 = -211813488000000000
	endTimestamp int64 = 9223371331200000000
)

// date2j converts a proleptic Gregorian date (year 0 = 1 BC) to a Julian day.
func date2j(y, m, d int) int {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	julian := y*365 - 32167
	julian += y/4 - century + century/4
	julian += 7834*m/256 + d
	return julian
}

// j2date converts a Julian day to year (0 = 1 BC), month and day.
func j2date(jd int) (year, month, day int) {
	julian := uint32(jd)
	julian += 32044
	quad := julian / 146097
	extra := (julian-quad*146097)*4 + 3
	julian += 60 + quad*3 + extra/146097
	quad = julian / 1461
	julian -= quad * 1461
	y := int(julian * 4 / 1461)
	if y != 0 {
		julian = (julian+305)%365 + 123
	} else {
		julian = (julian+306)%366 + 123
	}
	y += int(quad * 4)
	year = y - 4800
	quad = julian * 2141 / 65536
	day = int(julian - 7834*quad/256)
	month = int((quad+10)%12 + 1)
	return
}

// isLeap reports a Gregorian leap year (year 0 = 1 BC is a leap year).
func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

//lint:immutable a constant table.
var daysInMonth = [2][13]int{
	{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
	{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
}

// DaysInMonth is the number of days of month m (1..12) in year y.
func DaysInMonth(y, m int) int {
	if isLeap(y) {
		return daysInMonth[1][m]
	}
	return daysInMonth[0][m]
}

// MakeDate builds a Date from year (negative or zero for BC: 0 is 1 BC),
// month and day, which must be valid.
func MakeDate(year, month, day int) Date {
	return Date(date2j(year, month, day) - postgresEpochJDate)
}

// YMD splits a finite Date into year (0 = 1 BC), month and day.
func (d Date) YMD() (year, month, day int) {
	return j2date(int(d) + postgresEpochJDate)
}

// IsFinite reports whether d is neither infinity nor -infinity.
func (d Date) IsFinite() bool { return d != DateNegInfinity && d != DatePosInfinity }

// IsFinite reports whether ts is neither infinity nor -infinity.
func (ts Timestamp) IsFinite() bool {
	return ts != TimestampNegInfinity && ts != TimestampPosInfinity
}

// IsFinite reports whether ts is neither infinity nor -infinity.
func (ts TimestampTZ) IsFinite() bool {
	return ts != TimestampTZNegInfinity && ts != TimestampTZPosInfinity
}

// DateInRange reports whether a Julian-based date is within PostgreSQL's
// valid date range.
func DateInRange(d Date) bool { return d >= minDate && d < endDate }

// TimestampInRange reports whether microseconds since 2000 are within
// PostgreSQL's valid timestamp range.
func TimestampInRange(us int64) bool { return us >= minTimestamp && us < endTimestamp }

// floorDiv and floorMod divide rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// SplitTimestamp splits microseconds since 2000-01-01 into a date and a time
// of day (0 <= time < one day).
func SplitTimestamp(us int64) (Date, TimeOfDay) {
	days := floorDiv(us, MicrosPerDay)
	return Date(days), TimeOfDay(us - days*MicrosPerDay)
}

// TimestampFields is a broken-down timestamp.
type TimestampFields struct {
	Year, Month, Day     int // Year 0 is 1 BC
	Hour, Minute, Second int
	Micros               int
}

// Fields breaks microseconds since 2000-01-01 into calendar fields.
func Fields(us int64) TimestampFields {
	d, tod := SplitTimestamp(us)
	y, m, dd := d.YMD()
	t := int64(tod)
	return TimestampFields{
		Year: y, Month: m, Day: dd,
		Hour:   int(t / MicrosPerHour),
		Minute: int(t / MicrosPerMinute % 60),
		Second: int(t / MicrosPerSecond % 60),
		Micros: int(t % MicrosPerSecond),
	}
}

// FromFields is the inverse of Fields (no range check).
func FromFields(f TimestampFields) int64 {
	d := int64(MakeDate(f.Year, f.Month, f.Day))
	return d*MicrosPerDay + int64(f.Hour)*MicrosPerHour + int64(f.Minute)*MicrosPerMinute +
		int64(f.Second)*MicrosPerSecond + int64(f.Micros)
}

// IntervalSpan is the comparison key of an interval (PostgreSQL's
// interval_cmp_value): the 128-bit total of months*30 days + days plus
// microseconds, held as whole days and a non-negative remainder of
// microseconds below one day.
type IntervalSpan struct {
	Days   int64
	Micros int64 // 0 <= Micros < MicrosPerDay
}

// Span returns the interval's comparison key.
func (iv Interval) Span() IntervalSpan {
	days := int64(iv.Months)*DaysPerMonth + int64(iv.Days)
	carry := floorDiv(iv.Micros, MicrosPerDay)
	return IntervalSpan{Days: days + carry, Micros: iv.Micros - carry*MicrosPerDay}
}
