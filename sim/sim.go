package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/runtime"
)

// Errors of the simulator.
var (
	// ErrNoProgress: Ask or RunUntil ran out of events before its goal.
	ErrNoProgress = errors.New("sim: no events left")
	// ErrAskTimeout: an Ask got no reply within Options.AskTimeout of
	// virtual time.
	ErrAskTimeout = errors.New("sim: ask timed out (virtual time)")
	// ErrLiveness: RunUntil's condition did not hold within its limit.
	ErrLiveness = errors.New("sim: liveness: not converged")
)

// Phase is the simulation phase (STYLE.md 7).
type Phase uint8

const (
	// Safety: faults on, invariants checked after every event.
	Safety Phase = iota
	// Liveness: faults healed; the workload must converge within a bound.
	Liveness
)

func (p Phase) String() string {
	if p == Safety {
		return "safety"
	}
	return "liveness"
}

// Options configure a simulation.
type Options struct {
	Seed uint64
	// Config overrides the configuration drawn from the seed.
	Config *Config
	// Logger receives the actors' logs. Defaults to discarding them.
	Logger *slog.Logger
	// EventLog, when set, receives one human-readable line per delivered
	// message, timer, drop, crash and restart: the first thing to read when
	// debugging a failing seed.
	EventLog io.Writer
	// AskTimeout bounds each Ask in virtual time. Simulation range: fixed;
	// default one virtual minute, far beyond any healthy round trip.
	AskTimeout time.Duration
	// Codec, when set, carries every message between actors over the wire
	// (wire.go): encoded when sent, decoded for its receiver.
	Codec Codec
	// CPU, when set, charges the actors' work in virtual time on a
	// bounded number of cores per process (cpu.go).
	CPU *CPUModel
}

// Stats counts what happened in a run.
type Stats struct {
	Delivered, Timers, Dropped, Duplicated, Crashes, Restarts, Partitions, Congestions, Slowdowns int
	// Encoded counts the messages carried through Options.Codec, and
	// EncodedBytes their encoded size.
	Encoded, EncodedBytes int
}

// Sim is a whole simulated cluster in one goroutine. It implements
// runtime.Runtime. Not safe for concurrent use: everything, including Ask,
// runs on the caller's goroutine.
type Sim struct {
	seed     uint64
	cfg      Config
	trace    Trace
	logger   *slog.Logger
	eventLog io.Writer
	plan     *buggify.Plan

	now   time.Duration
	seq   uint64
	queue eventQueue

	processes     map[string]*process
	processOrder  []string // creation order: the only order processes are visited in
	actors        map[runtime.ActorID]*simActor
	actorProcess  map[runtime.ActorID]string // routing, also for actors of crashed processes
	nextInstance  uint64
	nextTimer     runtime.TimerID
	askTimeout    time.Duration
	asks          map[uint64]*pendingAsk
	nextAsk       uint64
	phase         Phase
	invariants    []invariant
	failure       error
	net           network
	streams       map[string]*rand.Rand
	nemesisActive bool
	stats         Stats
	codec         Codec

	// stepping is set while an event runs: Ask must not be called then.
	stepping bool

	// running is the actor inside Receive, charged the latency of its
	// object-store calls.
	running *simActor
	charged time.Duration
	// cpu is the cost model (nil: none); cpuCharged is the CPU time the
	// running Receive reported so far.
	cpu        *CPUModel
	cpuCharged time.Duration
}

var _ runtime.Runtime = (*Sim)(nil)

type invariant struct {
	name  string
	check func() error
}

type pendingAsk struct {
	id       uint64
	to       runtime.ActorID
	done     bool
	reply    runtime.Message
	err      error
	callback func(runtime.Message, error)
}

// New creates a simulation of seed. Its configuration is drawn from the seed
// unless opts.Config is set.
func New(opts Options) *Sim {
	s := &Sim{
		seed:         opts.Seed,
		trace:        newTrace(),
		logger:       opts.Logger,
		eventLog:     opts.EventLog,
		processes:    map[string]*process{},
		actors:       map[runtime.ActorID]*simActor{},
		actorProcess: map[runtime.ActorID]string{},
		asks:         map[uint64]*pendingAsk{},
		streams:      map[string]*rand.Rand{},
		askTimeout:   opts.AskTimeout,
		codec:        opts.Codec,
		cpu:          opts.CPU,
	}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.askTimeout <= 0 {
		s.askTimeout = time.Minute
	}
	if opts.Config != nil {
		s.cfg = *opts.Config
	} else {
		s.cfg = DrawConfig(NewStream(opts.Seed, "sim/config"))
	}
	if s.cfg.MailboxMessagesMax <= 0 {
		s.cfg.MailboxMessagesMax = 1024
	}
	s.plan = buggify.NewPlan(s.stream("buggify"))
	if !s.cfg.Buggify {
		s.plan.Disable()
	}
	s.net = newNetwork()
	s.nemesisActive = true
	s.schedule(&event{at: s.cfg.NemesisInterval, kind: eventNemesis})
	return s
}

// logEvent writes one line to the event log, if there is one.
func (s *Sim) logEvent(format string, args ...any) {
	if s.eventLog != nil {
		fmt.Fprintf(s.eventLog, "%12v ", s.now)
		fmt.Fprintf(s.eventLog, format, args...)
		fmt.Fprintln(s.eventLog)
	}
}

// stream returns the simulator's own named random stream.
func (s *Sim) stream(name string) *rand.Rand {
	r, ok := s.streams[name]
	if !ok {
		r = newStream(s.seed, name, &s.trace)
		s.streams[name] = r
	}
	return r
}

// Seed is the run's seed.
func (s *Sim) Seed() uint64 { return s.seed }

// Config is the run's configuration.
func (s *Sim) Config() Config { return s.cfg }

// Describe is the run's header: SEED= and the configuration (STYLE.md 4).
func (s *Sim) Describe() string {
	var active []string
	for _, r := range s.plan.Report() {
		if r.Active {
			active = append(active, string(r.Site))
		}
	}
	out := fmt.Sprintf("SEED=%d\n%sbuggify active: %v\nwire round trip: %t\n", s.seed, s.cfg, active, s.codec != nil)
	if s.cpu != nil {
		out += s.cpu.String() + "\n"
	}
	return out
}

// Now is the true virtual time since the start of the run.
func (s *Sim) Now() time.Duration { return s.now }

// TraceHash is the running determinism hash (see Trace).
func (s *Sim) TraceHash() uint64 { return s.trace.Hash() }

// TraceEvents is the number of events in the trace.
func (s *Sim) TraceEvents() uint64 { return s.trace.Events() }

// Stats returns counts of what happened.
func (s *Sim) Stats() Stats { return s.stats }

// Buggify is the run's buggify plan.
func (s *Sim) Buggify() *buggify.Plan { return s.plan }

// Phase is the current phase.
func (s *Sim) Phase() Phase { return s.phase }

// Rand returns a named random stream of the run for workloads and checkers
// (independent of the actors' streams).
func (s *Sim) Rand(name string) *rand.Rand { return s.stream("workload/" + name) }

// Invariant registers a safety check run after every actor step; the first
// violation stops the run and is returned by RunFor/RunUntil/Ask.
func (s *Sim) Invariant(name string, check func() error) {
	s.invariants = append(s.invariants, invariant{name: name, check: check})
}

// Fail stops the run with err (for checkers that detect a violation
// outside an invariant).
func (s *Sim) Fail(err error) {
	if s.failure == nil {
		s.failure = err
	}
}

// Err is the failure that stopped the run, if any.
func (s *Sim) Err() error { return s.failure }

func (s *Sim) schedule(e *event) {
	s.seq++
	e.seq = s.seq
	if e.at < s.now {
		e.at = s.now
	}
	s.queue.push(e)
}

// effectiveNow is true time as seen by the running actor: the event's time
// plus the latency its object-store calls have been charged so far.
func (s *Sim) effectiveNow() time.Duration { return s.now + s.charged }

// At runs fn at virtual time now+d, on the simulation goroutine, e.g. to
// drive a workload from outside the actors.
func (s *Sim) At(d time.Duration, fn func()) {
	s.schedule(&event{at: s.now + d, kind: eventCallback, fn: fn})
}

// Step runs the next event. It returns false when the queue is empty or the
// run has failed.
func (s *Sim) Step() bool {
	if s.failure != nil || len(s.queue) == 0 {
		return false
	}
	e := s.queue.pop()
	s.stepping = true
	defer func() { s.stepping = false }()
	// INVARIANT: virtual time never goes backwards (schedule clamps to now).
	assert.That(e.at >= s.now, "event at %v popped at %v", e.at, s.now)
	s.now = e.at
	switch e.kind {
	case eventArrive:
		s.arrive(e)
	case eventRun:
		s.runActor(e)
		s.checkInvariants()
	case eventTimer:
		s.fireTimer(e)
	case eventCallback:
		s.trace.record("callback", s.now)
		e.fn()
		s.checkInvariants()
	case eventNemesis:
		s.nemesis()
	case eventRestart:
		s.restart(e.process)
	}
	return s.failure == nil
}

func (s *Sim) checkInvariants() {
	if s.phase != Safety {
		return
	}
	for _, inv := range s.invariants {
		if err := inv.check(); err != nil {
			s.Fail(fmt.Errorf("invariant %q violated at %v: %w", inv.name, s.now, err))
			return
		}
	}
}

// RunFor runs every event up to now+d (the safety phase of a run is RunFor
// with faults on). It returns the run's failure, if any.
func (s *Sim) RunFor(d time.Duration) error {
	end := s.now + d
	for s.failure == nil && len(s.queue) > 0 && s.queue.peek().at <= end {
		s.Step()
	}
	if s.failure == nil && s.now < end {
		s.now = end
	}
	return s.failure
}

// RunUntil runs until cond holds (checked after every event), failing with
// ErrLiveness if it does not within limit of virtual time.
func (s *Sim) RunUntil(cond func() bool, limit time.Duration) error {
	end := s.now + limit
	for s.failure == nil {
		if cond() {
			return nil
		}
		if len(s.queue) == 0 {
			return fmt.Errorf("%w: %w at %v", ErrLiveness, ErrNoProgress, s.now)
		}
		if s.queue.peek().at > end {
			return fmt.Errorf("%w within %v (at %v)", ErrLiveness, limit, s.now)
		}
		s.Step()
	}
	return s.failure
}

// Heal ends the safety phase: the nemesis stops, partitions and congestion
// heal, network and object-store faults and buggify are switched off, and
// crashed processes restart now. Latency and delays remain.
func (s *Sim) Heal() {
	s.trace.record("heal", s.now)
	s.phase = Liveness
	s.nemesisActive = false
	s.net.healAll()
	s.plan.Disable()
	for _, name := range s.processOrder {
		p := s.processes[name]
		p.store.SetFaultsEnabled(false)
		if !p.up {
			s.restart(name)
		}
	}
}

// Ask implements runtime.Runtime: it delivers msg to the actor (as a caller
// outside every process, so no network faults apply) and runs the event
// loop until the reply, the actor's end (runtime.ErrActorGone), goctx's
// end, or AskTimeout of virtual time.
//
// Ask is for callers outside the simulation (a test driving it); inside an
// actor or an At callback use AskAsync or Send, since a nested event loop
// would run events out of order. Calling Ask there panics.
func (s *Sim) Ask(goctx context.Context, to runtime.ActorID, msg runtime.Message) (runtime.Message, error) {
	assert.That(!s.stepping, "sim: Ask(%s) called from inside the simulation; use AskAsync", to)
	ask := s.startAsk(to, msg, nil)
	deadline := s.now + s.askTimeout
	for !ask.done {
		if err := goctx.Err(); err != nil {
			delete(s.asks, ask.id)
			return nil, fmt.Errorf("ask %s: %w", to, err)
		}
		if s.failure != nil {
			return nil, fmt.Errorf("ask %s: %w", to, s.failure)
		}
		if len(s.queue) == 0 {
			delete(s.asks, ask.id)
			return nil, fmt.Errorf("ask %s: %w", to, ErrNoProgress)
		}
		if s.queue.peek().at > deadline {
			delete(s.asks, ask.id)
			return nil, fmt.Errorf("ask %s: %w", to, ErrAskTimeout)
		}
		s.Step()
	}
	return ask.reply, ask.err
}

// AskAsync delivers msg like Ask but returns at once; callback runs on the
// simulation goroutine when the reply arrives or the actor is gone.
func (s *Sim) AskAsync(to runtime.ActorID, msg runtime.Message, callback func(runtime.Message, error)) {
	s.startAsk(to, msg, callback)
}

func (s *Sim) startAsk(to runtime.ActorID, msg runtime.Message, callback func(runtime.Message, error)) *pendingAsk {
	s.nextAsk++
	ask := &pendingAsk{id: s.nextAsk, to: to, callback: callback}
	s.asks[ask.id] = ask
	msg = s.overWire("ask to "+string(to), msg)
	a := s.actors[to]
	if a == nil || !a.process.up {
		s.completeAsk(ask.id, nil, fmt.Errorf("ask %s: %w", to, runtime.ErrActorGone))
		return ask
	}
	s.enqueue(a, delivery{msg: msg, ask: ask.id}, true)
	return ask
}

func (s *Sim) completeAsk(id uint64, reply runtime.Message, err error) {
	ask, ok := s.asks[id]
	if !ok || ask.done {
		return
	}
	delete(s.asks, id)
	if reply != nil {
		reply = s.overWire("reply from "+string(ask.to), reply)
	}
	ask.done, ask.reply, ask.err = true, reply, err
	if ask.callback != nil {
		cb := ask.callback
		s.schedule(&event{at: s.effectiveNow(), kind: eventCallback, fn: func() { cb(reply, err) }})
	}
}

// failAsks fails every pending ask addressed to one of ids, in ask order.
func (s *Sim) failAsks(gone map[runtime.ActorID]bool) {
	ids := make([]uint64, 0, len(s.asks))
	//lint:maprange ids are sorted before use.
	for id := range s.asks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if gone[s.asks[id].to] {
			s.completeAsk(id, nil, runtime.ErrActorGone)
		}
	}
}
