package sysrel

import (
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// definitions lists every system relation with its columns. The order is the
// relations' identity: relation n of this list gets object number n, which
// plans, catalog snapshots and pg_class oids name, so new relations go at the
// end.
func definitions() []Relation {
	t, i8, i4, i2, b, oid, name, f4 := types.TText, types.TInt8, types.TInt4, types.TInt2, types.TBool, types.TOID, types.TName, types.TFloat4
	textArr, i2Arr, oidArr, ts := types.ArrayOf(types.TText), types.ArrayOf(types.TInt2), types.ArrayOf(types.TOID), types.TTimestampTZ
	// regtypeType is regtype (pg_prepared_statements.parameter_types' element).
	regtypeType := types.Type{Kind: types.KindRegType, Typmod: -1}
	return []Relation{
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "tables", Columns: columns(
			"name", t, "kind", t, "columns", i8, "primary_key", t, "insert_only", b)}},
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "views", Columns: columns(
			"name", t, "kind", t, "definition", t, "state", t, "rows", i8, "state_rows", i8, "state_bytes", i8,
			"frontier", i8, "lag_epochs", i8, "error", t, "behind_inputs", b,
			"freshness_target", types.TInterval, "freshness_lag", types.TInterval, "freshness_met", b, "freshness_reason", t)}},
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "sources", Columns: columns(
			"name", t, "kind", t, "definition", t, "state", t, "slot", t, "upstream_lsn", t, "committed_lsn", t,
			"lag_bytes", i8, "rows", i8, "errors", i8, "error", t, "lag_records", i8, "bad_records", i8)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_namespace", Columns: columns(
			"oid", oid, "nspname", name, "nspowner", oid, "nspacl", types.ArrayOf(t))}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_class", Columns: columns(
			"oid", oid, "relname", name, "relnamespace", oid, "reltype", oid, "relowner", oid, "relam", oid,
			"relkind", t, "relnatts", i2, "relhasindex", b, "relpersistence", t, "relispartition", b,
			"reltuples", f4, "relpages", i4, "relchecks", i2, "relhasrules", b, "relhastriggers", b,
			"relrowsecurity", b, "relforcerowsecurity", b, "relispopulated", b, "relreplident", t,
			"reloftype", oid, "reltablespace", oid, "relacl", textArr, "reltoastrelid", oid, "reloptions", textArr,
			"relpartbound", t, "relhassubclass", b, "relfilenode", oid, "relisshared", b, "relallvisible", i4)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_attribute", Columns: columns(
			"attrelid", oid, "attname", name, "atttypid", oid, "attnum", i2, "atttypmod", i4, "attnotnull", b,
			"attisdropped", b, "atthasdef", b, "attidentity", t, "attgenerated", t, "attlen", i2, "attcollation", oid,
			"attstorage", t, "attcompression", t, "attstattarget", i4, "attndims", i4, "atthasmissing", b, "attislocal", b,
			"attinhcount", i4, "attacl", textArr, "attoptions", textArr, "attfdwoptions", textArr, "attbyval", b, "attalign", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_type", Columns: columns(
			"oid", oid, "typname", name, "typnamespace", oid, "typlen", i2, "typtype", t, "typelem", oid,
			"typarray", oid, "typbasetype", oid, "typtypmod", i4, "typnotnull", b, "typowner", oid, "typbyval", b,
			"typcategory", t, "typispreferred", b, "typisdefined", b, "typdelim", t, "typrelid", oid, "typinput", t,
			"typoutput", t, "typreceive", t, "typsend", t, "typalign", t, "typstorage", t, "typndims", i4,
			"typcollation", oid, "typdefault", t, "typacl", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_am", Columns: columns("oid", oid, "amname", name, "amhandler", t, "amtype", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_database", Columns: columns("oid", oid, "datname", name, "datdba", oid, "encoding", i4, "datlocprovider", t,
			"datistemplate", b, "datallowconn", b, "datconnlimit", i4, "datfrozenxid", i8, "datminmxid", i8, "dattablespace", oid,
			"datcollate", t, "datctype", t, "daticulocale", t, "datcollversion", t, "datacl", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_roles", Columns: roleColumns()}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_authid", Columns: roleColumns()}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_user", Columns: columns("usename", name, "usesysid", oid, "usecreatedb", b, "usesuper", b, "userepl", b, "usebypassrls", b,
			"passwd", t, "valuntil", ts, "useconfig", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_auth_members", Columns: columns("roleid", oid, "member", oid, "grantor", oid, "admin_option", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_index", Columns: columns("indexrelid", oid, "indrelid", oid, "indnatts", i2, "indnkeyatts", i2, "indisunique", b,
			"indisprimary", b, "indisexclusion", b, "indimmediate", b, "indisclustered", b, "indisvalid", b,
			"indcheckxmin", b, "indisready", b, "indislive", b, "indisreplident", b, "indkey", i2Arr,
			"indcollation", oidArr, "indclass", oidArr, "indoption", i2Arr, "indexprs", t, "indpred", t, "indnullsnotdistinct", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_constraint", Columns: columns("oid", oid, "conname", name, "connamespace", oid, "contype", t, "condeferrable", b,
			"condeferred", b, "convalidated", b, "conrelid", oid, "contypid", oid, "conindid", oid, "conparentid", oid,
			"confrelid", oid, "confupdtype", t, "confdeltype", t, "confmatchtype", t, "conislocal", b, "coninhcount", i4,
			"connoinherit", b, "conkey", i2Arr, "confkey", i2Arr, "conbin", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_attrdef", Columns: columns("oid", oid, "adrelid", oid, "adnum", i2, "adbin", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_description", Columns: columns("objoid", oid, "classoid", oid, "objsubid", i4, "description", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_shdescription", Columns: columns("objoid", oid, "classoid", oid, "description", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_settings", Columns: columns("name", t, "setting", t, "unit", t, "category", t, "short_desc", t, "extra_desc", t,
			"context", t, "vartype", t, "source", t, "min_val", t, "max_val", t, "enumvals", textArr, "boot_val", t,
			"reset_val", t, "sourcefile", t, "sourceline", i4, "pending_restart", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_proc", Columns: columns("oid", oid, "proname", name, "pronamespace", oid, "proowner", oid, "prolang", oid,
			"procost", f4, "prorows", f4, "provariadic", oid, "prosupport", t, "prokind", t, "prosecdef", b,
			"proleakproof", b, "proisstrict", b, "proretset", b, "provolatile", t, "proparallel", t, "pronargs", i2,
			"pronargdefaults", i2, "prorettype", oid, "proargtypes", oidArr, "proallargtypes", oidArr, "proargmodes", textArr,
			"proargnames", textArr, "prosrc", t, "probin", t, "proconfig", textArr, "proacl", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_tables", Columns: columns("schemaname", name, "tablename", name, "tableowner", name, "tablespace", name,
			"hasindexes", b, "hasrules", b, "hastriggers", b, "rowsecurity", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_views", Columns: columns("schemaname", name, "viewname", name, "viewowner", name, "definition", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_matviews", Columns: columns("schemaname", name, "matviewname", name, "matviewowner", name, "tablespace", name,
			"hasindexes", b, "ispopulated", b, "definition", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_sequence", Columns: columns("seqrelid", oid, "seqtypid", oid, "seqstart", i8, "seqincrement", i8, "seqmax", i8,
			"seqmin", i8, "seqcache", i8, "seqcycle", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_sequences", Columns: columns("schemaname", name, "sequencename", name, "sequenceowner", name, "data_type", t,
			"start_value", i8, "min_value", i8, "max_value", i8, "increment_by", i8, "cycle", b, "cache_size", i8, "last_value", i8)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_prepared_statements", Columns: columns("name", t, "statement", t, "prepare_time", ts, "parameter_types", types.ArrayOf(regtypeType),
			"from_sql", b, "generic_plans", i8, "custom_plans", i8)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_enum", Columns: columns("oid", oid, "enumtypid", oid, "enumsortorder", f4, "enumlabel", name)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_range", Columns: columns("rngtypid", oid, "rngsubtype", oid, "rngmultitypid", oid, "rngcollation", oid,
			"rngsubopc", oid, "rngcanonical", t, "rngsubdiff", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_inherits", Columns: columns("inhrelid", oid, "inhparent", oid, "inhseqno", i4, "inhdetachpending", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_collation", Columns: columns("oid", oid, "collname", name, "collnamespace", oid, "collowner", oid, "collprovider", t,
			"collisdeterministic", b, "collencoding", i4, "collcollate", t, "collctype", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_tablespace", Columns: columns("oid", oid, "spcname", name, "spcowner", oid, "spcacl", textArr, "spcoptions", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_extension", Columns: columns("oid", oid, "extname", name, "extowner", oid, "extnamespace", oid, "extrelocatable", b,
			"extversion", t, "extconfig", oidArr, "extcondition", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_foreign_table", Columns: columns("ftrelid", oid, "ftserver", oid, "ftoptions", textArr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_policy", Columns: columns("oid", oid, "polname", name, "polrelid", oid, "polcmd", t, "polpermissive", b,
			"polroles", oidArr, "polqual", t, "polwithcheck", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_statistic_ext", Columns: columns("oid", oid, "stxrelid", oid, "stxname", name, "stxnamespace", oid, "stxowner", oid,
			"stxstattarget", i4, "stxkeys", i2Arr, "stxkind", textArr, "stxexprs", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_publication", Columns: columns("oid", oid, "pubname", name, "pubowner", oid, "puballtables", b, "pubinsert", b,
			"pubupdate", b, "pubdelete", b, "pubtruncate", b, "pubviaroot", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_publication_namespace", Columns: columns("oid", oid, "pnpubid", oid, "pnnspid", oid)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_publication_rel", Columns: columns("oid", oid, "prpubid", oid, "prrelid", oid, "prqual", t, "prattrs", i2Arr)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_trigger", Columns: columns("oid", oid, "tgrelid", oid, "tgparentid", oid, "tgname", name, "tgfoid", oid, "tgtype", i2,
			"tgenabled", t, "tgisinternal", b, "tgconstrrelid", oid, "tgconstrindid", oid, "tgconstraint", oid)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_rewrite", Columns: columns("oid", oid, "rulename", name, "ev_class", oid, "ev_type", t, "ev_enabled", t, "is_instead", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_depend", Columns: columns("classid", oid, "objid", oid, "objsubid", i4, "refclassid", oid, "refobjid", oid,
			"refobjsubid", i4, "deptype", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_language", Columns: columns("oid", oid, "lanname", name, "lanowner", oid, "lanispl", b, "lanpltrusted", b)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_event_trigger", Columns: columns("oid", oid, "evtname", name, "evtevent", name, "evtowner", oid, "evtfoid", oid, "evtenabled", t)}},
		// PostgreSQL 15's columns; client_addr (inet) and backend_xid,
		// backend_xmin (xid) are text.
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_stat_activity", Columns: columns("datid", oid, "datname", name, "pid", i4, "leader_pid", i4,
			"usesysid", oid, "usename", name, "application_name", t, "client_addr", t, "client_hostname", t, "client_port", i4,
			"backend_start", ts, "xact_start", ts, "query_start", ts, "state_change", ts, "wait_event_type", t, "wait_event", t,
			"state", t, "backend_xid", t, "backend_xmin", t, "query_id", i8, "query", t, "backend_type", t)}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_stat_progress_copy", Columns: columns("pid", i4, "datid", oid, "datname", name, "relid", oid,
			"command", t, "type", t, "bytes_processed", i8, "bytes_total", i8, "tuples_processed", i8, "tuples_excluded", i8)}},
		// Long-running work of every session and shard: a COPY's rows so
		// far; rows_total is NULL when unknown (COPY FROM STDIN); percent,
		// a backfill's estimated share of its inputs fed.
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "progress", Columns: columns("pid", i4, "kind", t, "relation", t, "phase", t,
			"rows_done", i8, "rows_total", i8, "bytes_done", i8, "started", ts, "rows_per_second", i8, "percent", f4)}},
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "index_columns", Columns: columns(
			"indexrelid", oid, "indrelid", oid, "indisprimary", b, "attnum", i2, "ord", i4)}},
		{Schema: SchemaInfo, Rel: &catalog.Relation{Name: "tables", Columns: columns("table_catalog", name, "table_schema", name, "table_name", name, "table_type", t,
			"self_referencing_column_name", name, "reference_generation", t, "user_defined_type_catalog", name,
			"user_defined_type_schema", name, "user_defined_type_name", name, "is_insertable_into", t, "is_typed", t, "commit_action", t)}},
		{Schema: SchemaInfo, Rel: &catalog.Relation{Name: "columns", Columns: columns("table_catalog", name, "table_schema", name, "table_name", name, "column_name", name,
			"ordinal_position", i4, "column_default", t, "is_nullable", t, "data_type", t, "character_maximum_length", i4,
			"character_octet_length", i4, "numeric_precision", i4, "numeric_precision_radix", i4, "numeric_scale", i4,
			"datetime_precision", i4, "interval_type", t, "udt_catalog", name, "udt_schema", name, "udt_name", name,
			"dtd_identifier", name, "is_self_referencing", t, "is_identity", t, "identity_generation", t, "is_generated", t,
			"generation_expression", t, "is_updatable", t, "collation_name", name)}},
		{Schema: SchemaInfo, Rel: &catalog.Relation{Name: "schemata", Columns: columns("catalog_name", name, "schema_name", name, "schema_owner", name,
			"default_character_set_catalog", name, "default_character_set_schema", name, "default_character_set_name", name, "sql_path", t)}},
		{Schema: SchemaInfo, Rel: &catalog.Relation{Name: "views", Columns: columns("table_catalog", name, "table_schema", name, "table_name", name, "view_definition", t,
			"check_option", t, "is_updatable", t, "is_insertable_into", t, "is_trigger_updatable", t,
			"is_trigger_deletable", t, "is_trigger_insertable_into", t)}},
		{Schema: SchemaInfo, Rel: &catalog.Relation{Name: "table_constraints", Columns: columns("constraint_catalog", name, "constraint_schema", name, "constraint_name", name,
			"table_catalog", name, "table_schema", name, "table_name", name, "constraint_type", t, "is_deferrable", t,
			"initially_deferred", t, "enforced", t, "nulls_distinct", t)}},
		{Schema: SchemaInfo, Rel: &catalog.Relation{Name: "key_column_usage", Columns: columns("constraint_catalog", name, "constraint_schema", name, "constraint_name", name,
			"table_catalog", name, "table_schema", name, "table_name", name, "column_name", name, "ordinal_position", i4,
			"position_in_unique_constraint", i4)}},
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "sinks", Columns: columns(
			"name", t, "kind", t, "view", t, "topic", t, "format", t, "definition", t, "state", t,
			"delivered_epoch", i8, "records", i8, "transactions", i8, "errors", i8, "error", t, "target", t, "lag_epochs", i8)}},
		// Appended last: system relation ids are positions in this list.
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_indexes", Columns: columns("schemaname", name, "tablename", name, "indexname", name,
			"tablespace", name, "indexdef", t)}},
	}
}

func roleColumns() []catalog.Column {
	b, oid, name := types.TBool, types.TOID, types.TName
	return columns("oid", oid, "rolname", name, "rolsuper", b, "rolinherit", b, "rolcreaterole", b, "rolcreatedb", b,
		"rolcanlogin", b, "rolreplication", b, "rolconnlimit", types.TInt4, "rolpassword", types.TText,
		"rolvaliduntil", types.TTimestampTZ, "rolbypassrls", b, "rolconfig", types.ArrayOf(types.TText))
}
