//go:build plantbug_framebeforedurable

package shard

// plantFrameBeforeDurable plants a bug: the table shard sends the view
// shards delta-log entries applied but not yet durable (a group commit
// before its sync), so a crash can take back an epoch a view shard
// already maintains. sim/system's TestPlantedFrameBeforeDurableCaught
// asserts the simulation finds it.
const (
	plantFrameBeforeDurable    = true
	plantOutboxCollectedOnSend = false
)
