//go:build plantbug_ackbeforedurable

package system

// plantAckBeforeDurable plants a bug: the shard's store acknowledges
// Apply before its WAL is durable, so a crash can lose acknowledged
// commits. TestPlantedBugCaught asserts the checkers find it.
const plantAckBeforeDurable = true
