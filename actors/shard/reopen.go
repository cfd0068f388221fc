package shard

import (
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/runtime"
)

// A shard is poisoned by a write whose outcome is uncertain (poison): its
// in-memory state may hold changes the store did not make durable. Instead
// of staying unavailable until the process restarts, it reopens itself:
// the store is opened again from durable storage (a new slate writer, which
// fences the old one), the epoch counters are read back, and the views are
// rebuilt from their stored state with the delta log above the frontier
// replayed — exactly what a restart does. Until a reopen succeeds every
// request answers ShardUnavailable; attempts back off so a store that is
// down is not hammered.
//
//	serving ──uncertain write──► poisoned ──request, backoff elapsed──► reopen
//	   ▲                              ▲                                   │
//	   └──────────── ok ──────────────┼───────────────────────────────────┤
//	                                  └──────────── failed (backoff ×2) ──┘

// Reopen backoff: the first attempt waits reopenBackoffMin after the
// failure; each failed attempt doubles the wait up to reopenBackoffMax.
// Simulation range: min 1ms..1s, max 1s..1min.
const (
	reopenBackoffMin = 50 * time.Millisecond
	reopenBackoffMax = 10 * time.Second
)

// reopenState tracks a poisoned shard's recovery.
type reopenState struct {
	poisoned bool
	// at is the earliest time of the next attempt; backoff the wait after
	// the next failure.
	at      time.Time
	backoff time.Duration
	// Reopens counts successful reopens (Status).
	reopens uint64
}

// openFailure is what a request gets while the shard's storage cannot open:
// ShardUnavailable (retry shortly), except when the store is damaged or in a
// format this build cannot read, which retrying cannot fix: then the
// storage's own error (RS-5002 naming the object, or RS-5001).
func openFailure(err error, what string) error {
	if e, ok := errcode.StorageIntegrityError(err); ok {
		return e
	}
	return errcode.Wrap(errcode.ShardUnavailable, err, "%s", what)
}

// maybeReopen tries to reopen a poisoned shard when its backoff allows.
func (a *Actor) maybeReopen(ctx runtime.Context) {
	if !a.reopen.poisoned || ctx.Now().Before(a.reopen.at) {
		return
	}
	old, prevSnap := a.store, a.snap
	a.store, a.snap, a.views, a.codecs, a.indexes = nil, nil, nil, nil, nil
	// The streams of lower stages begin again: a home that asks again
	// gets a snapshot, and starts its upper stage over (stages.go).
	a.stageStreams = nil
	a.stepScheduled, a.commitUnsynced = false, false
	// INVARIANT: beforeMessage answered every pending commit already.
	if len(a.pending) > 0 {
		panic("shard: reopening with pending commits")
	}
	err := a.open(ctx)
	if err == nil && prevSnap != nil {
		_, err = a.syncCatalog(ctx, prevSnap)
	}
	if closer, ok := old.(interface{ Close() error }); ok && old != a.store {
		// The old writer is fenced by the new one; closing only releases it.
		if cerr := closer.Close(); cerr != nil {
			ctx.Logger().Info("closing the poisoned shard store", "err", cerr)
		}
	}
	if err != nil {
		a.openErr = err
		a.reopen.at = ctx.Now().Add(a.reopen.backoff)
		a.reopen.backoff = min(2*a.reopen.backoff, reopenBackoffMax)
		ctx.Logger().Error("shard reopen failed", "err", err, "next_attempt_in", a.reopen.backoff)
		return
	}
	a.openErr = nil
	a.reopen.poisoned = false
	a.reopen.reopens++
	ctx.Logger().Info("shard reopened from durable state", "last_epoch", a.lastEpoch, "frontier", a.frontier)
	a.scheduleStep(ctx)
}

// retryOpen makes a shard whose first open failed (a store briefly
// unreachable at start) try again as a poisoned one does, on requests and
// on a storage tick armed here, instead of failing every request until the
// process restarts. A fence stays terminal (poison).
func (a *Actor) retryOpen(ctx runtime.Context, err error) {
	if errcode.Has(err, errcode.ShardFenceLost) {
		return
	}
	a.reopen.poisoned = true
	a.reopen.backoff = reopenBackoffMin
	a.reopen.at = ctx.Now().Add(reopenBackoffMin)
	if a.cfg.TickEvery > 0 && !a.ticking {
		a.ticking = true
		ctx.After(a.cfg.TickEvery, storageTick{})
	}
}
