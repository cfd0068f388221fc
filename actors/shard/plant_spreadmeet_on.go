//go:build plantbug_spreadmeet

package shard

// plantSpreadUnmet plants a bug: a read of a view spread over the shards
// takes a view shard's part at that shard's own frontier instead of at the
// epoch every shard pinned for the read (the meet). sim/system's
// TestPlantedSpreadUnmetCaught asserts the simulation finds it.
const plantSpreadUnmet = true
