//go:build plantbug_framebeforedurable

package shard

// plantFrameBeforeDurable plants a bug: the table shard sends the view
// shard delta-log entries applied but not yet durable (a group commit
// before its sync), so a crash can take back an epoch the view shard
// already maintains. sim/system's TestPlantedFrameBeforeDurableCaught
// asserts the simulation finds it.
const plantFrameBeforeDurable = true
