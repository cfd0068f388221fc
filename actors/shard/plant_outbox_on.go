//go:build plantbug_outboxonsend

package shard

// plantOutboxCollectedOnSend plants a bug: the table shard collects its
// delta-log entries (the exchange's outbox) once they are sent instead of
// once every view shard acknowledged them durable, so a lost frame or a
// view shard's restart asks for entries that are gone.
// sim/system's TestPlantedOutboxCollectedOnSendCaught asserts the
// simulation finds it.
const (
	plantFrameBeforeDurable    = false
	plantOutboxCollectedOnSend = true
)
