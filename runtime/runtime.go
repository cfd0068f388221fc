// Package runtime defines what an actor sees of the world.
//
// RockStream is a deterministic-simulation-first actor system (ARCHITECTURE.md
// §1, §3). Every shard, control plane, exchange and gateway session is an Actor:
// a state machine that changes only its own state inside Receive and reaches
// the world only through its Context. Two runtimes implement this contract:
// runtime/real (one goroutine per actor, wall clock, real stores) and sim (the
// whole system in one goroutine, virtual time, injected faults).
//
// Walkthrough:
//
//	rt.Spawn("control", "control/0", func() runtime.Actor { return newControl() })
//	reply, err := rt.Ask(goctx, "control/0", CreateTable{...}) // from a pgwire goroutine
//	// inside control's Receive:
//	ctx.Store().PutIfAbsent(goctx, key, data)  // synchronous in v1
//	ctx.After(10*time.Millisecond, flushTick{}) // background work is a timer message
//	ctx.Reply(CreateTableDone{})
package runtime

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// ActorID names an actor uniquely within a runtime, e.g. "shard/0" or
// "gateway/session/17". IDs are stable across restarts of their process so that
// messages and durable state can name them.
type ActorID string

// Message is any value delivered to an actor. Messages are values: a sender
// must not mutate a message after sending it.
type Message any

// Actor is a message-driven state machine.
type Actor interface {
	// Receive handles one message. It runs to completion before the next
	// message of the same actor is delivered. It must not block on anything but
	// ctx's synchronous object-store calls.
	Receive(ctx Context, msg Message)
}

// Factory creates an actor from durable state only. A process restart (real or
// simulated) calls the factory again; nothing in memory survives.
type Factory func() Actor

// TimerID identifies a pending timer so that it can be cancelled.
type TimerID uint64

// Started is the first message every actor receives after Spawn (and after a
// restart of its process), before any other message.
type Started struct{}

// Stopping is delivered to an actor when it is stopped gracefully. It is not
// delivered on a crash.
type Stopping struct{}

// Request is a message an actor sends when it must tell the reply apart
// from every other message it receives: a late answer to a request it
// gave up on (a timeout), or answers of the same type from several
// destinations. The runtime delivers Msg to the destination unwrapped (its
// Receive never sees a Request), and wraps the destination's Reply — or
// its Deferred reply — into a Response with the same ID.
//
//	session ──Request{ID: 7, Msg: Lookup}──▶ shard   (Receive sees Lookup)
//	session ◀──Response{ID: 7, Msg: LookupResult}── shard (ctx.Reply)
type Request struct {
	ID  uint64
	Msg Message
}

// Response answers a Request: Msg is the destination's reply, ID the
// request's.
type Response struct {
	ID  uint64
	Msg Message
}

// Answer is what a runtime sends back for a reply msg to a message that
// came in Request request (0: it came plain, and so goes msg).
func Answer(request uint64, msg Message) Message {
	if request == 0 {
		return msg
	}
	return Response{ID: request, Msg: msg}
}

// Context is the actor's only door to the world. It is valid only during the
// Receive call it was passed to.
type Context interface {
	// Self is the receiving actor's id.
	Self() ActorID
	// From is the sender of the current message: an actor id, or "" for
	// timers, Started/Stopping and messages from Ask callers.
	From() ActorID
	// Send delivers msg to another actor asynchronously. Delivery is
	// at-most-once: the destination may not exist, or (in simulation) the
	// network may drop the message. Ordering between one pair of actors in one
	// process is FIFO in the real runtime; the simulator may reorder across
	// processes.
	Send(to ActorID, msg Message)
	// Reply answers the current message: it completes the caller's Ask, or
	// sends msg to From() when the current message came from an actor. Calling
	// Reply when there is nobody to answer is a no-op.
	Reply(msg Message)
	// Defer returns a handle that answers the current message later, from a
	// later Receive of this actor: e.g. a shard acknowledges a batch of
	// commits only once one shared durable write covers them all (group
	// commit). Use either Reply or the handle for one message, not both.
	Defer() Deferred
	// After delivers msg to this actor after d. Timers of a crashed process are
	// discarded.
	After(d time.Duration, msg Message) TimerID
	// CancelTimer cancels a pending timer; cancelling a fired or unknown timer
	// is a no-op.
	CancelTimer(id TimerID)
	// Now is this process's clock (virtual, possibly skewed, in simulation).
	Now() time.Time
	// Rand returns the named deterministic random stream, e.g.
	// "slate/compaction". Each name is an independent stream so that a new
	// draw in one component does not shift the draws of every other one.
	Rand(stream string) *rand.Rand
	// Store is the object store of this actor's process. Calls are
	// synchronous (ARCHITECTURE.md §3).
	Store() objstore.Store
	// Logger is a structured logger tagged with the actor id.
	Logger() *slog.Logger
	// Spawn starts a new actor in this actor's process.
	Spawn(id ActorID, factory Factory)
	// Stop stops an actor gracefully (it receives Stopping first).
	Stop(id ActorID)
}

// Deferred answers a message after the Receive that got it returned (see
// Context.Defer). Call Reply from a Receive of the same actor; only the
// first call has an effect. A handle of a crashed process is never called:
// the caller of an Ask sees ErrActorGone as for any lost reply.
type Deferred interface {
	Reply(msg Message)
}

// Runtime hosts actors. Both runtime/real and sim implement it.
type Runtime interface {
	// Spawn starts an actor in the named process. Processes are the unit of
	// crash and restart: all actors of a process share its object store, its
	// clock and its fate.
	Spawn(process string, id ActorID, factory Factory) error
	// Ask sends msg to an actor on behalf of a caller outside the actor system
	// (a pgwire connection goroutine, a test) and waits for its Reply. In the
	// real runtime it blocks until the reply, goctx's end, or ErrActorGone.
	Ask(goctx context.Context, to ActorID, msg Message) (Message, error)
	// Stop stops an actor gracefully.
	Stop(id ActorID) error
}

// Errors returned by runtimes.
var (
	// ErrActorGone: the destination does not exist or stopped before replying.
	ErrActorGone = errors.New("runtime: actor gone")
	// ErrMailboxFull: the destination's bounded mailbox is full and the caller
	// asked not to wait (backpressure, STYLE.md 10).
	ErrMailboxFull = errors.New("runtime: mailbox full")
	// ErrDuplicateActor: Spawn with an id that is already running.
	ErrDuplicateActor = errors.New("runtime: duplicate actor id")
)
