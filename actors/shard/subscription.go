package shard

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Subscriptions: the shard sends a subscriber's edge actor one
// SubscriptionUpdate per closed epoch step, but never more than the edge
// has room for (credit). A subscriber without credit falls behind: the
// shard does not buffer for it, it remembers the last epoch delivered and,
// when credit arrives, catches up from the view's change history
// (history.go), which is also what SUBSCRIBE ... AS OF EPOCH replays. So a
// slow or resuming subscriber costs durable history, never shard memory;
// one that falls behind the retained history, or subscribes to a view
// that keeps none, is ended with RS-2020.
//
//	               Subscribe (AsOf n)          credit, epoch steps
//	(none) ──────────────────────────► behind ◄────────────────► caught up
//	                                     │  epoch < floor, or no history │
//	                                     └───────► ended ◄───────────────┘
//	                                         (SubscriptionEnded, removed)
//
// Effects ordering: an update is sent only for an epoch whose step is
// durable, so the epoch a client records from a progress row survives a
// crash and a resume from it neither repeats nor skips a change (a step
// lost in a crash may be recomputed over a different range of epochs).
type subscription struct {
	edge runtime.ActorID
	view catalog.ID
	// name is the view's name, for the error that ends the subscription
	// when the view is dropped.
	name string
	// epoch is the last epoch whose changes were sent.
	// INVARIANT: epoch <= durableFrontier.
	epoch uint64
	// sent counts the updates sent; granted is the edge's credit: updates
	// up to Seq granted may be sent.
	sent, granted uint64
}

func (a *Actor) receiveSubscribe(ctx runtime.Context, m Subscribe) {
	res, err := a.subscribe(ctx, m)
	if err != nil {
		ctx.Reply(err)
		return
	}
	ctx.Reply(res)
	// The replay (if any) follows the reply; the edge exists already.
	a.deliver(ctx, len(a.subs)-1, nil, 0)
	a.removeEnded()
}

func (a *Actor) subscribe(ctx runtime.Context, m Subscribe) (Subscribed, error) {
	if a.snap == nil || a.snap.Version < m.CatalogVersion {
		have := uint64(0)
		if a.snap != nil {
			have = a.snap.Version
		}
		return Subscribed{}, errcode.New(errcode.ShardUnavailable, "the shard runs catalog version %d, the subscription needs %d", have, m.CatalogVersion)
	}
	if err := a.stepAll(ctx); err != nil {
		return Subscribed{}, err
	}
	v := a.installed(m.View)
	if v == nil {
		name := m.View.String()
		if rel, ok := a.snap.RelationByID(m.View); ok {
			name = rel.Name
		}
		return Subscribed{}, errcode.New(errcode.UndefinedObject, "materialized view %s is not installed on this shard", name)
	}
	if err := a.makeFrontierDurable(); err != nil {
		return Subscribed{}, err
	}
	// A view with the default retention keeps history from its first
	// subscription on, so this subscriber can resume after a disconnect.
	if err := a.startHistory(v); err != nil {
		return Subscribed{}, err
	}
	from := a.frontier
	if m.Resume {
		if m.AsOf > a.frontier {
			return Subscribed{}, errcode.New(errcode.SQLInvalidParameterValue, "epoch %d is not complete yet: the view %s is complete up to epoch %d", m.AsOf, v.rel.Name, a.frontier).
				WithDetail("resume from an epoch a progress row (mz_progressed = true) reported").WithSQLState("22023")
		}
		oldest := a.frontier
		if v.history.on {
			oldest = v.history.floor
		}
		if m.AsOf < oldest {
			return Subscribed{}, errcode.New(errcode.HistoryEpochBeforeRetention, "epoch %d is before the oldest available epoch %d of view %s", m.AsOf, oldest, v.rel.Name).
				WithDetail("oldest available epoch: %d", oldest)
		}
		from = m.AsOf
	}
	res := Subscribed{Frontier: from}
	if m.WithSnapshot {
		if m.Resume {
			return Subscribed{}, errcode.New(errcode.SQLFeatureNotSupported, "SUBSCRIBE ... AS OF EPOCH cannot be combined WITH (SNAPSHOT)").
				WithDetail("resume from an epoch continues a subscription that already has the snapshot")
		}
		b, err := a.snapshotOf(a.store, m.View)
		if err != nil {
			return Subscribed{}, err
		}
		res.Snapshot = b
	}
	a.unsubscribe(m.Edge)
	a.subs = append(a.subs, subscription{edge: m.Edge, view: m.View, name: v.rel.Name, epoch: from, granted: m.Through})
	return res, nil
}

func (a *Actor) unsubscribe(edge runtime.ActorID) {
	kept := a.subs[:0]
	for _, s := range a.subs {
		if s.edge != edge {
			kept = append(kept, s)
		}
	}
	a.subs = kept
}

func (a *Actor) receiveCredit(ctx runtime.Context, m SubscriptionCredit) {
	for i := range a.subs {
		if a.subs[i].edge == ctx.From() {
			a.subs[i].granted = max(a.subs[i].granted, m.Through)
			a.deliver(ctx, i, nil, 0)
		}
	}
	a.removeEnded()
}

// outputDeltas builds the step's output delta of every view that keeps
// history or has a subscriber, once per view.
func (a *Actor) outputDeltas(viewDeltas map[catalog.ID]zset.Delta) map[catalog.ID]zset.Batch {
	var out map[catalog.ID]zset.Batch
	for _, v := range a.views {
		d, ok := viewDeltas[v.rel.ID]
		if !ok || !(v.history.on || a.subscribed(v.rel.ID)) {
			continue
		}
		if out == nil {
			out = map[catalog.ID]zset.Batch{}
		}
		out[v.rel.ID] = outputDelta(v, d)
	}
	return out
}

func (a *Actor) subscribed(view catalog.ID) bool {
	for _, s := range a.subs {
		if s.view == view {
			return true
		}
	}
	return false
}

// publish sends the step (prev, frontier] to every subscriber that is
// caught up and has credit; the others catch up from history.
func (a *Actor) publish(ctx runtime.Context, prev uint64, outputs map[catalog.ID]zset.Batch) {
	if len(a.subs) == 0 {
		return
	}
	if err := a.makeFrontierDurable(); err != nil {
		// The shard is poisoned; subscribers stay behind and catch up
		// from the history once it is reopened.
		ctx.Logger().Error("epoch step not durable: subscribers wait", "err", err)
		return
	}
	for i := range a.subs {
		a.deliver(ctx, i, outputs, prev)
	}
	a.removeEnded()
}

// deliver sends subscription i what its credit allows: the live step
// (prev, frontier] when it is caught up to prev, else history entries.
// An ended subscription gets an empty edge id (removeEnded drops it).
func (a *Actor) deliver(ctx runtime.Context, i int, live map[catalog.ID]zset.Batch, prev uint64) {
	s := &a.subs[i]
	assert.That(s.epoch <= a.durableFrontier, "subscription at epoch %d past the durable frontier %d", s.epoch, a.durableFrontier)
	v := a.installed(s.view)
	if v == nil {
		a.end(ctx, s, errcode.New(errcode.UndefinedObject, "materialized view %s was dropped", s.name))
		return
	}
	for s.epoch < a.frontier {
		if s.sent >= s.granted {
			if !v.history.on {
				a.end(ctx, s, errcode.New(errcode.SubscriberTooSlow, "the subscriber's queue is full and view %s keeps no change history (retain_history = '0') to catch up from", v.rel.Name))
			}
			return
		}
		u := SubscriptionUpdate{Seq: s.sent + 1, After: s.epoch}
		switch {
		case live != nil && s.epoch == prev:
			u.Epoch, u.Delta = a.frontier, live[s.view]
		case !v.history.on:
			// INVARIANT: without history a subscription is never behind
			// (it is ended as soon as it lacks credit for a step).
			panic("shard: subscription behind a view without history")
		case s.epoch < v.history.floor:
			a.end(ctx, s, errcode.New(errcode.SubscriberTooSlow, "the subscriber fell behind the change history of view %s: it is at epoch %d, the oldest available epoch is %d", v.rel.Name, s.epoch, v.history.floor))
			return
		default:
			e, b, ok, err := a.nextHistory(v, s.epoch, a.frontier)
			if err != nil {
				a.end(ctx, s, errcode.Wrap(errcode.ShardUnavailable, err, "reading the change history of view %s", v.rel.Name))
				return
			}
			if !ok {
				e = a.frontier // no change in (epoch, frontier]
			}
			u.Epoch, u.Delta = e, b
		}
		ctx.Send(s.edge, u)
		s.sent++
		s.epoch = u.Epoch
	}
}

// end sends the edge the error that ends its subscription.
func (a *Actor) end(ctx runtime.Context, s *subscription, err *errcode.Error) {
	msg := err.Message
	if err.Cause != nil {
		msg += ": " + err.Cause.Error()
	}
	ctx.Send(s.edge, SubscriptionEnded{Code: err.Code.ID, Message: msg})
	s.edge = ""
}

func (a *Actor) removeEnded() { a.unsubscribe("") }
