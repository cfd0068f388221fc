package expr

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// to_char for timestamps, timestamptz, dates (through timestamp) and
// intervals' time fields: the common template patterns (YYYY, MM, DD, HH24,
// MI, SS, MS, US, Mon, Month, Dy, Day, AM, Q, IW, DDD, D, J, the FM prefix,
// "quoted text" and \-escapes). Numeric templates are not supported.

//lint:immutable a constant table.
var monthNamesFull = [...]string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

//lint:immutable a constant table.
var dayNamesFull = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

// toCharPatterns lists the template patterns, longest first so that
// matching is greedy the way PostgreSQL's keyword table is.
//
//lint:immutable a constant table.
var toCharPatterns = []string{
	"MONTH", "Month", "month", "SSSSS",
	"HH24", "HH12", "SSSS", "A.M.", "a.m.", "P.M.", "p.m.", "YYYY", "IYYY", "IDDD", "B.C.", "b.c.", "A.D.", "a.d.",
	"YYY", "IYY", "MON", "Mon", "mon", "DAY", "Day", "day", "DDD",
	"HH", "MI", "SS", "MS", "US", "AM", "am", "PM", "pm", "YY", "IY", "MM", "DY", "Dy", "dy", "DD", "ID",
	"WW", "IW", "CC", "BC", "bc", "AD", "ad", "TZ", "tz", "OF",
	"Y", "I", "D", "W", "Q", "J",
}

type tmFields struct {
	types.TimestampFields
	date   types.Date
	offset int // seconds east, for TZ/OF
	zone   string
}

func zpad(n int64, width int, fm bool) string {
	s := strconv.FormatInt(abs64(n), 10)
	if !fm {
		for len(s) < width {
			s = "0" + s
		}
	}
	if n < 0 {
		return "-" + s
	}
	return s
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func padRight(s string, width int, fm bool) string {
	if fm {
		return s
	}
	for len(s) < width {
		s += " "
	}
	return s
}

func caseAs(pattern, s string) string {
	switch {
	case pattern == strings.ToUpper(pattern):
		return strings.ToUpper(s)
	case pattern == strings.ToLower(pattern):
		return strings.ToLower(s)
	}
	return s
}

func toChar(f tmFields, format string) string {
	var b strings.Builder
	year := f.Year
	displayYear := int64(year)
	if year <= 0 {
		displayYear = int64(-(year - 1))
	}
	for i := 0; i < len(format); {
		if format[i] == '"' {
			j := i + 1
			for j < len(format) && format[j] != '"' {
				if format[j] == '\\' && j+1 < len(format) {
					j++
				}
				b.WriteByte(format[j])
				j++
			}
			i = j + 1
			continue
		}
		if format[i] == '\\' && i+1 < len(format) {
			b.WriteByte(format[i+1])
			i += 2
			continue
		}
		fm := false
		rest := format[i:]
		if strings.HasPrefix(rest, "FM") || strings.HasPrefix(rest, "fm") {
			fm = true
			rest = rest[2:]
		}
		matched := ""
		for _, p := range toCharPatterns {
			if strings.HasPrefix(rest, p) {
				matched = p
				break
			}
		}
		if matched == "" {
			if fm {
				i += 2
				continue
			}
			b.WriteByte(format[i])
			i++
			continue
		}
		consumed := len(matched)
		if fm {
			consumed += 2
		}
		i += consumed
		hour12 := f.Hour % 12
		if hour12 == 0 {
			hour12 = 12
		}
		switch matched {
		case "HH24":
			b.WriteString(zpad(int64(f.Hour), 2, fm))
		case "HH12", "HH":
			b.WriteString(zpad(int64(hour12), 2, fm))
		case "MI":
			b.WriteString(zpad(int64(f.Minute), 2, fm))
		case "SS":
			b.WriteString(zpad(int64(f.Second), 2, fm))
		case "MS":
			b.WriteString(zpad(int64(f.Micros/1000), 3, fm))
		case "US":
			b.WriteString(zpad(int64(f.Micros), 6, fm))
		case "SSSS", "SSSSS":
			b.WriteString(strconv.Itoa(f.Hour*3600 + f.Minute*60 + f.Second))
		case "AM", "PM", "am", "pm":
			ampm := "AM"
			if f.Hour >= 12 {
				ampm = "PM"
			}
			b.WriteString(caseAs(matched, ampm))
		case "A.M.", "P.M.", "a.m.", "p.m.":
			ampm := "A.M."
			if f.Hour >= 12 {
				ampm = "P.M."
			}
			b.WriteString(caseAs(matched, ampm))
		case "YYYY":
			b.WriteString(zpad(displayYear, 4, fm))
		case "YYY":
			b.WriteString(zpad(displayYear%1000, 3, fm))
		case "YY":
			b.WriteString(zpad(displayYear%100, 2, fm))
		case "Y":
			b.WriteString(zpad(displayYear%10, 1, fm))
		case "IYYY", "IYY", "IY", "I":
			iy, _ := isoWeek(f.date)
			v := int64(iy)
			width := len(matched)
			if width < 4 {
				mod := int64(1)
				for k := 0; k < width; k++ {
					mod *= 10
				}
				v %= mod
			}
			b.WriteString(zpad(v, width, fm))
		case "MONTH", "Month", "month":
			b.WriteString(padRight(caseAs(matched, monthNamesFull[f.Month]), 9, fm))
		case "MON", "Mon", "mon":
			b.WriteString(caseAs(matched, monthNamesFull[f.Month][:3]))
		case "MM":
			b.WriteString(zpad(int64(f.Month), 2, fm))
		case "DAY", "Day", "day":
			b.WriteString(padRight(caseAs(matched, dayNamesFull[dow(f.date)]), 9, fm))
		case "DY", "Dy", "dy":
			b.WriteString(caseAs(matched, dayNamesFull[dow(f.date)][:3]))
		case "DDD":
			b.WriteString(zpad(int64(dayOfYear(f.Year, f.Month, f.Day)), 3, fm))
		case "IDDD":
			iy, iw := isoWeek(f.date)
			_ = iy
			b.WriteString(zpad(int64((iw-1)*7+isoDow(f.date)), 3, fm))
		case "DD":
			b.WriteString(zpad(int64(f.Day), 2, fm))
		case "D":
			b.WriteString(strconv.Itoa(dow(f.date) + 1))
		case "ID":
			b.WriteString(strconv.Itoa(isoDow(f.date)))
		case "WW":
			b.WriteString(zpad(int64((dayOfYear(f.Year, f.Month, f.Day)-1)/7+1), 2, fm))
		case "IW":
			_, iw := isoWeek(f.date)
			b.WriteString(zpad(int64(iw), 2, fm))
		case "W":
			b.WriteString(strconv.Itoa((f.Day-1)/7 + 1))
		case "Q":
			b.WriteString(strconv.Itoa((f.Month-1)/3 + 1))
		case "J":
			b.WriteString(strconv.FormatInt(int64(f.date)+2451545, 10))
		case "CC":
			var cc int64
			if year > 0 {
				cc = (int64(year) + 99) / 100
			} else {
				cc = -((99 - int64(year-1)) / 100)
			}
			b.WriteString(zpad(cc, 2, fm))
		case "BC", "AD", "bc", "ad":
			era := "AD"
			if year <= 0 {
				era = "BC"
			}
			b.WriteString(caseAs(matched, era))
		case "B.C.", "A.D.", "b.c.", "a.d.":
			era := "A.D."
			if year <= 0 {
				era = "B.C."
			}
			b.WriteString(caseAs(matched, era))
		case "TZ", "tz":
			b.WriteString(caseAs(matched, f.zone))
		case "OF":
			b.Write(types.AppendZoneOffset(nil, f.offset))
		}
	}
	return b.String()
}

func zoneAbbrev(ts types.TimestampTZ, loc *time.Location) string {
	sec := int64(ts)/types.MicrosPerSecond + 946684800
	name, _ := time.Unix(sec, 0).In(loc).Zone()
	return name
}

//lint:immutable a compiled constant pattern.
var replacementRef = regexp.MustCompile(`\\(\d|&)`)

func registerToChar(add adder) {
	add(f2("to_char", types.TTimestamp, types.TText, types.TText, func(a, b types.Datum) (types.Datum, error) {
		ts := a.(types.Timestamp)
		if !ts.IsFinite() {
			return nil, nil
		}
		f := types.Fields(int64(ts))
		return toChar(tmFields{TimestampFields: f, date: types.MakeDate(f.Year, f.Month, f.Day)}, b.(string)), nil
	}),
		&Func{Name: "to_char", Args: []types.Type{types.TTimestampTZ, types.TText}, Result: types.TText, Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				ts := a[0].(types.TimestampTZ)
				if !ts.IsFinite() {
					return nil, nil
				}
				loc := envZone(env)
				off := types.ZoneOffset(ts, loc)
				f := types.Fields(int64(ts) + int64(off)*types.MicrosPerSecond)
				return toChar(tmFields{TimestampFields: f, date: types.MakeDate(f.Year, f.Month, f.Day), offset: off, zone: zoneAbbrev(ts, loc)}, a[1].(string)), nil
			}},
		strict("regexp_replace", []types.Type{types.TText, types.TText, types.TText}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
			return regexpReplace(a[0].(string), a[1].(string), a[2].(string), "")
		}),
		strict("regexp_replace", []types.Type{types.TText, types.TText, types.TText, types.TText}, types.TText, func(_ *Env, a []types.Datum) (types.Datum, error) {
			return regexpReplace(a[0].(string), a[1].(string), a[2].(string), a[3].(string))
		}),
	)
}

// regexpReplace is regexp_replace with PostgreSQL's replacement syntax (\1
// .. \9, \& for the whole match) and flags g (global) and i.
func regexpReplace(s, pattern, repl, flags string) (types.Datum, error) {
	global := strings.Contains(flags, "g")
	re, err := compileRegex(pattern, strings.Contains(flags, "i"))
	if err != nil {
		return nil, err
	}
	// Translate the replacement to Go's template syntax.
	tmpl := strings.ReplaceAll(repl, "$", "$$")
	tmpl = replacementRef.ReplaceAllStringFunc(tmpl, func(m string) string {
		if m[1] == '&' {
			return "${0}"
		}
		return "${" + m[1:] + "}"
	})
	tmpl = strings.ReplaceAll(tmpl, `\\`, `\`)
	if global {
		return re.ReplaceAllString(s, tmpl), nil
	}
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		return s, nil
	}
	var dst []byte
	dst = re.ExpandString(dst, tmpl, s, loc)
	return s[:loc[0]] + string(dst) + s[loc[1]:], nil
}
