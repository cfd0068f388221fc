package session

import (
	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/runtime"
)

// Snapshots: one picture of every relation that a REPEATABLE READ
// transaction, or a statement whose reads take several requests, reads
// in. With one table shard, it pins its store and the view shards' views
// at its last epoch (shard pins.go). In a partitioned layout the session
// pins every shard at one epoch E itself:
//
//	control plane: AllocEpoch → the snapshot's id, and E = the last epoch
//	               handed out (every commit acknowledged before shows)
//	every view shard:  PinViews{id, E} (Behind: it passed E already; the
//	                   pins are let go and E is its frontier next time)
//	every table shard: OpenSnapshot{id, E}, once it sealed E
//	release:           ReleaseSnapshot{id} to every shard

// snapshotPinAttemptsMax bounds the attempts at pinning a partitioned
// layout's views at one epoch while they step past it.
const snapshotPinAttemptsMax = 8

// openSnapshot pins a snapshot of every relation, then runs next with its
// id and epoch.
func (a *Actor) openSnapshot(ctx runtime.Context, catalogVersion uint64, next func(ctx runtime.Context, id, epoch uint64)) {
	if !a.cfg.Router.Partitioned() {
		a.ask(ctx, a.home(), shard.OpenSnapshot{CatalogVersion: catalogVersion}, a.orFail(func(ctx runtime.Context, reply runtime.Message) {
			opened := reply.(shard.SnapshotOpened)
			next(ctx, opened.ID, opened.Epoch)
		}))
		return
	}
	a.ask(ctx, a.control(), control.AllocEpoch{Count: 1}, a.orFail(func(ctx runtime.Context, reply runtime.Message) {
		e := reply.(control.EpochAllocated)
		// NB: the id is an epoch handed out once, also across restarts, so
		// no shard confuses two sessions' snapshots.
		a.pinViewShards(ctx, catalogVersion, e.Epoch, max(e.Known, e.Epoch), snapshotPinAttemptsMax, next)
	}))
}

// pinViewShards pins every view shard's views at epoch under id, then
// the table shards.
func (a *Actor) pinViewShards(ctx runtime.Context, catalogVersion, id, epoch uint64, attempts int, next func(ctx runtime.Context, id, epoch uint64)) {
	a.askEach(ctx, a.cfg.Router.ViewShards(), false, func(int) runtime.Message {
		return shard.PinViews{CatalogVersion: catalogVersion, ID: id, Epoch: epoch}
	}, func(ctx runtime.Context, replies []runtime.Message) {
		behind := uint64(0)
		for _, r := range replies {
			switch r := r.(type) {
			case error:
				a.releaseSnapshotID(ctx, id)
				a.finish(r)
				return
			case shard.ViewsPinned:
				if r.Behind {
					behind = max(behind, r.Frontier)
				}
			}
		}
		if behind == 0 {
			a.openTableShards(ctx, catalogVersion, id, epoch, next)
			return
		}
		a.releaseSnapshotID(ctx, id)
		if attempts <= 1 {
			a.finish(errcode.New(errcode.SnapshotUnavailable, "could not serialize access: the views stepped past every epoch a snapshot was tried at"))
			return
		}
		a.pinViewShards(ctx, catalogVersion, id, behind, attempts-1, next)
	})
}

// openTableShards pins every table shard's tables at epoch under id, the
// views being pinned there already.
func (a *Actor) openTableShards(ctx runtime.Context, catalogVersion, id, epoch uint64, next func(ctx runtime.Context, id, epoch uint64)) {
	a.askEach(ctx, a.cfg.Router.TableShards(), false, func(int) runtime.Message {
		return shard.OpenSnapshot{CatalogVersion: catalogVersion, ID: id, Epoch: epoch}
	}, func(ctx runtime.Context, replies []runtime.Message) {
		for _, r := range replies {
			if err, ok := r.(error); ok {
				a.releaseSnapshotID(ctx, id)
				a.finish(err)
				return
			}
		}
		next(ctx, id, epoch)
	})
}

// askEach asks every shard of shards msgOf(i) (i its index) at once and
// runs done with their replies (errors included), in shards' order, once
// all came; patient asks as a commit does (askPatiently).
func (a *Actor) askEach(ctx runtime.Context, shards []partition.ShardID, patient bool, msgOf func(i int) runtime.Message, done func(runtime.Context, []runtime.Message)) {
	replies := make([]runtime.Message, len(shards))
	left := len(shards)
	if left == 0 {
		done(ctx, replies)
		return
	}
	for i, s := range shards {
		then := func(ctx runtime.Context, reply runtime.Message) {
			replies[i] = reply
			if left--; left == 0 {
				done(ctx, replies)
			}
		}
		if patient {
			a.askPatiently(ctx, a.cfg.Router.ActorOf(s), msgOf(i), then)
		} else {
			a.ask(ctx, a.cfg.Router.ActorOf(s), msgOf(i), then)
		}
	}
}

// releaseSnapshotID lets snapshot id go on every shard pinning it.
func (a *Actor) releaseSnapshotID(ctx runtime.Context, id uint64) {
	if !a.cfg.Router.Partitioned() {
		a.send(ctx, a.home(), shard.ReleaseSnapshot{ID: id})
		return
	}
	for _, s := range a.cfg.Router.Shards() {
		a.send(ctx, a.cfg.Router.ActorOf(s), shard.ReleaseSnapshot{ID: id})
	}
}
