package shard

import (
	"slices"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/runtime"
)

// Pins: a REPEATABLE READ transaction over several shards sees its tables
// in the snapshot the table shard pinned at its first statement (epoch E)
// and the views on a view shard as of exactly E. The table shard asks for
// that picture when it pins its own snapshot:
//
//	session ──OpenSnapshot──► table shard: pin at E (its last epoch)
//	                          ──PinAt{ID, E}──► view shard: steps stop at E,
//	                                            pin the views there, go on
//	session ──Read{At: ID}──► view shard (parks until the pin is taken)
//	session ──ReleaseSnapshot──► table shard ──ReleasePin{ID}──► view shard
//
// Why the view shard cannot be past E when PinAt arrives: messages between
// two actors of one process arrive in order, and every frame the table
// shard sent before PinAt holds epochs up to E at most. So the view shard's
// steps are bounded at E (stepTarget) until the pin is taken; they never
// wait on the transaction, only on the exchange bringing E.
//
// A pin lost with a restart of either shard is a snapshot no longer
// available: the transaction's next read of a view fails with 40001.
// NB: a table shard that restarts with pins outstanding does not release
// them on the view shard; they are dropped when the view shard reopens.

// In a partitioned layout (placement.go) several table shards take
// commits and no one of them orders a pin against every frame, so the
// session pins every shard itself, at an epoch E at or after the last one
// the control plane handed out (so every commit acknowledged before
// shows):
//
//	session ──PinViews{ID, E}──► every view shard: steps stop at E, or
//	                             Behind if it already passed E (the
//	                             session releases and tries a later E)
//	session ──OpenSnapshot{ID, E}──► every table shard, once it sealed E:
//	                             pin the store, reads take away the
//	                             entries after E (openSnapshotAt)
//	session ──ReleaseSnapshot{ID}──► every shard
//
// A view shard holding a pin at E asks the table shards to seal E, and
// none waits on another's pin, so pins taken by two sessions at once
// never wait on each other.

// pendingPin is a PinAt whose epoch the view shard has not reached.
type pendingPin struct {
	id, epoch uint64
}

// pinOnViewShards asks every view shard to pin its views at epoch for
// snapshot id (table shard with view shards; a no-op on one shard).
func (a *Actor) pinOnViewShards(ctx runtime.Context, id, epoch uint64) {
	for _, o := range a.exchange.out {
		ctx.Send(ActorOf(o.peer), PinAt{ID: id, Epoch: epoch})
	}
}

// releasePinsOnViewShards ends the view shards' pins of snapshot id.
func (a *Actor) releasePinsOnViewShards(ctx runtime.Context, id uint64) {
	for _, o := range a.exchange.out {
		ctx.Send(ActorOf(o.peer), ReleasePin{ID: id})
	}
}

func (a *Actor) receivePinAt(ctx runtime.Context, m PinAt) {
	if m.Epoch < a.frontier {
		// Cannot happen between running shards (see above); after a
		// restart the pin is unavailable and reads naming it fail.
		ctx.Logger().Error("a pin arrived behind the view shard's frontier", "epoch", m.Epoch, "frontier", a.frontier)
		return
	}
	a.pins = append(a.pins, pendingPin{id: m.ID, epoch: m.Epoch})
	a.reachPins(ctx)
}

// receivePinViews pins a partitioned layout's views as of m.Epoch for a
// session's snapshot over every shard (above).
func (a *Actor) receivePinViews(ctx runtime.Context, m PinViews) {
	if !a.partitioned() || a.isTableShard() {
		ctx.Reply(errcode.New(errcode.InternalError, "views pinned on a shard that runs none of a partitioned layout's"))
		return
	}
	if m.Epoch < a.frontier {
		ctx.Reply(ViewsPinned{Behind: true, Frontier: a.frontier})
		return
	}
	a.pins = slices.DeleteFunc(a.pins, func(p pendingPin) bool { return p.id == m.ID })
	a.dropSnapshot(m.ID) // asked again
	a.pins = append(a.pins, pendingPin{id: m.ID, epoch: m.Epoch})
	a.askSeals(ctx, m.Epoch)
	a.scheduleStep(ctx)
	ctx.Reply(ViewsPinned{Frontier: m.Epoch})
}

func (a *Actor) receiveReleasePin(ctx runtime.Context, m ReleasePin) {
	for i, p := range a.pins {
		if p.id == m.ID {
			a.pins = append(a.pins[:i], a.pins[i+1:]...)
			a.scheduleStep(ctx)
			a.resumeRemoteBackfill(ctx)
			break
		}
	}
	a.dropSnapshot(m.ID)
}

// pinBound is the epoch steps must stop at for the lowest pending pin
// (ok false: none).
func (a *Actor) pinBound() (uint64, bool) {
	if len(a.pins) == 0 {
		return 0, false
	}
	b := a.pins[0].epoch
	for _, p := range a.pins[1:] {
		b = min(b, p.epoch)
	}
	return b, true
}

// reachPins takes the pins whose epoch the frontier reached, then lets
// the steps and the reads waiting for them go on.
func (a *Actor) reachPins(ctx runtime.Context) {
	if len(a.pins) == 0 || a.store == nil || a.openErr != nil {
		return
	}
	var taken bool
	keep := a.pins[:0]
	for _, p := range a.pins {
		if p.epoch != a.frontier {
			keep = append(keep, p)
			continue
		}
		if err := a.pinViews(p.id); err != nil {
			ctx.Logger().Error("pinning the views for a transaction", "err", err)
			// The reads naming it fail with 40001 (not pinned).
		}
		taken = true
	}
	a.pins = keep
	if taken {
		a.scheduleStep(ctx)
		a.resumeRemoteBackfill(ctx)
		a.replayWaitingReads(ctx)
	}
}

// passPins steps up to the pending pins whose epochs the shard has and
// takes them (a no-op while a backfill holds the steps below them).
func (a *Actor) passPins(ctx runtime.Context) {
	for {
		b, ok := a.pinBound()
		if !ok || b > a.backfillStepTarget() || a.store == nil || a.snap == nil || a.openErr != nil {
			return
		}
		if err := a.stepAll(ctx); err != nil {
			ctx.Logger().Error("stepping to a transaction's pin", "err", err)
			return
		}
		before := len(a.pins)
		a.reachPins(ctx)
		if len(a.pins) == before {
			return
		}
	}
}

// pinViews pins the store as of the frontier under id.
func (a *Actor) pinViews(id uint64) error {
	if err := a.makeFrontierDurable(); err != nil {
		return err
	}
	s, ok := a.store.(Snapshotter)
	if !ok {
		return nil
	}
	if a.snapshots == nil {
		a.snapshots = map[uint64]pinnedSnapshot{}
	}
	p := pinnedSnapshot{reader: s.Snapshot(), epoch: a.frontier, views: a.maintainedViews()}
	for _, b := range a.backfills {
		p.filling = append(p.filling, b.view.rel.ID)
	}
	a.snapshots[id] = p
	return nil
}

// awaitPin parks a Read of a pin not taken yet; it reports whether it did.
func (a *Actor) awaitPin(ctx runtime.Context, m Read) bool {
	for _, p := range a.pins {
		if p.id == m.At {
			return a.park(ctx, m)
		}
	}
	return false
}
