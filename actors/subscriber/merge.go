package subscriber

import (
	"fmt"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Begin (engine → edge of a merged subscription, Config.Shards) says
// where each shard's stream starts: From[i] is the frontier shard
// Shards[i] answered Subscribe with, and Snapshots[i] its part of the
// view there (WithSnapshot).
type Begin struct {
	From         []uint64
	Snapshots    []zset.Batch
	WithSnapshot bool
}

// A view spread over the shards (shard.IsSpread) is the sum of every
// shard's part, and each shard steps over its own ranges of epochs: an
// update (After, Epoch] says how its part changed over those epochs, not
// when in between. The edge merges the streams at epochs every part knows
// its state at, and only once every shard has sent what comes before:
//
//	shard 0  (10,12] (12,15]            (15,64]
//	shard 1  (10,15]         (15,40] (40,64]
//	merged   (10,15]: both at 15      (15,64]: both at 64
//
// A part knows its state at an epoch x inside an update (a, e] when x is
// e, or when x is a multiple of shard.SpreadStepEvery: a shard running a
// spread view ends a step at each of them, so a change in (a, e] was made
// after the last one before e (an update read from the view's history
// spans the steps that changed nothing). Those multiples are common to
// every shard, so the merge advances however the shards' steps fall.
// (Not any epoch of an update that changed nothing: within one step a
// row may come and go.)
type merge struct {
	parts []*part
	// begun: Begin arrived; first: nothing was emitted yet.
	begun, first bool
	withSnapshot bool
	snapshot     zset.Batch
	// emitted is the epoch of the last merged update.
	emitted uint64
}

// part is one shard's stream: the updates after the epoch folded into
// the merge so far (at).
type part struct {
	shard    runtime.ActorID
	received uint64
	at       uint64
	pending  []shard.SubscriptionUpdate
}

func newMerge(shards []runtime.ActorID) *merge {
	m := &merge{first: true}
	for _, s := range shards {
		m.parts = append(m.parts, &part{shard: s})
	}
	return m
}

func (m *merge) receive(from runtime.ActorID, u shard.SubscriptionUpdate) error {
	for _, p := range m.parts {
		if p.shard != from {
			continue
		}
		if u.Seq != p.received+1 {
			// Sends are at-most-once: a lost update is a gap.
			return fmt.Errorf("the subscription lost update %d of %s (next received: %d); resume AS OF the last progress epoch", p.received+1, from, u.Seq)
		}
		p.received = u.Seq
		p.pending = append(p.pending, u)
		return nil
	}
	return fmt.Errorf("an update came from %s, which the subscription did not subscribe to", from)
}

func (m *merge) begin(b Begin) {
	if m.begun || len(b.From) != len(m.parts) {
		return
	}
	m.begun, m.withSnapshot = true, b.WithSnapshot
	for i, p := range m.parts {
		p.at = b.From[i]
		if b.WithSnapshot && i < len(b.Snapshots) {
			m.snapshot.AddBatch(b.Snapshots[i], 1)
		}
	}
}

// emit merges what every part has sent up to the latest epoch they all
// know, as many times as it can.
func (m *merge) emit() []shard.SubscriptionUpdate {
	if !m.begun {
		return nil
	}
	var out []shard.SubscriptionUpdate
	for {
		x, ok := m.next()
		if !ok {
			return out
		}
		var delta zset.Batch
		after := m.emitted
		if m.first && m.withSnapshot {
			delta.AddBatch(m.snapshot, 1)
			m.snapshot = zset.Batch{}
			after = 0
		}
		for _, p := range m.parts {
			keep := p.pending[:0]
			for _, u := range p.pending {
				switch {
				case u.Epoch <= x:
					delta.AddBatch(u.Delta, 1)
				case u.After < x:
					// What it changed, it changed after x (known).
					u.After = x
					keep = append(keep, u)
				default:
					keep = append(keep, u)
				}
			}
			p.pending, p.at = keep, x
		}
		if m.first && !m.withSnapshot {
			// Changes before the subscription's first common epoch are
			// before its start.
			delta, after = zset.Batch{}, x
		}
		m.first, m.emitted = false, x
		out = append(out, shard.SubscriptionUpdate{After: after, Epoch: x, Delta: zset.Consolidate(delta)})
	}
}

// next is the epoch of the next merged update: one that every part has
// sent everything up to and knows its state at.
func (m *merge) next() (uint64, bool) {
	low, high := m.emitted, uint64(0)
	for i, p := range m.parts {
		last := p.at
		if n := len(p.pending); n > 0 {
			last = p.pending[n-1].Epoch
		}
		if i == 0 || last < high {
			high = last
		}
		if m.first {
			low = max(low, p.at)
		}
	}
	if high < low || (!m.first && high == low) {
		return 0, false
	}
	var candidates []uint64
	candidates = append(candidates, high, high/shard.SpreadStepEvery*shard.SpreadStepEvery)
	for _, p := range m.parts {
		candidates = append(candidates, p.at)
		for _, u := range p.pending {
			candidates = append(candidates, u.Epoch)
		}
	}
	// The start is the earliest epoch every part knows at or after every
	// part's start (a resume AS OF an epoch starts right there); after
	// it, the latest, so a merged update covers as much as it can.
	best, found := uint64(0), false
	for _, x := range candidates {
		if x > high || x < low || (!m.first && x == low) {
			continue
		}
		if found && ((m.first && x >= best) || (!m.first && x <= best)) {
			continue
		}
		if m.knownByAll(x) {
			best, found = x, true
		}
	}
	return best, found
}

func (m *merge) knownByAll(x uint64) bool {
	for _, p := range m.parts {
		if !p.knows(x) {
			return false
		}
	}
	return true
}

// knows reports whether the part's state at epoch x is known from what
// it sent (x at or after the part's folded epoch).
func (p *part) knows(x uint64) bool {
	if x == p.at {
		return true
	}
	for _, u := range p.pending {
		if u.After < x && x <= u.Epoch {
			// NB: not every epoch of an update that changed nothing: its
			// step may have added a row and removed it again.
			return x == u.Epoch || x%shard.SpreadStepEvery == 0
		}
	}
	return false
}
