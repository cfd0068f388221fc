package shard

import (
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// fromCtx is a testCtx whose messages come from another actor (or from the
// shard itself), so that a Reply would be delivered to that actor.
type fromCtx struct {
	*testCtx
	from runtime.ActorID
}

func (c fromCtx) From() runtime.ActorID { return c.from }

// TestPoisonedShardDoesNotAnswerItsOwnTick (issue defect 1): a poisoned
// shard whose reopen fails answered every message with its error, the
// epoch tick it had sent itself too — so the error came back to it as a
// message and it panicked with "shard: unexpected message *errcode.Error".
func TestPoisonedShardDoesNotAnswerItsOwnTick(t *testing.T) {
	h, _ := newHarness(t)
	h.ctx = &testCtx{store: objstore.NewMemory()}
	opens := 0
	h.actor = New(Config{
		// The first open works; every reopen fails, so the shard stays
		// poisoned.
		OpenStore: func(runtime.Context) (kv.Store, error) {
			opens++
			if opens > 1 {
				return nil, errBroken
			}
			return h.store, nil
		},
		Planner: sumPlanner{table: h.table},
	})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
	h.ask(SyncCatalog{Catalog: h.snap.Value()})
	h.actor.poison(errBroken)

	h.ctx.reply = nil
	h.actor.Receive(fromCtx{testCtx: h.ctx, from: ActorOf(0)}, epochTick{})
	if h.ctx.reply != nil {
		t.Fatalf("a poisoned shard answered its own epoch tick with %v: the answer is delivered back to it as a message", h.ctx.reply)
	}
	if opens != 2 || !h.actor.reopen.poisoned {
		t.Fatalf("opens %d, poisoned %v: the tick did not try the reopen", opens, h.actor.reopen.poisoned)
	}
	// Others still get the error.
	h.actor.Receive(fromCtx{testCtx: h.ctx, from: "source/0"}, GetSourceOffset{})
	if err, ok := h.ctx.reply.(error); !ok || !containsState(err, "57P03") {
		t.Fatalf("a poisoned shard answered another actor with %v, want 57P03", h.ctx.reply)
	}
}

// TestShardAnswersUnexpectedMessages: an error arriving as a message (a
// reply nobody waits for) is dropped without an answer, and a message the
// shard does not know is answered with an error; neither panics.
func TestShardAnswersUnexpectedMessages(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	peer := fromCtx{testCtx: h.ctx, from: "source/0"}
	h.ctx.reply = nil
	h.actor.Receive(peer, errcode.New(errcode.ShardUnavailable, "an answer to nothing"))
	if h.ctx.reply != nil {
		t.Fatalf("an error delivered as a message was answered with %v", h.ctx.reply)
	}
	type unknown struct{}
	h.actor.Receive(peer, unknown{})
	if err, ok := h.ctx.reply.(error); !ok || !containsState(err, "XX000") {
		t.Fatalf("an unknown message was answered with %v, want an internal error", h.ctx.reply)
	}
}
