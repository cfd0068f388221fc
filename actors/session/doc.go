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
package session
