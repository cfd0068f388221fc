package engine

import (
	"context"
	"io"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// subscriptionUpdatesMax bounds the updates queued for one subscriber; a
// subscriber that falls this far behind is disconnected with RS-2020 rather
// than making the shard buffer without limit.
const subscriptionUpdatesMax = 1024

// subscribe streams a view's changes: (mz_timestamp, mz_progressed, mz_diff,
// columns...), a progress row (mz_progressed = true) per closed epoch.
func (s *session) subscribe(ctx context.Context, snap *control.Snapshot, st *rsql.Subscribe) (gateway.Cursor, error) {
	updates := make(chan shard.SubscriptionUpdate, subscriptionUpdatesMax)
	c := &subscribeCursor{s: s, updates: updates, width: len(st.View.Columns)}
	m, err := s.e.ask(ctx, s.e.homeShard(), shard.Subscribe{
		Snapshot:     snap,
		View:         st.View.ID,
		WithSnapshot: st.Snapshot,
		To: func(u shard.SubscriptionUpdate) bool {
			select {
			case updates <- u:
				return true
			default:
				c.overflowed.Store(true)
				return false
			}
		},
	})
	if err != nil {
		return nil, err
	}
	sub := m.(shard.Subscribed)
	c.id = sub.ID
	if st.Snapshot {
		c.emit(sub.Frontier, sub.Snapshot)
	}
	c.progress(sub.Frontier)
	return c, nil
}

type subscribeCursor struct {
	s          *session
	id         uint64
	updates    chan shard.SubscriptionUpdate
	pending    []types.Row
	width      int
	overflowed atomicBool
	closed     bool
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
		select {
		case u, ok := <-c.updates:
			if !ok {
				return nil, io.EOF
			}
			c.emit(u.Epoch, u.Delta)
			c.progress(u.Epoch)
		case <-ctx.Done():
			return nil, errcode.Wrap(errcode.QueryCanceled, ctx.Err(), "canceling statement due to user request")
		}
		if c.overflowed.Load() && len(c.updates) == 0 {
			return nil, errcode.New(errcode.SubscriberTooSlow, "subscription fell more than %d epochs behind", subscriptionUpdatesMax)
		}
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
	_, err := c.s.e.ask(context.Background(), c.s.e.homeShard(), shard.Unsubscribe{ID: c.id})
	return err
}

// Streaming implements gateway.StreamingCursor: every row is flushed.
func (c *subscribeCursor) Streaming() bool { return true }
