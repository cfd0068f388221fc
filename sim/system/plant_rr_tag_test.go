//go:build plantbug_rrnewsnapshot

package system

import "testing"

// TestPlantedRRNewSnapshotCaught (only with -tags plantbug_rrnewsnapshot,
// which plants into actors/session REPEATABLE READ statements that read
// the newest state instead of the transaction's pinned snapshot): the
// repeatability and linearizability checkers catch it.
func TestPlantedRRNewSnapshotCaught(t *testing.T) {
	caughtByChecker(t, Options{}, 50)
}
