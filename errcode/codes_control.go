package errcode

// RS-4000–4099: control plane; RS-1500–1999: schema / DDL validation.
var (
	CatalogCorruptCode = Register("RS-4003", "control.catalog_corrupt", "XX001",
		"The control DB holds a catalog record this binary cannot read. Restore the storage directory from a backup or report the bug with `rockstream debug slate` output.")
	CatalogFormatCode = Register("RS-5050", "storage.catalog_format_incompatible", "XX000",
		"The catalog was written by a newer RockStream. Run the newer binary, or restore a backup taken with this version.")
	DuplicateObject = Register("RS-1500", "ddl.duplicate_object", "42P07",
		"Choose another name, DROP the existing object first, or use IF NOT EXISTS / OR REPLACE.")
	UndefinedObject = Register("RS-1501", "ddl.undefined_object", "42P01",
		"Check the name (\\d in psql lists relations), or use IF EXISTS.")
	DependentObjects = Register("RS-1502", "ddl.dependent_objects_exist", "2BP01",
		"Drop the dependent views first, or add CASCADE to drop them too.")
	WrongObjectType = Register("RS-1503", "ddl.wrong_object_type", "42809",
		"Use the DROP/ALTER statement that matches the object's kind (TABLE, VIEW, MATERIALIZED VIEW, SOURCE).")
	PrimaryKeyRequired = Register("RS-1504", "ddl.primary_key_required", "0A000",
		"Declare a PRIMARY KEY, or create the table WITH (insert_only = true) if rows are never updated or deleted.")
	InvalidTableDefinition = Register("RS-1505", "ddl.invalid_table_definition", "42P16",
		"Fix the column or constraint definition named in the message.")
	IncompatibleEvolution = Register("RS-6001", "schema.incompatible_evolution", "0A000",
		"Only compatible changes are supported: ADD COLUMN that is nullable or has a DEFAULT. Create a new table and copy the data for other changes.")
)

// Namespaces.
var (
	UndefinedDatabase = Register("RS-4004", "control.undefined_namespace", "3D000",
		"Connect to the database \"default\" (the embedded server's namespace), e.g. psql -d default.")
)

// Notices.
var (
	DDLNotice = Register("RS-1506", "ddl.notice", "00000",
		"Nothing to do: this is information about a DDL statement that was skipped or changed something implicitly.")
)

// Subscriptions (gateway range).
var (
	SubscriberTooSlow = Register("RS-2020", "subscribe.subscriber_too_slow", "53000",
		"Read the subscription faster (or from a less busy view); reconnect and SUBSCRIBE again, WITH (SNAPSHOT) to resynchronise.")
)

// Process start-up.
var (
	StorageUnavailable = Register("RS-3101", "runtime.storage_unavailable", "58030",
		"Check that --storage points to a writable directory (or a reachable bucket with valid credentials).")
	ListenFailed = Register("RS-3102", "runtime.listen_failed", "08006",
		"Another process may use the port: pick another with --listen/--http (or ROCKSTREAM_LISTEN/ROCKSTREAM_HTTP).")
	StoreInUse = Register("RS-3103", "runtime.store_in_use", "55006",
		"One server at a time may own a storage directory or prefix. Stop the other server (the message names its pid and host), point --storage elsewhere, or start with --takeover if you are sure the other server is gone.")
)

// Columns.
var (
	UndefinedColumnCode = Register("RS-1507", "ddl.undefined_column", "42703",
		"Check the column name (\\d table in psql lists the columns).")
	DuplicateColumnCode = Register("RS-1508", "ddl.duplicate_column", "42701",
		"Name each column once.")
)

// Configuration.
var (
	InvalidConfiguration = Register("RS-5500", "resource.invalid_configuration", "22023",
		"Fix the flag or ROCKSTREAM_* variable named in the message; `rockstream start --help` lists the accepted values.")
)

// Inline views (spec §4.3).
var (
	DependentInlineView = Register("RS-1010", "view.dependent_inline_view_exists", "2BP01",
		"Drop or replace the inline view first (DROP VIEW, CREATE OR REPLACE VIEW), or add CASCADE to drop it too.")
	InlineViewCycle = Register("RS-1011", "view.inline_cycle_detected", "42P17",
		"A view cannot read itself, directly or through other views: define it over the relations underneath instead.")
	// ViewBuildFailed is a materialized view whose circuit cannot be built
	// from its stored definition (e.g. a store written by an older build
	// that let what it reads be dropped): the view is in the failed state,
	// everything else keeps running.
	ViewBuildFailed = Register("RS-1514", "view.build_failed", "55000",
		"The view is not maintained. DROP MATERIALIZED VIEW it, or make what it reads exist again and run ALTER MATERIALIZED VIEW ... RECOMPILE.")
	// ViewBackfillAbandoned answers a statement waiting for a view's
	// backfill when another statement dropped or recompiled the view
	// before the backfill finished.
	ViewBackfillAbandoned = Register("RS-1519", "view.backfill_abandoned", "55006",
		"Another statement dropped or recompiled the view while it was being filled; run SHOW VIEW STATUS and create the view again if you still need it.")
)

// Sequences (nextval/currval/setval, serial, identity).
var (
	SequenceLimitReached = Register("RS-1509", "ddl.sequence_limit_reached", "2200H",
		"The sequence has no more values: ALTER SEQUENCE ... RESTART, setval() it back, or recreate it with a larger MAXVALUE (or CYCLE).")
	SequenceNotYetDefined = Register("RS-1510", "ddl.sequence_currval_undefined", "55000",
		"Call nextval() on the sequence in this session before currval() or lastval().")
	SequenceValueOutOfBounds = Register("RS-1511", "ddl.sequence_value_out_of_bounds", "22003",
		"Pass a value between the sequence's MINVALUE and MAXVALUE.")
	GeneratedAlways = Register("RS-1512", "ddl.identity_generated_always", "428C9",
		"Leave the column out of the INSERT (or write DEFAULT); the identity sequence assigns it.")
	SchemasNotSupported = Register("RS-1513", "ddl.schemas_not_supported", "0A000",
		"Name objects as schema.name inside the current database (a database is the unit of isolation, so database.schema.name is refused), and keep the public schema: drop the objects in it instead.")
	InvalidSchemaName = Register("RS-1515", "ddl.invalid_schema_name", "42939",
		"Choose a schema name that does not start with pg_ (reserved for system schemas).")
)

// Dead-letter tables of late rows (WITH (late_rows = 'table')).
var (
	LateRowsTableInvalid = Register("RS-1530", "ddl.late_rows_table_invalid", "22023",
		"Name an existing ordinary table without a primary key, CHECK constraints or watermark whose columns match the watermarked table's by position and type, or write late_rows = 'drop'.")
	LateRowsTableInUse = Register("RS-1531", "ddl.late_rows_table_in_use", "2BP01",
		"Drop the watermarked table that names it first (or give it late_rows = 'drop' with ALTER TABLE ... SET), then change or drop the dead-letter table.")
)
