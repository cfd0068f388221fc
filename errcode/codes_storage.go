package errcode

// Storage (slate) codes. RS-3xxx: shard/runtime conditions a storage owner
// reacts to; RS-5xxx: storage format and integrity; RS-55xx: budgets.
var (
	ShardFenceLost = Register("RS-3001", "shard.fence_lost", "40001",
		"Another process opened this shard's storage with a newer writer epoch, so this writer stopped. The newer owner serves the shard now; retry the statement, and if owners keep fencing each other check that only one process is configured to own each shard.")
	DurableObjectStoreIOFailure = Register("RS-3012", "durable.object_store_io_failure", "58030",
		"The object store failed or timed out. Check the storage URL, credentials and the store's health; the operation is safe to retry because slate never acknowledges a write that did not reach the store.")
	StorageFormatVersionIncompatible = Register("RS-5001", "storage.format_version_incompatible", "XX002",
		"The stored data was written by an incompatible RockStream version. Run the RockStream version that wrote it, or restore from a backup made with this version.")
	StorageObjectCorrupt = Register("RS-5002", "storage.object_corrupt", "XX001",
		"A stored object failed its checksum or could not be decoded; the error names the object, and retrying reads the same bytes. Stop the server, run `rockstream debug slate verify --storage <dir or URL>` to list every damaged object, and restore those from a backup of the storage (objects never change once written, so any backup copy of the key is the right one); see docs/operations.md. Do not delete an object verify marks NEEDED.")
	StorageMergeOperatorMissing = Register("RS-5003", "storage.merge_operator_missing", "XX000",
		"The database holds merge operands but was opened without a merge operator. Open it with the same merge operator the writer uses.")
	StorageClosed = Register("RS-5004", "storage.closed", "55000",
		"The storage handle was closed or failed earlier. Reopen the database.")
	StorageMemoryBudgetExceeded = Register("RS-5501", "storage.memory_budget_exceeded", "53000",
		"Writes are arriving faster than slate can flush them to the object store within the configured memory budget. Flush (or let the owner's flush timer run) and retry; raise the unflushed-bytes budget if this persists.")
	// StepMemoryExceeded is one evaluation step (a view's backfill or
	// maintenance step, an ad-hoc query) whose deltas would hold more than
	// the per-step share of --memory-budget: refused instead of growing
	// until the process is killed.
	StepMemoryExceeded = Register("RS-5502", "resource.step_memory_exceeded", "53200",
		"The statement produces more intermediate rows at once than the memory budget allows (a join whose keys match many rows on both sides multiplies them). Rewrite the query so fewer rows meet (more selective join keys, aggregate each side before joining), or start the server with a larger --memory-budget.")
)

// StorageIntegrityError returns the error in err's chain that says stored
// data is damaged (RS-5002) or in a format this build cannot read
// (RS-5001). Retrying cannot change either, so a layer that would wrap a
// failure as "unavailable, retry shortly" reports this error itself: the
// client and the log see the code and the object's name first.
func StorageIntegrityError(err error) (*Error, bool) {
	for err != nil {
		if e, ok := err.(*Error); ok && (e.Code == StorageObjectCorrupt || e.Code == StorageFormatVersionIncompatible) {
			return e, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil, false
		}
		err = u.Unwrap()
	}
	return nil, false
}
