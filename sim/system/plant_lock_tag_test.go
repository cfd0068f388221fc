//go:build plantbug_lockbeforedurable

package system

import "testing"

// TestPlantedLockBeforeDurableCaught (only with -tags
// plantbug_lockbeforedurable, which plants into actors/shard row locks
// released as soon as they are granted, long before the holder's commit
// is durable): a checker of the transactional clients catches it.
func TestPlantedLockBeforeDurableCaught(t *testing.T) {
	caughtByChecker(t, Options{}, 20)
}
