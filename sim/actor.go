package sim

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// simActor is one live instance of an actor. A restart makes a new instance
// (new memory, new instance number), so events of the old one are ignored.
type simActor struct {
	id        runtime.ActorID
	process   *process
	instance  uint64
	root      bool
	actor     runtime.Actor
	inbox     []delivery
	scheduled bool          // an eventRun for this instance is queued
	busyUntil time.Duration // end of the last Receive plus its charged latency
	timers    map[runtime.TimerID]bool
	rands     map[string]*rand.Rand
	logger    *slog.Logger
}

// delivery is one inbox entry.
type delivery struct {
	from  runtime.ActorID
	msg   runtime.Message
	ask   uint64 // pending Ask to complete on Reply; 0 if none
	timer runtime.TimerID
	stop  bool
}

// enqueue appends d to a's inbox and makes sure a will run. Unless force is
// set, a full inbox (Config.MailboxMessagesMax) drops d, as runtime/real
// drops actor sends past its hard bound.
func (s *Sim) enqueue(a *simActor, d delivery, force bool) bool {
	if !force && len(a.inbox) >= s.cfg.MailboxMessagesMax {
		s.drop("mailbox-full", a.id, d.from)
		return false
	}
	a.inbox = append(a.inbox, d)
	if !a.scheduled {
		a.scheduled = true
		s.schedule(&event{at: max(s.effectiveNow(), a.busyUntil), kind: eventRun, to: a.id, instance: a.instance})
	}
	return true
}

func (s *Sim) drop(reason string, to, from runtime.ActorID) {
	s.stats.Dropped++
	s.trace.record("drop", s.now)
	s.trace.str(reason)
	s.trace.str(string(to))
	s.trace.str(string(from))
	s.logEvent("drop %s -> %s (%s)", from, to, reason)
}

// runActor delivers the head of an actor's inbox.
func (s *Sim) runActor(e *event) {
	a := s.actors[e.to]
	if a == nil || a.instance != e.instance {
		return // crashed or stopped since
	}
	if len(a.inbox) > 0 && s.waitForCore(a, e) {
		return // still scheduled, for when a core is free
	}
	a.scheduled = false
	if len(a.inbox) == 0 {
		return
	}
	d := a.inbox[0]
	a.inbox[0] = delivery{}
	a.inbox = a.inbox[1:]
	msg := d.msg
	if d.stop {
		msg = runtime.Stopping{}
	}
	s.stats.Delivered++
	s.trace.record("deliver", s.now)
	s.trace.str(string(a.id))
	s.trace.str(string(d.from))
	s.trace.value(msg)
	s.logEvent("deliver %s -> %s %T %+v", d.from, a.id, msg, msg)

	ctx := &actorContext{sim: s, actor: a, from: d.from, ask: d.ask}
	if req, ok := msg.(runtime.Request); ok {
		ctx.request, msg = req.ID, req.Msg
	}
	s.running, s.charged, s.cpuCharged = a, 0, 0
	if s.cpu != nil {
		s.charged += s.cpu.PerMessage
	}
	if p := a.process; s.phase == Safety && s.now < p.slowUntil && s.cfg.SlowReceiveDelay > 0 {
		// NB: charged before Receive, so the actor's clock and effects
		// are late too, as on a stalled machine.
		s.charged += time.Duration(s.stream("process/slow").Float64() * float64(s.cfg.SlowReceiveDelay))
	}
	crashed := s.receive(a, ctx, msg)
	ctx.done = true
	s.occupyCore(a)
	a.busyUntil = s.now + s.charged
	s.running, s.charged, s.cpuCharged = nil, 0, 0
	switch {
	case crashed:
		s.crashAndRestartLater(a.process.name)
	case d.stop:
		s.retire(a)
	case len(a.inbox) > 0 && !a.scheduled:
		a.scheduled = true
		s.schedule(&event{at: a.busyUntil, kind: eventRun, to: a.id, instance: a.instance})
	}
}

// receive runs Receive, turning a crash-after-write inside it into a
// crashed process. Any other panic propagates (an assertion failed).
func (s *Sim) receive(a *simActor, ctx *actorContext, msg runtime.Message) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashSignal); ok {
				crashed = true
				return
			}
			panic(r)
		}
	}()
	a.actor.Receive(ctx, msg)
	return false
}

func (s *Sim) fireTimer(e *event) {
	a := s.actors[e.to]
	if a == nil || a.instance != e.instance || !a.timers[e.timer] {
		return // crashed, stopped or cancelled
	}
	delete(a.timers, e.timer)
	s.stats.Timers++
	s.trace.record("timer", s.now)
	s.trace.str(string(a.id))
	s.logEvent("timer %s %T", a.id, e.msg)
	s.enqueue(a, delivery{msg: e.msg, timer: e.timer}, true)
}

// send routes a message from an actor: within its process straight to the
// inbox (FIFO, no network), otherwise over the simulated network.
func (s *Sim) send(from *simActor, to runtime.ActorID, msg runtime.Message) {
	dest, ok := s.actorProcess[to]
	if !ok {
		s.drop("unknown-actor", to, from.id)
		return
	}
	if to != from.id {
		// NB: a message to itself stays in the actor's memory.
		msg = s.overWire(string(from.id)+" to "+string(to), msg)
	}
	if dest == from.process.name {
		if a := s.actors[to]; a != nil {
			s.enqueue(a, delivery{from: from.id, msg: msg}, false)
		} else {
			s.drop("gone", to, from.id)
		}
		return
	}
	s.transmit(from.process.name, dest, from.id, to, msg)
}

// arrive hands a message that crossed the network to its actor, if it is
// alive.
func (s *Sim) arrive(e *event) {
	a := s.actors[e.to]
	if a == nil || !a.process.up {
		s.drop("gone", e.to, e.from)
		return
	}
	s.enqueue(a, delivery{from: e.from, msg: e.msg}, false)
}

// actorContext is the runtime.Context of one simulated Receive.
type actorContext struct {
	sim   *Sim
	actor *simActor
	from  runtime.ActorID
	ask   uint64
	// request is the ID of the runtime.Request the current message came
	// in (0: a plain message); replies are wrapped into a Response.
	request uint64
	done    bool
}

var _ runtime.Context = (*actorContext)(nil)

func (c *actorContext) check() {
	if c.done {
		panic(fmt.Sprintf("sim: context of %s used after its Receive returned", c.actor.id))
	}
}

func (c *actorContext) Self() runtime.ActorID { return c.actor.id }
func (c *actorContext) From() runtime.ActorID { return c.from }

func (c *actorContext) Send(to runtime.ActorID, msg runtime.Message) {
	c.check()
	c.sim.send(c.actor, to, msg)
}

func (c *actorContext) Reply(msg runtime.Message) {
	c.check()
	switch {
	case c.ask != 0:
		c.sim.completeAsk(c.ask, msg, nil)
	case c.from != "":
		c.sim.send(c.actor, c.from, runtime.Answer(c.request, msg))
	}
}

func (c *actorContext) Defer() runtime.Deferred {
	c.check()
	return &deferred{sim: c.sim, actor: c.actor, from: c.from, ask: c.ask, request: c.request}
}

// deferred is a reply handle that outlives its Receive.
type deferred struct {
	sim   *Sim
	actor *simActor
	from  runtime.ActorID
	ask   uint64
	// request: see actorContext.request.
	request uint64
	done    bool
}

func (d *deferred) Reply(msg runtime.Message) {
	if d.done {
		return
	}
	d.done = true
	switch {
	case d.ask != 0:
		d.sim.completeAsk(d.ask, msg, nil)
	case d.from != "":
		d.sim.send(d.actor, d.from, runtime.Answer(d.request, msg))
	}
}

func (c *actorContext) After(d time.Duration, msg runtime.Message) runtime.TimerID {
	c.check()
	s := c.sim
	s.nextTimer++
	id := s.nextTimer
	c.actor.timers[id] = true
	at := s.effectiveNow() + c.actor.process.clock.trueDuration(d)
	if s.phase == Safety && s.cfg.TimerJitterMax > 0 {
		at += time.Duration(s.stream("timers").Float64() * float64(s.cfg.TimerJitterMax))
	}
	s.schedule(&event{at: at, kind: eventTimer, to: c.actor.id, instance: c.actor.instance, timer: id, msg: msg})
	return id
}

func (c *actorContext) CancelTimer(id runtime.TimerID) {
	c.check()
	delete(c.actor.timers, id)
}

func (c *actorContext) Now() time.Time {
	return c.actor.process.clock.local(c.sim.effectiveNow())
}

func (c *actorContext) Rand(stream string) *rand.Rand {
	c.check()
	r, ok := c.actor.rands[stream]
	if !ok {
		name := fmt.Sprintf("actor/%s/%d/%s", c.actor.id, c.actor.process.incarnation, stream)
		r = newStream(c.sim.seed, name, &c.sim.trace)
		c.actor.rands[stream] = r
	}
	return r
}

func (c *actorContext) Store() objstore.Store { return c.actor.process.store }
func (c *actorContext) Logger() *slog.Logger  { return c.actor.logger }

// Buggify gives buggify.FromContext the run's plan.
func (c *actorContext) Buggify() *buggify.Plan { return c.sim.plan }

func (c *actorContext) Spawn(id runtime.ActorID, factory runtime.Factory) {
	c.check()
	if _, dup := c.sim.actorProcess[id]; dup {
		// INVARIANT: actor ids are chosen by their parents; a duplicate is
		// a programmer error (as in runtime/real).
		panic(fmt.Sprintf("sim: %s spawning %s: %v", c.actor.id, id, runtime.ErrDuplicateActor))
	}
	c.sim.createActor(c.actor.process, id, factory, false)
}

func (c *actorContext) Stop(id runtime.ActorID) {
	c.check()
	_ = c.sim.Stop(id)
}
