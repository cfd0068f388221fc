package syscat

import (
	"strings"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// The pg_catalog relations psql 15 and the drivers (pgjdbc, SQLAlchemy,
// Grafana) read. OIDs are consistent across them: a user relation's oid is
// RelationOID, its primary-key index IndexOID, the constraint ConstraintOID.

// Object-id offsets of derived objects (beyond any relation oid).
const (
	indexOIDOffset      = 1_000_000
	constraintOIDOffset = 2_000_000
	attrdefOIDBase      = 3_000_000
	oidBtree            = 403
	oidHeap             = 2
	oidDatabase         = 16383
	oidDefaultColl      = 100
)

// IndexOID is the pg_class.oid of a table's primary-key index.
func IndexOID(id catalog.ID) int64 { return RelationOID(id) + indexOIDOffset }

// ConstraintOID is the pg_constraint.oid of a table's primary key.
func ConstraintOID(id catalog.ID) int64 { return RelationOID(id) + constraintOIDOffset }

func attrdefOID(id catalog.ID, attnum int) int64 {
	return attrdefOIDBase + (RelationOID(id)-firstNormalOID)*1000 + int64(attnum)
}

// userName is the one role's name: the session user.
func userName(env *Env) string {
	if env.User == "" {
		return "rockstream"
	}
	return env.User
}

// databaseName is the session's database (the namespace).
func databaseName(env *Env) string {
	if env.Database == "" {
		return "default"
	}
	return env.Database
}

// relSchema pairs a relation with its schema.
type relSchema struct {
	rel    *catalog.Relation
	schema string
}

// allRelations lists system relations then user relations.
func allRelations(env *Env) []relSchema {
	var out []relSchema
	for _, st := range All() {
		out = append(out, relSchema{st.Rel, st.Schema})
	}
	for _, r := range env.Relations {
		out = append(out, relSchema{r, SchemaPublic})
	}
	return out
}

func pkName(r *catalog.Relation) string { return r.PrimaryKeyConstraint() }

func pkColumns(r *catalog.Relation) string {
	names := make([]string, len(r.PrimaryKey))
	for i, c := range r.PrimaryKey {
		names[i] = quoteIdent(r.Columns[c].Name)
	}
	return strings.Join(names, ", ")
}

// IndexDef is pg_get_indexdef of a primary-key index.
func IndexDef(r *catalog.Relation) string {
	return "CREATE UNIQUE INDEX " + quoteIdent(pkName(r)) + " ON " + SchemaPublic + "." + quoteIdent(r.Name) + " USING btree (" + pkColumns(r) + ")"
}

// ConstraintDef is pg_get_constraintdef of a primary key.
func ConstraintDef(r *catalog.Relation) string { return "PRIMARY KEY (" + pkColumns(r) + ")" }

// quoteIdent quotes an identifier when PostgreSQL's quote_ident would.
func quoteIdent(s string) string {
	ok := s != ""
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			ok = false
		}
	}
	if ok && !reservedWord[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

//lint:immutable a constant set of reserved key words.
var reservedWord = map[string]bool{"all": true, "analyse": true, "analyze": true, "and": true, "any": true, "array": true, "as": true,
	"asc": true, "case": true, "cast": true, "check": true, "collate": true, "column": true, "constraint": true, "create": true,
	"default": true, "desc": true, "distinct": true, "do": true, "else": true, "end": true, "except": true, "false": true,
	"for": true, "foreign": true, "from": true, "grant": true, "group": true, "having": true, "in": true, "into": true,
	"limit": true, "not": true, "null": true, "offset": true, "on": true, "only": true, "or": true, "order": true,
	"primary": true, "references": true, "select": true, "table": true, "then": true, "to": true, "true": true, "union": true,
	"unique": true, "user": true, "using": true, "when": true, "where": true, "with": true}

func int2Array(vals []int64) types.Array {
	a := types.Array{Elem: types.TInt2}
	for _, v := range vals {
		a.Values = append(a.Values, v)
	}
	return a
}

func pkAttnums(r *catalog.Relation) []int64 {
	out := make([]int64, len(r.PrimaryKey))
	for i, c := range r.PrimaryKey {
		out[i] = int64(c + 1)
	}
	return out
}

// empty is the row generator of relations RockStream has no objects for.
func empty(*Env) []types.Row { return nil }

// sequenceOwnership is pg_depend's rows for sequences owned by a column
// (serial and OWNED BY: deptype 'a'; identity: 'i'), what psql's
// \d seq reads for its "Owned by" line and pg_get_serial_sequence-like
// client queries join on.
func sequenceOwnership(env *Env) []types.Row {
	pgClass, _ := Lookup([]string{SchemaPgCatalog, "pg_class"})
	classOID := RelationOID(pgClass.ID)
	byID := map[catalog.ID]*catalog.Relation{}
	for _, r := range env.Relations {
		byID[r.ID] = r
	}
	var out []types.Row
	for _, r := range env.Relations {
		if r.Kind != catalog.KindSequence || r.Sequence == nil || r.Sequence.OwnedByColumn == "" {
			continue
		}
		table := byID[r.Sequence.OwnedBy]
		if table == nil {
			continue
		}
		for i, c := range table.Columns {
			if c.Name != r.Sequence.OwnedByColumn {
				continue
			}
			deptype := "a"
			if c.Identity != "" {
				deptype = "i"
			}
			out = append(out, types.Row{classOID, RelationOID(r.ID), int64(0), classOID, RelationOID(table.ID), int64(i + 1), deptype})
		}
	}
	return out
}

func pgCatalogDefinitions() []*Table {
	t, i8, i4, i2, b, oid, name, f4 := types.TText, types.TInt8, types.TInt4, types.TInt2, types.TBool, types.TOID, types.TName, types.TFloat4
	textArr, i2Arr, oidArr, ts := types.ArrayOf(types.TText), types.ArrayOf(types.TInt2), types.ArrayOf(types.TOID), types.TTimestampTZ
	pg := func(n string, cols []catalog.Column, rows func(*Env) []types.Row) *Table {
		return &Table{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: n, Columns: cols}, Rows: rows}
	}
	info := func(n string, cols []catalog.Column, rows func(*Env) []types.Row) *Table {
		return &Table{Schema: SchemaInfo, Rel: &catalog.Relation{Name: n, Columns: cols}, Rows: rows}
	}
	return []*Table{
		pg("pg_class", columns(
			"oid", oid, "relname", name, "relnamespace", oid, "reltype", oid, "relowner", oid, "relam", oid,
			"relkind", t, "relnatts", i2, "relhasindex", b, "relpersistence", t, "relispartition", b,
			"reltuples", f4, "relpages", i4, "relchecks", i2, "relhasrules", b, "relhastriggers", b,
			"relrowsecurity", b, "relforcerowsecurity", b, "relispopulated", b, "relreplident", t,
			"reloftype", oid, "reltablespace", oid, "relacl", textArr, "reltoastrelid", oid, "reloptions", textArr,
			"relpartbound", t, "relhassubclass", b, "relfilenode", oid, "relisshared", b, "relallvisible", i4), func(env *Env) []types.Row {
			var out []types.Row
			row := func(o int64, n string, ns int64, am int64, kind string, natts int, hasIndex bool) {
				out = append(out, types.Row{o, n, ns, int64(0), int64(ownerOID), am,
					kind, int64(natts), hasIndex, "p", false,
					float64(-1), int64(0), int64(0), false, false, false, false, true, "d", int64(0), int64(0), nil,
					int64(0), nil, nil, false, o, false, int64(0)})
			}
			for _, rs := range allRelations(env) {
				r := rs.rel
				am := int64(0)
				if r.Kind == catalog.KindTable || r.Kind == catalog.KindSource || r.Kind == catalog.KindMaterializedView {
					am = oidHeap
				}
				row(RelationOID(r.ID), r.Name, NamespaceOID(rs.schema), am, relkind(r.Kind), len(r.Columns), len(r.PrimaryKey) > 0)
				if len(r.PrimaryKey) > 0 {
					row(IndexOID(r.ID), pkName(r), NamespaceOID(rs.schema), oidBtree, "i", len(r.PrimaryKey), false)
				}
			}
			return out
		}),
		pg("pg_attribute", columns(
			"attrelid", oid, "attname", name, "atttypid", oid, "attnum", i2, "atttypmod", i4, "attnotnull", b,
			"attisdropped", b, "atthasdef", b, "attidentity", t, "attgenerated", t, "attlen", i2, "attcollation", oid,
			"attstorage", t, "attcompression", t, "attstattarget", i4, "attndims", i4, "atthasmissing", b, "attislocal", b,
			"attinhcount", i4, "attacl", textArr, "attoptions", textArr, "attfdwoptions", textArr, "attbyval", b, "attalign", t),
			func(env *Env) []types.Row {
				var out []types.Row
				for _, rs := range allRelations(env) {
					r := rs.rel
					for i, c := range r.Columns {
						coll := int64(0)
						if c.Type.Kind.IsString() && c.Type.Kind != types.KindName {
							coll = oidDefaultColl
						}
						storage := typStorage(c.Type)
						ndims := int64(0)
						if c.Type.Kind == types.KindArray {
							ndims = 1
						}
						out = append(out, types.Row{RelationOID(r.ID), c.Name, int64(c.Type.OID()), int64(i + 1), int64(c.Type.Typmod),
							c.NotNull, false, c.Default != "" && c.Identity == "", c.Identity, "", int64(c.Type.TypLen()), coll,
							storage, "", int64(-1), ndims, false, true, int64(0), nil, nil, nil, c.Type.TypLen() > 0 && c.Type.TypLen() <= 8, "i"})
					}
					if len(r.PrimaryKey) > 0 {
						for i, k := range r.PrimaryKey {
							c := r.Columns[k]
							out = append(out, types.Row{IndexOID(r.ID), c.Name, int64(c.Type.OID()), int64(i + 1), int64(c.Type.Typmod),
								false, false, false, "", "", int64(c.Type.TypLen()), int64(0),
								"p", "", int64(-1), int64(0), false, true, int64(0), nil, nil, nil, false, "i"})
						}
					}
				}
				return out
			}),
		pg("pg_type", columns(
			"oid", oid, "typname", name, "typnamespace", oid, "typlen", i2, "typtype", t, "typelem", oid,
			"typarray", oid, "typbasetype", oid, "typtypmod", i4, "typnotnull", b, "typowner", oid, "typbyval", b,
			"typcategory", t, "typispreferred", b, "typisdefined", b, "typdelim", t, "typrelid", oid, "typinput", t,
			"typoutput", t, "typreceive", t, "typsend", t, "typalign", t, "typstorage", t, "typndims", i4,
			"typcollation", oid, "typdefault", t, "typacl", textArr),
			func(*Env) []types.Row {
				var out []types.Row
				for _, ty := range builtinTypes() {
					arr := int64(types.ArrayOf(ty).OID())
					coll := int64(0)
					if ty.Kind.IsString() && ty.Kind != types.KindName {
						coll = oidDefaultColl
					}
					n := pgTypeName(ty)
					byval := ty.TypLen() > 0 && ty.TypLen() <= 8
					out = append(out, types.Row{int64(ty.OID()), n, int64(OIDPgCatalog), int64(ty.TypLen()), "b", int64(0), arr, int64(0), int64(-1), false,
						int64(ownerOID), byval, typCategory(ty), false, true, ",", int64(0), n + "in", n + "out", n + "recv", n + "send", "i", typStorage(ty), int64(0), coll, nil, nil})
					out = append(out, types.Row{arr, "_" + n, int64(OIDPgCatalog), int64(-1), "b", int64(ty.OID()), int64(0), int64(0), int64(-1), false,
						int64(ownerOID), false, "A", false, true, ",", int64(0), "array_in", "array_out", "array_recv", "array_send", "i", "x", int64(0), coll, nil, nil})
				}
				return out
			}),
		pg("pg_am", columns("oid", oid, "amname", name, "amhandler", t, "amtype", t), func(*Env) []types.Row {
			return []types.Row{{int64(oidHeap), "heap", "heap_tableam_handler", "t"}, {int64(oidBtree), "btree", "bthandler", "i"}}
		}),
		pg("pg_database", columns("oid", oid, "datname", name, "datdba", oid, "encoding", i4, "datlocprovider", t,
			"datistemplate", b, "datallowconn", b, "datconnlimit", i4, "datfrozenxid", i8, "datminmxid", i8, "dattablespace", oid,
			"datcollate", t, "datctype", t, "daticulocale", t, "datcollversion", t, "datacl", textArr),
			func(env *Env) []types.Row {
				return []types.Row{{int64(oidDatabase), databaseName(env), int64(ownerOID), int64(6), "c", false, true, int64(-1),
					int64(0), int64(0), int64(1663), "C.UTF-8", "C.UTF-8", nil, nil, nil}}
			}),
		pg("pg_roles", roleColumns(), roleRows),
		pg("pg_authid", roleColumns(), roleRows),
		pg("pg_user", columns("usename", name, "usesysid", oid, "usecreatedb", b, "usesuper", b, "userepl", b, "usebypassrls", b,
			"passwd", t, "valuntil", ts, "useconfig", textArr), func(env *Env) []types.Row {
			return []types.Row{{userName(env), int64(ownerOID), true, true, true, true, "********", nil, nil}}
		}),
		pg("pg_auth_members", columns("roleid", oid, "member", oid, "grantor", oid, "admin_option", b), empty),
		pg("pg_index", columns("indexrelid", oid, "indrelid", oid, "indnatts", i2, "indnkeyatts", i2, "indisunique", b,
			"indisprimary", b, "indisexclusion", b, "indimmediate", b, "indisclustered", b, "indisvalid", b,
			"indcheckxmin", b, "indisready", b, "indislive", b, "indisreplident", b, "indkey", i2Arr,
			"indcollation", oidArr, "indclass", oidArr, "indoption", i2Arr, "indexprs", t, "indpred", t, "indnullsnotdistinct", b),
			func(env *Env) []types.Row {
				var out []types.Row
				for _, r := range env.Relations {
					if len(r.PrimaryKey) == 0 {
						continue
					}
					n := int64(len(r.PrimaryKey))
					zeros := make([]int64, n)
					out = append(out, types.Row{IndexOID(r.ID), RelationOID(r.ID), n, n, true, true, false, true, false, true,
						false, true, true, false, int2Array(pkAttnums(r)), nil, nil, int2Array(zeros), nil, nil, false})
				}
				return out
			}),
		pg("pg_constraint", columns("oid", oid, "conname", name, "connamespace", oid, "contype", t, "condeferrable", b,
			"condeferred", b, "convalidated", b, "conrelid", oid, "contypid", oid, "conindid", oid, "conparentid", oid,
			"confrelid", oid, "confupdtype", t, "confdeltype", t, "confmatchtype", t, "conislocal", b, "coninhcount", i4,
			"connoinherit", b, "conkey", i2Arr, "confkey", i2Arr, "conbin", t),
			func(env *Env) []types.Row {
				var out []types.Row
				for _, r := range env.Relations {
					if len(r.PrimaryKey) == 0 {
						continue
					}
					out = append(out, types.Row{ConstraintOID(r.ID), pkName(r), int64(OIDPublic), "p", false, false, true,
						RelationOID(r.ID), int64(0), IndexOID(r.ID), int64(0), int64(0), " ", " ", " ", true, int64(0), true,
						int2Array(pkAttnums(r)), nil, nil})
				}
				return out
			}),
		pg("pg_attrdef", columns("oid", oid, "adrelid", oid, "adnum", i2, "adbin", t), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				for i, c := range r.Columns {
					if c.Default != "" && c.Identity == "" {
						// adbin is pg_node_tree in PostgreSQL; here it is the
						// expression's SQL, which pg_get_expr returns.
						out = append(out, types.Row{attrdefOID(r.ID, i+1), RelationOID(r.ID), int64(i + 1), c.Default})
					}
				}
			}
			return out
		}),
		pg("pg_description", columns("objoid", oid, "classoid", oid, "objsubid", i4, "description", t), empty),
		pg("pg_shdescription", columns("objoid", oid, "classoid", oid, "description", t), empty),
		pg("pg_settings", columns("name", t, "setting", t, "unit", t, "category", t, "short_desc", t, "extra_desc", t,
			"context", t, "vartype", t, "source", t, "min_val", t, "max_val", t, "enumvals", textArr, "boot_val", t,
			"reset_val", t, "sourcefile", t, "sourceline", i4, "pending_restart", b), func(env *Env) []types.Row {
			var out []types.Row
			for _, s := range env.Settings {
				out = append(out, types.Row{s.Name, s.Value, nil, s.Category, s.Description, nil, "user", s.VarType, "default",
					nil, nil, nil, s.Value, s.Value, nil, nil, false})
			}
			return out
		}),
		pg("pg_proc", columns("oid", oid, "proname", name, "pronamespace", oid, "proowner", oid, "prolang", oid,
			"procost", f4, "prorows", f4, "provariadic", oid, "prosupport", t, "prokind", t, "prosecdef", b,
			"proleakproof", b, "proisstrict", b, "proretset", b, "provolatile", t, "proparallel", t, "pronargs", i2,
			"pronargdefaults", i2, "prorettype", oid, "proargtypes", oidArr, "proallargtypes", oidArr, "proargmodes", textArr,
			"proargnames", textArr, "prosrc", t, "probin", t, "proconfig", textArr, "proacl", textArr), empty),
		pg("pg_tables", columns("schemaname", name, "tablename", name, "tableowner", name, "tablespace", name,
			"hasindexes", b, "hasrules", b, "hastriggers", b, "rowsecurity", b), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindTable || r.Kind == catalog.KindSource {
					out = append(out, types.Row{SchemaPublic, r.Name, userName(env), nil, len(r.PrimaryKey) > 0, false, false, false})
				}
			}
			return out
		}),
		pg("pg_views", columns("schemaname", name, "viewname", name, "viewowner", name, "definition", t), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindView {
					out = append(out, types.Row{SchemaPublic, r.Name, userName(env), r.SQL})
				}
			}
			return out
		}),
		pg("pg_matviews", columns("schemaname", name, "matviewname", name, "matviewowner", name, "tablespace", name,
			"hasindexes", b, "ispopulated", b, "definition", t), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindMaterializedView {
					out = append(out, types.Row{SchemaPublic, r.Name, userName(env), nil, false, true, r.SQL})
				}
			}
			return out
		}),
		pg("pg_sequence", columns("seqrelid", oid, "seqtypid", oid, "seqstart", i8, "seqincrement", i8, "seqmax", i8,
			"seqmin", i8, "seqcache", i8, "seqcycle", b), sequenceRows),
		pg("pg_sequences", columns("schemaname", name, "sequencename", name, "sequenceowner", name, "data_type", t,
			"start_value", i8, "min_value", i8, "max_value", i8, "increment_by", i8, "cycle", b, "cache_size", i8, "last_value", i8), sequencesView),
		pg("pg_prepared_statements", columns("name", t, "statement", t, "prepare_time", ts, "parameter_types", types.ArrayOf(regtypeType),
			"from_sql", b, "generic_plans", i8, "custom_plans", i8), preparedStatementRows),
		pg("pg_enum", columns("oid", oid, "enumtypid", oid, "enumsortorder", f4, "enumlabel", name), empty),
		pg("pg_range", columns("rngtypid", oid, "rngsubtype", oid, "rngmultitypid", oid, "rngcollation", oid,
			"rngsubopc", oid, "rngcanonical", t, "rngsubdiff", t), empty),
		pg("pg_inherits", columns("inhrelid", oid, "inhparent", oid, "inhseqno", i4, "inhdetachpending", b), empty),
		pg("pg_collation", columns("oid", oid, "collname", name, "collnamespace", oid, "collowner", oid, "collprovider", t,
			"collisdeterministic", b, "collencoding", i4, "collcollate", t, "collctype", t), func(*Env) []types.Row {
			return []types.Row{{int64(oidDefaultColl), "default", int64(OIDPgCatalog), int64(ownerOID), "d", true, int64(-1), nil, nil},
				{int64(950), "C", int64(OIDPgCatalog), int64(ownerOID), "c", true, int64(-1), "C", "C"}}
		}),
		pg("pg_tablespace", columns("oid", oid, "spcname", name, "spcowner", oid, "spcacl", textArr, "spcoptions", textArr),
			func(*Env) []types.Row {
				return []types.Row{{int64(1663), "pg_default", int64(ownerOID), nil, nil}, {int64(1664), "pg_global", int64(ownerOID), nil, nil}}
			}),
		pg("pg_extension", columns("oid", oid, "extname", name, "extowner", oid, "extnamespace", oid, "extrelocatable", b,
			"extversion", t, "extconfig", oidArr, "extcondition", textArr), func(*Env) []types.Row {
			return []types.Row{{int64(13500), "plpgsql", int64(ownerOID), int64(OIDPgCatalog), false, "1.0", nil, nil}}
		}),
		pg("pg_foreign_table", columns("ftrelid", oid, "ftserver", oid, "ftoptions", textArr), empty),
		pg("pg_policy", columns("oid", oid, "polname", name, "polrelid", oid, "polcmd", t, "polpermissive", b,
			"polroles", oidArr, "polqual", t, "polwithcheck", t), empty),
		pg("pg_statistic_ext", columns("oid", oid, "stxrelid", oid, "stxname", name, "stxnamespace", oid, "stxowner", oid,
			"stxstattarget", i4, "stxkeys", i2Arr, "stxkind", textArr, "stxexprs", t), empty),
		pg("pg_publication", columns("oid", oid, "pubname", name, "pubowner", oid, "puballtables", b, "pubinsert", b,
			"pubupdate", b, "pubdelete", b, "pubtruncate", b, "pubviaroot", b), empty),
		pg("pg_publication_namespace", columns("oid", oid, "pnpubid", oid, "pnnspid", oid), empty),
		pg("pg_publication_rel", columns("oid", oid, "prpubid", oid, "prrelid", oid, "prqual", t, "prattrs", i2Arr), empty),
		pg("pg_trigger", columns("oid", oid, "tgrelid", oid, "tgparentid", oid, "tgname", name, "tgfoid", oid, "tgtype", i2,
			"tgenabled", t, "tgisinternal", b, "tgconstrrelid", oid, "tgconstrindid", oid, "tgconstraint", oid), empty),
		pg("pg_rewrite", columns("oid", oid, "rulename", name, "ev_class", oid, "ev_type", t, "ev_enabled", t, "is_instead", b), empty),
		pg("pg_depend", columns("classid", oid, "objid", oid, "objsubid", i4, "refclassid", oid, "refobjid", oid,
			"refobjsubid", i4, "deptype", t), sequenceOwnership),
		pg("pg_language", columns("oid", oid, "lanname", name, "lanowner", oid, "lanispl", b, "lanpltrusted", b), func(*Env) []types.Row {
			return []types.Row{{int64(12), "internal", int64(ownerOID), false, false}, {int64(13), "c", int64(ownerOID), false, false},
				{int64(14), "sql", int64(ownerOID), false, true}}
		}),
		pg("pg_event_trigger", columns("oid", oid, "evtname", name, "evtevent", name, "evtowner", oid, "evtfoid", oid, "evtenabled", t), empty),
		pg("pg_stat_activity", columns("datid", oid, "datname", name, "pid", i4, "usesysid", oid, "usename", name,
			"application_name", t, "client_addr", t, "state", t, "query", t), empty),
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "index_columns", Columns: columns(
			"indexrelid", oid, "indrelid", oid, "indisprimary", b, "attnum", i2, "ord", i4)},
			// One row per index column: what unnest(indkey) with
			// generate_subscripts gives, for drivers' primary-key queries.
			Rows: func(env *Env) []types.Row {
				var out []types.Row
				for _, r := range env.Relations {
					for i, a := range pkAttnums(r) {
						out = append(out, types.Row{IndexOID(r.ID), RelationOID(r.ID), true, a, int64(i + 1)})
					}
				}
				return out
			}},
		info("tables", columns("table_catalog", name, "table_schema", name, "table_name", name, "table_type", t,
			"self_referencing_column_name", name, "reference_generation", t, "user_defined_type_catalog", name,
			"user_defined_type_schema", name, "user_defined_type_name", name, "is_insertable_into", t, "is_typed", t, "commit_action", t),
			func(env *Env) []types.Row {
				var out []types.Row
				for _, rs := range allRelations(env) {
					if rs.rel.Kind == catalog.KindSequence {
						continue
					}
					typ, ins := "BASE TABLE", "YES"
					switch rs.rel.Kind {
					case catalog.KindView, catalog.KindMaterializedView:
						// Materialized views are listed (as views) so that tools
						// that browse information_schema (Grafana) find them.
						typ, ins = "VIEW", "NO"
					}
					if rs.schema != SchemaPublic {
						ins = "NO"
					}
					out = append(out, types.Row{databaseName(env), rs.schema, rs.rel.Name, typ, nil, nil, nil, nil, nil, ins, "NO", nil})
				}
				return out
			}),
		info("columns", columns("table_catalog", name, "table_schema", name, "table_name", name, "column_name", name,
			"ordinal_position", i4, "column_default", t, "is_nullable", t, "data_type", t, "character_maximum_length", i4,
			"character_octet_length", i4, "numeric_precision", i4, "numeric_precision_radix", i4, "numeric_scale", i4,
			"datetime_precision", i4, "interval_type", t, "udt_catalog", name, "udt_schema", name, "udt_name", name,
			"dtd_identifier", name, "is_self_referencing", t, "is_identity", t, "identity_generation", t, "is_generated", t,
			"generation_expression", t, "is_updatable", t, "collation_name", name),
			func(env *Env) []types.Row {
				var out []types.Row
				for _, rs := range allRelations(env) {
					if rs.rel.Kind == catalog.KindSequence {
						continue
					}
					for i, c := range rs.rel.Columns {
						nullable := "YES"
						if c.NotNull {
							nullable = "NO"
						}
						var def types.Datum
						if c.Default != "" && c.Identity == "" {
							def = c.Default
						}
						dataType := types.Type{Kind: c.Type.Kind, Typmod: -1}.SQLName()
						udt := pgTypeName(c.Type)
						if c.Type.Kind == types.KindArray {
							dataType = "ARRAY"
							if c.Type.Elem != nil {
								udt = "_" + pgTypeName(*c.Type.Elem)
							}
						}
						charLen, prec, radix, scale, dtPrec := columnPrecision(c.Type)
						upd := "YES"
						if rs.schema != SchemaPublic || rs.rel.Kind != catalog.KindTable {
							upd = "NO"
						}
						out = append(out, types.Row{databaseName(env), rs.schema, rs.rel.Name, c.Name, int64(i + 1), def, nullable, dataType,
							charLen, nil, prec, radix, scale, dtPrec, nil, databaseName(env), SchemaPgCatalog, udt,
							itoa(i + 1), "NO", isIdentity(c), identityGeneration(c), "NEVER", nil, upd, nil})
					}
				}
				return out
			}),
		info("schemata", columns("catalog_name", name, "schema_name", name, "schema_owner", name,
			"default_character_set_catalog", name, "default_character_set_schema", name, "default_character_set_name", name, "sql_path", t),
			func(env *Env) []types.Row {
				var out []types.Row
				for _, s := range []string{SchemaPgCatalog, SchemaPublic, SchemaInfo, SchemaRockStream} {
					out = append(out, types.Row{databaseName(env), s, userName(env), nil, nil, nil, nil})
				}
				return out
			}),
		info("views", columns("table_catalog", name, "table_schema", name, "table_name", name, "view_definition", t,
			"check_option", t, "is_updatable", t, "is_insertable_into", t, "is_trigger_updatable", t,
			"is_trigger_deletable", t, "is_trigger_insertable_into", t), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindView || r.Kind == catalog.KindMaterializedView {
					out = append(out, types.Row{databaseName(env), SchemaPublic, r.Name, r.SQL, "NONE", "NO", "NO", "NO", "NO", "NO"})
				}
			}
			return out
		}),
		info("table_constraints", columns("constraint_catalog", name, "constraint_schema", name, "constraint_name", name,
			"table_catalog", name, "table_schema", name, "table_name", name, "constraint_type", t, "is_deferrable", t,
			"initially_deferred", t, "enforced", t, "nulls_distinct", t), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if len(r.PrimaryKey) > 0 {
					out = append(out, types.Row{databaseName(env), SchemaPublic, pkName(r), databaseName(env), SchemaPublic, r.Name,
						"PRIMARY KEY", "NO", "NO", "YES", nil})
				}
			}
			return out
		}),
		info("key_column_usage", columns("constraint_catalog", name, "constraint_schema", name, "constraint_name", name,
			"table_catalog", name, "table_schema", name, "table_name", name, "column_name", name, "ordinal_position", i4,
			"position_in_unique_constraint", i4), func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				for i, k := range r.PrimaryKey {
					out = append(out, types.Row{databaseName(env), SchemaPublic, pkName(r), databaseName(env), SchemaPublic, r.Name,
						r.Columns[k].Name, int64(i + 1), nil})
				}
			}
			return out
		}),
	}
}

func roleColumns() []catalog.Column {
	b, oid, name := types.TBool, types.TOID, types.TName
	return columns("oid", oid, "rolname", name, "rolsuper", b, "rolinherit", b, "rolcreaterole", b, "rolcreatedb", b,
		"rolcanlogin", b, "rolreplication", b, "rolconnlimit", types.TInt4, "rolpassword", types.TText,
		"rolvaliduntil", types.TTimestampTZ, "rolbypassrls", b, "rolconfig", types.ArrayOf(types.TText))
}

// roleRows is the one role: the session user, a superuser.
func roleRows(env *Env) []types.Row {
	return []types.Row{{int64(ownerOID), userName(env), true, true, true, true, true, true, int64(-1), "********", nil, true, nil}}
}

// columnPrecision is information_schema.columns' length and precision
// columns.
func columnPrecision(t types.Type) (charLen, prec, radix, scale, dtPrec types.Datum) {
	switch t.Kind {
	case types.KindVarchar, types.KindChar:
		if t.Typmod >= 4 {
			charLen = int64(t.Typmod - 4)
		}
	case types.KindInt2:
		prec, radix, scale = int64(16), int64(2), int64(0)
	case types.KindInt4, types.KindOID:
		prec, radix, scale = int64(32), int64(2), int64(0)
	case types.KindInt8:
		prec, radix, scale = int64(64), int64(2), int64(0)
	case types.KindFloat4:
		prec, radix = int64(24), int64(2)
	case types.KindFloat8:
		prec, radix = int64(53), int64(2)
	case types.KindNumeric:
		radix = int64(10)
		if t.Typmod >= 4 {
			tm := t.Typmod - 4
			prec, scale = int64((tm>>16)&0xffff), int64(tm&0xffff)
		}
	case types.KindDate:
		dtPrec = int64(0)
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ, types.KindInterval:
		dtPrec = int64(6)
		if t.Typmod >= 0 {
			dtPrec = int64(t.Typmod)
		}
	}
	return
}

// typCategory is pg_type.typcategory.
func typCategory(t types.Type) string {
	switch {
	case t.Kind == types.KindBool:
		return "B"
	case t.Kind.IsNumeric() || t.Kind == types.KindOID:
		return "N"
	case t.Kind.IsString():
		return "S"
	case t.Kind == types.KindDate || t.Kind == types.KindTime || t.Kind == types.KindTimestamp || t.Kind == types.KindTimestampTZ:
		return "D"
	case t.Kind == types.KindInterval:
		return "T"
	}
	return "U"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// typStorage is pg_type.typstorage: plain for fixed-length types, main for
// numeric, extended for the other variable-length ones.
func typStorage(t types.Type) string {
	switch {
	case t.Kind == types.KindNumeric:
		return "m"
	case t.TypLen() < 0:
		return "x"
	}
	return "p"
}

// preparedStatementRows is pg_prepared_statements: parameter_types holds
// type oids (the engine sends them as regtype names).
func preparedStatementRows(env *Env) []types.Row {
	out := make([]types.Row, 0, len(env.PreparedStatements))
	for _, p := range env.PreparedStatements {
		oids := types.Array{Elem: regtypeType, Values: make([]types.Datum, len(p.ParamTypes))}
		for i, t := range p.ParamTypes {
			oids.Values[i] = int64(t.OID())
		}
		out = append(out, types.Row{p.Name, p.Statement, types.TimestampTZ(p.PrepareTime), oids, p.FromSQL, p.GenericPlans, p.CustomPlans})
	}
	return out
}

// regtypeType is regtype (pg_prepared_statements.parameter_types' element).
var regtypeType = types.Type{Kind: types.KindRegType, Typmod: -1} //lint:immutable a type constant
