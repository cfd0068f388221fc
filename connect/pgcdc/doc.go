// Package pgcdc is the PostgreSQL change-data-capture source (CREATE SOURCE
// s FROM POSTGRES (connection = '…', publication = 'p')): it mirrors every
// table of an upstream publication into a RockStream relation with the
// same name and primary key, first by copying a consistent snapshot, then
// by applying the stream of inserts, updates and deletes that logical
// replication (the pgoutput plugin) sends.
//
// It runs at the edge of the process, on its own goroutine holding the
// network connections, and reaches the shard only through a Sink (package
// engine asks the shard actor). The deterministic packages never see it.
//
// Exactly-once: every commit to the shard carries the upstream LSN it
// reaches (the end of the last upstream transaction it contains) in the
// same durable batch as its rows (shard.Commit.Offset). A restarted source
// asks the shard for that LSN, starts replication there and drops any
// transaction that ends at or before it; the slot's flush position is
// reported upstream only after the shard acknowledged the commit, so
// PostgreSQL never discards WAL that RockStream has not made durable.
//
//	           ┌────────────── restart / error (backoff) ◄───────────┐
//	           ▼                                                      │
//	Start ─► CONNECTING ─ offset 0 ─► SNAPSHOTTING ─ copied ─► RUNNING ┘
//	           │                         (rows + LSN of the         │
//	           └──── offset > 0 ─────────  slot's consistent point)  │
//	                                                                 ▼
//	                          incompatible schema change ─► BLOCKED (stops)
//
// A snapshot interrupted by a crash is redone from a new slot: the rows it
// had committed are deleted first (the stored LSN is still 0), so the
// mirror never keeps a row the new snapshot lacks.
package pgcdc
