//go:build plantbug_framebeforedurable

package system

import "testing"

// TestPlantedFrameBeforeDurableCaught (only with -tags
// plantbug_framebeforedurable, which plants into actors/shard exchange
// frames sent before their commits are durable): a crash takes back
// epochs the view shard maintains, and the run fails (so far by
// liveness: the view shard holds epochs the table shard lost, and stops
// taking frames).
func TestPlantedFrameBeforeDurableCaught(t *testing.T) {
	caughtWithin(t, Options{}, 200)
}
