package sim

import "time"

// simEpoch is true time zero of every simulation: a fixed instant so that
// runs are reproducible (never the wall clock).
func simEpoch() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// processClock maps true virtual time to one process's clock, which starts
// skewed and runs fast or slow by driftPPM (faults.ClockSkew, ClockDrift).
//
// INVARIANT: local is strictly increasing in true time (|driftPPM| < 1e6),
// so a process clock never goes backwards.
type processClock struct {
	skew     time.Duration
	driftPPM float64
}

// local is the process's reading of true time now.
func (c processClock) local(now time.Duration) time.Time {
	drift := time.Duration(float64(now) * c.driftPPM / 1e6)
	return simEpoch().Add(c.skew + now + drift)
}

// trueDuration converts a duration measured on this process's clock (a
// timer) to true time.
func (c processClock) trueDuration(d time.Duration) time.Duration {
	return time.Duration(float64(d) * 1e6 / (1e6 + c.driftPPM))
}
