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
	if s.e.router.ReadHomeOf(snap, st.View.ID) == shard.SpreadShards {
		return nil, errcode.New(errcode.SpreadViewUnsupported, "cannot SUBSCRIBE to materialized view %q: it is spread over %d shards", st.View.Name, len(shard.SpreadShardsOf(s.e.router.Map())))
	}
	home := s.e.viewShard(snap, st.View.ID)
	cfg := subscriber.Config{Shard: home, QueueUpdatesMax: s.e.cfg.SubscriberQueueUpdatesMax}
	edge := runtime.ActorID(fmt.Sprintf("subscriber/%d", subscriberSeq.Add(1)))
	if err := s.e.rt.Spawn("embedded", edge, subscriber.New(cfg)); err != nil {
		return nil, errcode.Wrap(errcode.InternalError, err, "starting the subscription")
	}
	c := &subscribeCursor{s: s, edge: edge, home: home, width: len(st.View.Columns)}
	req := shard.Subscribe{CatalogVersion: snap.Version, View: st.View.ID, WithSnapshot: st.Snapshot, Edge: edge, Through: cfg.Through()}
	// Read-your-writes: the subscription starts after the session's last
	// commit, which a view shard may not have received yet.
	// Read-your-writes and every commit acknowledged before: the
	// subscription starts after them.
	if m, err := s.req(ctx, sessionactor.GetState{}); err == nil {
		req.MinEpoch = m.(sessionactor.State).LastWritten
	}
	if home != s.e.tableShard() {
		m, err := s.e.ask(ctx, s.e.tableShard(), shard.GetEpoch{})
		if err != nil {
			_ = s.e.rt.Stop(edge)
			return nil, err
		}
		req.MinEpoch = max(req.MinEpoch, m.(shard.Committed).Epoch)
	}
	if st.AsOfEpoch >= 0 {
		req.Resume, req.AsOf = true, uint64(st.AsOfEpoch)
	}
	m, err := s.e.ask(ctx, home, req)
	if err != nil {
		_ = s.e.rt.Stop(edge)
		return nil, err
	}
	sub := m.(shard.Subscribed)
	if st.Snapshot {
		c.emit(sub.Frontier, sub.Snapshot)
	}
	c.progress(sub.Frontier)
	return c, nil
}

type subscribeCursor struct {
	s       *session
	edge    runtime.ActorID
	home    runtime.ActorID
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
		m, err := c.s.e.ask(ctx, c.edge, subscriber.Take{})
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
	_, err := c.s.e.ask(context.Background(), c.home, shard.Unsubscribe{Edge: c.edge})
	if serr := c.s.e.rt.Stop(c.edge); err == nil && serr != nil {
		err = serr
	}
	return err
}

// Streaming implements gateway.StreamingCursor: every row is flushed.
func (c *subscribeCursor) Streaming() bool { return true }
