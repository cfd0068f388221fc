package types

import (
	"strings"
	"time"
)

// ParseAt is Parse with the statement clock: it also accepts PostgreSQL's
// relative date/time words 'now', 'today', 'tomorrow' and 'yesterday' for
// date, time, timestamp and timestamptz (Parse rejects them with 22007
// because it has no clock). now is the statement time; calendar days are
// those of loc.
func ParseAt(t Type, s string, loc *time.Location, now TimestampTZ) (Datum, error) {
	if loc == nil {
		loc = time.UTC
	}
	word := strings.ToLower(trimSpace(s))
	var dayOffset int64
	switch word {
	case "now":
	case "today":
	case "tomorrow":
		dayOffset = 1
	case "yesterday":
		dayOffset = -1
	default:
		return Parse(t, s, loc)
	}
	local := int64(now) + int64(ZoneOffset(now, loc))*MicrosPerSecond
	if word != "now" {
		day, _ := SplitTimestamp(local)
		local = (int64(day) + dayOffset) * MicrosPerDay
	}
	switch t.Kind {
	case KindDate:
		d, _ := SplitTimestamp(local)
		return d, nil
	case KindTime:
		if word != "now" {
			break
		}
		_, tod := SplitTimestamp(local)
		return TimeOfDay(roundMicrosTypmod(int64(tod), t.Typmod)), nil
	case KindTimestamp:
		return ApplyTimestampTypmod(t, Timestamp(local))
	case KindTimestampTZ:
		if word == "now" {
			return ApplyTimestampTypmod(t, now)
		}
		return ApplyTimestampTypmod(t, TimestampTZ(local-int64(LocalOffset(local, loc))*MicrosPerSecond))
	}
	return Parse(t, s, loc)
}
