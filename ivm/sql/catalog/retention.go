package catalog

import (
	"time"
)

// Change-history retention of materialized views (SUBSCRIBE ... AS OF
// EPOCH, see docs/subscribe.md).
const (
	// RetainHistoryDefault is how long a view without a retain_history
	// option keeps its change history once it has been subscribed to: an
	// hour (the spec's default) covers a consumer's restart, a deploy or a
	// network outage, while bounding the history to an hour of the view's
	// changes. Views nobody subscribes to keep no history and pay nothing.
	RetainHistoryDefault = time.Hour
	// RetainHistoryMax bounds the option: history is scanned and deleted
	// step by step, and a week of changes is already far more than a
	// resuming consumer should replay.
	RetainHistoryMax = 7 * 24 * time.Hour
	// RetainHistoryOff is Relation.RetainHistory for retain_history = '0':
	// the view keeps no history, so only live SUBSCRIBE works.
	RetainHistoryOff time.Duration = -1
)

// ParseRetainHistory reads the retain_history option, an interval such
// as '1 hour' or '30 minutes' ('0' keeps no history). Months count 30
// days, as in PostgreSQL's EXTRACT(EPOCH FROM interval).
func ParseRetainHistory(text string) (time.Duration, error) {
	iv, bad, err := optionInterval("retain_history", text,
		"Valid values are intervals from '0' (keep no history) to '7 days', e.g. '1 hour'.")
	if err != nil {
		return 0, err
	}
	const day = 24 * time.Hour
	if iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 || iv.Months > 12 || iv.Days > 366 {
		return 0, bad("out of range")
	}
	total := time.Duration(iv.Months)*30*day + time.Duration(iv.Days)*day + time.Duration(iv.Micros)*time.Microsecond
	switch {
	case total == 0:
		return RetainHistoryOff, nil
	case total > RetainHistoryMax:
		return 0, bad("longer than 7 days")
	}
	return total, nil
}

// HistoryWindow is how long the view keeps history and whether it keeps
// it only once subscribed to (the default).
func (r *Relation) HistoryWindow() (window time.Duration, onSubscribe bool) {
	switch {
	case r.RetainHistory == 0:
		return RetainHistoryDefault, true
	case r.RetainHistory < 0:
		return 0, false
	}
	return r.RetainHistory, false
}
