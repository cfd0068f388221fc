package errcode

// RS-2450–2459 (gateway expansion block): PostgreSQL-compatibility
// statements (VACUUM/ANALYZE, row locks, LISTEN/NOTIFY).
var (
	VacuumInTransactionBlock = Register("RS-2450", "maintenance.vacuum_in_transaction_block", "25001",
		"Run VACUUM outside BEGIN ... COMMIT (in autocommit mode). In RockStream it has nothing to do: storage is compacted in the background.")
	ConcurrentlyInTransactionBlock = Register("RS-2454", "ddl.concurrently_in_transaction_block", "25001",
		"Run CREATE INDEX CONCURRENTLY / DROP INDEX CONCURRENTLY outside BEGIN ... COMMIT (Alembic: inside autocommit_block()), or leave out CONCURRENTLY: RockStream builds no index structure, so it changes nothing else.")
	DeadlockDetected = Register("RS-2451", "transaction.deadlock_detected", "40P01",
		"Two transactions waited for rows the other had changed; this one was rolled back. Retry it, and change rows in the same order in every transaction to avoid the cycle.")
	RowLockRetriesExhausted = Register("RS-2452", "transaction.row_lock_retries_exhausted", "40001",
		"The statement kept finding rows changed by other transactions while it waited for them. Retry the transaction.")
	LockTimeout = Register("RS-2453", "transaction.lock_timeout", "55P03",
		"The statement waited longer than lock_timeout for a row another transaction holds. Retry it, raise lock_timeout, or find the long-running transaction holding the row.")
)
