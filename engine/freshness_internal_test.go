package engine

import (
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/shard"
)

// TestFreshnessReasons: a view's lag is dated from the oldest commit it
// does not reflect, and a missed target names why: the view shard still
// recovering, not having received the commits (behind inputs), or having
// them but not keeping up (overloaded); a backfilling, failed or erring
// view misses any target whatever its lag.
func TestFreshnessReasons(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	var e Engine
	e.epochs.record(10, at(0))
	e.epochs.record(11, at(100))
	e.epochs.record(12, at(200))
	now := at(1000)
	all := []shard.Status{
		{Shard: 0, Ready: true, LastEpoch: 12, Frontier: 12, Views: []shard.ViewStatus{{Name: "current"}}},
		{Shard: 1, Ready: true, LastEpoch: 12, Frontier: 10, Views: []shard.ViewStatus{{Name: "slow"}, {Name: "filling", Backfill: "reading inputs"}, {Name: "broken", Failed: "boom"}, {Name: "bad", Error: "division by zero"}}},
		{Shard: 2, Ready: true, LastEpoch: 11, Frontier: 9, Views: []shard.ViewStatus{{Name: "starved"}}},
		{Shard: 3, Ready: false, LastEpoch: 12, Frontier: 11, Views: []shard.ViewStatus{{Name: "starting"}}},
	}
	e.setFreshness(all, now)
	type want struct {
		lag    time.Duration
		behind string
	}
	wants := map[string]want{
		"current":  {0, ""},
		"slow":     {900 * time.Millisecond, freshnessOverloaded},
		"filling":  {900 * time.Millisecond, freshnessOverloaded},
		"broken":   {900 * time.Millisecond, freshnessOverloaded},
		"bad":      {900 * time.Millisecond, freshnessOverloaded},
		"starved":  {time.Second, freshnessBehindInputs},
		"starting": {800 * time.Millisecond, freshnessRecovering},
	}
	missed := map[string]string{
		"current": "", "slow": freshnessOverloaded, "filling": freshnessBackfilling, "broken": freshnessFailed,
		"bad": freshnessError, "starved": freshnessBehindInputs, "starting": freshnessRecovering,
	}
	for _, st := range all {
		for _, v := range st.Views {
			w := wants[v.Name]
			if time.Duration(v.LagNanos) != w.lag || v.Behind != w.behind {
				t.Errorf("view %s: lag %v behind %q, want %v %q", v.Name, time.Duration(v.LagNanos), v.Behind, w.lag, w.behind)
			}
			if got := freshnessOf(v, 500*time.Millisecond).Missed; got != missed[v.Name] {
				t.Errorf("view %s against 500ms: missed %q, want %q", v.Name, got, missed[v.Name])
			}
			if got := freshnessOf(v, 0).Missed; got != "" {
				t.Errorf("view %s without a target: missed %q", v.Name, got)
			}
		}
	}
	// A generous target is met by a lagging view that is maintained.
	if f := freshnessOf(all[1].Views[0], 2*time.Second); f.Missed != "" || !f.LagKnown {
		t.Errorf("a view 900ms behind against a 2s target: %+v", f)
	}
	// A commit the engine did not see (DDL, one from before the start) is
	// dated when first seen, and keeps that date.
	var fresh Engine
	if since, ok := fresh.epochs.pendingSince(3, 4, at(0)); !ok || !since.Equal(at(0)) {
		t.Errorf("an unrecorded pending epoch dated %v, %v", since, ok)
	}
	if since, _ := fresh.epochs.pendingSince(3, 4, at(500)); !since.Equal(at(0)) {
		t.Errorf("an unrecorded pending epoch seen again is dated %v, want its first sight", since)
	}
	for i := uint64(1); i <= 3*epochTimesMax; i++ {
		fresh.epochs.record(100+i, at(int(i)))
	}
	if n := len(fresh.epochs.times); n > epochTimesMax {
		t.Errorf("the epoch clock holds %d times, more than its %d limit", n, epochTimesMax)
	}
}
