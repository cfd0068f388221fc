package system

import (
	"flag"
	"testing"
)

var scanN = flag.Int("scan", 0, "")

func TestTmpScan(t *testing.T) {
	for seed := uint64(1); seed <= uint64(*scanN); seed++ {
		o := Run(Options{Seed: seed})
		if o.Err != nil {
			t.Logf("seed %d: %v", seed, o.Err)
		}
	}
}
