package system

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/seeds"
)

func result(o Outcome) seeds.Result {
	return seeds.Result{Header: o.Header, TraceHash: o.TraceHash, Err: o.Err,
		Log: fmt.Sprintf("stats: %+v acked=%d unknown=%d reads=%d\nlog:\n%s", o.Stats, o.Acked, o.Unknown, o.Reads, o.Log)}
}

// TestSystem runs the whole embedded database under faults: fixed seeds
// 1..N by default, -seed=N replays one, -seeds=K runs K fresh ones.
func TestSystem(t *testing.T) {
	seeds.Run(t, 200, func(seed uint64) seeds.Result {
		return result(Run(Options{Seed: seed}))
	})
}

// TestSystemDeterminism: a seed replays exactly (trace and operation log).
func TestSystemDeterminism(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a, b := Run(Options{Seed: seed}), Run(Options{Seed: seed})
		if a.TraceHash != b.TraceHash || a.Log != b.Log {
			t.Fatalf("seed %d: trace %016x vs %016x", seed, a.TraceHash, b.TraceHash)
		}
	}
}
