package main

import (
	"testing"
)

// TestMinimiseKeepsTheFailure: the minimised configuration of a failing
// seed still fails, for the register and the whole-system workloads.
func TestMinimiseKeepsTheFailure(t *testing.T) {
	for _, c := range []struct{ workload, variant string }{
		{"register", "read-one-replica"},
		{"system", "ack-before-durable"},
	} {
		w, _, err := pick(c.workload, c.variant, false)
		if err != nil {
			t.Fatal(err)
		}
		var seed uint64
		for s := uint64(1); s <= 50; s++ {
			if w.run(s, nil).err != nil {
				seed = s
				break
			}
		}
		if seed == 0 {
			t.Fatalf("%s/%s: no failing seed in 50 seeds", c.workload, c.variant)
		}
		cfg := minimise(seed, w)
		if w.run(seed, &cfg).err == nil {
			t.Fatalf("%s/%s: minimised configuration of seed %d no longer fails", c.workload, c.variant, seed)
		}
	}
}

func TestPickRejectsUnknown(t *testing.T) {
	if _, _, err := pick("system", "no-such-bug", false); err == nil {
		t.Fatal("unknown variant accepted")
	}
	if _, _, err := pick("nope", "", false); err == nil {
		t.Fatal("unknown workload accepted")
	}
}
