package system

import (
	"errors"
	"testing"
)

// caughtWithin runs seeds 1..limit with opts and returns the first seed
// whose run fails a checker.
func caughtWithin(t *testing.T, opts Options, limit uint64) uint64 {
	t.Helper()
	for seed := uint64(1); seed <= limit; seed++ {
		opts.Seed = seed
		o := Run(opts)
		if o.Err != nil {
			t.Logf("planted bug caught at seed %d: %v", seed, o.Err)
			return seed
		}
	}
	t.Fatalf("planted bug not caught within %d seeds: the harness cannot find it", limit)
	return 0
}

// caughtByChecker is caughtWithin for bugs only a checker may report: the
// first failing seed must fail a checker, not availability.
func caughtByChecker(t *testing.T, opts Options, limit uint64) {
	t.Helper()
	for seed := uint64(1); seed <= limit; seed++ {
		opts.Seed = seed
		o := Run(opts)
		if o.Err == nil {
			continue
		}
		if !errors.Is(o.Err, errChecker) {
			t.Fatalf("seed %d failed, but not by a checker: %v", seed, o.Err)
		}
		t.Logf("planted bug caught at seed %d: %v", seed, o.Err)
		return
	}
	t.Fatalf("planted bug not caught within %d seeds: the harness cannot find it", limit)
}

// TestPlantedAckBeforeDurableCaught: a shard store that acknowledges
// Apply before the WAL is durable loses acknowledged commits on a crash;
// the durability checker must notice within a bounded number of seeds.
func TestPlantedAckBeforeDurableCaught(t *testing.T) {
	caughtWithin(t, Options{Plant: AckBeforeDurable}, 100)
}

// TestPlantedTornCommitCaught: a commit applied as two durable writes is
// caught half-applied after a crash between them.
func TestPlantedTornCommitCaught(t *testing.T) {
	caughtWithin(t, Options{Plant: TornCommit}, 1000)
}
