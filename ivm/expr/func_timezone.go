package expr

import (
	"strings"
	"time"

	"github.com/rockstream/rockstream/ivm/types"
)

// timezone(zone, ts): `ts AT TIME ZONE zone`. For a timestamptz it is the
// wall-clock time in zone (a timestamp); for a timestamp it is the instant
// at which zone's clocks show it (a timestamptz). The zone is a name (UTC
// and friends case-insensitively, or an IANA name), a POSIX-style offset
// ('+05' is five hours WEST of Greenwich, as PostgreSQL reads it), or an
// interval (an ISO offset east of Greenwich, without months or days).
// See zoneNamed.
// Infinite inputs stay infinite.

func registerTimeZone(add adder) {
	add(
		&Func{Name: "timezone", Args: []types.Type{types.TText, types.TTimestampTZ}, Result: types.TTimestamp, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				loc, err := zoneNamed(a[0].(string))
				if err != nil {
					return nil, err
				}
				return toZone(a[1].(types.TimestampTZ), loc), nil
			}},
		&Func{Name: "timezone", Args: []types.Type{types.TText, types.TTimestamp}, Result: types.TTimestampTZ, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				loc, err := zoneNamed(a[0].(string))
				if err != nil {
					return nil, err
				}
				return fromZone(a[1].(types.Timestamp), loc), nil
			}},
		&Func{Name: "timezone", Args: []types.Type{types.TInterval, types.TTimestampTZ}, Result: types.TTimestamp, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				loc, err := zoneOfInterval(a[0].(types.Interval))
				if err != nil {
					return nil, err
				}
				return toZone(a[1].(types.TimestampTZ), loc), nil
			}},
		&Func{Name: "timezone", Args: []types.Type{types.TInterval, types.TTimestamp}, Result: types.TTimestampTZ, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				loc, err := zoneOfInterval(a[0].(types.Interval))
				if err != nil {
					return nil, err
				}
				return fromZone(a[1].(types.Timestamp), loc), nil
			}},
	)
}

// toZone is ts's wall-clock time in loc.
func toZone(ts types.TimestampTZ, loc *time.Location) types.Timestamp {
	if !ts.IsFinite() {
		return types.Timestamp(ts)
	}
	return types.Timestamp(int64(ts) + int64(types.ZoneOffset(ts, loc))*types.MicrosPerSecond)
}

// fromZone is the instant at which loc's clocks show local.
func fromZone(local types.Timestamp, loc *time.Location) types.TimestampTZ {
	if !local.IsFinite() {
		return types.TimestampTZ(local)
	}
	return types.TimestampTZ(int64(local) - int64(types.LocalOffset(int64(local), loc))*types.MicrosPerSecond)
}

// zoneNamed resolves a time zone name as AT TIME ZONE reads it: UTC and
// friends case-insensitively, a tz database name, or else a POSIX time
// zone string, whose offset counts WEST of Greenwich ('+05', '5' and
// 'UTC+5' are five hours behind UTC, '<+03>-3' three ahead), as
// PostgreSQL's pg_tzset reads it.
func zoneNamed(name string) (*time.Location, error) {
	switch strings.ToLower(name) {
	case "utc", "gmt", "z", "zulu", "universal", "etc/utc", "etc/gmt":
		return time.UTC, nil
	}
	if name != "" && !strings.EqualFold(name, "local") {
		if loc, err := time.LoadLocation(name); err == nil {
			return loc, nil
		}
		if loc, ok := types.PosixZone(name); ok {
			return loc, nil
		}
	}
	return nil, EvalError(StateInvalidParameterValue, "time zone \"%s\" not recognized", name)
}

// zoneOfInterval is the fixed zone an interval offset (east of Greenwich)
// names.
func zoneOfInterval(iv types.Interval) (*time.Location, error) {
	if iv.Months != 0 || iv.Days != 0 {
		return nil, EvalError(StateInvalidParameterValue, "interval time zone \"%s\" must not include months or days", types.Format(types.TInterval, iv))
	}
	return time.FixedZone("", int(iv.Micros/types.MicrosPerSecond)), nil
}
