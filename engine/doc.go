// Package engine is RockStream's embedded database: it wires the gateway's
// sessions to the control-plane and shard actors and runs SQL on the IVM
// engine.
//
//	pgwire conn goroutine ──gateway.Session──► engine.session
//	    DDL  ──Ask──► control actor (catalog, durable) ──► shard.SyncCatalog
//	    DML  ── bind, run on a snapshot, buffer in the transaction
//	         └─ UPDATE/DELETE/upsert ──Ask──► shard.LockRows (waits in the shard)
//	    COMMIT ──Ask──► shard.Commit (durable before the reply)
//	    SELECT ──Ask──► shard.Read (after the session's own commits: read-your-writes)
//	           └─ the bound plan runs once over the snapshot (the view engine, ad hoc)
//
// A session's transaction buffers its row writes (per table, per primary
// key); its own reads of tables see them. Materialized views reflect
// committed data only. READ COMMITTED statements read the newest committed
// state; a REPEATABLE READ transaction pins one shard snapshot at its first
// statement (shard.OpenSnapshot, Read.At, Lookup.At) for all its reads
// (isolation.go). Row locks live in the shard that stores the rows
// (rowlock.go): the COMMIT's shard.Commit releases them once durable.
//
// CREATE MATERIALIZED VIEW returns once the shard has filled the view
// from its inputs (its SyncCatalog is answered after the backfill, which
// runs in chunks between other sessions' commits and reads). Canceled or
// timed out while it waits, the statement stops the backfill
// (shard.CancelBackfill) and drops the view again, so no half-filled view
// stays behind (ddl.go abandonView). At startup the shards sync in the
// background: views whose backfill a stop interrupted fill while the
// server serves.
package engine
