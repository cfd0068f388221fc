//go:build plantbug_framebeforedurable

package system

import "testing"

// TestPlantedFrameBeforeDurableCaught (only with -tags
// plantbug_framebeforedurable, which plants into actors/shard exchange
// frames sent before their commits are durable): a crash takes back
// epochs a view shard maintains, and the run fails.
func TestPlantedFrameBeforeDurableCaught(t *testing.T) {
	caughtWithin(t, Options{DrawShards: true, NoTemporalView: true}, 1500)
}
