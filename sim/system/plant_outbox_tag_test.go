//go:build plantbug_outboxonsend

package system

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/assert"
)

// TestPlantedOutboxCollectedOnSendCaught (only with -tags
// plantbug_outboxonsend, which plants into actors/shard a delta log
// collected once sent instead of once acknowledged): a lost frame or a
// view shard's restart asks for entries that are gone, which the table
// shard's exchange assertion reports (or a checker, first).
func TestPlantedOutboxCollectedOnSendCaught(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		// NB: without the temporal view (Options.NoTemporalView): its tick
		// epochs make a view shard that asked for collected entries jump
		// past an export's epoch, which another assertion reports first.
		err, failure := runCatchingAssertions(Options{Seed: seed, DrawShards: true, NoTemporalView: true})
		if failure != nil && strings.Contains(failure.Message, "delta log entry") {
			t.Logf("planted bug caught at seed %d by the exchange's assertion: %s", seed, failure.Message)
			return
		}
		if failure != nil {
			t.Fatalf("seed %d: an assertion other than the exchange's: %s", seed, failure.Message)
		}
		if err != nil {
			t.Logf("planted bug caught at seed %d: %v", seed, err)
			return
		}
	}
	t.Fatal("planted bug not caught within 300 seeds: the harness cannot find it")
}

// runCatchingAssertions runs opts, turning an assertion failure inside an
// actor into its report.
func runCatchingAssertions(opts Options) (err error, failure *assert.Failure) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*assert.Failure)
			if !ok {
				panic(r)
			}
			failure = f
		}
	}()
	return Run(opts).Err, nil
}
