//go:build !plantbug_framebeforedurable && !plantbug_outboxonsend

package shard

// The exchange's planted bug switches (off in normal builds; see
// plant_exchange_on.go).
const (
	plantFrameBeforeDurable    = false
	plantOutboxCollectedOnSend = false
)
