package types

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Date/time input: a subset of PostgreSQL's ParseDateTime/DecodeDateTime
// covering the forms clients actually send: ISO 8601 dates and timestamps
// ("2024-01-31", "2024-01-31 10:11:12.5+02", "2024-01-31T10:11:12Z"),
// DateStyle MDY slashed dates ("1/31/2024"), month names ("Jan 31 2024",
// "31 January 2024"), AD/BC, AM/PM, numeric and named zones, and the
// special words infinity, -infinity, epoch and allballs.

// dtFields is one decoded date/time string.
type dtFields struct {
	year, month, day  int
	hasDate, hasTime  bool
	hour, minute, sec int
	micros            int64
	bc                bool
	pm, am            bool
	hasZone           bool
	zoneOffset        int // seconds east of UTC
	zoneLoc           *time.Location
	special           string // "infinity", "-infinity", "epoch", "allballs"
	twoDigitYear      bool
}

type dtErr int

const (
	dtOK dtErr = iota
	dtBadFormat
	dtFieldOverflow
	dtMDFieldOverflow
	dtTZDispOverflow
)

func dtError(e dtErr, typeName, s string) error {
	switch e {
	case dtFieldOverflow:
		return InputError(StateDatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	case dtMDFieldOverflow:
		err := InputError(StateDatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
		err.Hint = "Perhaps you need a different \"datestyle\" setting."
		return err
	case dtTZDispOverflow:
		return InputError(StateInvalidTimeZoneDisp, "time zone displacement out of range: \"%s\"", s)
	}
	return InputError(StateInvalidDatetimeFormat, "invalid input syntax for type %s: \"%s\"", typeName, s)
}

//lint:immutable a constant table.
var monthNames = map[string]int{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3,
	"apr": 4, "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7,
	"aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9, "oct": 10,
	"october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

//lint:immutable a constant table.
var weekdayNames = map[string]bool{
	"sun": true, "sunday": true, "mon": true, "monday": true, "tue": true, "tues": true,
	"tuesday": true, "wed": true, "wednesday": true, "thu": true, "thur": true,
	"thurs": true, "thursday": true, "fri": true, "friday": true, "sat": true, "saturday": true,
}

//lint:immutable a constant table of zone abbreviations (seconds east of UTC).
var zoneAbbrevs = map[string]int{
	"utc": 0, "gmt": 0, "z": 0, "zulu": 0, "ut": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"cet": 3600, "cest": 2 * 3600, "eet": 2 * 3600, "eest": 3 * 3600,
	"bst": 3600, "ist": 2 * 3600, "jst": 9 * 3600, "msk": 3 * 3600,
}

// splitDateTimeTokens splits on whitespace and commas, and splits an ISO
// "T" between a date and a time.
func splitDateTimeTokens(s string) []string {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ','
	})
	var out []string
	for _, f := range fields {
		// ISO 8601 "2024-01-31T10:00:00": split at a T followed by a digit.
		if i := strings.IndexAny(f, "Tt"); i > 0 && i+1 < len(f) && isDigit(f[i-1]) && isDigit(f[i+1]) {
			out = append(out, f[:i], f[i+1:])
			continue
		}
		out = append(out, f)
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseZoneOffset reads "+05", "-0530", "+05:30", "+05:30:15".
func parseZoneOffset(z string) (int, dtErr) {
	if len(z) < 2 || (z[0] != '+' && z[0] != '-') {
		return 0, dtBadFormat
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	body := z[1:]
	var h, m, sec int
	var err error
	if strings.Contains(body, ":") {
		parts := strings.Split(body, ":")
		if len(parts) > 3 {
			return 0, dtBadFormat
		}
		vals := make([]int, 3)
		for i, p := range parts {
			if !allDigits(p) {
				return 0, dtBadFormat
			}
			vals[i], err = strconv.Atoi(p)
			if err != nil {
				return 0, dtBadFormat
			}
		}
		h, m, sec = vals[0], vals[1], vals[2]
	} else {
		if !allDigits(body) {
			return 0, dtBadFormat
		}
		switch len(body) {
		case 1, 2:
			h, _ = strconv.Atoi(body)
		case 3, 4:
			h, _ = strconv.Atoi(body[:len(body)-2])
			m, _ = strconv.Atoi(body[len(body)-2:])
		case 5, 6:
			h, _ = strconv.Atoi(body[:len(body)-4])
			m, _ = strconv.Atoi(body[len(body)-4 : len(body)-2])
			sec, _ = strconv.Atoi(body[len(body)-2:])
		default:
			return 0, dtBadFormat
		}
	}
	if m >= 60 || sec >= 60 {
		return 0, dtFieldOverflow
	}
	off := sign * (h*3600 + m*60 + sec)
	if h > 15 {
		return 0, dtTZDispOverflow
	}
	return off, dtOK
}

// parseClock reads "HH:MM[:SS[.ffffff]]" into f.
func parseClock(f *dtFields, tok string) dtErr {
	parts := strings.Split(tok, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return dtBadFormat
	}
	if !allDigits(parts[0]) || !allDigits(parts[1]) {
		return dtBadFormat
	}
	f.hour, _ = strconv.Atoi(parts[0])
	f.minute, _ = strconv.Atoi(parts[1])
	if len(parts) == 3 {
		secText := parts[2]
		frac := ""
		if i := strings.IndexByte(secText, '.'); i >= 0 {
			frac = secText[i+1:]
			secText = secText[:i]
			if frac != "" && !allDigits(frac) {
				return dtBadFormat
			}
		}
		if !allDigits(secText) {
			return dtBadFormat
		}
		f.sec, _ = strconv.Atoi(secText)
		if frac != "" {
			// Round to microseconds as PostgreSQL does (rint of the fraction).
			v, err := strconv.ParseFloat("0."+frac, 64)
			if err != nil {
				return dtBadFormat
			}
			f.micros = int64(math.RoundToEven(v * 1e6))
		}
	}
	f.hasTime = true
	return dtOK
}

// Date field bits: which of year, month and day a decode has set
// (PostgreSQL's fmask over DTK_DATE_M).
const (
	dateYear = 1 << iota
	dateMonth
	dateDay
	dateAll = dateYear | dateMonth | dateDay
)

// dateDecoder carries the state PostgreSQL's DecodeNumber reads: the date
// fields set so far, whether the month was a name, and the DateStyle
// field order that types an ambiguous first number.
type dateDecoder struct {
	f             *dtFields
	fmask         int
	haveTextMonth bool
	order         DateOrder
}

// number types one run of digits (DecodeNumber): a first number of three
// or more digits is a year; otherwise the field order decides what the
// first number is, and the fields set so far what the next one is.
func (d *dateDecoder) number(tok string) dtErr {
	val, err := strconv.Atoi(tok)
	if err != nil || val > math.MaxInt32 {
		return dtFieldOverflow
	}
	flen := len(tok)
	f := d.f
	var set int
	switch d.fmask & dateAll {
	case 0:
		switch {
		case flen >= 3 || d.order == DateOrderYMD:
			set, f.year = dateYear, val
		case d.order == DateOrderDMY:
			set, f.day = dateDay, val
		default:
			set, f.month = dateMonth, val
		}
	case dateYear:
		set, f.month = dateMonth, val
	case dateMonth:
		if d.haveTextMonth && (flen >= 3 || d.order == DateOrderYMD) {
			set, f.year = dateYear, val
		} else {
			set, f.day = dateDay, val
		}
	case dateYear | dateMonth:
		if d.haveTextMonth && flen >= 3 && f.twoDigitYear {
			// DD-MON-YYYY: the first number was the day after all.
			set, f.day, f.year, f.twoDigitYear = dateDay, f.year, val, false
		} else {
			set, f.day = dateDay, val
		}
	case dateDay:
		set, f.month = dateMonth, val
	case dateMonth | dateDay:
		set, f.year = dateYear, val
	default:
		return dtBadFormat
	}
	if d.fmask&set != 0 {
		return dtBadFormat
	}
	d.fmask |= set
	if set == dateYear {
		f.twoDigitYear = flen <= 2
	}
	return dtOK
}

// monthName sets the month from a name; a number already read as the
// month becomes the day ("8 Jan 1999" under MDY).
func (d *dateDecoder) monthName(m int) dtErr {
	f := d.f
	set := dateMonth
	if d.fmask&dateMonth != 0 && !d.haveTextMonth && d.fmask&dateDay == 0 && f.month >= 1 && f.month <= 31 {
		f.day, set = f.month, dateDay
	}
	if d.fmask&set != 0 {
		return dtBadFormat
	}
	d.fmask |= set
	d.haveTextMonth = true
	f.month = m
	return dtOK
}

// dateToken reads a date written with separators ("2024-01-31",
// "01/02/03", "31.01.2024", "31-Jan-2024", "20240131") as DecodeDate
// does: month names first, then the numbers in order; the token must
// complete the date.
func (d *dateDecoder) dateToken(tok string) dtErr {
	if allDigits(tok) && len(tok) == 8 {
		if d.fmask&dateAll != 0 {
			return dtBadFormat
		}
		f := d.f
		f.year, _ = strconv.Atoi(tok[:4])
		f.month, _ = strconv.Atoi(tok[4:6])
		f.day, _ = strconv.Atoi(tok[6:])
		d.fmask |= dateAll
		return dtOK
	}
	var parts []string
	for i := 0; i < len(tok); {
		for i < len(tok) && !isDigit(tok[i]) && !isLetter(tok[i]) {
			i++
		}
		if i == len(tok) {
			return dtBadFormat
		}
		j := i
		if isDigit(tok[i]) {
			for j < len(tok) && isDigit(tok[j]) {
				j++
			}
		} else {
			for j < len(tok) && isLetter(tok[j]) {
				j++
			}
		}
		parts = append(parts, tok[i:j])
		// Skip one separator after the field (or a character that
		// ends it, which then fails as its own field or is dropped).
		i = j
		if i < len(tok) {
			i++
		}
	}
	if len(parts) < 2 {
		return dtBadFormat
	}
	// The month-name substitution of loose numbers is the caller's;
	// inside a token only its own month name counts.
	outerTextMonth := d.haveTextMonth
	d.haveTextMonth = false
	defer func() { d.haveTextMonth = outerTextMonth }()
	for _, p := range parts {
		if !isLetter(p[0]) {
			continue
		}
		m, ok := monthNames[strings.ToLower(p)]
		if !ok || d.fmask&dateMonth != 0 {
			return dtBadFormat
		}
		d.fmask |= dateMonth
		d.haveTextMonth = true
		d.f.month = m
	}
	for _, p := range parts {
		if isLetter(p[0]) {
			continue
		}
		if e := d.number(p); e != dtOK {
			return e
		}
	}
	if d.fmask&dateAll != dateAll {
		return dtBadFormat
	}
	return dtOK
}

func decodeDateTime(s string, order DateOrder) (dtFields, dtErr) {
	if f, ok := fastISO(s); ok {
		return f, dtOK
	}
	var f dtFields
	toks := splitDateTimeTokens(s)
	if len(toks) == 0 {
		return f, dtBadFormat
	}
	dd := dateDecoder{f: &f, order: order}
	for _, tok := range toks {
		lower := strings.ToLower(tok)
		switch lower {
		case "infinity", "+infinity", "-infinity", "epoch", "allballs":
			if len(toks) != 1 && lower != "allballs" {
				return f, dtBadFormat
			}
			f.special = strings.TrimPrefix(lower, "+")
			if lower == "allballs" {
				f.hasTime = true
				f.special = ""
			}
			continue
		case "now", "today", "tomorrow", "yesterday":
			return f, dtBadFormat
		case "bc":
			f.bc = true
			continue
		case "ad":
			continue
		case "am", "a.m.":
			f.am = true
			continue
		case "pm", "p.m.":
			f.pm = true
			continue
		}
		if weekdayNames[lower] {
			continue
		}
		if m, ok := monthNames[lower]; ok {
			if e := dd.monthName(m); e != dtOK {
				return f, e
			}
			continue
		}
		if off, ok := zoneAbbrevs[lower]; ok {
			f.hasZone, f.zoneOffset = true, off
			continue
		}
		if strings.Contains(tok, "/") && isZoneName(tok) && !startsWithMonth(tok) {
			loc, err := time.LoadLocation(tok)
			if err != nil {
				return f, dtBadFormat
			}
			f.hasZone, f.zoneLoc = true, loc
			continue
		}
		if (tok[0] == '+' || tok[0] == '-') && f.hasTime && !f.hasZone {
			off, e := parseZoneOffset(tok)
			if e != dtOK {
				return f, e
			}
			f.hasZone, f.zoneOffset = true, off
			continue
		}
		if strings.Contains(tok, ":") {
			// A time, maybe with a zone attached: "10:00:00+02", "10:00Z".
			clock := tok
			zone := ""
			if i := strings.IndexAny(tok, "+-"); i > 0 {
				clock, zone = tok[:i], tok[i:]
			} else if strings.HasSuffix(tok, "Z") || strings.HasSuffix(tok, "z") {
				clock, zone = tok[:len(tok)-1], "Z"
			}
			if f.hasTime {
				return f, dtBadFormat
			}
			if e := parseClock(&f, clock); e != dtOK {
				return f, e
			}
			if zone == "Z" {
				f.hasZone, f.zoneOffset = true, 0
			} else if zone != "" {
				off, e := parseZoneOffset(zone)
				if e != dtOK {
					return f, e
				}
				f.hasZone, f.zoneOffset = true, off
			}
			continue
		}
		if allDigits(tok) && len(tok) != 8 {
			// A loose number: "Jan 31 2024", "31 Jan 2024", "1 2 2024".
			if e := dd.number(tok); e != dtOK {
				return f, e
			}
			continue
		}
		if e := dd.dateToken(tok); e != dtOK {
			return f, e
		}
	}
	// ValidateDate: the year's era and century, then the month and day
	// (a month above 12 or a day above 31 hints at the field order).
	if dd.fmask&dateYear != 0 {
		switch {
		case f.bc:
			if f.year <= 0 {
				return f, dtFieldOverflow
			}
			f.year = -(f.year - 1)
		case f.twoDigitYear:
			if f.year < 70 {
				f.year += 2000
			} else if f.year < 100 {
				f.year += 1900
			}
		case f.year <= 0:
			return f, dtFieldOverflow
		}
	}
	if dd.fmask&dateMonth != 0 && (f.month < 1 || f.month > 12) {
		return f, dtMDFieldOverflow
	}
	if dd.fmask&dateDay != 0 && (f.day < 1 || f.day > 31) {
		return f, dtMDFieldOverflow
	}
	switch dd.fmask {
	case 0:
	case dateAll:
		f.hasDate = true
	default:
		return f, dtBadFormat
	}
	if f.am || f.pm {
		if f.hour > 12 || f.hour < 0 {
			return f, dtFieldOverflow
		}
		if f.am && f.hour == 12 {
			f.hour = 0
		} else if f.pm && f.hour != 12 {
			f.hour += 12
		}
	}
	if f.hasDate && f.day > DaysInMonth(f.year, f.month) {
		return f, dtFieldOverflow
	}
	if f.hasTime {
		if f.hour < 0 || f.minute < 0 || f.minute > 59 || f.sec < 0 || f.sec > 60 ||
			f.hour > 24 || (f.hour == 24 && (f.minute > 0 || f.sec > 0 || f.micros > 0)) {
			return f, dtFieldOverflow
		}
	}
	return f, dtOK
}

func (f *dtFields) clockMicros() int64 {
	return int64(f.hour)*MicrosPerHour + int64(f.minute)*MicrosPerMinute +
		int64(f.sec)*MicrosPerSecond + f.micros
}

// ParseDate reads date input (a time part, if any, is ignored) with the
// default field order, MDY.
func ParseDate(s string) (Datum, error) { return ParseDateOrder(s, DateOrderMDY) }

// ParseDateOrder reads date input with the DateStyle field order order.
func ParseDateOrder(s string, order DateOrder) (Datum, error) {
	f, e := decodeDateTime(s, order)
	if e != dtOK {
		return nil, dtError(e, "date", s)
	}
	switch f.special {
	case "infinity":
		return DatePosInfinity, nil
	case "-infinity":
		return DateNegInfinity, nil
	case "epoch":
		return MakeDate(1970, 1, 1), nil
	}
	if !f.hasDate {
		return nil, dtError(dtBadFormat, "date", s)
	}
	if f.year > 5874897 || f.year < -4713 {
		return nil, InputError(StateDatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	d := MakeDate(f.year, f.month, f.day)
	if !DateInRange(d) {
		return nil, InputError(StateDatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	return d, nil
}

// ParseTime reads time-of-day input (a date or zone, if any, is ignored).
func ParseTime(s string) (TimeOfDay, error) { return parseTime(s, DateOrderMDY) }

func parseTime(s string, order DateOrder) (TimeOfDay, error) {
	f, e := decodeDateTime(s, order)
	if e != dtOK {
		return 0, dtError(e, "time without time zone", s)
	}
	if !f.hasTime || f.special != "" {
		return 0, dtError(dtBadFormat, "time without time zone", s)
	}
	return TimeOfDay(f.clockMicros()), nil
}

func localMicros(f *dtFields, typeName, s string) (int64, error) {
	if f.year > 294277 || f.year < -4713 {
		return 0, InputError(StateDatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return int64(MakeDate(f.year, f.month, f.day))*MicrosPerDay + f.clockMicros(), nil
}

// ParseTimestamp reads timestamp without time zone input; a zone in the
// input is ignored, as in PostgreSQL.
func ParseTimestamp(s string) (Timestamp, error) { return ParseTimestampOrder(s, DateOrderMDY) }

// ParseTimestampOrder is ParseTimestamp with the DateStyle field order
// order.
func ParseTimestampOrder(s string, order DateOrder) (Timestamp, error) {
	f, e := decodeDateTime(s, order)
	if e != dtOK {
		return 0, dtError(e, "timestamp", s)
	}
	switch f.special {
	case "infinity":
		return TimestampPosInfinity, nil
	case "-infinity":
		return TimestampNegInfinity, nil
	case "epoch":
		return Timestamp(-unixEpochOffsetSeconds * MicrosPerSecond), nil
	}
	if !f.hasDate {
		return 0, dtError(dtBadFormat, "timestamp", s)
	}
	us, err := localMicros(&f, "timestamp", s)
	if err != nil {
		return 0, err
	}
	if !TimestampInRange(us) {
		return 0, InputError(StateDatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return Timestamp(us), nil
}

// ParseTimestampTZ reads timestamp with time zone input; without an explicit
// zone the wall time is interpreted in loc.
func ParseTimestampTZ(s string, loc *time.Location) (TimestampTZ, error) {
	return ParseTimestampTZOrder(s, loc, DateOrderMDY)
}

// ParseTimestampTZOrder is ParseTimestampTZ with the DateStyle field
// order order.
func ParseTimestampTZOrder(s string, loc *time.Location, order DateOrder) (TimestampTZ, error) {
	const name = "timestamp with time zone"
	f, e := decodeDateTime(s, order)
	if e != dtOK {
		return 0, dtError(e, name, s)
	}
	switch f.special {
	case "infinity":
		return TimestampTZPosInfinity, nil
	case "-infinity":
		return TimestampTZNegInfinity, nil
	case "epoch":
		return TimestampTZ(-unixEpochOffsetSeconds * MicrosPerSecond), nil
	}
	if !f.hasDate {
		return 0, dtError(dtBadFormat, name, s)
	}
	local, err := localMicros(&f, name, s)
	if err != nil {
		return 0, err
	}
	var off int
	switch {
	case f.hasZone && f.zoneLoc != nil:
		off = LocalOffset(local, f.zoneLoc)
	case f.hasZone:
		off = f.zoneOffset
	default:
		off = LocalOffset(local, loc)
	}
	us := local - int64(off)*MicrosPerSecond
	if !TimestampInRange(us) {
		return 0, InputError(StateDatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return TimestampTZ(us), nil
}

// LocalOffset is the UTC offset (seconds east) that loc applies to the wall
// time localUs (microseconds since 2000-01-01, local). Within a
// spring-forward gap the offset before the transition is used, within a
// fall-back overlap the offset after it (PostgreSQL's
// DetermineTimeZoneOffset).
func LocalOffset(localUs int64, loc *time.Location) int {
	if loc == nil || loc == time.UTC {
		return 0
	}
	t := floorDiv(localUs, MicrosPerSecond) + unixEpochOffsetSeconds
	offAt := func(sec int64) int {
		_, off := time.Unix(sec, 0).In(loc).Zone()
		return off
	}
	before := offAt(t - 86400)
	after := offAt(t + 86400)
	if before == after {
		off := offAt(t - int64(before))
		return off
	}
	validBefore := offAt(t-int64(before)) == before
	validAfter := offAt(t-int64(after)) == after
	switch {
	case validBefore && !validAfter:
		return before
	case validAfter && !validBefore:
		return after
	case validAfter && validBefore:
		return after // ambiguous: PostgreSQL prefers the later (standard) reading
	}
	return before // in a gap
}

// ApplyTimestampTypmod rounds a timestamp to timestamp(p)'s precision.
func ApplyTimestampTypmod(t Type, v Datum) (Datum, error) {
	if t.Typmod < 0 || t.Typmod >= 6 {
		return v, nil
	}
	switch x := v.(type) {
	case Timestamp:
		if !x.IsFinite() {
			return x, nil
		}
		return Timestamp(roundMicrosTypmod(int64(x), t.Typmod)), nil
	case TimestampTZ:
		if !x.IsFinite() {
			return x, nil
		}
		return TimestampTZ(roundMicrosTypmod(int64(x), t.Typmod)), nil
	}
	return v, nil
}

// roundMicrosTypmod rounds to 10^-p seconds, half away from zero
// (PostgreSQL's AdjustTimestampForTypmod).
func roundMicrosTypmod(us int64, typmod int32) int64 {
	if typmod < 0 || typmod >= 6 {
		return us
	}
	scale := int64(1)
	for i := typmod; i < 6; i++ {
		scale *= 10
	}
	offset := scale / 2
	if us >= 0 {
		return (us + offset) / scale * scale
	}
	return -((-us + offset) / scale * scale)
}

// startsWithMonth reports whether tok begins with a month name followed
// by a separator ("Jan/31/2024"): a date, not a zone name.
func startsWithMonth(tok string) bool {
	i := 0
	for i < len(tok) && isLetter(tok[i]) {
		i++
	}
	_, ok := monthNames[strings.ToLower(tok[:i])]
	return ok
}

// isZoneName reports whether tok looks like an IANA zone name
// ("America/New_York"), so that only plausible names reach the zone
// database lookup.
func isZoneName(tok string) bool {
	if !isLetter(tok[0]) {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(isLetter(c) || isDigit(c) || c == '/' || c == '_' || c == '-' || c == '+') {
			return false
		}
	}
	return !strings.Contains(tok, "//")
}
