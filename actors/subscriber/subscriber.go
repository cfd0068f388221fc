package subscriber

import (
	"fmt"
	"time"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/assert"
	"github.com/rockstream/rockstream/runtime"
)

const (
	// QueueUpdatesMaxDefault is Config.QueueUpdatesMax's default: 256
	// epoch steps is a few seconds of a busy view at the default epoch
	// cadence, enough to ride out a slow client write, small enough that a
	// stalled client holds little memory (the rest waits in the view's
	// history on the shard).
	QueueUpdatesMaxDefault = 256
	// creditResendEvery is how often a Take that waits re-sends the
	// current credit grant: a grant is an ordinary at-most-once send, and
	// a lost one would otherwise stall the subscription for good.
	creditResendEvery = time.Second
)

// Config configures an edge actor.
type Config struct {
	// Shard is the shard actor the subscription is registered with.
	Shard runtime.ActorID
	// Shards, when it names more than one shard, are the shards a view
	// spread over them runs on: the subscription is registered with each,
	// and the edge merges their streams (merge.go); Shard is unused.
	Shards []runtime.ActorID
	// QueueUpdatesMax bounds the queued updates (epoch steps, each with
	// the view's changes in it). Simulation range: 1..1024.
	QueueUpdatesMax int
}

// Take (connection → edge, by Ask) → Taken: waits until at least one
// update is queued or the subscription ended.
type Take struct{}

// Taken holds every queued update, in order, and — once the subscription
// ended — the error that ended it as values (errcode id and message).
type Taken struct {
	Updates []shard.SubscriptionUpdate
	Code    string
	Message string
}

// Err returns the error that ended the subscription, nil while it runs.
func (t Taken) Err() error {
	if t.Code == "" {
		return nil
	}
	code, ok := errcode.Lookup(t.Code)
	if !ok {
		code = errcode.InternalError
	}
	return errcode.New(code, "%s", t.Message)
}

// resendCredit is the timer message of creditResendEvery.
type resendCredit struct{}

// Actor is the edge actor.
type Actor struct {
	cfg   Config
	queue []shard.SubscriptionUpdate
	// received is the Seq of the last update queued; taken counts the
	// updates the connection took.
	// INVARIANT: taken <= received <= taken + QueueUpdatesMax.
	received, taken uint64
	// waiting is the Take answered when an update or the end arrives.
	waiting   runtime.Deferred
	ended     Taken
	resending bool
	// merge is the merge of a spread view's shards' streams (Shards).
	merge *merge
}

// New returns an edge actor factory.
func New(cfg Config) runtime.Factory {
	if cfg.QueueUpdatesMax <= 0 {
		cfg.QueueUpdatesMax = QueueUpdatesMaxDefault
	}
	return func() runtime.Actor {
		a := &Actor{cfg: cfg}
		if len(cfg.Shards) > 1 {
			a.merge = newMerge(cfg.Shards)
		}
		return a
	}
}

// Through is the credit of a new subscription: the Seq of the last update
// the edge has room for before anything is taken.
func (c Config) Through() uint64 {
	if c.QueueUpdatesMax <= 0 {
		return QueueUpdatesMaxDefault
	}
	return uint64(c.QueueUpdatesMax)
}

// Receive implements runtime.Actor.
func (a *Actor) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case runtime.Started, runtime.Stopping:
	case shard.SubscriptionUpdate:
		if a.ended.Code != "" {
			return
		}
		if a.merge != nil {
			if err := a.merge.receive(ctx.From(), m); err != nil {
				a.endWith(errcode.SubscriberTooSlow.ID, err.Error())
				break
			}
			a.queue = append(a.queue, a.merge.emit()...)
			break
		}
		if m.Seq != a.received+1 {
			// Sends are at-most-once: a lost update is a gap the
			// subscriber must not see as a continuous stream.
			a.endWith(errcode.SubscriberTooSlow.ID, fmt.Sprintf("the subscription lost update %d (next received: %d); resume AS OF the last progress epoch", a.received+1, m.Seq))
			break
		}
		// INVARIANT: the shard sends only what the credit allows.
		assert.That(len(a.queue) < a.cfg.QueueUpdatesMax, "subscriber queue over its bound: %d updates queued, max %d", len(a.queue), a.cfg.QueueUpdatesMax)
		a.received = m.Seq
		a.queue = append(a.queue, m)
	case shard.SubscriptionEnded:
		a.endWith(m.Code, m.Message)
	case Begin:
		if a.merge != nil && a.ended.Code == "" {
			a.merge.begin(m)
			a.queue = append(a.queue, a.merge.emit()...)
		}
	case Take:
		if a.waiting != nil {
			// The earlier Take's caller gave up (its statement context
			// ended) and asks again: answer the old one empty, so no
			// update is handed to a caller that is gone.
			a.waiting.Reply(Taken{})
		}
		a.waiting = ctx.Defer()
		if len(a.queue) == 0 && a.ended.Code == "" {
			a.grant(ctx)
			if !a.resending {
				a.resending = true
				ctx.After(creditResendEvery, resendCredit{})
			}
		}
	case resendCredit:
		a.resending = false
		if a.waiting != nil && a.ended.Code == "" {
			a.grant(ctx)
			a.resending = true
			ctx.After(creditResendEvery, resendCredit{})
		}
	default:
		panic(fmt.Sprintf("subscriber: unexpected message %T", msg))
	}
	a.answer(ctx)
}

func (a *Actor) endWith(code, message string) {
	if a.ended.Code == "" {
		a.ended = Taken{Code: code, Message: message}
	}
}

// answer replies to a waiting Take with everything queued (or the end),
// and grants the shard the room that frees.
func (a *Actor) answer(ctx runtime.Context) {
	if a.waiting == nil || (len(a.queue) == 0 && a.ended.Code == "") {
		return
	}
	t := Taken{Updates: a.queue}
	if len(a.queue) == 0 {
		t.Code, t.Message = a.ended.Code, a.ended.Message
	}
	a.queue = nil
	a.taken += uint64(len(t.Updates))
	a.waiting.Reply(t)
	a.waiting = nil
	if a.ended.Code == "" {
		a.grant(ctx)
	}
}

func (a *Actor) grant(ctx runtime.Context) {
	if a.merge != nil {
		// Each shard may send what neither its unmerged updates nor the
		// merged queue take up of the bound.
		for _, p := range a.merge.parts {
			room := max(0, a.cfg.QueueUpdatesMax-len(p.pending)-len(a.queue))
			ctx.Send(p.shard, shard.SubscriptionCredit{Through: p.received + uint64(room)})
		}
		return
	}
	ctx.Send(a.cfg.Shard, shard.SubscriptionCredit{Through: a.taken + uint64(a.cfg.QueueUpdatesMax)})
}
