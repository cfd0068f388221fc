package catalog

import (
	"strings"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// FreshnessTargetMax bounds the freshness_target option: a view allowed to
// lag by more than a day is not watched for freshness in any useful sense.
const FreshnessTargetMax = 24 * time.Hour

// ParseFreshnessTarget reads the freshness_target option, a positive
// interval such as '1s', '500ms' or '2 minutes'.
func ParseFreshnessTarget(text string) (time.Duration, error) {
	iv, bad, err := optionInterval("freshness_target", text,
		"Valid values are intervals from '1ms' to '1 day', e.g. '1s' or '500ms'; RESET (freshness_target) removes the target.")
	if err != nil {
		return 0, err
	}
	if iv.Months != 0 || iv.Days < 0 || iv.Micros < 0 || iv.Days > 1 {
		return 0, bad("out of range")
	}
	total := time.Duration(iv.Days)*24*time.Hour + time.Duration(iv.Micros)*time.Microsecond
	switch {
	case total < time.Millisecond:
		return 0, bad("shorter than 1ms")
	case total > FreshnessTargetMax:
		return 0, bad("longer than 1 day")
	}
	return total, nil
}

// optionInterval reads the interval value of a view option; bad makes the
// option's 22023 error saying why a value is refused.
func optionInterval(option, text, detail string) (iv types.Interval, bad func(why string) error, err error) {
	bad = func(why string) error {
		return errcode.New(errcode.SQLInvalidParameterValue, "invalid value for option %q: %q (%s)", option, text, why).
			WithDetail("%s", detail).WithSQLState("22023")
	}
	d, err := types.ParseInterval(strings.TrimSpace(text))
	if err != nil {
		return types.Interval{}, bad, bad("not an interval")
	}
	iv, ok := d.(types.Interval)
	if !ok {
		return types.Interval{}, bad, bad("not an interval")
	}
	return iv, bad, nil
}
