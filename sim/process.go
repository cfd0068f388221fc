package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// ProcessOptions configure one simulated process.
type ProcessOptions struct {
	// Crashable lets the nemesis crash the process.
	Crashable bool
	// Durable is the process's durable state; it survives crashes.
	// Defaults to a fresh objstore.Memory.
	Durable objstore.Store
}

// process is a group of actors sharing a clock, an object store and a fate.
//
//	        Crash (nemesis, crash-after-write, test)
//	┌────┐ ─────────────────────────────────────────► ┌──────┐
//	│ up │                                            │ down │
//	└────┘ ◄───────────────────────────────────────── └──────┘
//	        restart: roots re-created from their Factory,
//	        each receives Started; durable store intact
//
// A crash discards every actor (memory), their inboxes and their timers;
// pending Asks to them fail with runtime.ErrActorGone. Messages still in
// flight on the network arrive at whatever incarnation is up by then.
type process struct {
	name        string
	opts        ProcessOptions
	up          bool
	incarnation int
	roots       []rootActor       // spawned with Runtime.Spawn: re-created on restart
	live        []runtime.ActorID // live actors, in spawn order
	durable     objstore.Store
	store       *FaultyStore
	clock       processClock
	// slowUntil: until this true time, each message the process handles
	// takes up to Config.SlowReceiveDelay longer (faults.ProcessSlow).
	slowUntil time.Duration
	// cpu is the process's cores under Options.CPU (cpu.go).
	cpu *cpuState
}

type rootActor struct {
	id      runtime.ActorID
	factory runtime.Factory
}

// AddProcess creates a process. Spawn creates unknown processes with the
// zero ProcessOptions (not crashable), so call AddProcess first to opt in.
func (s *Sim) AddProcess(name string, opts ProcessOptions) error {
	if _, dup := s.processes[name]; dup {
		return fmt.Errorf("sim: process %q already exists", name)
	}
	if opts.Durable == nil {
		opts.Durable = objstore.NewMemory()
	}
	rnd := s.stream("process/" + name)
	p := &process{name: name, opts: opts, up: true, durable: opts.Durable}
	p.clock.skew = time.Duration((rnd.Float64()*2 - 1) * float64(s.cfg.ClockSkewMax))
	p.clock.driftPPM = (rnd.Float64()*2 - 1) * s.cfg.ClockDriftPPMMax
	p.store = NewFaultyStore(p.durable, s.stream("objstore/"+name), s.cfg.Store)
	p.store.SetLatencySink(func(d time.Duration) {
		if s.running != nil && s.running.process == p {
			s.charged += d
		}
	})
	p.store.SetCrashHook(func() {
		if s.running != nil && s.running.process == p {
			panic(crashSignal{process: name})
		}
	})
	s.processes[name] = p
	s.processOrder = append(s.processOrder, name)
	return nil
}

// crashSignal unwinds an actor whose process crashes inside Receive.
type crashSignal struct{ process string }

func (s *Sim) ensureProcess(name string) *process {
	if _, ok := s.processes[name]; !ok {
		_ = s.AddProcess(name, ProcessOptions{})
	}
	return s.processes[name]
}

// Store is the object store actors of process see (faults injected).
func (s *Sim) Store(process string) *FaultyStore { return s.ensureProcess(process).store }

// Durable is the durable state of process without fault injection, for
// checkers.
func (s *Sim) Durable(process string) objstore.Store { return s.ensureProcess(process).durable }

// ProcessUp reports whether process is running.
func (s *Sim) ProcessUp(process string) bool {
	p, ok := s.processes[process]
	return ok && p.up
}

// ProcessNow is a process's clock now: what its actors' ctx.Now reads
// (skewed and drifting).
func (s *Sim) ProcessNow(process string) time.Time {
	return s.ensureProcess(process).clock.local(s.now)
}

// Processes lists the processes in creation order.
func (s *Sim) Processes() []string { return append([]string(nil), s.processOrder...) }

// Spawn implements runtime.Runtime: the actor becomes a root of process and
// is re-created from factory whenever the process restarts.
func (s *Sim) Spawn(processName string, id runtime.ActorID, factory runtime.Factory) error {
	if _, dup := s.actorProcess[id]; dup {
		return fmt.Errorf("spawn %s: %w", id, runtime.ErrDuplicateActor)
	}
	p := s.ensureProcess(processName)
	p.roots = append(p.roots, rootActor{id: id, factory: factory})
	s.actorProcess[id] = p.name
	if p.up {
		s.createActor(p, id, factory, true)
	}
	return nil
}

func (s *Sim) createActor(p *process, id runtime.ActorID, factory runtime.Factory, root bool) *simActor {
	s.nextInstance++
	a := &simActor{
		id:       id,
		process:  p,
		instance: s.nextInstance,
		root:     root,
		timers:   map[runtime.TimerID]bool{},
		rands:    map[string]*rand.Rand{},
		logger:   s.logger.With("process", p.name, "actor", string(id)),
	}
	s.actors[id] = a
	s.actorProcess[id] = p.name
	p.live = append(p.live, id)
	a.actor = factory()
	s.enqueue(a, delivery{msg: runtime.Started{}}, true)
	return a
}

// Stop implements runtime.Runtime: the actor receives Stopping after the
// messages already in its inbox, then is removed (and not restarted).
func (s *Sim) Stop(id runtime.ActorID) error {
	a := s.actors[id]
	if a == nil {
		return fmt.Errorf("stop %s: %w", id, runtime.ErrActorGone)
	}
	s.enqueue(a, delivery{stop: true}, true)
	return nil
}

// retire removes a stopped actor for good.
func (s *Sim) retire(a *simActor) {
	p := a.process
	delete(s.actors, a.id)
	delete(s.actorProcess, a.id)
	p.live = removeID(p.live, a.id)
	for i, r := range p.roots {
		if r.id == a.id {
			p.roots = append(p.roots[:i:i], p.roots[i+1:]...)
			break
		}
	}
	s.failAsks(map[runtime.ActorID]bool{a.id: true})
}

func removeID(ids []runtime.ActorID, id runtime.ActorID) []runtime.ActorID {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// Crash crashes process now (it stays down until Restart, Heal, or a
// restart the nemesis scheduled).
func (s *Sim) Crash(name string) {
	p, ok := s.processes[name]
	if !ok || !p.up {
		return
	}
	s.trace.record("crash", s.now)
	s.trace.str(name)
	s.stats.Crashes++
	p.up = false
	p.incarnation++
	gone := map[runtime.ActorID]bool{}
	for _, id := range p.live {
		gone[id] = true
		delete(s.actors, id)
		if !s.isRoot(p, id) {
			delete(s.actorProcess, id)
		}
	}
	p.live = nil
	s.failAsks(gone)
	s.logEvent("crash %s", name)
}

func (s *Sim) isRoot(p *process, id runtime.ActorID) bool {
	for _, r := range p.roots {
		if r.id == id {
			return true
		}
	}
	return false
}

// crashAndRestartLater crashes process and schedules its restart after a
// delay drawn from the configuration.
func (s *Sim) crashAndRestartLater(name string) {
	s.Crash(name)
	delay := time.Millisecond + time.Duration(s.stream("process").Float64()*float64(s.cfg.RestartDelay))
	s.schedule(&event{at: s.now + delay, kind: eventRestart, process: name})
}

// Restart restarts a crashed process now.
func (s *Sim) Restart(name string) { s.restart(name) }

func (s *Sim) restart(name string) {
	p, ok := s.processes[name]
	if !ok || p.up {
		return
	}
	assert.That(len(p.live) == 0, "process %s restarting with %d live actors", name, len(p.live))
	s.trace.record("restart", s.now)
	s.trace.str(name)
	s.stats.Restarts++
	p.up = true
	for _, r := range p.roots {
		s.createActor(p, r.id, r.factory, true)
	}
	s.logEvent("restart %s", name)
}
