package real

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// Options configure a Runtime. The zero value of every limit means its
// default.
type Options struct {
	// Store is the object store of every process that has no entry in
	// ProcessStores. Required unless every spawned process has one.
	Store objstore.Store
	// ProcessStores gives individual processes their own store.
	ProcessStores map[string]objstore.Store
	// Logger is the base logger; actors get it tagged with process and
	// actor id. Defaults to slog.Default().
	Logger *slog.Logger
	// Seed seeds every named random stream (ctx.Rand). The real runtime is
	// not deterministic, but seeded streams keep a run's random choices
	// reproducible from its log line.
	Seed uint64
	// MailboxMessagesMax is the soft mailbox bound (default
	// MailboxMessagesMaxDefault).
	MailboxMessagesMax int
	// MailboxOverflowMessagesMax is the extra room for sends from actors
	// (default MailboxOverflowMessagesMaxDefault).
	MailboxOverflowMessagesMax int
	// Now is the actors' clock (ctx.Now); nil is the wall clock. Tests
	// drive time through it (a view's temporal filters run at the times
	// the shards read from it).
	Now func() time.Time
}

// Runtime runs each actor on its own goroutine. Safe for concurrent use.
type Runtime struct {
	opts Options

	mu     sync.Mutex
	actors map[runtime.ActorID]*actorCell
	closed bool

	nextTimer atomic.Uint64
	dropped   atomic.Uint64
	wg        sync.WaitGroup
}

var _ runtime.Runtime = (*Runtime)(nil)

// New returns a runtime with no actors.
func New(opts Options) *Runtime {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MailboxMessagesMax <= 0 {
		opts.MailboxMessagesMax = MailboxMessagesMaxDefault
	}
	if opts.MailboxOverflowMessagesMax <= 0 {
		opts.MailboxOverflowMessagesMax = MailboxOverflowMessagesMaxDefault
	}
	return &Runtime{opts: opts, actors: map[runtime.ActorID]*actorCell{}}
}

// actorCell is the runtime's record of one live actor.
type actorCell struct {
	id      runtime.ActorID
	process string
	store   objstore.Store
	logger  *slog.Logger
	mailbox *mailbox
	actor   runtime.Actor

	// Owned by the actor's goroutine.
	rands map[string]*rand.Rand

	timersMu sync.Mutex
	timers   map[runtime.TimerID]*time.Timer

	asksMu sync.Mutex
	asks   map[*askWaiter]struct{} // Asks queued or being handled

	// busyNanos is the wall time spent in the actor's Receive, storage
	// calls included: how much of the run the actor could take no other
	// message (BusyTimes).
	busyNanos atomic.Int64
	// storeNanos is the part of it spent in object-store calls
	// (timedStore).
	storeNanos atomic.Int64
}

// askWaiter receives the reply of one Ask.
type askWaiter struct {
	reply chan askResult // capacity 1
	once  sync.Once
}

type askResult struct {
	msg runtime.Message
	err error
}

func (w *askWaiter) complete(msg runtime.Message, err error) {
	w.once.Do(func() { w.reply <- askResult{msg: msg, err: err} })
}

// Spawn implements runtime.Runtime.
func (r *Runtime) Spawn(process string, id runtime.ActorID, factory runtime.Factory) error {
	store := r.opts.ProcessStores[process]
	if store == nil {
		store = r.opts.Store
	}
	if store == nil {
		return fmt.Errorf("spawn %s in process %q: no object store configured", id, process)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("spawn %s: runtime shut down: %w", id, runtime.ErrActorGone)
	}
	if _, dup := r.actors[id]; dup {
		return fmt.Errorf("spawn %s: %w", id, runtime.ErrDuplicateActor)
	}
	cell := &actorCell{
		id:      id,
		process: process,
		store:   store, // wrapped below, to time the calls
		logger:  r.opts.Logger.With("process", process, "actor", string(id)),
		mailbox: newMailbox(r.opts.MailboxMessagesMax, r.opts.MailboxOverflowMessagesMax),
		actor:   factory(),
		rands:   map[string]*rand.Rand{},
		timers:  map[runtime.TimerID]*time.Timer{},
		asks:    map[*askWaiter]struct{}{},
	}
	cell.store = timedStore{Store: store, nanos: &cell.storeNanos}
	// NB: Started is queued before the actor is visible, so it is always the
	// first message.
	cell.mailbox.pushNoWait(envelope{kind: envelopeMessage, msg: runtime.Started{}}, true)
	r.actors[id] = cell
	r.wg.Add(1)
	// NB: the goroutine carries the actor's name as a profiler label, so
	// a CPU profile splits by actor (go tool pprof -tagfocus actor=shard/1).
	go pprof.Do(context.Background(), pprof.Labels("actor", string(id)), func(context.Context) { r.run(cell) })
	return nil
}

func (r *Runtime) lookup(id runtime.ActorID) *actorCell {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.actors[id]
}

// Ask implements runtime.Runtime. It waits for mailbox space (backpressure)
// and then for the reply, until goctx ends or the actor stops.
func (r *Runtime) Ask(goctx context.Context, to runtime.ActorID, msg runtime.Message) (runtime.Message, error) {
	cell := r.lookup(to)
	if cell == nil {
		return nil, fmt.Errorf("ask %s: %w", to, runtime.ErrActorGone)
	}
	waiter := &askWaiter{reply: make(chan askResult, 1)}
	cell.asksMu.Lock()
	cell.asks[waiter] = struct{}{}
	cell.asksMu.Unlock()
	defer func() {
		cell.asksMu.Lock()
		delete(cell.asks, waiter)
		cell.asksMu.Unlock()
	}()
	if err := cell.mailbox.pushWait(goctx, envelope{kind: envelopeMessage, msg: msg, reply: waiter}); err != nil {
		return nil, fmt.Errorf("ask %s: %w", to, err)
	}
	select {
	case res := <-waiter.reply:
		if res.err != nil {
			return nil, fmt.Errorf("ask %s: %w", to, res.err)
		}
		return res.msg, nil
	case <-goctx.Done():
		return nil, fmt.Errorf("ask %s: %w", to, goctx.Err())
	}
}

// Tell sends msg from outside the actor system without waiting for a reply.
// Like Ask it waits while the mailbox is full.
func (r *Runtime) Tell(goctx context.Context, to runtime.ActorID, msg runtime.Message) error {
	cell := r.lookup(to)
	if cell == nil {
		return fmt.Errorf("tell %s: %w", to, runtime.ErrActorGone)
	}
	if err := cell.mailbox.pushWait(goctx, envelope{kind: envelopeMessage, msg: msg}); err != nil {
		return fmt.Errorf("tell %s: %w", to, err)
	}
	return nil
}

// TrySend sends msg from outside the actor system, failing with
// runtime.ErrMailboxFull instead of waiting.
func (r *Runtime) TrySend(to runtime.ActorID, msg runtime.Message) error {
	cell := r.lookup(to)
	if cell == nil {
		return fmt.Errorf("send %s: %w", to, runtime.ErrActorGone)
	}
	if cell.mailbox.len() >= r.opts.MailboxMessagesMax {
		return fmt.Errorf("send %s: %w", to, runtime.ErrMailboxFull)
	}
	if !cell.mailbox.pushNoWait(envelope{kind: envelopeMessage, msg: msg}, false) {
		return fmt.Errorf("send %s: %w", to, runtime.ErrMailboxFull)
	}
	return nil
}

// Stop implements runtime.Runtime: the actor receives Stopping after the
// messages already queued, then its goroutine ends.
func (r *Runtime) Stop(id runtime.ActorID) error {
	cell := r.lookup(id)
	if cell == nil {
		return fmt.Errorf("stop %s: %w", id, runtime.ErrActorGone)
	}
	cell.mailbox.pushNoWait(envelope{kind: envelopeStop}, true)
	return nil
}

// Shutdown stops every actor and waits for their goroutines, or for goctx.
func (r *Runtime) Shutdown(goctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	cells := make([]*actorCell, 0, len(r.actors))
	for _, c := range r.actors {
		cells = append(cells, c)
	}
	r.mu.Unlock()
	for _, c := range cells {
		c.mailbox.pushNoWait(envelope{kind: envelopeStop}, true)
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-goctx.Done():
		return goctx.Err()
	}
}

// Dropped is the number of actor sends dropped because the destination was
// past its hard mailbox bound or gone.
func (r *Runtime) Dropped() uint64 { return r.dropped.Load() }

// run is the actor's goroutine: deliver envelopes one at a time until stop.
func (r *Runtime) run(cell *actorCell) {
	defer r.wg.Done()
	defer r.retire(cell)
	for {
		e, ok := cell.mailbox.pop()
		if !ok {
			return
		}
		switch e.kind {
		case envelopeStop:
			r.deliver(cell, envelope{kind: envelopeMessage, msg: runtime.Stopping{}})
			return
		case envelopeTimer:
			cell.timersMu.Lock()
			_, live := cell.timers[e.timer]
			delete(cell.timers, e.timer)
			cell.timersMu.Unlock()
			if !live {
				continue // cancelled after it fired
			}
			r.deliver(cell, e)
		default:
			r.deliver(cell, e)
		}
	}
}

// retire removes a stopped actor: pending timers stop, queued and in-flight
// Asks fail with ErrActorGone.
func (r *Runtime) retire(cell *actorCell) {
	r.mu.Lock()
	if r.actors[cell.id] == cell {
		delete(r.actors, cell.id)
	}
	r.mu.Unlock()
	cell.mailbox.close()
	cell.timersMu.Lock()
	for id, t := range cell.timers {
		t.Stop()
		delete(cell.timers, id)
	}
	cell.timersMu.Unlock()
	cell.asksMu.Lock()
	for w := range cell.asks {
		w.complete(nil, runtime.ErrActorGone)
	}
	cell.asksMu.Unlock()
}

func (r *Runtime) deliver(cell *actorCell, e envelope) {
	ctx := &actorContext{runtime: r, cell: cell, from: e.from, reply: e.reply}
	msg := e.msg
	if req, ok := msg.(runtime.Request); ok {
		ctx.request, msg = req.ID, req.Msg
	}
	start := time.Now()
	cell.actor.Receive(ctx, msg)
	cell.busyNanos.Add(int64(time.Since(start)))
	ctx.done = true
}

// ActorBusy is how long one actor has spent handling messages, and how
// much of that in object-store calls.
type ActorBusy struct {
	ID          runtime.ActorID
	Busy, Store time.Duration
}

// BusyTimes is every live actor's time spent in Receive since it was
// spawned, by actor id: an actor busy for most of a run is its
// bottleneck, one mostly idle waits on others.
func (r *Runtime) BusyTimes() []ActorBusy {
	r.mu.Lock()
	out := make([]ActorBusy, 0, len(r.actors))
	for id, cell := range r.actors { //lint:maprange sorted below
		out = append(out, ActorBusy{ID: id, Busy: time.Duration(cell.busyNanos.Load()), Store: time.Duration(cell.storeNanos.Load())})
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b ActorBusy) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return out
}

// send is an actor's Send: never blocks (see MailboxOverflowMessagesMaxDefault).
func (r *Runtime) send(from runtime.ActorID, to runtime.ActorID, msg runtime.Message) {
	cell := r.lookup(to)
	if cell == nil || !cell.mailbox.pushNoWait(envelope{kind: envelopeMessage, from: from, msg: msg}, false) {
		r.dropped.Add(1)
		if cell != nil {
			cell.logger.Warn("mailbox past its hard bound: message dropped", "from", string(from), "type", fmt.Sprintf("%T", msg))
		}
	}
}

// streamSeed derives the seed of a named random stream from the runtime
// seed, the actor and the stream name.
func streamSeed(seed uint64, actor runtime.ActorID, stream string) (uint64, uint64) {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], seed)
	h.Write(buf[:])
	h.Write([]byte(actor))
	h.Write([]byte{0})
	h.Write([]byte(stream))
	a := h.Sum64()
	h.Write([]byte{1})
	return a, h.Sum64()
}
