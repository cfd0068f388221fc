// Package gateway is RockStream's PostgreSQL wire-protocol server (spec
// §12.6): connections, authentication, sessions and their parameters, the
// transaction state machine, the simple and extended query protocols, text
// and binary value formats, COPY, query cancel, and error reporting.
//
// # The seam
//
// The gateway executes SQL through the Engine and Session interfaces in
// engine.go. Everything that is pure protocol or session business stays
// here; everything that needs the catalog or data is the engine's:
//
//	client ──pgwire──▶ conn (one goroutine) ──Prepare/Execute/Begin/...──▶ Session (engine)
//	                     │ answers itself: SET SHOW RESET DISCARD BEGIN COMMIT
//	                     │ ROLLBACK, LISTEN UNLISTEN NOTIFY, COPY framing and
//	                     │ parsing, formats, cancel
//
// Start a server with
//
//	ln, _ := net.Listen("tcp", "127.0.0.1:6875")
//	err := gateway.Serve(ctx, ln, engine, gateway.Options{
//		Users: map[string]string{"alice": "secret"}, // SCRAM-SHA-256; empty = trust
//		TLS:   tlsConfig,                            // nil: SSLRequest answered 'N'
//	})
//
// Serve refuses a non-loopback listener without password users (RS-2412)
// unless Options.AllowInsecureNonLoopback.
//
// # What the engine implements, per feature
//
//	Parse/Describe      Session.Prepare: bind SQL with the client's parameter
//	                    types (KindUnknown = infer), report every parameter's
//	                    type and the result columns (nil for no rows).
//	                    PrepareRequest.Parsed is the statement's parse when
//	                    the gateway parsed it to classify it (plain
//	                    SELECT/INSERT/UPDATE/DELETE and BEGIN/COMMIT are
//	                    classified without one): parse it once.
//	                    ExecuteRequest.JustPrepared marks a Query message's
//	                    statement, run right after its Prepare.
//	Execute, portals    Session.Execute → Cursor (pulled row by row; several
//	                    may be open; Tag after io.EOF; Notices for warnings).
//	transactions        Begin(TxOptions{Isolation, ReadOnly, Implicit}),
//	                    Commit, Rollback; every Execute runs inside one.
//	                    READ ONLY is enforced by the engine for DML/DDL
//	                    (25006); the gateway refuses COPY FROM itself.
//	COPY FROM STDIN     Session.CopyIn → CopyInSink (Columns, Write chunks,
//	                    Finish/Abort); the gateway parses text/CSV.
//	COPY TO STDOUT      nothing new: the gateway Prepares and Executes the
//	                    query (`SELECT cols FROM t` for the table form).
//	session functions   read *Settings from each request: CurrentSetting,
//	                    CurrentSchema, CurrentSchemas, User, Database,
//	                    Version, All (pg_settings, SHOW ALL), Location
//	                    (TimeZone), SearchPath.
//	pg_catalog etc.     the engine's virtual tables; package gatewaytest has
//	                    the psql 15 fixtures to test them.
//	LISTEN/NOTIFY       answered here (notify.go): a per-server hub of
//	                    listening sessions; the engine's pg_notify reaches
//	                    it through ExecuteRequest.Notify.
//	pg_prepared_stmts   ExecuteRequest.PreparedStatements lists the
//	                    connection's named statements for the engine.
//	cancel, timeout     ctx of Prepare/Execute/Next/CopyIn is cancelled;
//	                    return promptly (the gateway reports 57014).
//	errors              return *errcode.Error (SQLSTATE, RS code, hint,
//	                    Position); anything else becomes RS-9000.
//
// # Why not psql-wire
//
// ARCHITECTURE.md names jeroenrinzema/psql-wire. We read its v0.20 source: it
// has a cancel hook, portal suspension and a transaction-status callback,
// but no COPY TO, and its model is a parse callback per query whose handler
// writes rows into a writer. The seam we need is different: Prepare with the
// client's parameter OIDs and the engine's inferred types, cursors pulled
// across Execute calls, the implicit transaction block that ends at Sync,
// 25P02 for every statement of a failed block, COPY FROM parsed here and
// streamed to the engine in bounded chunks inside the transaction, and
// session state (SET/SHOW/DISCARD ALL) owned by the gateway. Expressing that
// through psql-wire's callbacks meant bypassing most of it, so the message
// loop is written here on jackc/pgx/v5/pgproto3's message types (correct,
// fuzzed framing for every message). The protocol state machine left to
// write is small, and it is tested here against real clients.
//
// # Transaction state machine
//
//	        BEGIN                       error
//	┌──────┐──────▶┌───────────┐──────────────▶┌────────┐
//	│ idle │       │ in block  │               │ failed │ every statement but
//	│ (I)  │◀──────│   (T)     │               │  (E)   │ COMMIT/ROLLBACK → 25P02
//	└──────┘COMMIT/└───────────┘               └────────┘
//	   ▲   ROLLBACK      ▲                          │ COMMIT or ROLLBACK
//	   └─────────────────┼──────────────────────────┘ (both roll back)
//	                     └── ROLLBACK TO SAVEPOINT ─┘
//
// Savepoints (savepoint.go): the gateway keeps their names and settings
// snapshots and tells a SavepointSession depths. With a savepoint open, an
// error keeps the engine's transaction (failed) so that ROLLBACK TO can
// resume it; without one, the engine's transaction is rolled back at once.
//
// Outside a block, the statements of one Query message, or of one extended
// batch up to Sync, run in an implicit transaction that the gateway begins
// before the first engine statement and commits at the end (rolls back on
// error), as PostgreSQL does. The letter is ReadyForQuery's status byte.
//
// # Values
//
// Text output and input use the session's DateStyle, IntervalStyle,
// TimeZone and extra_float_digits (text.go); binary formats are PostgreSQL's send/recv
// formats (binary.go). Binary int2/int4/int8 parameters are widened (or
// range-checked) to the statement's parameter type, as clients such as
// psycopg 3 send Python ints as int2. RowDescription carries the table OID
// and attribute number the engine reports for plain column references
// (Statement.Origins), and regclass/regtype columns keep their own type
// OIDs: the engine sends them as RegValues, a name in text and an oid in
// binary.
//
// # Errors
//
// Every error a client sees is an ErrorResponse built from an *errcode.Error:
// SQLSTATE in code, the RS code and slug in detail, next steps in hint, and
// the query position when known. A panic in a handler is recovered, logged
// with its stack, and answered with XX000 / RS-9000; the connection and the
// server go on.
package gateway
