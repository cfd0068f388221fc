package real

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// actorContext is the runtime.Context of one Receive call.
type actorContext struct {
	runtime *Runtime
	cell    *actorCell
	from    runtime.ActorID
	reply   *askWaiter
	// request is the ID of the runtime.Request the current message came
	// in (0: a plain message); replies are wrapped into a Response.
	request uint64
	done    bool
}

var _ runtime.Context = (*actorContext)(nil)

func (c *actorContext) check() {
	if c.done {
		panic(fmt.Sprintf("runtime/real: context of %s used after its Receive returned", c.cell.id))
	}
}

func (c *actorContext) Self() runtime.ActorID { return c.cell.id }
func (c *actorContext) From() runtime.ActorID { return c.from }

func (c *actorContext) Send(to runtime.ActorID, msg runtime.Message) {
	c.check()
	c.runtime.send(c.cell.id, to, msg)
}

func (c *actorContext) Reply(msg runtime.Message) {
	c.check()
	switch {
	case c.reply != nil:
		c.reply.complete(msg, nil)
	case c.from != "":
		c.runtime.send(c.cell.id, c.from, runtime.Answer(c.request, msg))
	}
}

func (c *actorContext) Defer() runtime.Deferred {
	c.check()
	return &deferred{runtime: c.runtime, self: c.cell.id, from: c.from, reply: c.reply, request: c.request}
}

// deferred is a reply handle that outlives its Receive.
type deferred struct {
	runtime *Runtime
	self    runtime.ActorID
	from    runtime.ActorID
	reply   *askWaiter
	request uint64
	done    bool
}

func (d *deferred) Reply(msg runtime.Message) {
	if d.done {
		return
	}
	d.done = true
	switch {
	case d.reply != nil:
		d.reply.complete(msg, nil)
	case d.from != "":
		d.runtime.send(d.self, d.from, runtime.Answer(d.request, msg))
	}
}

func (c *actorContext) After(d time.Duration, msg runtime.Message) runtime.TimerID {
	c.check()
	id := runtime.TimerID(c.runtime.nextTimer.Add(1))
	cell := c.cell
	cell.timersMu.Lock()
	defer cell.timersMu.Unlock()
	cell.timers[id] = time.AfterFunc(d, func() {
		// NB: a timer message bypasses the hard bound: dropping it would
		// silently stop the background work it drives.
		cell.mailbox.pushNoWait(envelope{kind: envelopeTimer, msg: msg, timer: id}, true)
	})
	return id
}

func (c *actorContext) CancelTimer(id runtime.TimerID) {
	c.check()
	c.cell.timersMu.Lock()
	defer c.cell.timersMu.Unlock()
	if t, ok := c.cell.timers[id]; ok {
		t.Stop()
		delete(c.cell.timers, id)
	}
}

func (c *actorContext) Now() time.Time {
	if now := c.runtime.opts.Now; now != nil {
		return now()
	}
	return time.Now()
}

func (c *actorContext) Rand(stream string) *rand.Rand {
	c.check()
	r, ok := c.cell.rands[stream]
	if !ok {
		a, b := streamSeed(c.runtime.opts.Seed, c.cell.id, stream)
		r = rand.New(rand.NewPCG(a, b))
		c.cell.rands[stream] = r
	}
	return r
}

func (c *actorContext) Store() objstore.Store { return c.cell.store }
func (c *actorContext) Logger() *slog.Logger  { return c.cell.logger }

func (c *actorContext) Spawn(id runtime.ActorID, factory runtime.Factory) {
	c.check()
	if err := c.runtime.Spawn(c.cell.process, id, factory); err != nil {
		// INVARIANT: actor ids are chosen by their parents; a duplicate is a
		// programmer error.
		panic(fmt.Sprintf("runtime/real: %s spawning: %v", c.cell.id, err))
	}
}

func (c *actorContext) Stop(id runtime.ActorID) {
	c.check()
	_ = c.runtime.Stop(id) // stopping a gone actor is a no-op
}
