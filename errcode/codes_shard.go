package errcode

// RS-3000–3499: shard / runtime.
var (
	ShardStateCorrupt = Register("RS-3002", "shard.recovery_replay_failed", "XX001",
		"The shard's stored state could not be read back. Keep the storage directory for diagnosis (`rockstream debug slate`), restore from a backup, and report the bug.")
	UniqueViolation = Register("RS-2200", "write.unique_violation", "23505",
		"A row with this primary key already exists. Use UPDATE, or INSERT ... ON CONFLICT DO UPDATE / DO NOTHING.")
	NotNullViolation = Register("RS-2201", "write.not_null_violation", "23502",
		"Provide a value for the column, or give it a DEFAULT.")
	CheckViolation = Register("RS-2202", "write.check_violation", "23514",
		"The row fails the table's CHECK constraint named in the message; change the values.")
	ShardUnavailable = Register("RS-3003", "shard.unavailable", "57P03",
		"The shard is not ready (starting, recovering, or its storage is failing). Retry shortly; check /readyz and the server log.")
)
