//go:build plantbug_aggretraction

package system

import (
	"strings"
	"testing"
)

// TestPlantedAggRetractionCaught (only with -tags plantbug_aggretraction,
// which plants into ivm/op an aggregate that does not subtract retracted
// values from SUM): the view-versus-reference checker catches it.
func TestPlantedAggRetractionCaught(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		o := Run(Options{Seed: seed})
		if o.Err == nil {
			continue
		}
		if !strings.Contains(o.Err.Error(), "differs from its query run over the tables") {
			t.Fatalf("seed %d failed, but not by the view checker: %v", seed, o.Err)
		}
		t.Logf("planted aggregate bug caught at seed %d: %v", seed, o.Err)
		return
	}
	t.Fatal("planted aggregate bug not caught within 50 seeds: the view checker cannot find it")
}
