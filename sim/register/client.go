package register

import (
	"time"

	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/runtime"
)

// Variant selects the correct register or a deliberately buggy one.
type Variant uint8

const (
	// Correct is ABD with durable replicas: linearizable.
	Correct Variant = iota
	// AckBeforeDurable replicas acknowledge a store before it is durable;
	// a crash loses acknowledged writes.
	AckBeforeDurable
	// ReadOneReplica clients answer a read from the first replica that
	// replies, without a quorum or a write-back: stale reads.
	ReadOneReplica
)

func (v Variant) String() string {
	switch v {
	case Correct:
		return "correct"
	case AckBeforeDurable:
		return "ack-before-durable"
	case ReadOneReplica:
		return "read-one-replica"
	}
	return "unknown"
}

// Client limits.
const (
	// retryInterval is how long a coordinator waits for a phase's replies
	// before resending to the replicas that have not answered.
	retryInterval = 20 * time.Millisecond
	// opTimeout bounds one operation; past it a write's outcome is
	// indeterminate and a read is abandoned.
	opTimeout = time.Second
	// thinkTimeMax is the longest pause between two operations.
	thinkTimeMax = 10 * time.Millisecond
	// valuesPerClient separates the values each client writes, so every
	// written value is unique.
	valuesPerClient = 1_000_000
)

type phase uint8

const (
	idle phase = iota
	querying
	storing
)

// Client is a workload actor and an ABD coordinator: it runs one read or
// write at a time and records each in the History.
//
//	idle ──op──► querying ──majority──► storing ──majority──► idle (recorded)
//	                 │                     │
//	                 └──── opTimeout ──────┴──► idle (write indeterminate, read dropped)
//
// A write queries a majority for the highest stamp and stores (counter+1,
// own name); a read queries a majority and writes the highest value back to
// a majority before answering, which is what makes reads linearizable.
type Client struct {
	name     string
	index    int
	replicas []runtime.ActorID
	variant  Variant
	history  *History
	clock    func() int64

	op       uint64
	phase    phase
	write    bool
	value    int // the value being written, or the read's answer
	stamp    Stamp
	call     int64
	replied  map[runtime.ActorID]bool
	best     queryReply
	written  int
	entry    int // the history entry of the current write
	opsLimit int
}

// ClientOptions configure a Client.
type ClientOptions struct {
	Name     string
	Index    int // porcupine client id, and the client's value range
	Replicas []runtime.ActorID
	Variant  Variant
	History  *History
	// Clock is true time, for the history (never a skewed process clock).
	Clock func() int64
	// OpsLimit stops the client after this many operations (0: no limit).
	OpsLimit int
}

// NewClient returns a client factory.
func NewClient(opts ClientOptions) runtime.Factory {
	return func() runtime.Actor {
		return &Client{name: opts.Name, index: opts.Index, replicas: opts.Replicas, variant: opts.Variant,
			history: opts.History, clock: opts.Clock, opsLimit: opts.OpsLimit}
	}
}

func (c *Client) majority() int { return len(c.replicas)/2 + 1 }

// Receive implements runtime.Actor.
func (c *Client) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case runtime.Started:
		c.scheduleNext(ctx)
	case nextOpTick:
		c.start(ctx)
	case queryReply:
		c.onQueryReply(ctx, m)
	case storeAck:
		c.onStoreAck(ctx, m)
	case retryTick:
		if m.Op == c.op && int(c.phase) == m.Phase {
			c.broadcast(ctx)
			ctx.After(retryInterval, m)
		}
	case opDeadline:
		if m.Op == c.op && c.phase != idle {
			c.finishOp(ctx) // a write stays indeterminate in the history
		}
	}
}

func (c *Client) scheduleNext(ctx runtime.Context) {
	if c.opsLimit > 0 && int(c.op) >= c.opsLimit {
		return
	}
	ctx.After(time.Duration(ctx.Rand("register/think").Int64N(int64(thinkTimeMax))), nextOpTick{})
}

func (c *Client) start(ctx runtime.Context) {
	assert.That(c.phase == idle, "client %s starting op %d while busy", c.name, c.op+1)
	c.op++
	c.write = ctx.Rand("register/op").IntN(2) == 0
	if c.write {
		c.written++
		c.value = (c.index+1)*valuesPerClient + c.written
	}
	c.call = c.clock()
	if c.write {
		c.entry = c.history.startWrite(c.index, c.value, c.call)
	}
	c.best = queryReply{}
	c.enter(ctx, querying)
	ctx.After(opTimeout, opDeadline{Op: c.op})
}

func (c *Client) enter(ctx runtime.Context, p phase) {
	c.phase = p
	c.replied = map[runtime.ActorID]bool{}
	c.broadcast(ctx)
	if buggify.Fire(ctx, buggify.RegisterClientEarlyRetry) {
		c.broadcast(ctx)
	}
	ctx.After(retryInterval, retryTick{Op: c.op, Phase: int(p)})
}

// broadcast sends the current phase's request to every replica that has
// not answered it yet.
func (c *Client) broadcast(ctx runtime.Context) {
	for _, r := range c.replicas {
		if c.replied[r] {
			continue
		}
		switch c.phase {
		case querying:
			ctx.Send(r, queryRequest{Op: c.op})
		case storing:
			ctx.Send(r, storeRequest{Op: c.op, Stamp: c.stamp, Value: c.value})
		}
	}
}

func (c *Client) onQueryReply(ctx runtime.Context, m queryReply) {
	if m.Op != c.op || c.phase != querying || c.replied[ctx.From()] {
		return // late, duplicate or from an earlier phase
	}
	c.replied[ctx.From()] = true
	if len(c.replied) == 1 || c.best.Stamp.Less(m.Stamp) {
		c.best = m
	}
	if c.variant == ReadOneReplica && !c.write {
		// BUG (planted): answer from one replica, no quorum, no write-back.
		c.value = c.best.Value
		c.history.read(c.index, c.value, c.call, c.clock())
		c.finishOp(ctx)
		return
	}
	if len(c.replied) < c.majority() {
		return
	}
	if c.write {
		c.stamp = Stamp{Counter: c.best.Stamp.Counter + 1, Writer: c.name}
	} else {
		c.stamp, c.value = c.best.Stamp, c.best.Value
	}
	c.enter(ctx, storing)
}

func (c *Client) onStoreAck(ctx runtime.Context, m storeAck) {
	if m.Op != c.op || c.phase != storing || c.replied[ctx.From()] {
		return
	}
	c.replied[ctx.From()] = true
	if len(c.replied) < c.majority() {
		return
	}
	if c.write {
		c.history.finishWrite(c.entry, c.clock())
	} else {
		c.history.read(c.index, c.value, c.call, c.clock())
	}
	c.finishOp(ctx)
}

func (c *Client) finishOp(ctx runtime.Context) {
	c.phase = idle
	c.replied = nil
	c.scheduleNext(ctx)
}
