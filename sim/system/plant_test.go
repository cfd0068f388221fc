package system

import "testing"

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
