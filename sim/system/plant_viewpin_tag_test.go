//go:build plantbug_viewunpinned

package system

import "testing"

// TestPlantedViewUnpinnedCaught (only with -tags plantbug_viewunpinned,
// which plants into actors/session REPEATABLE READ reads of views over
// several shards that ignore the view shard's pin): the check of each view
// against the tables of the same read catches it.
func TestPlantedViewUnpinnedCaught(t *testing.T) {
	caughtByChecker(t, Options{DrawShards: true}, 50)
}
