//go:build plantbug_ackbeforedurable

package system

import "testing"

// TestPlantedBugCaught (only with -tags plantbug_ackbeforedurable, where
// every run carries the bug): the default scenario catches it.
func TestPlantedBugCaught(t *testing.T) {
	caughtWithin(t, Options{}, 100)
}
