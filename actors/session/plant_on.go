//go:build plantbug_rrnewsnapshot

package session

// plantRRNewSnapshot plants a bug: a REPEATABLE READ statement reads the
// newest committed state instead of the transaction's pinned snapshot (the
// first statement reads what it just pinned, so the bug shows from the
// second on). sim/system's TestPlantedRRNewSnapshotCaught asserts the
// simulation finds it.
const plantRRNewSnapshot = true
