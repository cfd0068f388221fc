package register

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/seeds"
)

func result(o Outcome) seeds.Result {
	return seeds.Result{Header: o.Header, TraceHash: o.TraceHash, Err: o.Err,
		Log: fmt.Sprintf("stats: %+v\noperation log:\n%s", o.Stats, o.History)}
}

// TestCorrectRegisterIsLinearizable: the correct variant passes 500 seeds
// (fixed seeds 1..500 by default; -seeds=K for fresh ones).
func TestCorrectRegisterIsLinearizable(t *testing.T) {
	seeds.Run(t, 500, func(seed uint64) seeds.Result {
		return result(Run(Options{Seed: seed, Variant: Correct}))
	})
}

// caughtWithin runs the buggy variant on seeds 1..limit and returns the
// first seed whose history porcupine rejects.
func caughtWithin(t *testing.T, variant Variant, limit uint64) uint64 {
	t.Helper()
	for seed := uint64(1); seed <= limit; seed++ {
		o := Run(Options{Seed: seed, Variant: variant})
		if o.Err != nil {
			t.Logf("%s caught at seed %d: %v", variant, seed, o.Err)
			return seed
		}
	}
	t.Fatalf("%s was not caught within %d seeds: the harness cannot find this bug", variant, limit)
	return 0
}

// TestBuggyRegistersAreCaught: each planted bug is found within a bounded
// number of seeds.
func TestBuggyRegistersAreCaught(t *testing.T) {
	caughtWithin(t, ReadOneReplica, 50)
	caughtWithin(t, AckBeforeDurable, 300)
}

// TestRegisterDeterminism: the register run is deterministic too.
func TestRegisterDeterminism(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		a, b := Run(Options{Seed: seed}), Run(Options{Seed: seed})
		if a.TraceHash != b.TraceHash || a.History.String() != b.History.String() {
			t.Fatalf("seed %d: trace %016x vs %016x", seed, a.TraceHash, b.TraceHash)
		}
	}
}

// TestRegisterCrossesTheWire: the register's messages, over the simulated
// network, are carried by the wire codec.
func TestRegisterCrossesTheWire(t *testing.T) {
	o := Run(Options{Seed: 1})
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	if o.Stats.Encoded == 0 {
		t.Fatalf("no message crossed the wire codec:\n%s", o.Header)
	}
}
