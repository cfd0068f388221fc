//go:build plantbug_decisionnotdurable

package shard

import (
	"strings"
	"testing"
)

// TestPlantedDecisionNotDurableCaught: with the home answering decisions
// before they are durable, the partitioned simulation fails within its
// seeds (a transaction shows on one shard only, or an acknowledged one is
// lost).
//
//	go test -tags plantbug_decisionnotdurable -run TestPlantedDecisionNotDurableCaught ./actors/shard
func TestPlantedDecisionNotDurableCaught(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		if _, err := runPartitionedSim(t, seed); err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "shows on one shard only") && !strings.Contains(msg, "not one of") {
				t.Fatalf("seed %d failed, but not on the planted bug: %v", seed, err)
			}
			t.Logf("caught at seed %d: %s", seed, msg[strings.LastIndex(msg, "seed"):])
			return
		}
	}
	t.Fatal("the planted bug survived 300 seeds")
}
