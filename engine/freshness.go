package engine

import (
	"sync"
	"time"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/types"
)

// Reasons a view misses its freshness target (freshness_reason in SHOW
// VIEW STATUS and rockstream_catalog.views, the reason label of
// rockstream_view_freshness_missed).
const (
	// freshnessBackfilling: the view is being filled from its inputs and
	// cannot be read yet.
	freshnessBackfilling = "backfilling"
	// freshnessFailed: the view could not be built and is not maintained.
	freshnessFailed = "failed"
	// freshnessError: an input row makes one of its expressions fail, so
	// reads of it fail.
	freshnessError = "error"
	// freshnessRecovering: its shard is still recovering after a start.
	freshnessRecovering = "recovering"
	// freshnessBehindInputs: its view shard has not received every commit
	// yet (the exchange from the table shard is behind).
	freshnessBehindInputs = "behind inputs"
	// freshnessOverloaded: its shard has the commits but applies them
	// more slowly than they arrive (see rockstream_shard_last_step_seconds).
	freshnessOverloaded = "overloaded"
)

// epochTimesMax bounds the commit times the engine remembers: a view more
// than this many epochs behind reports the oldest remembered time, a lower
// bound of its lag, which has long missed any target by then.
const epochTimesMax = 4096

// epochClock remembers when recent epochs were committed, so a view's lag
// can be told in time rather than in epochs: the lag is how long the oldest
// commit the view does not reflect yet has been waiting.
type epochClock struct {
	mu sync.Mutex
	// times are the remembered commits, oldest first (at most
	// epochTimesMax; commits of concurrent sessions may arrive slightly
	// out of epoch order, which pendingSince tolerates).
	times []epochTime
}

type epochTime struct {
	epoch uint64
	at    time.Time
}

// record notes that epoch was committed at at.
func (c *epochClock) record(epoch uint64, at time.Time) {
	if epoch == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.times) >= epochTimesMax {
		c.times = append(c.times[:0], c.times[len(c.times)-epochTimesMax/2:]...)
	}
	c.times = append(c.times, epochTime{epoch, at})
}

// pendingSince is when the oldest remembered commit after frontier was
// made, given that lastEpoch is committed; ok is false when the view
// reflects every commit. An epoch committed by something that did not
// record it (DDL, a commit before this process started) is dated when it
// was first seen here, now.
func (c *epochClock) pendingSince(frontier, lastEpoch uint64, now time.Time) (time.Time, bool) {
	if frontier >= lastEpoch {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	oldest, newest := now, uint64(0)
	for _, t := range c.times {
		if t.epoch > frontier && t.at.Before(oldest) {
			oldest = t.at
		}
		newest = max(newest, t.epoch)
	}
	if newest < lastEpoch {
		// NB: remembered so the next look dates it the same.
		c.times = append(c.times, epochTime{lastEpoch, now})
	}
	return oldest, true
}

// setFreshness sets every view's LagNanos and, when it lags, Behind: how
// long its oldest unreflected commit has waited and why. all are the
// shards' statuses in shard order, the table shard's first.
func (e *Engine) setFreshness(all []shard.Status, now time.Time) {
	if len(all) == 0 {
		return
	}
	table := all[0]
	for i := range all {
		st := &all[i]
		for j := range st.Views {
			v := &st.Views[j]
			since, lagging := e.epochs.pendingSince(st.Frontier, table.LastEpoch, now)
			if !lagging {
				continue
			}
			v.LagNanos = int64(now.Sub(since))
			switch {
			case !st.Ready:
				v.Behind = freshnessRecovering
			case st.LastEpoch < table.LastEpoch:
				v.Behind = freshnessBehindInputs
			default:
				v.Behind = freshnessOverloaded
			}
		}
	}
}

// viewFreshness is a view's compliance with its freshness target.
type viewFreshness struct {
	// Target is the view's freshness_target (0: none).
	Target time.Duration
	// Lag is how long the oldest commit the view does not reflect has
	// waited; LagKnown is false while the view is not maintained
	// (backfilling, failed).
	Lag      time.Duration
	LagKnown bool
	// Missed names why the target is missed ("" when it is met or the
	// view has none).
	Missed string
}

// freshnessOf judges view v against target.
func freshnessOf(v shard.ViewStatus, target time.Duration) viewFreshness {
	f := viewFreshness{Target: target, Lag: time.Duration(v.LagNanos), LagKnown: v.Failed == "" && v.Backfill == ""}
	if target <= 0 {
		return f
	}
	switch {
	case v.Failed != "":
		f.Missed = freshnessFailed
	case v.Backfill != "":
		f.Missed = freshnessBackfilling
	case v.Error != "":
		f.Missed = freshnessError
	case f.Lag > target:
		f.Missed = v.Behind
		if f.Missed == "" {
			f.Missed = freshnessOverloaded
		}
	}
	return f
}

// Columns renders f as freshness_target, freshness_lag, freshness_met and
// freshness_reason (NULL where they do not apply).
func (f viewFreshness) Columns() types.Row {
	var target, lag, met, reason types.Datum
	if f.Target > 0 {
		target = durationInterval(f.Target)
		met = f.Missed == ""
		if f.Missed != "" {
			reason = f.Missed
		}
	}
	if f.LagKnown {
		lag = durationInterval(f.Lag)
	}
	return types.Row{target, lag, met, reason}
}

// durationInterval is d as an interval datum (microsecond precision, as
// PostgreSQL's).
func durationInterval(d time.Duration) types.Interval {
	return types.Interval{Micros: d.Microseconds()}
}
