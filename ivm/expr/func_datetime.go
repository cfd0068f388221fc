package expr

import (
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// Date/time functions: date_trunc, date_part, extract, make_date,
// make_timestamp, age, now() and friends, to_timestamp, justify_*,
// isfinite.

func unitError(unit string, t types.Type) error {
	return EvalError(StateInvalidParameterValue, "unit \"%s\" not recognized for type %s", unit, t.SQLName())
}

func unitNotSupported(unit string, t types.Type) error {
	return EvalError(StateFeatureNotSupported, "unit \"%s\" not supported for type %s", unit, t.SQLName())
}

// normalizeUnit lower-cases a field name and maps its aliases.
func normalizeUnit(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	switch u {
	case "microsecond", "microseconds", "us", "usec", "usecs", "useconds":
		return "microseconds"
	case "millisecond", "milliseconds", "ms", "msec", "msecs", "mseconds":
		return "milliseconds"
	case "second", "seconds", "s", "sec", "secs":
		return "second"
	case "minute", "minutes", "m", "min", "mins":
		return "minute"
	case "hour", "hours", "h", "hr", "hrs":
		return "hour"
	case "day", "days", "d":
		return "day"
	case "week", "weeks", "w":
		return "week"
	case "month", "months", "mon", "mons":
		return "month"
	case "quarter", "qtr":
		return "quarter"
	case "year", "years", "y", "yr", "yrs":
		return "year"
	case "decade", "decades", "dec", "decs":
		return "decade"
	case "century", "centuries", "c", "cent":
		return "century"
	case "millennium", "millennia", "mil", "mils", "millenniums":
		return "millennium"
	}
	return u
}

// truncFields truncates broken-down local time to unit; ok false when the
// unit is unknown.
func truncFields(f types.TimestampFields, unit string) (types.TimestampFields, bool) {
	switch unit {
	case "millennium":
		if f.Year > 0 {
			f.Year = ((f.Year+999)/1000)*1000 - 999
		} else {
			f.Year = -((999-(f.Year-1))/1000)*1000 + 1
		}
		f.Month, f.Day, f.Hour, f.Minute, f.Second, f.Micros = 1, 1, 0, 0, 0, 0
	case "century":
		if f.Year > 0 {
			f.Year = ((f.Year+99)/100)*100 - 99
		} else {
			f.Year = -((99-(f.Year-1))/100)*100 + 1
		}
		f.Month, f.Day, f.Hour, f.Minute, f.Second, f.Micros = 1, 1, 0, 0, 0, 0
	case "decade":
		if f.Year > 0 {
			f.Year = (f.Year / 10) * 10
		} else {
			f.Year = -((8 - (f.Year - 1)) / 10) * 10
		}
		f.Month, f.Day, f.Hour, f.Minute, f.Second, f.Micros = 1, 1, 0, 0, 0, 0
	case "year":
		f.Month, f.Day, f.Hour, f.Minute, f.Second, f.Micros = 1, 1, 0, 0, 0, 0
	case "quarter":
		f.Month = 3*((f.Month-1)/3) + 1
		f.Day, f.Hour, f.Minute, f.Second, f.Micros = 1, 0, 0, 0, 0
	case "month":
		f.Day, f.Hour, f.Minute, f.Second, f.Micros = 1, 0, 0, 0, 0
	case "week":
		d := types.MakeDate(f.Year, f.Month, f.Day)
		dow := isoDow(d)
		d -= types.Date(dow - 1)
		f.Year, f.Month, f.Day = d.YMD()
		f.Hour, f.Minute, f.Second, f.Micros = 0, 0, 0, 0
	case "day":
		f.Hour, f.Minute, f.Second, f.Micros = 0, 0, 0, 0
	case "hour":
		f.Minute, f.Second, f.Micros = 0, 0, 0
	case "minute":
		f.Second, f.Micros = 0, 0
	case "second":
		f.Micros = 0
	case "milliseconds":
		f.Micros = (f.Micros / 1000) * 1000
	case "microseconds":
	default:
		return f, false
	}
	return f, true
}

// isoDow is 1 (Monday) .. 7 (Sunday).
func isoDow(d types.Date) int {
	// 2000-01-01 was a Saturday (ISO 6).
	dow := int(floorDiv(int64(d)+5, 7)*-7+int64(d)+5) + 1
	return dow
}

// dow is 0 (Sunday) .. 6.
func dow(d types.Date) int { return isoDow(d) % 7 }

// isoWeek returns the ISO 8601 year and week of a date.
func isoWeek(d types.Date) (year, week int) {
	y, m, dd := d.YMD()
	t := time.Date(y, time.Month(m), dd, 0, 0, 0, 0, time.UTC)
	return t.ISOWeek()
}

func dayOfYear(y, m, d int) int {
	return int(types.MakeDate(y, m, d)-types.MakeDate(y, 1, 1)) + 1
}

func registerDateTime(add adder) {
	add(&Func{Name: "date_trunc", Args: []types.Type{types.TText, types.TTimestamp}, Result: types.TTimestamp, Strict: true, Volatility: Immutable,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			ts := a[1].(types.Timestamp)
			unit := normalizeUnit(a[0].(string))
			if !ts.IsFinite() {
				return ts, nil
			}
			f, ok := truncFields(types.Fields(int64(ts)), unit)
			if !ok {
				return nil, unitError(a[0].(string), types.TTimestamp)
			}
			return types.Timestamp(types.FromFields(f)), nil
		}},
		&Func{Name: "date_trunc", Args: []types.Type{types.TText, types.TTimestampTZ}, Result: types.TTimestampTZ, Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				return truncTZ(a[0].(string), a[1].(types.TimestampTZ), envZone(env))
			}},
		&Func{Name: "date_trunc", Args: []types.Type{types.TText, types.TTimestampTZ, types.TText}, Result: types.TTimestampTZ, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				loc, err := time.LoadLocation(a[2].(string))
				if err != nil {
					return nil, EvalError(StateInvalidParameterValue, "time zone \"%s\" not recognized", a[2].(string))
				}
				return truncTZ(a[0].(string), a[1].(types.TimestampTZ), loc)
			}},
		&Func{Name: "date_trunc", Args: []types.Type{types.TText, types.TInterval}, Result: types.TInterval, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				return truncInterval(a[0].(string), a[1].(types.Interval))
			}},
	)
	// date_part → float8; extract → numeric (PostgreSQL 14+).
	for _, t := range []types.Type{types.TTimestamp, types.TTimestampTZ, types.TDate, types.TInterval, types.TTime} {
		t := t
		vol := Immutable
		if t.Kind == types.KindTimestampTZ {
			vol = Stable
		}
		add(&Func{Name: "date_part", Args: []types.Type{types.TText, t}, Result: types.TFloat8, Strict: true, Volatility: vol,
			Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				d, err := extractField(env, a[0].(string), t, a[1], false)
				if err != nil || d == nil {
					return d, err
				}
				return numericToFloat(d.(*apd.Decimal), false)
			}},
			&Func{Name: "extract", Args: []types.Type{types.TText, t}, Result: types.TNumeric, Strict: true, Volatility: vol,
				Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
					return extractField(env, a[0].(string), t, a[1], true)
				}})
	}
	add(strict("make_date", []types.Type{types.TInt4, types.TInt4, types.TInt4}, types.TDate, func(_ *Env, a []types.Datum) (types.Datum, error) {
		y, m, d := a[0].(int64), a[1].(int64), a[2].(int64)
		return makeDate(y, m, d)
	}),
		strict("make_timestamp", []types.Type{types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TFloat8}, types.TTimestamp,
			func(_ *Env, a []types.Datum) (types.Datum, error) {
				return makeTimestamp(a[0].(int64), a[1].(int64), a[2].(int64), a[3].(int64), a[4].(int64), a[5].(float64))
			}),
		strict("make_interval", []types.Type{types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TInt4, types.TFloat8}, types.TInterval,
			func(_ *Env, a []types.Datum) (types.Datum, error) {
				y, mo, w, d, h, mi := a[0].(int64), a[1].(int64), a[2].(int64), a[3].(int64), a[4].(int64), a[5].(int64)
				secs := a[6].(float64)
				us := math.RoundToEven(secs*1e6) + float64(h)*float64(types.MicrosPerHour) + float64(mi)*float64(types.MicrosPerMinute)
				months := y*12 + mo
				days := w*7 + d
				if months > math.MaxInt32 || months < math.MinInt32 || days > math.MaxInt32 || days < math.MinInt32 || math.IsNaN(us) || math.Abs(us) > 9e18 {
					return nil, errIntervalRange()
				}
				return types.Interval{Months: int32(months), Days: int32(days), Micros: int64(us)}, nil
			}),
		f2("age", types.TTimestamp, types.TTimestamp, types.TInterval, func(a, b types.Datum) (types.Datum, error) {
			return age(int64(a.(types.Timestamp)), int64(b.(types.Timestamp)))
		}),
		&Func{Name: "age", Args: []types.Type{types.TTimestampTZ, types.TTimestampTZ}, Result: types.TInterval, Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				loc := envZone(env)
				x, err := tzToTimestamp(a[0].(types.TimestampTZ), loc)
				if err != nil {
					return nil, err
				}
				y, err := tzToTimestamp(a[1].(types.TimestampTZ), loc)
				if err != nil {
					return nil, err
				}
				return age(int64(x.(types.Timestamp)), int64(y.(types.Timestamp)))
			}},
		f1("to_timestamp", types.TFloat8, types.TTimestampTZ, func(a types.Datum) (types.Datum, error) {
			s := a.(float64)
			switch {
			case math.IsNaN(s):
				return nil, EvalError(StateDatetimeFieldOverflow, "timestamp cannot be NaN")
			case math.IsInf(s, 1):
				return types.TimestampTZPosInfinity, nil
			case math.IsInf(s, -1):
				return types.TimestampTZNegInfinity, nil
			}
			us := math.RoundToEven((s - 946684800) * 1e6)
			if us < -211813488000000000 || us >= 9223371331200000000 {
				return nil, EvalError(StateDatetimeFieldOverflow, "timestamp out of range: \"%s\"", types.Format(types.TFloat8, s))
			}
			return types.TimestampTZ(int64(us)), nil
		}),
		f1("justify_hours", types.TInterval, types.TInterval, func(a types.Datum) (types.Datum, error) { return justifyHours(a.(types.Interval)), nil }),
		f1("justify_days", types.TInterval, types.TInterval, func(a types.Datum) (types.Datum, error) { return justifyDays(a.(types.Interval)), nil }),
		f1("justify_interval", types.TInterval, types.TInterval, func(a types.Datum) (types.Datum, error) {
			return justifyInterval(a.(types.Interval)), nil
		}),
		f1("isfinite", types.TDate, types.TBool, func(a types.Datum) (types.Datum, error) { return a.(types.Date).IsFinite(), nil }),
		f1("isfinite", types.TTimestamp, types.TBool, func(a types.Datum) (types.Datum, error) { return a.(types.Timestamp).IsFinite(), nil }),
		f1("isfinite", types.TTimestampTZ, types.TBool, func(a types.Datum) (types.Datum, error) { return a.(types.TimestampTZ).IsFinite(), nil }),
	)
	// The statement clock. These read Env.StatementTime; views accept them
	// only in temporal filters, which the shard evaluates at each epoch's
	// time (op.TemporalFilter).
	// mz_now() is Materialize's name for the time a view is maintained at
	// (its temporal filters); ad hoc it is now().
	for _, name := range []string{"now", "current_timestamp", "transaction_timestamp", "statement_timestamp", "mz_now"} {
		add(&Func{Name: name, Result: types.TTimestampTZ, Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) { return statementTime(env), nil }})
	}
	add(&Func{Name: "clock_timestamp", Result: types.TTimestampTZ, Strict: true, Volatility: Volatile,
		Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) { return statementTime(env), nil }},
		&Func{Name: "localtimestamp", Result: types.TTimestamp, Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				return tzToTimestamp(statementTime(env), envZone(env))
			}},
		&Func{Name: "current_date", Result: types.TDate, Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				ts, err := tzToTimestamp(statementTime(env), envZone(env))
				if err != nil {
					return nil, err
				}
				return timestampToDate(int64(ts.(types.Timestamp)))
			}},
	)
}

func statementTime(env *Env) types.TimestampTZ {
	if env == nil {
		return 0
	}
	return env.StatementTime
}

func truncTZ(unitText string, ts types.TimestampTZ, loc *time.Location) (types.Datum, error) {
	unit := normalizeUnit(unitText)
	if !ts.IsFinite() {
		return ts, nil
	}
	off := types.ZoneOffset(ts, loc)
	local := int64(ts) + int64(off)*types.MicrosPerSecond
	f, ok := truncFields(types.Fields(local), unit)
	if !ok {
		return nil, unitError(unitText, types.TTimestampTZ)
	}
	truncated := types.FromFields(f)
	switch unit {
	case "hour", "minute", "second", "milliseconds", "microseconds":
		// PostgreSQL keeps the original offset below a day.
	default:
		off = types.LocalOffset(truncated, loc)
	}
	return types.TimestampTZ(truncated - int64(off)*types.MicrosPerSecond), nil
}

func truncInterval(unitText string, iv types.Interval) (types.Datum, error) {
	unit := normalizeUnit(unitText)
	year := iv.Months / 12
	mon := iv.Months % 12
	t := iv.Micros
	hour := t / types.MicrosPerHour
	t -= hour * types.MicrosPerHour
	min := t / types.MicrosPerMinute
	t -= min * types.MicrosPerMinute
	sec := t / types.MicrosPerSecond
	fsec := t - sec*types.MicrosPerSecond
	day := iv.Days
	switch unit {
	case "millennium":
		year = (year / 1000) * 1000
		mon, day, hour, min, sec, fsec = 0, 0, 0, 0, 0, 0
	case "century":
		year = (year / 100) * 100
		mon, day, hour, min, sec, fsec = 0, 0, 0, 0, 0, 0
	case "decade":
		year = (year / 10) * 10
		mon, day, hour, min, sec, fsec = 0, 0, 0, 0, 0, 0
	case "year":
		mon, day, hour, min, sec, fsec = 0, 0, 0, 0, 0, 0
	case "quarter":
		mon = 3 * (mon / 3)
		day, hour, min, sec, fsec = 0, 0, 0, 0, 0
	case "month":
		day, hour, min, sec, fsec = 0, 0, 0, 0, 0
	case "day":
		hour, min, sec, fsec = 0, 0, 0, 0
	case "hour":
		min, sec, fsec = 0, 0, 0
	case "minute":
		sec, fsec = 0, 0
	case "second":
		fsec = 0
	case "milliseconds":
		fsec = (fsec / 1000) * 1000
	case "microseconds":
	case "week":
		return nil, EvalError(StateFeatureNotSupported, "unit \"%s\" not supported for type interval", unitText).
			WithDetail("Months usually have fractional weeks.")
	default:
		return nil, unitError(unitText, types.TInterval)
	}
	return types.Interval{Months: year*12 + mon, Days: day,
		Micros: hour*types.MicrosPerHour + min*types.MicrosPerMinute + sec*types.MicrosPerSecond + fsec}, nil
}

// intNumeric is an integer numeric.
func intNumeric(v int64) *apd.Decimal { return apd.New(v, 0) }

// scaledNumeric is v × 10^-scale with that scale.
func scaledNumeric(v int64, scale int32) *apd.Decimal { return apd.New(v, -scale) }

// yearField converts the internal year (0 = 1 BC) to the SQL year (-1 = 1 BC).
func yearField(y int) int64 {
	if y > 0 {
		return int64(y)
	}
	return int64(y) - 1
}

// extractField implements extract(field FROM v) (numeric) and, through a
// float conversion, date_part.
func extractField(env *Env, unitText string, t types.Type, v types.Datum, forExtract bool) (types.Datum, error) {
	unit := normalizeUnit(unitText)
	lower := strings.ToLower(strings.TrimSpace(unitText))
	switch t.Kind {
	case types.KindInterval:
		return extractInterval(unitText, unit, lower, v.(types.Interval))
	case types.KindTime:
		us := int64(v.(types.TimeOfDay))
		switch unit {
		case "microseconds":
			return intNumeric(us % types.MicrosPerMinute), nil
		case "milliseconds":
			return scaledNumeric(us%types.MicrosPerMinute, 3), nil
		case "second":
			return scaledNumeric(us%types.MicrosPerMinute, 6), nil
		case "minute":
			return intNumeric(us / types.MicrosPerMinute % 60), nil
		case "hour":
			return intNumeric(us / types.MicrosPerHour), nil
		}
		if lower == "epoch" {
			return scaledNumeric(us, 6), nil
		}
		return nil, unitError(unitText, t)
	}
	var us int64
	tzOffset := 0
	isDate := t.Kind == types.KindDate
	switch t.Kind {
	case types.KindDate:
		d := v.(types.Date)
		if !d.IsFinite() {
			return extractInfinite(unitText, unit, lower, t, d == types.DatePosInfinity)
		}
		us = int64(d) * types.MicrosPerDay
	case types.KindTimestamp:
		ts := v.(types.Timestamp)
		if !ts.IsFinite() {
			return extractInfinite(unitText, unit, lower, t, ts == types.TimestampPosInfinity)
		}
		us = int64(ts)
	case types.KindTimestampTZ:
		ts := v.(types.TimestampTZ)
		if !ts.IsFinite() {
			return extractInfinite(unitText, unit, lower, t, ts == types.TimestampTZPosInfinity)
		}
		tzOffset = types.ZoneOffset(ts, envZone(env))
		us = int64(ts) + int64(tzOffset)*types.MicrosPerSecond
	}
	f := types.Fields(us)
	if isDate {
		switch unit {
		case "microseconds", "milliseconds", "second", "minute", "hour":
			return nil, unitNotSupported(unitText, t)
		}
	}
	switch unit {
	case "microseconds":
		return intNumeric(int64(f.Second)*1_000_000 + int64(f.Micros)), nil
	case "milliseconds":
		return scaledNumeric(int64(f.Second)*1_000_000+int64(f.Micros), 3), nil
	case "second":
		return scaledNumeric(int64(f.Second)*1_000_000+int64(f.Micros), 6), nil
	case "minute":
		return intNumeric(int64(f.Minute)), nil
	case "hour":
		return intNumeric(int64(f.Hour)), nil
	case "day":
		return intNumeric(int64(f.Day)), nil
	case "month":
		return intNumeric(int64(f.Month)), nil
	case "quarter":
		return intNumeric(int64((f.Month-1)/3 + 1)), nil
	case "week":
		_, w := isoWeek(types.MakeDate(f.Year, f.Month, f.Day))
		return intNumeric(int64(w)), nil
	case "year":
		return intNumeric(yearField(f.Year)), nil
	case "decade":
		if f.Year >= 0 {
			return intNumeric(int64(f.Year / 10)), nil
		}
		return intNumeric(-int64((8 - (f.Year - 1)) / 10)), nil
	case "century":
		if f.Year > 0 {
			return intNumeric(int64((f.Year + 99) / 100)), nil
		}
		return intNumeric(-int64((99 - (f.Year - 1)) / 100)), nil
	case "millennium":
		if f.Year > 0 {
			return intNumeric(int64((f.Year + 999) / 1000)), nil
		}
		return intNumeric(-int64((999 - (f.Year - 1)) / 1000)), nil
	}
	switch lower {
	case "dow":
		return intNumeric(int64(dow(types.MakeDate(f.Year, f.Month, f.Day)))), nil
	case "isodow":
		return intNumeric(int64(isoDow(types.MakeDate(f.Year, f.Month, f.Day)))), nil
	case "doy":
		return intNumeric(int64(dayOfYear(f.Year, f.Month, f.Day))), nil
	case "isoyear":
		y, _ := isoWeek(types.MakeDate(f.Year, f.Month, f.Day))
		if y <= 0 {
			y--
		}
		return intNumeric(int64(y)), nil
	case "epoch":
		var epochUs int64
		if t.Kind == types.KindTimestampTZ {
			epochUs = int64(v.(types.TimestampTZ)) + 946684800*types.MicrosPerSecond
		} else {
			epochUs = us + 946684800*types.MicrosPerSecond
		}
		if isDate {
			return intNumeric(epochUs / types.MicrosPerSecond), nil
		}
		return scaledNumeric(epochUs, 6), nil
	case "julian":
		j := int64(types.MakeDate(f.Year, f.Month, f.Day)) + 2451545
		if isDate {
			return intNumeric(j), nil
		}
		// Julian day plus the fraction of the day, exactly.
		frac := new(apd.Decimal)
		tod := int64(f.Hour)*types.MicrosPerHour + int64(f.Minute)*types.MicrosPerMinute + int64(f.Second)*types.MicrosPerSecond + int64(f.Micros)
		r, err := numDiv(scaledNumeric(tod, 6), intNumeric(86400))
		if err != nil {
			return nil, err
		}
		numCtx().Add(frac, intNumeric(j), r.(*apd.Decimal))
		return numericResult(frac)
	case "timezone":
		if t.Kind == types.KindTimestampTZ {
			return intNumeric(int64(tzOffset)), nil
		}
	case "timezone_hour":
		if t.Kind == types.KindTimestampTZ {
			return intNumeric(int64(tzOffset / 3600)), nil
		}
	case "timezone_minute":
		if t.Kind == types.KindTimestampTZ {
			return intNumeric(int64(tzOffset / 60 % 60)), nil
		}
	}
	if lower == "timezone" || lower == "timezone_hour" || lower == "timezone_minute" {
		return nil, unitNotSupported(unitText, t)
	}
	return nil, unitError(unitText, t)
}

// extractInfinite: infinite inputs give ±Infinity for monotonic fields and
// NULL for the others (PostgreSQL 14+).
func extractInfinite(unitText, unit, lower string, t types.Type, positive bool) (types.Datum, error) {
	switch unit {
	case "year", "decade", "century", "millennium":
		return numInf(!positive), nil
	}
	switch lower {
	case "epoch", "julian", "isoyear":
		return numInf(!positive), nil
	}
	switch unit {
	case "microseconds", "milliseconds", "second", "minute", "hour":
		if t.Kind == types.KindDate {
			return nil, unitNotSupported(unitText, t)
		}
		return nil, nil
	case "day", "month", "quarter", "week":
		return nil, nil
	}
	switch lower {
	case "dow", "isodow", "doy", "timezone", "timezone_hour", "timezone_minute":
		return nil, nil
	}
	return nil, unitError(unitText, t)
}

func extractInterval(unitText, unit, lower string, iv types.Interval) (types.Datum, error) {
	year := int64(iv.Months / 12)
	mon := int64(iv.Months % 12)
	t := iv.Micros
	hour := t / types.MicrosPerHour
	t -= hour * types.MicrosPerHour
	min := t / types.MicrosPerMinute
	t -= min * types.MicrosPerMinute
	secUs := t // seconds and fraction in microseconds
	switch unit {
	case "microseconds":
		return intNumeric(secUs), nil
	case "milliseconds":
		return scaledNumeric(secUs, 3), nil
	case "second":
		return scaledNumeric(secUs, 6), nil
	case "minute":
		return intNumeric(min), nil
	case "hour":
		return intNumeric(hour), nil
	case "day":
		return intNumeric(int64(iv.Days)), nil
	case "month":
		return intNumeric(mon), nil
	case "quarter":
		return intNumeric(mon/3 + 1), nil
	case "year":
		return intNumeric(year), nil
	case "decade":
		return intNumeric(year / 10), nil
	case "century":
		return intNumeric(year / 100), nil
	case "millennium":
		return intNumeric(year / 1000), nil
	case "week":
		return nil, unitNotSupported(unitText, types.TInterval)
	}
	if lower == "epoch" {
		// 365.25 days per year, 30 per month, exactly: in microseconds,
		// year*365.25*86400e6 = year*31557600e6.
		secsDays := year*31557600 + mon*30*86400 + int64(iv.Days)*86400
		total := new(apd.Decimal)
		numCtx().Add(total, scaledNumeric(iv.Micros, 6), apd.New(secsDays, 0))
		return numericResult(total)
	}
	return nil, unitError(unitText, types.TInterval)
}

func makeDate(y, m, d int64) (types.Datum, error) {
	bad := func() error {
		return EvalError(StateDatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	year := y
	if year == 0 {
		return nil, bad()
	}
	if year < 0 {
		year++
	}
	if m < 1 || m > 12 || d < 1 || year > 5874897 || year < -4713 || d > int64(types.DaysInMonth(int(year), int(m))) {
		return nil, bad()
	}
	date := types.MakeDate(int(year), int(m), int(d))
	if !types.DateInRange(date) {
		return nil, EvalError(StateDatetimeFieldOverflow, "date out of range: %d-%02d-%02d", y, m, d)
	}
	return date, nil
}

func makeTimestamp(y, m, d, h, mi int64, sec float64) (types.Datum, error) {
	dd, err := makeDate(y, m, d)
	if err != nil {
		return nil, err
	}
	if h < 0 || h > 24 || mi < 0 || mi > 59 || sec < 0 || sec > 60 || math.IsNaN(sec) ||
		(h == 24 && (mi > 0 || sec > 0)) {
		return nil, EvalError(StateDatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, mi, types.Format(types.TFloat8, sec))
	}
	us := int64(dd.(types.Date))*types.MicrosPerDay + h*types.MicrosPerHour + mi*types.MicrosPerMinute + int64(math.RoundToEven(sec*1e6))
	if !types.TimestampInRange(us) {
		return nil, errTimestampRange()
	}
	return types.Timestamp(us), nil
}

// age is PostgreSQL's symbolic difference of two timestamps.
func age(dt1, dt2 int64) (types.Datum, error) {
	if dt1 == math.MaxInt64 || dt1 == math.MinInt64 || dt2 == math.MaxInt64 || dt2 == math.MinInt64 {
		return nil, EvalError(StateDatetimeFieldOverflow, "interval out of range")
	}
	t1, t2 := types.Fields(dt1), types.Fields(dt2)
	usec := t1.Micros - t2.Micros
	sec := t1.Second - t2.Second
	min := t1.Minute - t2.Minute
	hour := t1.Hour - t2.Hour
	mday := t1.Day - t2.Day
	mon := t1.Month - t2.Month
	year := t1.Year - t2.Year
	flip := dt1 < dt2
	if flip {
		usec, sec, min, hour, mday, mon, year = -usec, -sec, -min, -hour, -mday, -mon, -year
	}
	for usec < 0 {
		usec += 1_000_000
		sec--
	}
	for sec < 0 {
		sec += 60
		min--
	}
	for min < 0 {
		min += 60
		hour--
	}
	for hour < 0 {
		hour += 24
		mday--
	}
	for mday < 0 {
		if flip {
			mday += types.DaysInMonth(t1.Year, t1.Month)
		} else {
			mday += types.DaysInMonth(t2.Year, t2.Month)
		}
		mon--
	}
	for mon < 0 {
		mon += 12
		year--
	}
	if flip {
		usec, sec, min, hour, mday, mon, year = -usec, -sec, -min, -hour, -mday, -mon, -year
	}
	return types.Interval{
		Months: int32(year*12 + mon),
		Days:   int32(mday),
		Micros: ((int64(hour)*60+int64(min))*60+int64(sec))*types.MicrosPerSecond + int64(usec),
	}, nil
}
