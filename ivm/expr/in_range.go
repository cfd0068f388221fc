package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/ivm/types"
)

// RangeOffsetType is the type a RANGE frame's PRECEDING/FOLLOWING offset is
// coerced to for an ORDER BY column of type t, as PostgreSQL's btree
// in_range support functions pair them: integers with integers, numeric
// with numeric, floats with double precision, dates, times, timestamps and
// intervals with interval. ok is false for types without in_range
// (text, booleans, ...).
func RangeOffsetType(t types.Type) (types.Type, bool) {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return types.TInt8, true
	case types.KindNumeric:
		return types.TNumeric, true
	case types.KindFloat4, types.KindFloat8:
		return types.TFloat8, true
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ, types.KindInterval:
		return types.TInterval, true
	}
	return types.Type{}, false
}

func errRangeOffset() error {
	return EvalError("22013", "invalid preceding or following size in window function")
}

// CheckRangeOffset fails with 22013 for an offset PostgreSQL's in_range
// refuses: negative, NaN or minus infinity. off is non-NULL, of
// RangeOffsetType(t).
func CheckRangeOffset(t types.Type, off types.Datum) error {
	bad := false
	switch o := off.(type) {
	case int64:
		bad = o < 0
	case float64:
		bad = math.IsNaN(o) || o < 0
	case *apd.Decimal:
		bad = isNaN(o) || o.Negative && !(o.Form == apd.Finite && o.IsZero())
	case types.Interval:
		if t.Kind == types.KindTime {
			// time ± interval ignores months and days, so does the check.
			bad = o.Micros < 0
		} else {
			bad = types.CompareInterval(o, types.Interval{}) < 0
		}
	}
	if bad {
		return errRangeOffset()
	}
	return nil
}

// InRange is PostgreSQL's in_range support function for an ORDER BY column
// of type t: whether val is at least (less false) or at most (less true)
// base minus (sub) or plus off. val and base are non-NULL values of t, off
// a checked offset of RangeOffsetType(t). A sum past the type's range
// counts as beyond every value (integers) or fails as PostgreSQL's
// arithmetic does (dates and times); NaN sorts after every number.
func InRange(env *Env, t types.Type, val, base, off types.Datum, sub, less bool) (bool, error) {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		v, b, o := val.(int64), base.(int64), off.(int64)
		if sub {
			o = -o // o ≥ 0, so this cannot overflow
		}
		s := b + o // wraps on overflow, caught below
		if (o > 0 && s < b) || (o < 0 && s > b) {
			// The true sum is beyond every int8: above every value when
			// adding, below when subtracting.
			return sub != less, nil
		}
		return cmpResult(cmpInt64(v, s), less), nil
	case types.KindFloat4, types.KindFloat8:
		v, b, o := val.(float64), base.(float64), off.(float64)
		switch {
		case math.IsNaN(v) && math.IsNaN(b):
			return true, nil
		case math.IsNaN(v):
			return !less, nil
		case math.IsNaN(b):
			return less, nil
		}
		if math.IsInf(o, 1) && math.IsInf(b, 0) && (sub == (b > 0)) {
			// base ∓ ∞ would be NaN: every value is in such a frame.
			return true, nil
		}
		s := b + o
		if sub {
			s = b - o
		}
		if less {
			return v <= s, nil
		}
		return v >= s, nil
	case types.KindNumeric:
		return inRangeNumeric(val.(*apd.Decimal), base.(*apd.Decimal), off.(*apd.Decimal), sub, less)
	case types.KindDate, types.KindTimestamp:
		var v, b int64
		if t.Kind == types.KindDate {
			vt, err := dateToTimestamp(val.(types.Date))
			if err != nil {
				return false, err
			}
			bt, err := dateToTimestamp(base.(types.Date))
			if err != nil {
				return false, err
			}
			v, b = int64(vt.(types.Timestamp)), int64(bt.(types.Timestamp))
		} else {
			v, b = int64(val.(types.Timestamp)), int64(base.(types.Timestamp))
		}
		o := off.(types.Interval)
		if sub {
			var err error
			if o, err = negInterval(o); err != nil {
				return false, err
			}
		}
		s, err := timestampPlusInterval(b, o)
		if err != nil {
			return false, err
		}
		return cmpResult(cmpInt64(v, s), less), nil
	case types.KindTimestampTZ:
		o := off.(types.Interval)
		if sub {
			var err error
			if o, err = negInterval(o); err != nil {
				return false, err
			}
		}
		s, err := timestampTZPlusInterval(base.(types.TimestampTZ), o, envZone(env))
		if err != nil {
			return false, err
		}
		return cmpResult(cmpInt64(int64(val.(types.TimestampTZ)), int64(s.(types.TimestampTZ))), less), nil
	case types.KindTime:
		// No wraparound past midnight, unlike time + interval.
		o := off.(types.Interval).Micros
		s := int64(base.(types.TimeOfDay)) + o
		if sub {
			s = int64(base.(types.TimeOfDay)) - o
		}
		return cmpResult(cmpInt64(int64(val.(types.TimeOfDay)), s), less), nil
	case types.KindInterval:
		o := off.(types.Interval)
		var s types.Interval
		if sub {
			r, err := subIntervals(base.(types.Interval), o)
			if err != nil {
				return false, err
			}
			s = r
		} else {
			r, err := addIntervals(base.(types.Interval), o)
			if err != nil {
				return false, err
			}
			s = r.(types.Interval)
		}
		return cmpResult(types.CompareInterval(val.(types.Interval), s), less), nil
	}
	return false, EvalError(StateFeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", t)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpResult(c int, less bool) bool {
	if less {
		return c <= 0
	}
	return c >= 0
}

// inRangeNumeric is in_range for numeric, with PostgreSQL's NaN (after
// everything) and infinities.
func inRangeNumeric(val, base, off *apd.Decimal, sub, less bool) (bool, error) {
	pinf := func(d *apd.Decimal) bool { return d.Form == apd.Infinite && !d.Negative }
	ninf := func(d *apd.Decimal) bool { return d.Form == apd.Infinite && d.Negative }
	switch {
	case isNaN(val) && isNaN(base):
		return true, nil
	case isNaN(val):
		return !less, nil
	case isNaN(base):
		return less, nil
	case off.Form == apd.Infinite:
		// off is +Infinity (negative offsets are refused).
		if (sub && pinf(base)) || (!sub && ninf(base)) {
			return true, nil
		}
		if sub {
			// base - ∞ is -∞.
			if less {
				return ninf(val), nil
			}
			return true, nil
		}
		if less {
			return true, nil
		}
		return pinf(val), nil
	case val.Form == apd.Infinite:
		if pinf(val) {
			return pinf(base) || !less, nil
		}
		return ninf(base) || less, nil
	case base.Form == apd.Infinite:
		if ninf(base) {
			return !less, nil
		}
		return less, nil
	}
	if sub {
		off = numNeg(off)
	}
	s, err := numAdd(base, off)
	if err != nil {
		return false, err
	}
	return cmpResult(val.Cmp(s.(*apd.Decimal)), less), nil
}
