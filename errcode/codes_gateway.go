package errcode

// Gateway codes: the pgwire server, sessions, transactions, COPY and auth.
// RS-2003 and RS-2021 are numbers the spec names (§12.6, §14.14); the rest
// live in RS-2400–2499, the range reserved for gateway expansion. RS-2400 and
// RS-2401 are the access-control codes (codes_roles.go).
var (
	SerializableNotSupported = Register("RS-2003", "isolation.serializable_not_supported", "0A000",
		"Use REPEATABLE READ (one snapshot for the whole transaction) or READ COMMITTED; SERIALIZABLE needs cross-shard conflict detection, which RockStream does not provide.")
	CopyMalformedStatement = Register("RS-2021", "copy.malformed_stdin_statement", "42601",
		"Write COPY as `COPY table [(col, ...)] FROM STDIN [WITH (FORMAT text|csv, ...)]` or `COPY table|(query) TO STDOUT [WITH (FORMAT text|csv)]`; files and programs on the server are not supported.")

	AuthFailed = Register("RS-2410", "auth.password_failed", "28P01",
		"Check the user name and password; a superuser sets passwords with CREATE ROLE name LOGIN PASSWORD '...' or ALTER ROLE name PASSWORD '...'.")
	AuthCleartextNeedsTLS = Register("RS-2411", "auth.cleartext_requires_tls", "28000",
		"Connect with sslmode=require (the server must be started with a TLS certificate), or let the client use SCRAM-SHA-256.")
	ListenWithoutAuth = Register("RS-2412", "server.non_loopback_without_auth", "28000",
		"Start with --auth=password (and --tls-cert/--tls-key) before listening on a non-loopback address for pgwire or HTTP, or listen on 127.0.0.1.")
	TooManyConnections = Register("RS-2413", "server.too_many_connections", "53300",
		"Close idle connections or use a connection pool; raise the server's connection limit if the machine has room.")

	UnknownParameter = Register("RS-2420", "session.unknown_parameter", "42704",
		"Check the parameter name with SHOW ALL; RockStream accepts the parameters PostgreSQL clients commonly set.")
	InvalidParameterValue = Register("RS-2421", "session.invalid_parameter_value", "22023",
		"Use one of the values the parameter accepts (see SHOW ALL and the PostgreSQL documentation for that parameter).")
	TransactionAborted = Register("RS-2422", "transaction.aborted", "25P02",
		"An earlier statement in this transaction failed; run ROLLBACK, then retry the transaction.")
	NoTransactionInProgress = Register("RS-2423", "transaction.none_in_progress", "25P01",
		"Nothing to do: COMMIT and ROLLBACK only matter after BEGIN.")
	TransactionInProgress = Register("RS-2424", "transaction.already_in_progress", "25001",
		"Nothing to do: the earlier BEGIN still holds; COMMIT or ROLLBACK it first if a new transaction was intended.")
	QueryCanceled = Register("RS-2425", "query.canceled", "57014",
		"The statement was cancelled by a cancel request; rerun it if that was not intended.")
	ProtocolViolation = Register("RS-2426", "protocol.violation", "08P01",
		"The client sent a message the server did not expect; upgrade the driver or report the sequence of messages.")
	UnknownPreparedStatement = Register("RS-2427", "protocol.unknown_prepared_statement", "26000",
		"Prepare the statement (Parse) on this connection before binding it; prepared statements do not survive reconnects or DISCARD ALL.")
	UnknownPortal = Register("RS-2428", "protocol.unknown_portal", "34000",
		"Bind the portal before executing it; portals end at the end of their transaction.")
	DuplicatePreparedStatement = Register("RS-2429", "protocol.duplicate_prepared_statement", "42P05",
		"Close (DEALLOCATE) the existing statement first, or use another name.")
	InvalidParameterEncoding = Register("RS-2430", "protocol.invalid_parameter_value", "22P03",
		"The bound parameter does not match its declared type; check the value and the parameter's type (cast the placeholder, e.g. $1::int8).")
	ParameterCountMismatch = Register("RS-2431", "protocol.parameter_count_mismatch", "08P01",
		"Bind exactly as many parameters as the statement has placeholders.")
	MultipleStatementsInPrepare = Register("RS-2432", "protocol.multiple_statements_in_prepare", "42601",
		"Send one statement per Parse; use a simple query for several statements at once.")
	ReadOnlyTransaction = Register("RS-2434", "transaction.read_only", "25006",
		"The transaction was started READ ONLY (or default_transaction_read_only is on); start a read-write transaction for writes.")
	SavepointOutsideBlock = Register("RS-2435", "transaction.savepoint_outside_block", "25P01",
		"Savepoints exist only inside BEGIN ... COMMIT; run BEGIN first (a multi-statement query without BEGIN is not a transaction block).")
	UnknownSavepoint = Register("RS-2436", "transaction.unknown_savepoint", "3B001",
		"Check the name: ROLLBACK TO and RELEASE need a savepoint set earlier in this transaction and not yet released or rolled back past.")
	ExecuteParameterCount = Register("RS-2437", "session.execute_parameter_count", "42601",
		"Pass EXECUTE exactly one argument per parameter of the PREPARE (see pg_prepared_statements.parameter_types).")
	DDLNotTransactional = Register("RS-2438", "transaction.ddl_not_transactional", "01000",
		"DDL takes effect when it runs: a later ROLLBACK or ROLLBACK TO SAVEPOINT does not undo it. Run DDL outside transaction blocks, or undo it with the opposite statement.")
	GatewayUnsupported = Register("RS-2433", "gateway.unsupported_feature", "0A000",
		"This PostgreSQL feature is not supported by RockStream's gateway; see docs/sql.md for what is.")

	CopyColumnCountMismatch = Register("RS-2440", "copy.column_count_mismatch", "22P04",
		"Every COPY line needs exactly one field per target column; check the delimiter and the column list.")
	CopyInvalidValue = Register("RS-2441", "copy.invalid_value", "22P02",
		"Fix the value on the reported line (text format: \\N is NULL, tab separates fields; CSV: quote fields that hold the delimiter).")
	CopyClientFailed = Register("RS-2442", "copy.client_failed", "57014",
		"The client aborted the COPY (CopyFail); nothing was written. Fix the client-side error and rerun the COPY.")
	CopyBadBinaryFormat = Register("RS-2443", "copy.bad_binary_format", "22P04",
		"FORMAT binary input must be PostgreSQL's binary COPY format (signature, flags, tuples, trailer) with one field per target column in the column's binary representation; check the client's column types.")
	AdminShutdown = Register("RS-2466", "session.terminated", "57P01",
		"An administrator ended this session with pg_terminate_backend; reconnect, and ask them why if it was not expected.")
	SignalBackendDenied = Register("RS-2467", "session.signal_denied", "42501",
		"Only superusers may cancel or terminate other roles' sessions; connect as a superuser or as the session's role.")
)
