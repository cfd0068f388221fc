package errcode

// History / AS OF / retention codes. RS-2005 is the spec's number (§12.3,
// §14.14); it sits outside the 2300 block because the spec fixed it first.
var (
	// HistoryEpochBeforeRetention: SUBSCRIBE ... AS OF EPOCH n asked for
	// changes the view no longer keeps. SQLSTATE 72000 is PostgreSQL's
	// snapshot_too_old, the same situation for its old_snapshot_threshold.
	HistoryEpochBeforeRetention = Register("RS-2005", "history.epoch_before_retention", "72000",
		"Resume from an epoch at or after the oldest available one named in the message, or SUBSCRIBE again WITH (SNAPSHOT) to start over; to keep more history, create the view WITH (retain_history = '...').")
)
