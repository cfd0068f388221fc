package control

import (
	"math/rand/v2"
	"testing"

	"github.com/rockstream/rockstream/ivm/kv"
)

// TestEpochsGrowAcrossCrashes: every epoch handed out is above every one
// handed out before, also across restarts of the control plane, and at
// least the asker's Min.
func TestEpochsGrowAcrossCrashes(t *testing.T) {
	store := kv.NewMemory()
	a, ctx := start(store)
	alloc := func(min uint64) uint64 {
		t.Helper()
		ctx.reply = nil
		a.Receive(ctx, AllocEpoch{Min: min})
		r, ok := ctx.reply.(EpochAllocated)
		if !ok {
			t.Fatalf("AllocEpoch answered %#v", ctx.reply)
		}
		return r.Epoch
	}
	rng := rand.New(rand.NewPCG(3, 3))
	var last uint64
	for round := 0; round < 20; round++ {
		for i := rng.IntN(50); i > 0; i-- {
			min := uint64(0)
			if rng.IntN(4) == 0 {
				min = last + uint64(rng.IntN(3*epochsLogAhead))
			}
			e := alloc(min)
			if e <= last || e < min {
				t.Fatalf("round %d: epoch %d after %d (min %d)", round, e, last, min)
			}
			last = e
		}
		a, ctx = start(store) // crash: only durable state survives
	}
}
