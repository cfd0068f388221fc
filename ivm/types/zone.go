package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// LoadZone resolves a TimeZone setting as SET TIME ZONE reads it
// (PostgreSQL's check_timezone): a number of hours EAST of Greenwich ('5',
// '-3', '5.5'), `INTERVAL '+05:30' HOUR TO MINUTE` (also east), a tz
// database name ('America/New_York', read from the system's zoneinfo), or
// else a POSIX time zone string, whose offset counts hours WEST of
// Greenwich: '+05:30' and 'UTC+5' are behind UTC, '<+03>-3' is ahead of
// it. A materialized view keeps the TimeZone of the session that created
// it and is maintained in it (catalog.Relation.TimeZone).
func LoadZone(name string) (*time.Location, error) {
	loc, _, err := loadZone(name, false)
	return loc, err
}

// NormalizeZone is the TimeZone value SHOW prints after SET TIME ZONE
// name, as PostgreSQL spells it: a numeric or interval offset becomes the
// POSIX string '<+05:30>-05:30', a POSIX string is upper-cased, 'utc' is
// 'UTC'; a tz database name is kept as written. Like PostgreSQL it refuses
// a named or POSIX zone whose offset has seconds ("appears to use leap
// seconds"), which an INTERVAL offset may have: LoadZone reads them all.
func NormalizeZone(name string) (string, error) {
	_, canon, err := loadZone(name, true)
	return canon, err
}

func loadZone(name string, strict bool) (*time.Location, string, error) {
	if name == "" {
		return time.UTC, "", nil
	}
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "gmt") || strings.EqualFold(name, "z") {
		return time.UTC, strings.ToUpper(name), nil
	}
	if len(name) >= 8 && strings.EqualFold(name[:8], "interval") {
		secs, err := intervalZoneOffset(name[8:])
		if err != nil {
			return nil, "", err
		}
		return offsetZone(secs)
	}
	if hours, err := strconv.ParseFloat(strings.TrimLeft(name, " \t\n\r\f\v"), 64); err == nil {
		// A number: hours east of Greenwich (PostgreSQL's strtod).
		if math.IsNaN(hours) || math.Abs(hours) >= posixHoursMax+1 {
			return nil, "", fmt.Errorf("UTC timezone offset is out of range")
		}
		return offsetZone(int(hours * 3600))
	}
	if loc, err := time.LoadLocation(name); err == nil && !strings.EqualFold(name, "local") {
		return loc, name, nil
	}
	loc, ok := PosixZone(name)
	if !ok {
		return nil, "", fmt.Errorf("time zone %q not recognized", name)
	}
	if _, off := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).In(loc).Zone(); strict && off%60 != 0 {
		return nil, "", fmt.Errorf("time zone %q appears to use leap seconds", name)
	}
	return loc, strings.ToUpper(name), nil
}

// offsetZone is the zone secs east of Greenwich, named as PostgreSQL's
// pg_tzset_offset names it: '<+05:30>-05:30'.
func offsetZone(secs int) (*time.Location, string, error) {
	abs := secs
	sign, posix := "+", "-"
	if secs < 0 {
		abs, sign, posix = -secs, "-", "+"
	}
	if abs/3600 > posixHoursMax {
		return nil, "", fmt.Errorf("UTC timezone offset is out of range")
	}
	s := fmt.Sprintf("%02d", abs/3600)
	if rest := abs % 3600; rest != 0 {
		s += fmt.Sprintf(":%02d", rest/60)
		if rest%60 != 0 {
			s += fmt.Sprintf(":%02d", rest%60)
		}
	}
	if secs == 0 {
		sign, posix = "+", "-"
	}
	return time.FixedZone(sign+s, secs), "<" + sign + s + ">" + posix + s, nil
}

// intervalZoneOffset reads the rest of "INTERVAL '+05:30' HOUR TO MINUTE"
// (the quoted literal and its optional field range) as seconds east of
// Greenwich; months and days are refused, as PostgreSQL refuses them.
func intervalZoneOffset(rest string) (int, error) {
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "'") {
		return 0, fmt.Errorf("invalid interval time zone %q", rest)
	}
	var lit strings.Builder
	i := 1
	for ; i < len(rest); i++ {
		if rest[i] == '\'' {
			if i+1 < len(rest) && rest[i+1] == '\'' {
				lit.WriteByte('\'')
				i++
				continue
			}
			break
		}
		lit.WriteByte(rest[i])
	}
	if i >= len(rest) {
		return 0, fmt.Errorf("invalid interval time zone %q", rest)
	}
	typmod := int32(-1)
	if fields := strings.ToLower(strings.Join(strings.Fields(rest[i+1:]), " ")); fields != "" {
		j := -1
		for k, r := range intervalRanges {
			if r.name == fields {
				j = k
			}
		}
		if j < 0 {
			return 0, fmt.Errorf("invalid interval time zone range %q", fields)
		}
		typmod = int32(intervalRanges[j].mask<<16 | IntervalFullPrecision)
	}
	d, err := ParseIntervalTypmod(lit.String(), typmod)
	if err != nil {
		return 0, err
	}
	iv := d.(Interval)
	if iv.Months != 0 {
		return 0, fmt.Errorf("Cannot specify months in time zone interval.")
	}
	if iv.Days != 0 {
		return 0, fmt.Errorf("Cannot specify days in time zone interval.")
	}
	return int(iv.Micros / MicrosPerSecond), nil
}

// posixHoursMax is the largest hour count a POSIX offset takes (tzcode's
// getsecs: a week less an hour).
const posixHoursMax = 24*7 - 1

// PosixZone reads a POSIX TZ string as PostgreSQL's tzparse does: a
// standard-time abbreviation (letters, or anything within <>; PostgreSQL
// allows it empty), an offset [+-]hh[:mm[:ss]] counted WEST of Greenwich,
// and optionally a daylight-time abbreviation, its offset (an hour less by
// default) and its rules (',M3.2.0,M11.1.0' by default). '+05:30' is five
// and a half hours behind UTC, 'UTC+5' five, '<+03>-3' three ahead.
func PosixZone(s string) (*time.Location, bool) {
	std, rest, ok := posixName(s)
	if !ok || rest == "" {
		return nil, false
	}
	off, rest, ok := posixOffset(rest)
	if !ok {
		return nil, false
	}
	if rest == "" {
		return time.FixedZone(std, -off), true
	}
	dst, rest, ok := posixName(rest)
	if !ok || dst == "" {
		return nil, false
	}
	// Go reads the same syntax in a TZif file's footer (RFC 8536), with
	// names spelled within <> so any length is accepted.
	spec := "<" + std + ">" + formatPosixOffset(off) + "<" + dst + ">" + rest
	loc, err := time.LoadLocationFromTZData(s, tzifFooterOnly(spec, -off, std))
	if err != nil {
		return nil, false
	}
	// Go ignores a footer it cannot parse: check that daylight time is
	// somewhere in the year 2000 or that the spec names no rules it lost.
	if !posixRulesValid(rest) {
		return nil, false
	}
	return loc, true
}

// posixName reads an abbreviation: <...>, or a run of characters up to a
// digit, sign or comma.
func posixName(s string) (name, rest string, ok bool) {
	if strings.HasPrefix(s, "<") {
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return "", "", false
		}
		return s[1:end], s[end+1:], true
	}
	end := strings.IndexAny(s, "0123456789,+-")
	if end < 0 {
		end = len(s)
	}
	return s[:end], s[end:], true
}

// posixOffset reads [+-]hh[:mm[:ss]] as seconds west of Greenwich.
func posixOffset(s string) (int, string, bool) {
	sign := 1
	if s != "" && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	limits := []int{posixHoursMax, 59, 60}
	secs := 0
	for i, limit := range limits {
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 {
			return 0, "", false
		}
		n, err := strconv.Atoi(s[:j])
		if err != nil || n > limit {
			return 0, "", false
		}
		secs += n * []int{3600, 60, 1}[i]
		s = s[j:]
		if !strings.HasPrefix(s, ":") || i == len(limits)-1 {
			break
		}
		s = s[1:]
	}
	return sign * secs, s, true
}

func formatPosixOffset(west int) string {
	sign := ""
	if west < 0 {
		sign, west = "-", -west
	}
	return fmt.Sprintf("%s%d:%02d:%02d", sign, west/3600, west%3600/60, west%60)
}

// posixRulesValid checks the part after the daylight-time name: an
// optional offset, then nothing or two rules (Jn, n or Mm.w.d, each with
// an optional /time).
func posixRulesValid(s string) bool {
	if s != "" && s[0] != ',' {
		var ok bool
		if _, s, ok = posixOffset(s); !ok {
			return false
		}
	}
	if s == "" {
		return true
	}
	parts := strings.Split(s[1:], ",")
	if s[0] != ',' || len(parts) != 2 {
		return false
	}
	for _, p := range parts {
		date, at, hasTime := strings.Cut(p, "/")
		if hasTime {
			if _, r, ok := posixOffset(at); !ok || r != "" {
				return false
			}
		}
		switch {
		case strings.HasPrefix(date, "M"):
			f := strings.Split(date[1:], ".")
			if len(f) != 3 {
				return false
			}
			for i, hi := range []int{12, 5, 6} {
				n, err := strconv.Atoi(f[i])
				if err != nil || n < 0 || n > hi || (i < 2 && n < 1) {
					return false
				}
			}
		case strings.HasPrefix(date, "J"):
			if n, err := strconv.Atoi(date[1:]); err != nil || n < 1 || n > 365 {
				return false
			}
		default:
			if n, err := strconv.Atoi(date); err != nil || n < 0 || n > 365 {
				return false
			}
		}
	}
	return true
}

// tzifFooterOnly is a TZif (version 2) file with no transitions and one
// local time type, whose footer spec governs all time.
func tzifFooterOnly(spec string, east int, abbrev string) []byte {
	var b []byte
	header := func(typecnt, charcnt int) {
		b = append(b, "TZif2"...)
		b = append(b, make([]byte, 15)...)
		for _, n := range []int{0, 0, 0, 0, typecnt, charcnt} { // isut, isstd, leap, time, type, char
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
	}
	body := func() {
		b = binary.BigEndian.AppendUint32(b, uint32(int32(east)))
		b = append(b, 0, 0) // isdst, abbreviation index
		b = append(b, abbrev...)
		b = append(b, 0)
	}
	header(1, len(abbrev)+1)
	body()
	header(1, len(abbrev)+1)
	body()
	b = append(b, '\n')
	b = append(b, spec...)
	b = append(b, '\n')
	return b
}

// unixMicrosAtPGEpoch is 2000-01-01 00:00:00 UTC, where PostgreSQL's
// timestamps count from, in Unix microseconds.
const unixMicrosAtPGEpoch = 946684800 * 1_000_000

// TimestampTZOf is the timestamptz of a Go time (microsecond precision).
func TimestampTZOf(t time.Time) TimestampTZ { return TimestampTZ(t.UnixMicro() - unixMicrosAtPGEpoch) }
