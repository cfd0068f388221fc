package engine

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/subscriber"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// subscriberSeq numbers the edge actors of subscriptions in this process.
var subscriberSeq atomic.Uint64

// subscribe streams a view's changes: (mz_timestamp, mz_progressed, mz_diff,
// columns...), a progress row (mz_progressed = true) per closed epoch.
// The shard sends the updates to an edge actor (actors/subscriber) that
// owns the bounded queue; the cursor takes them from it.
func (s *session) subscribe(ctx context.Context, snap *control.Snapshot, st *rsql.Subscribe) (gateway.Cursor, error) {
	// Read-your-writes: the subscription starts after the session's last
	// commit, which a view shard may not have received yet.
	var minEpoch uint64
	if m, err := s.req(ctx, sessionactor.GetState{}); err == nil {
		minEpoch = m.(sessionactor.State).LastWritten
	}
	sub, err := s.e.openSubscription(ctx, snap, st.View.ID, subscriptionOptions{
		withSnapshot: st.Snapshot, resume: st.AsOfEpoch >= 0, asOf: uint64(max(0, st.AsOfEpoch)), minEpoch: minEpoch})
	if err != nil {
		return nil, err
	}
	c := &subscribeCursor{s: s, sub: sub, width: len(st.View.Columns)}
	if !sub.merged {
		if st.Snapshot {
			c.emit(sub.frontier, sub.snapshot)
		}
		c.progress(sub.frontier)
	}
	return c, nil
}

// subscriptionOptions are a view subscription's: the snapshot first, or a
// resume after epoch asOf; the epoch it must start at or after.
type subscriptionOptions struct {
	withSnapshot, resume bool
	asOf, minEpoch       uint64
}

// subscription is an open subscription of a view: its edge actor and the
// shards that feed it. On one shard, Subscribed's frontier and snapshot
// come first, then the edge's updates; a view spread over the shards
// (merged) has every shard feed the edge, whose first update is the
// merged start (subscriber.Begin).
type subscription struct {
	edge     runtime.ActorID
	homes    []runtime.ActorID
	merged   bool
	frontier uint64
	snapshot zset.Batch
}

// openSubscription subscribes an edge actor to view's changes (SUBSCRIBE
// and sinks).
func (e *Engine) openSubscription(ctx context.Context, snap *control.Snapshot, view catalog.ID, o subscriptionOptions) (*subscription, error) {
	if rel, ok := snap.RelationByID(view); ok && rel.Stages {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support SUBSCRIBE or sinks of materialized view %q yet: it runs in stages (--exchange-stages)", rel.Name).
			WithDetail("create the view again on a server started without --exchange-stages to follow its changes")
	}
	sub := &subscription{edge: runtime.ActorID(fmt.Sprintf("subscriber/%d", subscriberSeq.Add(1)))}
	cfg := subscriber.Config{QueueUpdatesMax: e.cfg.SubscriberQueueUpdatesMax}
	if e.router.ReadHomeOf(snap, view) == shard.SpreadShards {
		for _, id := range shard.SpreadShardsOf(e.router.Map()) {
			sub.homes = append(sub.homes, e.router.ActorOf(id))
		}
		cfg.Shards, sub.merged = sub.homes, true
	} else {
		sub.homes = []runtime.ActorID{e.viewShard(snap, view)}
		cfg.Shard = sub.homes[0]
	}
	if err := e.rt.Spawn("embedded", sub.edge, subscriber.New(cfg)); err != nil {
		return nil, errcode.Wrap(errcode.InternalError, err, "starting the subscription")
	}
	req := shard.Subscribe{CatalogVersion: snap.Version, View: view, WithSnapshot: o.withSnapshot, Edge: sub.edge, Through: cfg.Through(),
		Resume: o.resume, AsOf: o.asOf, MinEpoch: o.minEpoch}
	if sub.merged || sub.homes[0] != e.tableShard() {
		// Every commit acknowledged before: the subscription starts
		// after them, which a view shard may not have received yet.
		m, err := e.ask(ctx, e.tableShard(), shard.GetEpoch{})
		if err != nil {
			_ = e.rt.Stop(sub.edge)
			return nil, err
		}
		req.MinEpoch = max(req.MinEpoch, m.(shard.Committed).Epoch)
	}
	begin := subscriber.Begin{WithSnapshot: o.withSnapshot}
	for i, home := range sub.homes {
		m, err := e.ask(ctx, home, req)
		if err != nil {
			sub.close(e, i)
			return nil, err
		}
		sm := m.(shard.Subscribed)
		sub.frontier, sub.snapshot = sm.Frontier, sm.Snapshot
		begin.From = append(begin.From, sm.Frontier)
		begin.Snapshots = append(begin.Snapshots, sm.Snapshot)
	}
	if sub.merged {
		sub.frontier, sub.snapshot = 0, zset.Batch{}
		if err := e.rt.Tell(ctx, sub.edge, begin); err != nil {
			_ = sub.close(e, -1)
			return nil, errcode.Wrap(errcode.InternalError, err, "starting the subscription")
		}
	}
	return sub, nil
}

// close ends the subscription on the first n of its shards (all: -1) and
// stops its edge.
func (sub *subscription) close(e *Engine, n int) error {
	var err error
	for i, home := range sub.homes {
		if n >= 0 && i >= n {
			break
		}
		if _, uerr := e.ask(context.Background(), home, shard.Unsubscribe{Edge: sub.edge}); err == nil {
			err = uerr
		}
	}
	if serr := e.rt.Stop(sub.edge); err == nil && serr != nil {
		err = serr
	}
	return err
}

type subscribeCursor struct {
	s       *session
	sub     *subscription
	pending []types.Row
	width   int
	// ended is the error that ended the subscription, returned once the
	// rows before it are read.
	ended  error
	closed bool
}

func (c *subscribeCursor) emit(epoch uint64, delta zset.Batch) {
	delta = zset.Consolidate(delta)
	for i, r := range delta.Rows {
		row := make(types.Row, 0, 3+c.width)
		row = append(row, int64(epoch), false, delta.Weights[i])
		row = append(row, r[:min(len(r), c.width)]...)
		c.pending = append(c.pending, row)
	}
}

func (c *subscribeCursor) progress(epoch uint64) {
	row := make(types.Row, 3+c.width)
	row[0], row[1] = int64(epoch), true
	c.pending = append(c.pending, row)
}

// Next blocks until the next change or progress row.
func (c *subscribeCursor) Next(ctx context.Context) (types.Row, error) {
	for len(c.pending) == 0 {
		if c.ended != nil {
			return nil, c.ended
		}
		if c.closed {
			return nil, io.EOF
		}
		m, err := c.s.e.ask(ctx, c.sub.edge, subscriber.Take{})
		if err != nil {
			// NB: the edge may still answer the abandoned Take with
			// updates nobody reads, so the stream has a gap from here:
			// the subscription ends (the client resumes AS OF its last
			// progress epoch).
			c.ended = err
			return nil, err
		}
		t := m.(subscriber.Taken)
		for _, u := range t.Updates {
			c.emit(u.Epoch, u.Delta)
			c.progress(u.Epoch)
		}
		c.ended = t.Err()
	}
	r := c.pending[0]
	c.pending = c.pending[1:]
	return r, nil
}

func (c *subscribeCursor) Tag() string               { return "SUBSCRIBE" }
func (c *subscribeCursor) Notices() []*errcode.Error { return nil }

func (c *subscribeCursor) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	return c.sub.close(c.s.e, -1)
}

// Streaming implements gateway.StreamingCursor: every row is flushed.
func (c *subscribeCursor) Streaming() bool { return true }
