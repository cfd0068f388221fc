//go:build plantbug_spreadmeet

package system

import "testing"

// TestPlantedSpreadUnmetCaught (only with -tags plantbug_spreadmeet, which
// plants into actors/shard pinned reads of a view spread over the shards
// that take a view shard's part at its own frontier instead of the epoch
// pinned on every shard, the meet): the check of each view against the
// tables of the same read catches it.
func TestPlantedSpreadUnmetCaught(t *testing.T) {
	caughtByChecker(t, Options{DrawShards: true}, 200)
}
