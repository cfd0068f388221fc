// Package session is a client session's transaction as an actor: the
// write buffer and the own-writes overlay, savepoints, the REPEATABLE
// READ snapshot pin, the row locks the transaction holds and the commit
// protocol (issue D1). A pgwire connection's goroutine (engine/) binds and
// evaluates SQL and asks its session actor for every step that touches
// transactional state, by request/reply messages; the simulator's clients
// send the same requests, so every transaction path runs under faults.
//
//	connection ──Begin──────────────▶ session   idle → open
//	           ──Statement{Data}────▶           RR: OpenSnapshot at the shard (once)
//	           ──Read / Lookup{Lock}▶           LockRows, Lookup, Read at the shard,
//	           ◀─ReadResult / rows──            own writes overlaid
//	           ──Set / Append───────▶           buffered (savepoints undo them)
//	           ──Commit─────────────▶           Commit{Txn} at the shard; the shard
//	           ◀─Committed{Epoch}───            releases the locks once durable
//
// The actor handles one request at a time: while it waits for a shard
// (a row-lock wait may last until another transaction ends) later
// requests queue behind it, except CancelWait, which ends the wait. Every
// request to a shard is a runtime.Request with its own ID, so a reply
// that arrives after the actor gave up on it (a canceled wait) is
// recognised and dropped rather than taken for the answer to a later
// request.
//
// State machine of one request:
//
//	idle ──request──▶ running ──(needs a shard)──▶ waiting ──reply──▶ running
//	  ▲                  │                            │
//	  └────── reply ─────┘◀────── CancelWait (57014) ─┘
//
// Isolation levels, as PostgreSQL 15 defines them (transaction-iso.html):
//
//	READ COMMITTED   every statement reads the committed state as of its
//	                 start (plus the transaction's own writes). An UPDATE or
//	                 DELETE of a row another open transaction changed waits
//	                 for it, then runs again on the newest data (rowlock.go).
//	REPEATABLE READ  the transaction's first statement (not BEGIN) pins one
//	                 shard snapshot (shard.OpenSnapshot) that every later
//	                 read of the transaction uses: tables and materialized
//	                 views as of the same epoch, plus its own writes. An
//	                 UPDATE or DELETE of a row changed by a transaction that
//	                 committed after the snapshot fails with 40001 (RS-2290)
//	                 — after waiting for the row's lock if that transaction
//	                 is still open, and succeeding if it rolls back.
//
// Views read in a REPEATABLE READ transaction are brought up to the last
// committed epoch when the snapshot is pinned (so they are as fresh as the
// tables and include the session's earlier commits); like in READ
// COMMITTED, they never include the transaction's own uncommitted writes.
package session
