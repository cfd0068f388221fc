package register

import (
	"context"
	"errors"
	"time"

	"github.com/rockstream/rockstream/buggify"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// stateKey is the replica's one durable object.
const stateKey = "register/state"

const (
	// loadRetryInterval is how long a replica waits before retrying a
	// failed load of its durable state.
	loadRetryInterval = 5 * time.Millisecond
	// lazyPersistInterval is how long the buggy AckBeforeDurable replica
	// keeps an acknowledged value only in memory.
	lazyPersistInterval = 300 * time.Millisecond
)

// Replica holds one copy of the register.
//
//	        Started / load failed (retry timer)
//	┌─────────┐  load ok   ┌────────┐
//	│ loading │ ─────────► │ serving│
//	└─────────┘ ◄───────── └────────┘
//	             write failed or ambiguous: reload before acknowledging
//
// INVARIANT (correct variant): a storeAck is sent only after the stamp it
// confirms (or a newer one) is durable in the process's object store.
type Replica struct {
	variant Variant
	loaded  bool
	stamp   Stamp
	value   int
	dirty   bool // AckBeforeDurable: memory is ahead of the store
}

// NewReplica returns a replica factory of the variant.
func NewReplica(variant Variant) runtime.Factory {
	return func() runtime.Actor { return &Replica{variant: variant} }
}

func (r *Replica) load(ctx runtime.Context) {
	obj, err := ctx.Store().Get(context.Background(), stateKey)
	switch {
	case errors.Is(err, objstore.ErrNotFound):
		r.stamp, r.value, r.loaded = Stamp{}, 0, true
	case err != nil:
		r.loaded = false
		ctx.After(loadRetryInterval, loadTick{})
	default:
		r.stamp, r.value = decodeState(obj.Data)
		r.loaded = true
	}
}

// Receive implements runtime.Actor.
func (r *Replica) Receive(ctx runtime.Context, msg runtime.Message) {
	switch m := msg.(type) {
	case runtime.Started, loadTick:
		r.load(ctx)
	case getState:
		ctx.Reply(stateResult{Stamp: r.stamp, Value: r.value})
	case queryRequest:
		if r.loaded {
			ctx.Reply(queryReply{Op: m.Op, Stamp: r.stamp, Value: r.value})
		}
	case storeRequest:
		r.store(ctx, m)
	case persistTick:
		r.persist(ctx)
	}
}

func (r *Replica) store(ctx runtime.Context, m storeRequest) {
	if !r.loaded {
		return // the coordinator retries
	}
	if r.stamp.Less(m.Stamp) {
		if r.variant == AckBeforeDurable {
			// BUG (planted): acknowledge from memory, persist later.
			r.stamp, r.value = m.Stamp, m.Value
			if !r.dirty {
				r.dirty = true
				ctx.After(lazyPersistInterval, persistTick{})
			}
		} else {
			if _, err := ctx.Store().Put(context.Background(), stateKey, encodeState(m.Stamp, m.Value)); err != nil {
				// Transient or ambiguous: the truth is in the store.
				r.load(ctx)
				return
			}
			r.stamp, r.value = m.Stamp, m.Value
		}
	}
	if buggify.Fire(ctx, buggify.RegisterReplicaDropReply) {
		return
	}
	ctx.Reply(storeAck{Op: m.Op})
}

func (r *Replica) persist(ctx runtime.Context) {
	if !r.dirty {
		return
	}
	if _, err := ctx.Store().Put(context.Background(), stateKey, encodeState(r.stamp, r.value)); err != nil {
		ctx.After(loadRetryInterval, persistTick{})
		return
	}
	r.dirty = false
}
