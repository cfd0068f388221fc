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
	alloc := func(min uint64, count int) uint64 {
		t.Helper()
		ctx.reply = nil
		a.Receive(ctx, AllocEpoch{Min: min, Count: count})
		r, ok := ctx.reply.(EpochAllocated)
		if !ok || r.Count != max(count, 1) || r.Known != r.Epoch+uint64(r.Count)-1 {
			t.Fatalf("AllocEpoch{%d, %d} answered %#v", min, count, ctx.reply)
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
			count := rng.IntN(4)
			e := alloc(min, count)
			if e <= last || e < min {
				t.Fatalf("round %d: epoch %d after %d (min %d)", round, e, last, min)
			}
			last = e + uint64(max(count, 1)) - 1
		}
		a, ctx = start(store) // crash: only durable state survives
	}
}
