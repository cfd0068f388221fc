//go:build plantbug_viewunpinned

package session

// plantViewUnpinned plants a bug: a REPEATABLE READ statement reading
// tables and views over several shards reads the views at the view
// shard's newest state instead of its pin of the transaction's snapshot.
// sim/system's TestPlantedViewUnpinnedCaught asserts the simulation finds
// it.
const plantViewUnpinned = true
