package types

import (
	"math"
	"strconv"
	"strings"
)

// Interval input: PostgreSQL's postgres style ("1 year 2 mons 3 days
// 04:05:06", "-1 days +02:00:00", "3 hours", "@ 1 day ago", "1.5 days"),
// bare seconds ("90"), and ISO 8601 durations ("P1Y2M3DT4H5M6S", "PT1H",
// "P1W"). Fractional units cascade down as in PostgreSQL (1.5 months = 1
// month 15 days).

type intervalAcc struct {
	months int64
	days   int64
	micros float64 // accumulated exactly enough: integers below 2^53 are exact
	usInt  int64
}

func (a *intervalAcc) addMicros(v float64) {
	whole := math.Trunc(v)
	a.usInt += int64(whole)
	a.micros += v - whole
}

// addUnit adds value (with fraction) of a unit, cascading fractions.
func (a *intervalAcc) addUnit(unit string, val float64) bool {
	whole := math.Trunc(val)
	frac := val - whole
	switch unit {
	case "microsecond":
		a.addMicros(val)
	case "millisecond":
		a.addMicros(val * 1000)
	case "second":
		a.addMicros(val * 1e6)
	case "minute":
		a.addMicros(val * 6e7)
	case "hour":
		a.addMicros(val * 3.6e9)
	case "day":
		a.days += int64(whole)
		a.addMicros(frac * float64(MicrosPerDay))
	case "week":
		a.days += int64(whole) * 7
		d := frac * 7
		dw := math.Trunc(d)
		a.days += int64(dw)
		a.addMicros((d - dw) * float64(MicrosPerDay))
	case "month":
		a.months += int64(whole)
		d := frac * DaysPerMonth
		dw := math.Trunc(d)
		a.days += int64(dw)
		a.addMicros((d - dw) * float64(MicrosPerDay))
	case "year":
		a.months += int64(whole)*12 + int64(math.Round(frac*12))
	case "decade":
		a.months += int64(whole)*120 + int64(math.Round(frac*120))
	case "century":
		a.months += int64(whole)*1200 + int64(math.Round(frac*1200))
	case "millennium":
		a.months += int64(whole)*12000 + int64(math.Round(frac*12000))
	default:
		return false
	}
	return true
}

//lint:immutable a constant table.
var intervalUnits = map[string]string{
	"microsecond": "microsecond", "microseconds": "microsecond", "microsecon": "microsecond", "us": "microsecond", "usec": "microsecond", "usecs": "microsecond", "useconds": "microsecond", "usecond": "microsecond",
	"millisecond": "millisecond", "milliseconds": "millisecond", "ms": "millisecond", "msec": "millisecond", "msecs": "millisecond", "mseconds": "millisecond", "millisecon": "millisecond",
	"second": "second", "seconds": "second", "sec": "second", "secs": "second", "s": "second",
	"minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute", "m": "minute",
	"hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour", "h": "hour",
	"day": "day", "days": "day", "d": "day",
	"week": "week", "weeks": "week", "w": "week",
	"month": "month", "months": "month", "mon": "month", "mons": "month",
	"year": "year", "years": "year", "yr": "year", "yrs": "year", "y": "year",
	"decade": "decade", "decades": "decade", "dec": "decade", "decs": "decade",
	"century": "century", "centuries": "century", "cent": "century", "c": "century",
	"millennium": "millennium", "millennia": "millennium", "millenniums": "millennium", "mil": "millennium", "mils": "millennium",
}

// ParseInterval reads interval input (IntervalStyle postgres).
func ParseInterval(s string) (Datum, error) {
	return parseInterval(s, "second", false, IntervalStylePostgres)
}

// ParseIntervalStyle reads interval input under IntervalStyle style.
// Every style's output is read under every style; only sql_standard
// changes a reading: there a leading minus with no other sign in the
// value applies to every field ('-1 2:03:04' is minus one day, two hours,
// three minutes and four seconds, where postgres reads minus one day
// plus the time).
func ParseIntervalStyle(s string, style IntervalStyle) (Datum, error) {
	return parseInterval(s, "second", false, style)
}

// parseInterval reads interval input whose bare numbers are in bareUnit
// (parsePostgresInterval).
func parseInterval(s string, bareUnit string, minutesSeconds bool, style IntervalStyle) (Datum, error) {
	bad := func() error {
		return InputError(StateInvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
	}
	v := trimSpace(s)
	if v == "" {
		return nil, bad()
	}
	var acc intervalAcc
	var ok bool
	if v[0] == 'P' || v[0] == 'p' {
		ok = parseISOInterval(&acc, v[1:])
	} else {
		forceNegative := style == IntervalStyleSQLStandard && leadingSignOnly(v)
		ok = parsePostgresInterval(&acc, v, bareUnit, minutesSeconds, forceNegative)
	}
	if !ok {
		return nil, bad()
	}
	us := acc.usInt + int64(math.RoundToEven(acc.micros))
	if acc.months > math.MaxInt32 || acc.months < math.MinInt32 || acc.days > math.MaxInt32 || acc.days < math.MinInt32 {
		return nil, InputError(StateIntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
	}
	return Interval{Months: int32(acc.months), Days: int32(acc.days), Micros: us}, nil
}

// leadingSignOnly reports whether v's first field starts with a minus
// and no later field has a sign of its own.
func leadingSignOnly(v string) bool {
	fields := strings.Fields(v)
	for len(fields) > 0 && fields[0] == "@" {
		fields = fields[1:]
	}
	if len(fields) == 0 || fields[0][0] != '-' {
		return false
	}
	for _, f := range fields[1:] {
		if f[0] == '-' || f[0] == '+' {
			return false
		}
	}
	return true
}

// negatePositive makes the positive parts (months, days, time) negative.
func (a *intervalAcc) negatePositive() {
	if a.months > 0 {
		a.months = -a.months
	}
	if a.days > 0 {
		a.days = -a.days
	}
	if float64(a.usInt)+a.micros > 0 {
		a.usInt, a.micros = -a.usInt, -a.micros
	}
}

// tokenizeInterval splits "1day", "-2 hours" etc. into numbers, words and
// clock fields.
func tokenizeInterval(v string) []string {
	var out []string
	for _, f := range strings.Fields(v) {
		// Split a number glued to a unit ("1day", "3h").
		i := 0
		if i < len(f) && (f[i] == '+' || f[i] == '-') {
			i++
		}
		j := i
		for j < len(f) && (isDigit(f[j]) || f[j] == '.' || f[j] == ':') {
			j++
		}
		if j > i && j < len(f) && isLetter(f[j]) && !strings.Contains(f[:j], ":") {
			out = append(out, f[:j], f[j:])
			continue
		}
		out = append(out, f)
	}
	return out
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// Field bits: each unit may appear once (PostgreSQL's tmask check); a
// clock field covers hours, minutes and seconds.
const (
	fieldMicrosecond = 1 << iota
	fieldMillisecond
	fieldSecond
	fieldMinute
	fieldHour
	fieldDay
	fieldWeek
	fieldMonth
	fieldYear
	fieldDecade
	fieldCentury
	fieldMillennium
)

func unitField(unit string, fractional bool) int {
	switch unit {
	case "microsecond":
		return fieldMicrosecond
	case "millisecond":
		return fieldMillisecond
	case "second":
		if fractional {
			return fieldSecond | fieldMillisecond | fieldMicrosecond
		}
		return fieldSecond
	case "minute":
		return fieldMinute
	case "hour":
		return fieldHour
	case "day":
		return fieldDay
	case "week":
		return fieldWeek
	case "month":
		return fieldMonth
	case "year":
		return fieldYear
	case "decade":
		return fieldDecade
	case "century":
		return fieldCentury
	}
	return fieldMillennium
}

// parsePostgresInterval reads PostgreSQL's interval syntax the way its
// DecodeInterval does: right to left, so that a unit word types the number
// on its left, and a bare number takes the current type: at first
// bareUnit (seconds, or a restricted type's last field), days after an
// hour or a clock field ("1 2:03" is a day and a time, "1 2 hours" a day
// and hours), and otherwise the type of the number on its right, which
// then repeats a field and is refused ("3 1 day"). "Y-M" is years and
// months; under MINUTE TO SECOND a two-part clock is minutes and seconds.
//
// With forceNegative (sql_standard's leading minus) every field is made
// negative as it is read, before "ago" flips the whole value.
func parsePostgresInterval(total *intervalAcc, v string, bareUnit string, minutesSeconds, forceNegative bool) bool {
	// Each field is read into acc, then added to the total.
	acc := &intervalAcc{}
	flush := func() {
		if forceNegative {
			acc.negatePositive()
		}
		total.months += acc.months
		total.days += acc.days
		total.usInt += acc.usInt
		total.micros += acc.micros
		*acc = intervalAcc{}
	}
	toks := tokenizeInterval(v)
	ago := false
	items := toks[:0:0]
	for i, tok := range toks {
		switch strings.ToLower(tok) {
		case "@":
			continue
		case "ago":
			if i != len(toks)-1 {
				return false
			}
			ago = true
			continue
		}
		items = append(items, tok)
	}
	seen := 0
	mark := func(bits int) bool {
		if seen&bits != 0 {
			return false
		}
		seen |= bits
		return true
	}
	typ := bareUnit
	for i := len(items) - 1; i >= 0; i-- {
		tok := items[i]
		lower := strings.ToLower(tok)
		if unit, ok := intervalUnits[lower]; ok {
			// A unit word needs a number on its left.
			if i == 0 {
				return false
			}
			if _, alsoUnit := intervalUnits[strings.ToLower(items[i-1])]; alsoUnit {
				return false
			}
			typ = unit
			continue
		}
		if strings.Contains(tok, ":") {
			clock := tok
			if minutesSeconds && strings.Count(tok, ":") == 1 {
				sign := ""
				if clock[0] == '+' || clock[0] == '-' {
					sign, clock = clock[:1], clock[1:]
				}
				clock = sign + "0:" + clock
			}
			if !mark(fieldHour|fieldMinute|fieldSecond|fieldMillisecond|fieldMicrosecond) || !parseIntervalClock(acc, clock) {
				return false
			}
			flush()
			typ = "day"
			continue
		}
		if years, months, ok := parseYearMonth(tok); ok {
			if !mark(fieldYear | fieldMonth) {
				return false
			}
			acc.months += years*12 + months
			flush()
			continue
		}
		val, err := strconv.ParseFloat(tok, 64)
		if err != nil || strings.ContainsAny(lower, "xpn_i") {
			return false
		}
		if !mark(unitField(typ, strings.Contains(tok, "."))) {
			return false
		}
		acc.addUnit(typ, val)
		flush()
		if typ == "hour" {
			typ = "day"
		}
	}
	if ago {
		total.months, total.days, total.usInt, total.micros = -total.months, -total.days, -total.usInt, -total.micros
	}
	return true
}

// parseYearMonth reads the SQL-standard "[+-]Y-M" (the sign applies to
// both): "1-2" is 1 year 2 months, "-1-2" minus both.
func parseYearMonth(tok string) (years, months int64, ok bool) {
	neg := false
	if tok != "" && (tok[0] == '+' || tok[0] == '-') {
		neg, tok = tok[0] == '-', tok[1:]
	}
	y, m, found := strings.Cut(tok, "-")
	if !found || !allDigits(y) || !allDigits(m) || y == "" || m == "" || len(y) > 9 || len(m) > 9 {
		return 0, 0, false
	}
	years, _ = strconv.ParseInt(y, 10, 64)
	months, _ = strconv.ParseInt(m, 10, 64)
	if neg {
		years, months = -years, -months
	}
	return years, months, true
}

// parseIntervalClock reads [+-]H:M[:S[.f]] (hours may exceed 24).
func parseIntervalClock(acc *intervalAcc, tok string) bool {
	neg := false
	if tok[0] == '+' || tok[0] == '-' {
		neg = tok[0] == '-'
		tok = tok[1:]
	}
	parts := strings.Split(tok, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 64)
	m, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || !allDigits(parts[0]) || !allDigits(parts[1]) || m > 59 {
		return false
	}
	us := h*MicrosPerHour + m*MicrosPerMinute
	if len(parts) == 3 {
		secText := parts[2]
		frac := ""
		if i := strings.IndexByte(secText, '.'); i >= 0 {
			secText, frac = secText[:i], secText[i+1:]
		}
		if !allDigits(secText) || (frac != "" && !allDigits(frac)) {
			return false
		}
		sec, _ := strconv.ParseInt(secText, 10, 64)
		if sec > 59 {
			return false
		}
		us += sec * MicrosPerSecond
		if frac != "" {
			f, _ := strconv.ParseFloat("0."+frac, 64)
			us += int64(math.RoundToEven(f * 1e6))
		}
	}
	if neg {
		us = -us
	}
	acc.usInt += us
	return true
}

// parseISOInterval reads the part after "P" of an ISO 8601 duration.
func parseISOInterval(acc *intervalAcc, v string) bool {
	if v == "" {
		return false
	}
	inTime := false
	for len(v) > 0 {
		if v[0] == 'T' || v[0] == 't' {
			if inTime {
				return false
			}
			inTime = true
			v = v[1:]
			continue
		}
		j := 0
		if j < len(v) && (v[j] == '+' || v[j] == '-') {
			j++
		}
		for j < len(v) && (isDigit(v[j]) || v[j] == '.') {
			j++
		}
		if j == 0 || j >= len(v) {
			return false
		}
		val, err := strconv.ParseFloat(v[:j], 64)
		if err != nil {
			return false
		}
		var unit string
		switch v[j] {
		case 'Y', 'y':
			unit = "year"
		case 'M', 'm':
			if inTime {
				unit = "minute"
			} else {
				unit = "month"
			}
		case 'W', 'w':
			unit = "week"
		case 'D', 'd':
			unit = "day"
		case 'H', 'h':
			unit = "hour"
		case 'S', 's':
			unit = "second"
		default:
			return false
		}
		if inTime != (unit == "hour" || unit == "minute" || unit == "second") {
			return false
		}
		acc.addUnit(unit, val)
		v = v[j+1:]
	}
	return true
}
