package errcode

// RS-1000–1499: connectors (source / sink ingestion).
var (
	ConnectorUnreachable = Register("RS-1000", "connector.upstream_unreachable", "08001",
		"Check the connection string of the source or POSTGRES sink (host, port, database, user, password, sslmode) and that the server accepts connections from this host; a running source or sink retries on its own.")
	ConnectorAuthenticationFailed = Register("RS-1001", "connector.authentication_failed", "28000",
		"Check the user and password in the connection string of the source or POSTGRES sink, and that pg_hba.conf allows the connection for that user (a source needs host replication ... or host <db> ...; a sink host <db> ...).")
	ConnectorSchemaDrift = Register("RS-1002", "connector.schema_drift", "55000",
		"The upstream table changed incompatibly (a column was dropped, renamed or changed type, or the primary key changed): the source is BLOCKED and consumes nothing more. Revert the upstream change, or DROP SOURCE ... CASCADE and create it again to re-copy the tables.")
	ConnectorDecodeError = Register("RS-1003", "connector.decode_error", "22P02",
		"An upstream value could not be converted to its column's type; the source is BLOCKED at that change. Fix or remove the upstream value, or re-create the source.")
	// WatermarkRequired refuses, at CREATE MATERIALIZED VIEW, a streaming
	// window function (TUMBLE, HOP, SESSION) whose windows no watermark
	// closes, unless the view opts in to windows that never close.
	WatermarkRequired = Register("RS-1005", "connector.watermark_required", "55000",
		"Declare a watermark on the table's time column (CREATE TABLE t (...) WITH (watermark = 'ts - interval ''5 seconds''')), or accept windows that never close, whose state grows with the input: CREATE MATERIALIZED VIEW v WITH (windows = 'never_close') AS ...")
	ConnectorNoPrimaryKey = Register("RS-1006", "source.no_stable_identity", "0A000",
		"Every mirrored upstream table needs a PRIMARY KEY (REPLICA IDENTITY DEFAULT): add one upstream (ALTER TABLE ... ADD PRIMARY KEY), or remove the table from the publication.")
	ConnectorUnsupportedType = Register("RS-1007", "connector.unsupported_type", "0A000",
		"The upstream column's type has no RockStream equivalent yet: remove the table from the publication, or publish a column list without that column (CREATE PUBLICATION ... FOR TABLE t (a, b)).")
	ConnectorPublicationMissing = Register("RS-1008", "connector.publication_missing", "42704",
		"Create the publication upstream (CREATE PUBLICATION p FOR TABLE t1, t2 or FOR ALL TABLES) with a table in it, or name an existing one: SELECT pubname FROM pg_publication lists them.")
	ConnectorWalLevel = Register("RS-1012", "connector.wal_level_not_logical", "55000",
		"Set wal_level = logical on the upstream server (ALTER SYSTEM SET wal_level = logical, then restart it); logical replication needs it.")
	ConnectorReplicationRefused = Register("RS-1013", "connector.replication_refused", "55000",
		"The upstream server refused logical replication: the user needs the REPLICATION attribute (ALTER ROLE u REPLICATION) and a free replication slot and WAL sender (max_replication_slots, max_wal_senders).")
	ConnectorTransactionTooLarge = Register("RS-1014", "connector.transaction_too_large", "54000",
		"An upstream transaction changed more rows than the source applies in one commit; the source is BLOCKED before it. Split such transactions upstream.")
	// SourceOffsetMoved refuses a source's commit that does not continue
	// its stored offset (the source re-reads it and goes on from there).
	SourceOffsetMoved = Register("RS-1040", "source.offset_moved", "40001",
		"The source lost track of one of its commits (a dropped message); it reads its stored offset again and continues from there by itself. Nothing to do unless this repeats; then check the server log.")
	ConnectorKafkaUnavailable = Register("RS-1020", "connector.kafka_unavailable", "08001",
		"Check the KAFKA source's brokers (host:port, reachable from this host) and that its topic exists; the source retries on its own, and rockstream_catalog.sources shows its last error.")
	ConnectorOptionUnsupported = Register("RS-1021", "connector.option_unsupported", "0A000",
		"Remove or correct the named option: a KAFKA sink takes brokers, topic, format ('upsert' or 'debezium') and key (the view's key columns, comma-separated); a POSTGRES sink takes connection, table, mode ('upsert' or 'append') and key (upsert only); docs/sources.md lists what each means.")
	ConnectorKafkaSinkFailed = Register("RS-1022", "connector.kafka_sink_failed", "55000",
		"The KAFKA sink could not deliver the view's changes; rockstream_catalog.sinks shows its state and last error. A broker outage is retried on its own; a view whose key columns are not unique, or whose change history no longer reaches the sink's last delivered epoch (RS-2005), needs the sink dropped and created again (the topic then receives a fresh snapshot).")
	ConnectorSinkTableMissing = Register("RS-1023", "connector.sink_table_missing", "42P01",
		"A POSTGRES sink writes into an existing table: create it in the target database first (its columns named as the view's, plus rockstream_epoch bigint and rockstream_diff bigint for mode 'append'; a primary key or unique index on the key columns for mode 'upsert'), or correct the table option. docs/sources.md shows an example.")
	ConnectorSinkTableIncompatible = Register("RS-1024", "connector.sink_table_incompatible", "42804",
		"The sink's table cannot take the view's rows as they are: give it a column of each view column's name whose type PostgreSQL assigns the view's type to (as INSERT ... SELECT would), plus rockstream_epoch and rockstream_diff (bigint) for mode 'append', and a primary key or unique index on exactly the key columns for mode 'upsert'.")
	ConnectorSinkTableNotEmpty = Register("RS-1025", "connector.sink_table_not_empty", "55000",
		"An upsert POSTGRES sink starts by writing the view's rows into an empty table, so that the table ends up equal to the view: TRUNCATE the table (or name a new one) and create the sink again.")
	ConnectorPostgresSinkFailed = Register("RS-1026", "connector.postgres_sink_failed", "55000",
		"The POSTGRES sink could not deliver the view's changes; rockstream_catalog.sinks shows its state and last error. An unreachable database is retried on its own; a view whose key columns are not unique, a row the table refuses (a constraint, a NULL key), or a view whose change history no longer reaches the sink's last delivered epoch (RS-2005) needs the cause fixed, or the sink dropped and created again into an empty table.")
)
