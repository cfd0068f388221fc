package types

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// LoadZone resolves a TimeZone setting as the gateway accepts it: UTC,
// GMT or Z, a fixed offset ('+05:30', '-0800', '3'), or a tz database
// name ('America/New_York', read from the system's zoneinfo). A
// materialized view keeps the TimeZone of the session that created it
// and is maintained in it (catalog.Relation.TimeZone).
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "gmt") || strings.EqualFold(name, "z") {
		return time.UTC, nil
	}
	if offset, ok := parseFixedZoneOffset(name); ok {
		return time.FixedZone(name, offset), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("time zone %q not recognized", name)
	}
	return loc, nil
}

// parseFixedZoneOffset reads a fixed UTC offset in hours[:minutes] or hhmm.
func parseFixedZoneOffset(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	sign := 1
	body := s
	switch s[0] {
	case '+':
		body = s[1:]
	case '-':
		sign, body = -1, s[1:]
	}
	var h, m int
	var err error
	switch {
	case strings.Contains(body, ":"):
		parts := strings.SplitN(body, ":", 2)
		if h, err = strconv.Atoi(parts[0]); err != nil {
			return 0, false
		}
		if m, err = strconv.Atoi(parts[1]); err != nil {
			return 0, false
		}
	case len(body) == 4:
		if h, err = strconv.Atoi(body[:2]); err != nil {
			return 0, false
		}
		if m, err = strconv.Atoi(body[2:]); err != nil {
			return 0, false
		}
	default:
		if h, err = strconv.Atoi(body); err != nil {
			return 0, false
		}
	}
	if h > 15 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

// unixMicrosAtPGEpoch is 2000-01-01 00:00:00 UTC, where PostgreSQL's
// timestamps count from, in Unix microseconds.
const unixMicrosAtPGEpoch = 946684800 * 1_000_000

// TimestampTZOf is the timestamptz of a Go time (microsecond precision).
func TimestampTZOf(t time.Time) TimestampTZ { return TimestampTZ(t.UnixMicro() - unixMicrosAtPGEpoch) }
