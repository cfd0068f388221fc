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
	ShardUnavailable = Register("RS-3100", "shard.unavailable", "57P03",
		"The shard is not ready (starting, recovering, or its storage is failing). Retry shortly; check /readyz and the server log.")
)

// Transactions and writes (direct-write range).
var (
	TransactionTooLarge = Register("RS-2203", "write.transaction_too_large", "54000",
		"Split the change into several transactions (e.g. COPY in chunks of a million rows).")
	InsertOnlyTable = Register("RS-2204", "write.insert_only_table", "0A000",
		"The table was created WITH (insert_only = true): rows can only be inserted. Recreate it with a PRIMARY KEY to update or delete rows.")
	CardinalityViolation = Register("RS-2205", "write.cardinality_violation", "21000",
		"Make the rows proposed for insertion unique on the primary key.")
	// OptimisticConflict is the spec's RS-2008 (§12.8, §13.5.1): SQLSTATE
	// 40001 so drivers and ORMs retry the transaction.
	OptimisticConflict = Register("RS-2008", "transaction.optimistic_conflict", "40001",
		"Another transaction changed or deleted a row this transaction read and then wrote, after it was read. Retry the whole transaction; keep transactions that read-modify-write short.")
)
