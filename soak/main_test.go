package main

import (
	"testing"

	"github.com/rockstream/rockstream/sim/register"
)

// TestMinimiseKeepsTheFailure: the minimised configuration of a failing
// seed still fails, and switches at least one fault off.
func TestMinimiseKeepsTheFailure(t *testing.T) {
	var seed uint64
	for s := uint64(1); s <= 50; s++ {
		if register.Run(register.Options{Seed: s, Variant: register.ReadOneReplica}).Err != nil {
			seed = s
			break
		}
	}
	if seed == 0 {
		t.Fatal("no failing seed for read-one-replica in 50 seeds")
	}
	cfg := minimise(seed, register.ReadOneReplica)
	if register.Run(register.Options{Seed: seed, Variant: register.ReadOneReplica, Config: &cfg}).Err == nil {
		t.Fatalf("minimised configuration of seed %d no longer fails", seed)
	}
}
