package errcode

// RS-2290–2299 (direct-write transactions block): isolation levels.
var (
	ConcurrentUpdate = Register("RS-2290", "transaction.concurrent_update", "40001",
		"A REPEATABLE READ transaction tried to change a row that another transaction changed and committed after this transaction's snapshot was taken. Retry the whole transaction.")
	SnapshotUnavailable = Register("RS-2291", "transaction.snapshot_unavailable", "40001",
		"The REPEATABLE READ transaction's snapshot was lost because the shard restarted its storage. Retry the whole transaction.")
)
