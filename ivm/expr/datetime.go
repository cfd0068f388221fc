package expr

import (
	"math"
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// Date, timestamp and interval arithmetic (PostgreSQL's timestamp.c and
// date.c).

func errTimestampRange() error {
	return EvalError(StateDatetimeFieldOverflow, "timestamp out of range")
}
func errDateRange() error     { return EvalError(StateDatetimeFieldOverflow, "date out of range") }
func errIntervalRange() error { return EvalError(StateDatetimeFieldOverflow, "interval out of range") }

func dateAddDays(d types.Date, n int64) (types.Datum, error) {
	if !d.IsFinite() {
		return d, nil
	}
	r := int64(d) + n
	if r < math.MinInt32 || r > math.MaxInt32 || !types.DateInRange(types.Date(r)) {
		return nil, errDateRange()
	}
	return types.Date(r), nil
}

// addMonths adds months to a broken-down local time, clamping the day to
// the month's end ('2024-01-31' + 1 mon = '2024-02-29').
func addMonths(us int64, months int32) (int64, error) {
	if months == 0 {
		return us, nil
	}
	f := types.Fields(us)
	total := int64(f.Year)*12 + int64(f.Month-1) + int64(months)
	f.Year = int(floorDiv(total, 12))
	f.Month = int(total-int64(f.Year)*12) + 1
	if f.Year > 294277 || f.Year < -4714 {
		return 0, errTimestampRange()
	}
	if dim := types.DaysInMonth(f.Year, f.Month); f.Day > dim {
		f.Day = dim
	}
	return types.FromFields(f), nil
}

// timestampPlusInterval is timestamp + interval in local time.
func timestampPlusInterval(ts int64, iv types.Interval) (int64, error) {
	if ts == math.MaxInt64 || ts == math.MinInt64 {
		return ts, nil
	}
	r, err := addMonths(ts, iv.Months)
	if err != nil {
		return 0, err
	}
	r += int64(iv.Days) * types.MicrosPerDay
	sum := r + iv.Micros
	if (iv.Micros > 0 && sum < r) || (iv.Micros < 0 && sum > r) || !types.TimestampInRange(sum) {
		return 0, errTimestampRange()
	}
	return sum, nil
}

// timestampTZPlusInterval adds months and days in local time of loc (so a
// day across a DST change is 23 or 25 hours) and microseconds in absolute
// time, as PostgreSQL's timestamptz_pl_interval does.
func timestampTZPlusInterval(ts types.TimestampTZ, iv types.Interval, loc *time.Location) (types.Datum, error) {
	if !ts.IsFinite() {
		return ts, nil
	}
	us := int64(ts)
	if iv.Months != 0 || iv.Days != 0 {
		off := types.ZoneOffset(ts, loc)
		local := us + int64(off)*types.MicrosPerSecond
		local, err := addMonths(local, iv.Months)
		if err != nil {
			return nil, err
		}
		local += int64(iv.Days) * types.MicrosPerDay
		newOff := types.LocalOffset(local, loc)
		us = local - int64(newOff)*types.MicrosPerSecond
	}
	sum := us + iv.Micros
	if !types.TimestampInRange(sum) {
		return nil, errTimestampRange()
	}
	return types.TimestampTZ(sum), nil
}

func negInterval(iv types.Interval) (types.Interval, error) {
	if iv.Months == math.MinInt32 || iv.Days == math.MinInt32 || iv.Micros == math.MinInt64 {
		return iv, errIntervalRange()
	}
	return types.Interval{Months: -iv.Months, Days: -iv.Days, Micros: -iv.Micros}, nil
}

func addIntervals(a, b types.Interval) (types.Datum, error) {
	m := int64(a.Months) + int64(b.Months)
	d := int64(a.Days) + int64(b.Days)
	us := a.Micros + b.Micros
	if m > math.MaxInt32 || m < math.MinInt32 || d > math.MaxInt32 || d < math.MinInt32 ||
		(a.Micros > 0 && b.Micros > 0 && us < 0) || (a.Micros < 0 && b.Micros < 0 && us >= 0) {
		return nil, errIntervalRange()
	}
	return types.Interval{Months: int32(m), Days: int32(d), Micros: us}, nil
}

// subIntervals is a − b (interval_mi), field by field.
func subIntervals(a, b types.Interval) (types.Interval, error) {
	m := int64(a.Months) - int64(b.Months)
	d := int64(a.Days) - int64(b.Days)
	us := a.Micros - b.Micros
	if m > math.MaxInt32 || m < math.MinInt32 || d > math.MaxInt32 || d < math.MinInt32 ||
		(a.Micros >= 0 && b.Micros < 0 && us < 0) || (a.Micros < 0 && b.Micros > 0 && us >= 0) {
		return types.Interval{}, errIntervalRange()
	}
	return types.Interval{Months: int32(m), Days: int32(d), Micros: us}, nil
}

// IntervalLerp is PostgreSQL's interval_lerp, lo + (hi − lo) · proportion
// (percentile_cont over intervals), with interval_mi, interval_mul and
// interval_pl's range checks.
func IntervalLerp(lo, hi types.Interval, proportion float64) (types.Datum, error) {
	diff, err := subIntervals(hi, lo)
	if err != nil {
		return nil, err
	}
	scaled, err := intervalMul(diff, proportion)
	if err != nil {
		return nil, err
	}
	return addIntervals(scaled.(types.Interval), lo)
}

// justifyHours moves whole days out of the microseconds (interval_justify_hours).
func justifyHours(iv types.Interval) types.Interval {
	whole := iv.Micros / types.MicrosPerDay
	iv.Micros -= whole * types.MicrosPerDay
	iv.Days += int32(whole)
	if iv.Days > 0 && iv.Micros < 0 {
		iv.Micros += types.MicrosPerDay
		iv.Days--
	} else if iv.Days < 0 && iv.Micros > 0 {
		iv.Micros -= types.MicrosPerDay
		iv.Days++
	}
	return iv
}

// justifyDays moves whole months out of the days (interval_justify_days).
func justifyDays(iv types.Interval) types.Interval {
	whole := iv.Days / types.DaysPerMonth
	iv.Days -= whole * types.DaysPerMonth
	iv.Months += whole
	if iv.Months > 0 && iv.Days < 0 {
		iv.Days += types.DaysPerMonth
		iv.Months--
	} else if iv.Months < 0 && iv.Days > 0 {
		iv.Days -= types.DaysPerMonth
		iv.Months++
	}
	return iv
}

// justifyInterval is justify_interval.
func justifyInterval(iv types.Interval) types.Interval {
	whole := iv.Micros / types.MicrosPerDay
	iv.Micros -= whole * types.MicrosPerDay
	iv.Days += int32(whole)
	whole2 := iv.Days / types.DaysPerMonth
	iv.Days -= whole2 * types.DaysPerMonth
	iv.Months += whole2
	if iv.Months > 0 && (iv.Days < 0 || (iv.Days == 0 && iv.Micros < 0)) {
		iv.Days += types.DaysPerMonth
		iv.Months--
	} else if iv.Months < 0 && (iv.Days > 0 || (iv.Days == 0 && iv.Micros > 0)) {
		iv.Days -= types.DaysPerMonth
		iv.Months++
	}
	if iv.Days > 0 && iv.Micros < 0 {
		iv.Micros += types.MicrosPerDay
		iv.Days--
	} else if iv.Days < 0 && iv.Micros > 0 {
		iv.Micros -= types.MicrosPerDay
		iv.Days++
	}
	return iv
}

func timestampDiff(a, b int64) (types.Datum, error) {
	if a == math.MaxInt64 || a == math.MinInt64 || b == math.MaxInt64 || b == math.MinInt64 {
		return nil, EvalError(StateDatetimeFieldOverflow, "cannot subtract infinite timestamps")
	}
	return justifyHours(types.Interval{Micros: a - b}), nil
}

// tsRound rounds to microsecond precision (PostgreSQL's TSROUND).
func tsRound(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }

// intervalMul is interval * factor (interval_mul).
func intervalMul(iv types.Interval, factor float64) (types.Datum, error) {
	return intervalScale(iv, factor, false)
}

// IntervalDiv is interval / factor (interval_div), exported for
// avg(interval), which PostgreSQL finalizes as sum / count.
func IntervalDiv(iv types.Interval, factor float64) (types.Datum, error) {
	return intervalDiv(iv, factor)
}

// intervalDiv is interval / factor (interval_div).
func intervalDiv(iv types.Interval, factor float64) (types.Datum, error) {
	if factor == 0 {
		return nil, errDivisionByZero()
	}
	return intervalScale(iv, factor, true)
}

func intervalScale(iv types.Interval, factor float64, divide bool) (types.Datum, error) {
	if !divide && factor == math.Trunc(factor) && math.Abs(factor) <= 1<<31 {
		// An integral factor (k * interval '2 seconds') scales each field
		// exactly: the float arithmetic below gives the same result while
		// the products stay within 2^53 and the fields within range.
		f := int64(factor)
		m, d := int64(iv.Months)*f, int64(iv.Days)*f
		us := iv.Micros
		if us < 0 {
			us = -us
		}
		if m >= math.MinInt32 && m <= math.MaxInt32 && d >= math.MinInt32 && d <= math.MaxInt32 &&
			us >= 0 && (f == 0 || us <= (1<<53)/max(f, -f)) {
			return types.Interval{Months: int32(m), Days: int32(d), Micros: iv.Micros * f}, nil
		}
	}
	op := func(x float64) float64 {
		if divide {
			return x / factor
		}
		return x * factor
	}
	monthD := op(float64(iv.Months))
	if math.IsNaN(monthD) || monthD > math.MaxInt32 || monthD < math.MinInt32 {
		return nil, errIntervalRange()
	}
	dayD := op(float64(iv.Days))
	if math.IsNaN(dayD) || dayD > math.MaxInt32 || dayD < math.MinInt32 {
		return nil, errIntervalRange()
	}
	res := types.Interval{Months: int32(monthD), Days: int32(dayD)}
	monthRemainderDays := tsRound((monthD - float64(res.Months)) * types.DaysPerMonth)
	secRemainder := tsRound((dayD - float64(res.Days) + monthRemainderDays - float64(int32(monthRemainderDays))) * 86400)
	if math.Abs(secRemainder) >= 86400 {
		res.Days += int32(secRemainder / 86400)
		secRemainder -= float64(int32(secRemainder/86400)) * 86400
	}
	res.Days += int32(monthRemainderDays)
	t := math.RoundToEven(op(float64(iv.Micros)) + secRemainder*1e6)
	if math.IsNaN(t) || t >= 9.223372036854775807e18 || t < -9.223372036854775808e18 {
		return nil, errIntervalRange()
	}
	res.Micros = int64(t)
	return res, nil
}

func timeAddInterval(t types.TimeOfDay, iv types.Interval, sign int64) types.Datum {
	us := (int64(t) + sign*(iv.Micros%types.MicrosPerDay)) % types.MicrosPerDay
	if us < 0 {
		us += types.MicrosPerDay
	}
	return types.TimeOfDay(us)
}
