package syscat

import (
	"regexp"
	"strings"
	"time"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat/sysrel"
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

// userName is the name of the role that owns every relation: the
// bootstrap superuser when roles exist, else the session user.
func userName(env *Env) string {
	for _, r := range env.Roles {
		if r.OID == ownerOID {
			return r.Name
		}
	}
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

// relSchema pairs a relation with its schema and the schema's oid.
type relSchema struct {
	rel    *catalog.Relation
	schema string
	nsOID  int64
}

// allRelations lists system relations then user relations.
func allRelations(env *Env) []relSchema {
	var out []relSchema
	for _, st := range All() {
		out = append(out, relSchema{st.Rel, st.Schema, NamespaceOID(st.Schema)})
	}
	for _, r := range env.Relations {
		out = append(out, relSchema{r, r.SchemaName(), namespaceOIDIn(env, r.SchemaName())})
	}
	return out
}

// nextvalCall matches the sequence a DEFAULT calls, as RockStream writes
// it: nextval('name'::regclass), name qualified unless in public.
//
//lint:immutable a compiled constant pattern.
var nextvalCall = regexp.MustCompile(`nextval\('((?:[^']|'')*)'::regclass\)`)

// displayDefault shows a DEFAULT as PostgreSQL deparses it for the
// session: the sequence of nextval('s.seq'::regclass) is qualified only
// when its schema is not on the search_path (regclass output).
func displayDefault(env *Env, def string) string {
	return nextvalCall.ReplaceAllStringFunc(def, func(m string) string {
		lit := nextvalCall.FindStringSubmatch(m)[1]
		schema, name := SchemaPublic, lit
		if i := strings.IndexByte(lit, '.'); i >= 0 {
			schema, name = lit[:i], lit[i+1:]
		}
		shown := name
		if !visibleSchema(env, schema) {
			shown = schema + "." + name
		}
		return "nextval('" + shown + "'::regclass)"
	})
}

// namespaceOIDIn is the pg_namespace.oid of schema, user schemas included.
func namespaceOIDIn(env *Env, schema string) int64 {
	for _, s := range env.Schemas {
		if s.Name == schema {
			return RelationOID(s.ID)
		}
	}
	return NamespaceOID(schema)
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
	return "CREATE UNIQUE INDEX " + quoteIdent(pkName(r)) + " ON " + quoteIdent(r.SchemaName()) + "." + quoteIdent(r.Name) + " USING btree (" + pkColumns(r) + ")"
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

// relOptions is a relation's pg_class.reloptions: a materialized view's
// settings (viewSettings), a table's watermark options (WatermarkOptions).
func relOptions(r *catalog.Relation, byID map[catalog.ID]*catalog.Relation) types.Datum {
	if opts := WatermarkOptions(r, byID); len(opts) > 0 {
		vals := make([]types.Datum, len(opts))
		for i, o := range opts {
			vals[i] = o
		}
		return types.Array{Elem: types.TText, Values: vals}
	}
	return viewSettings(r)
}

// WatermarkOptions are the options of a table (or source) with a
// watermark as WITH (...) takes them: watermark=ts - interval '00:00:05'
// and, when late rows go into a dead-letter table, late_rows=name
// (schema-qualified outside public). Nil without a watermark.
func WatermarkOptions(r *catalog.Relation, byID map[catalog.ID]*catalog.Relation) []string {
	w := r.Watermark
	if w == nil || w.Column >= len(r.Columns) {
		return nil
	}
	mark := quoteIdent(r.Columns[w.Column].Name)
	if w.LatenessMicros > 0 {
		mark += " - interval '" + types.Format(types.TInterval, types.Interval{Micros: w.LatenessMicros}) + "'"
	}
	opts := []string{"watermark=" + mark}
	if w.LateRows != nil {
		name := w.LateRows.String()
		if dl, ok := byID[*w.LateRows]; ok {
			name = quoteIdent(dl.Name)
			if dl.SchemaName() != catalog.SchemaPublic {
				name = quoteIdent(dl.SchemaName()) + "." + name
			}
		}
		opts = append(opts, "late_rows="+name)
	}
	return opts
}

// viewSettings is a materialized view's pg_class.reloptions: the session
// settings it is maintained with when they are not the defaults
// (timezone=..., extra_float_digits=..., datestyle=..., intervalstyle=...)
// and windows=never_close, as WITH (...) takes them, so
// psql's \d+ shows them ("Options:"). NULL for anything else.
func viewSettings(r *catalog.Relation) types.Datum {
	if r.Kind != catalog.KindMaterializedView {
		return nil
	}
	var opts []types.Datum
	if r.TimeZone != "" {
		opts = append(opts, "timezone="+r.TimeZone)
	}
	if r.ExtraFloatDigits != "" {
		opts = append(opts, "extra_float_digits="+r.ExtraFloatDigits)
	}
	if r.DateStyle != "" {
		opts = append(opts, "datestyle="+r.DateStyle)
	}
	if r.IntervalStyle != "" {
		opts = append(opts, "intervalstyle="+r.IntervalStyle)
	}
	if r.WindowsNeverClose {
		opts = append(opts, "windows=never_close")
	}
	if len(opts) == 0 {
		return nil
	}
	return types.Array{Elem: types.TText, Values: opts}
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

// pgCatalogRows generates the rows of the pg_catalog and information_schema
// compatibility relations; sysrel defines their columns.
func pgCatalogRows() []rowSource {
	return []rowSource{
		{SchemaPgCatalog, "pg_class", func(env *Env) []types.Row {
			var out []types.Row
			row := func(o int64, n string, ns int64, am int64, kind string, natts int, hasIndex bool, options types.Datum) {
				out = append(out, types.Row{o, n, ns, int64(0), int64(ownerOID), am,
					kind, int64(natts), hasIndex, "p", false,
					float64(-1), int64(0), int64(0), false, false, false, false, true, "d", int64(0), int64(0), nil,
					int64(0), options, nil, false, o, false, int64(0)})
			}
			indexed := tablesWithIndexes(env)
			byID := map[catalog.ID]*catalog.Relation{}
			for _, r := range env.Relations {
				byID[r.ID] = r
			}
			for _, rs := range allRelations(env) {
				r := rs.rel
				am := int64(0)
				natts := len(r.Columns)
				switch r.Kind {
				case catalog.KindTable, catalog.KindSource, catalog.KindMaterializedView:
					am = oidHeap
				case catalog.KindIndex:
					am, natts = oidBtree, len(r.Index.Columns)
				}
				row(RelationOID(r.ID), r.Name, rs.nsOID, am, relkind(r.Kind), natts, len(r.PrimaryKey) > 0 || indexed[r.ID], relOptions(r, byID))
				if len(r.PrimaryKey) > 0 {
					row(IndexOID(r.ID), pkName(r), rs.nsOID, oidBtree, "i", len(r.PrimaryKey), false, nil)
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_attribute", func(env *Env) []types.Row {
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
			for _, ix := range userIndexes(env) {
				for i, ic := range ix.index.Index.Columns {
					c := ix.table.Columns[ix.table.ColumnIndex(ic.Column)]
					coll := int64(0)
					if c.Type.Kind.IsString() && c.Type.Kind != types.KindName {
						coll = oidDefaultColl
					}
					out = append(out, types.Row{RelationOID(ix.index.ID), c.Name, int64(c.Type.OID()), int64(i + 1), int64(c.Type.Typmod),
						false, false, false, "", "", int64(c.Type.TypLen()), coll,
						typStorage(c.Type), "", int64(-1), int64(0), false, true, int64(0), nil, nil, nil, c.Type.TypLen() > 0 && c.Type.TypLen() <= 8, "i"})
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_type", func(*Env) []types.Row {
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
		}},
		{SchemaPgCatalog, "pg_am", func(*Env) []types.Row {
			return []types.Row{{int64(oidHeap), "heap", "heap_tableam_handler", "t"}, {int64(oidBtree), "btree", "bthandler", "i"}}
		}},
		{SchemaPgCatalog, "pg_database", func(env *Env) []types.Row {
			return []types.Row{{int64(oidDatabase), databaseName(env), int64(ownerOID), int64(6), "c", false, true, int64(-1),
				int64(0), int64(0), int64(1663), "C.UTF-8", "C.UTF-8", nil, nil, nil}}
		}},
		{SchemaPgCatalog, "pg_roles", roleRows},
		{SchemaPgCatalog, "pg_authid", func(env *Env) []types.Row { return roleRowsOf(env, true) }},
		{SchemaPgCatalog, "pg_user", func(env *Env) []types.Row {
			if len(env.Roles) == 0 {
				return []types.Row{{userName(env), int64(ownerOID), true, true, true, true, "********", nil, nil}}
			}
			var out []types.Row
			for _, r := range env.Roles {
				if r.Login {
					all := r.OID == ownerOID
					out = append(out, types.Row{r.Name, r.OID, all, r.Superuser, all, all, "********", nil, nil})
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_auth_members", empty},
		{SchemaPgCatalog, "pg_index", func(env *Env) []types.Row {
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
			for _, ix := range userIndexes(env) {
				n := int64(len(ix.index.Index.Columns))
				out = append(out, types.Row{RelationOID(ix.index.ID), RelationOID(ix.table.ID), n, n, ix.index.Index.Unique, false, false, true, false, true,
					false, true, true, false, int2Array(ix.attnums()), nil, nil, int2Array(ix.options()), nil, nil, false})
			}
			return out
		}},
		{SchemaPgCatalog, "pg_constraint", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if len(r.PrimaryKey) == 0 {
					continue
				}
				out = append(out, types.Row{ConstraintOID(r.ID), pkName(r), namespaceOIDIn(env, r.SchemaName()), "p", false, false, true,
					RelationOID(r.ID), int64(0), IndexOID(r.ID), int64(0), int64(0), " ", " ", " ", true, int64(0), true,
					int2Array(pkAttnums(r)), nil, nil})
			}
			return out
		}},
		{SchemaPgCatalog, "pg_attrdef", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				for i, c := range r.Columns {
					if c.Default != "" && c.Identity == "" {
						// adbin is pg_node_tree in PostgreSQL; here it is the
						// expression's SQL, which pg_get_expr returns.
						out = append(out, types.Row{attrdefOID(r.ID, i+1), RelationOID(r.ID), int64(i + 1), displayDefault(env, c.Default)})
					}
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_description", empty},
		{SchemaPgCatalog, "pg_shdescription", empty},
		{SchemaPgCatalog, "pg_settings", func(env *Env) []types.Row {
			var out []types.Row
			for _, s := range env.Settings {
				out = append(out, types.Row{s.Name, s.Value, nil, s.Category, s.Description, nil, "user", s.VarType, "default",
					nil, nil, nil, s.Value, s.Value, nil, nil, false})
			}
			return out
		}},
		{SchemaPgCatalog, "pg_proc", empty},
		{SchemaPgCatalog, "pg_tables", func(env *Env) []types.Row {
			indexed := tablesWithIndexes(env)
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindTable || r.Kind == catalog.KindSource {
					out = append(out, types.Row{r.SchemaName(), r.Name, userName(env), nil, len(r.PrimaryKey) > 0 || indexed[r.ID], false, false, false})
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_views", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindView {
					out = append(out, types.Row{r.SchemaName(), r.Name, userName(env), viewDef(env, r)})
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_matviews", func(env *Env) []types.Row {
			indexed := tablesWithIndexes(env)
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindMaterializedView {
					out = append(out, types.Row{r.SchemaName(), r.Name, userName(env), nil, indexed[r.ID], true, viewDef(env, r)})
				}
			}
			return out
		}},
		{SchemaPgCatalog, "pg_sequence", sequenceRows},
		{SchemaPgCatalog, "pg_indexes", indexesView},
		{SchemaPgCatalog, "pg_sequences", sequencesView},
		{SchemaPgCatalog, "pg_prepared_statements", preparedStatementRows},
		{SchemaPgCatalog, "pg_enum", empty},
		{SchemaPgCatalog, "pg_range", empty},
		{SchemaPgCatalog, "pg_inherits", empty},
		{SchemaPgCatalog, "pg_collation", func(*Env) []types.Row {
			return []types.Row{{int64(oidDefaultColl), "default", int64(OIDPgCatalog), int64(ownerOID), "d", true, int64(-1), nil, nil},
				{int64(950), "C", int64(OIDPgCatalog), int64(ownerOID), "c", true, int64(-1), "C", "C"}}
		}},
		{SchemaPgCatalog, "pg_tablespace", func(*Env) []types.Row {
			return []types.Row{{int64(1663), "pg_default", int64(ownerOID), nil, nil}, {int64(1664), "pg_global", int64(ownerOID), nil, nil}}
		}},
		{SchemaPgCatalog, "pg_extension", func(*Env) []types.Row {
			return []types.Row{{int64(13500), "plpgsql", int64(ownerOID), int64(OIDPgCatalog), false, "1.0", nil, nil}}
		}},
		{SchemaPgCatalog, "pg_foreign_table", empty},
		{SchemaPgCatalog, "pg_policy", empty},
		{SchemaPgCatalog, "pg_statistic_ext", empty},
		{SchemaPgCatalog, "pg_publication", empty},
		{SchemaPgCatalog, "pg_publication_namespace", empty},
		{SchemaPgCatalog, "pg_publication_rel", empty},
		{SchemaPgCatalog, "pg_trigger", empty},
		{SchemaPgCatalog, "pg_rewrite", empty},
		{SchemaPgCatalog, "pg_depend", sequenceOwnership},
		{SchemaPgCatalog, "pg_language", func(*Env) []types.Row {
			return []types.Row{{int64(12), "internal", int64(ownerOID), false, false}, {int64(13), "c", int64(ownerOID), false, false},
				{int64(14), "sql", int64(ownerOID), false, true}}
		}},
		{SchemaPgCatalog, "pg_event_trigger", empty},
		{SchemaPgCatalog, "pg_stat_activity", activityRows},
		{SchemaPgCatalog, "pg_stat_progress_copy", copyProgressRows},
		// One row per index column: what unnest(indkey) with
		// generate_subscripts gives, for drivers' primary-key queries.
		{SchemaRockStream, "index_columns", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				for i, a := range pkAttnums(r) {
					out = append(out, types.Row{IndexOID(r.ID), RelationOID(r.ID), true, a, int64(i + 1)})
				}
			}
			for _, ix := range userIndexes(env) {
				for i, a := range ix.attnums() {
					out = append(out, types.Row{RelationOID(ix.index.ID), RelationOID(ix.table.ID), false, a, int64(i + 1)})
				}
			}
			return out
		}},
		{SchemaInfo, "tables", func(env *Env) []types.Row {
			var out []types.Row
			for _, rs := range allRelations(env) {
				if rs.rel.Kind == catalog.KindSequence || rs.rel.Kind == catalog.KindIndex {
					continue
				}
				typ, ins := "BASE TABLE", "YES"
				switch rs.rel.Kind {
				case catalog.KindView, catalog.KindMaterializedView:
					// Materialized views are listed (as views) so that tools
					// that browse information_schema (Grafana) find them.
					typ, ins = "VIEW", "NO"
				}
				if sysrel.IsSystemSchema(rs.schema) {
					ins = "NO"
				}
				out = append(out, types.Row{databaseName(env), rs.schema, rs.rel.Name, typ, nil, nil, nil, nil, nil, ins, "NO", nil})
			}
			return out
		}},
		{SchemaInfo, "columns", func(env *Env) []types.Row {
			var out []types.Row
			for _, rs := range allRelations(env) {
				if rs.rel.Kind == catalog.KindSequence || rs.rel.Kind == catalog.KindIndex {
					continue
				}
				for i, c := range rs.rel.Columns {
					nullable := "YES"
					if c.NotNull {
						nullable = "NO"
					}
					var def types.Datum
					if c.Default != "" && c.Identity == "" {
						def = displayDefault(env, c.Default)
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
					if sysrel.IsSystemSchema(rs.schema) || rs.rel.Kind != catalog.KindTable {
						upd = "NO"
					}
					out = append(out, types.Row{databaseName(env), rs.schema, rs.rel.Name, c.Name, int64(i + 1), def, nullable, dataType,
						charLen, nil, prec, radix, scale, dtPrec, nil, databaseName(env), SchemaPgCatalog, udt,
						itoa(i + 1), "NO", isIdentity(c), identityGeneration(c), "NEVER", nil, upd, nil})
				}
			}
			return out
		}},
		{SchemaInfo, "schemata", func(env *Env) []types.Row {
			var out []types.Row
			for _, s := range []string{SchemaPgCatalog, SchemaPublic, SchemaInfo, SchemaRockStream} {
				out = append(out, types.Row{databaseName(env), s, userName(env), nil, nil, nil, nil})
			}
			for _, s := range env.Schemas {
				out = append(out, types.Row{databaseName(env), s.Name, userName(env), nil, nil, nil, nil})
			}
			return out
		}},
		{SchemaInfo, "views", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if r.Kind == catalog.KindView || r.Kind == catalog.KindMaterializedView {
					out = append(out, types.Row{databaseName(env), r.SchemaName(), r.Name, viewDef(env, r), "NONE", "NO", "NO", "NO", "NO", "NO"})
				}
			}
			return out
		}},
		{SchemaInfo, "table_constraints", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				if len(r.PrimaryKey) > 0 {
					out = append(out, types.Row{databaseName(env), r.SchemaName(), pkName(r), databaseName(env), r.SchemaName(), r.Name,
						"PRIMARY KEY", "NO", "NO", "YES", nil})
				}
			}
			return out
		}},
		{SchemaInfo, "key_column_usage", func(env *Env) []types.Row {
			var out []types.Row
			for _, r := range env.Relations {
				for i, k := range r.PrimaryKey {
					out = append(out, types.Row{databaseName(env), r.SchemaName(), pkName(r), databaseName(env), r.SchemaName(), r.Name,
						r.Columns[k].Name, int64(i + 1), nil})
				}
			}
			return out
		}},
	}
}

// roleRows is the one role: the session user, a superuser.
func roleRows(env *Env) []types.Row { return roleRowsOf(env, false) }

// roleRowsOf lists pg_roles (verifiers masked) or pg_authid (verifiers
// shown; only superusers may read it). The bootstrap superuser (OID 10)
// has every attribute, as initdb's role does; other superusers only
// SUPERUSER, as CREATE ROLE ... SUPERUSER gives them.
func roleRowsOf(env *Env, verifiers bool) []types.Row {
	if len(env.Roles) == 0 {
		return []types.Row{{int64(ownerOID), userName(env), true, true, true, true, true, true, int64(-1), "********", nil, true, nil}}
	}
	out := make([]types.Row, 0, len(env.Roles))
	for _, r := range env.Roles {
		var password types.Datum = "********"
		if verifiers {
			password = nil
			if r.Verifier != "" {
				password = r.Verifier
			}
		}
		all := r.OID == ownerOID
		out = append(out, types.Row{r.OID, r.Name, r.Superuser, true, all, all, r.Login, all, int64(-1), password, nil, all, nil})
	}
	return out
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

// activityRows is pg_stat_activity: one row per client session.
func activityRows(env *Env) []types.Row {
	out := make([]types.Row, 0, len(env.Activity))
	for _, a := range env.Activity {
		userOID := any(nil)
		for _, r := range env.Roles {
			if r.Name == a.User {
				userOID = r.OID
			}
		}
		if env.Roles == nil && a.User != "" {
			userOID = int64(ownerOID)
		}
		out = append(out, types.Row{int64(oidDatabase), nullIfEmpty(a.Database), a.PID, nil,
			userOID, nullIfEmpty(a.User), a.ApplicationName, nullIfEmpty(a.ClientAddr), nil, a.ClientPort,
			timestampOrNull(a.BackendStart), timestampOrNull(a.XactStart), timestampOrNull(a.QueryStart), timestampOrNull(a.StateChange),
			nullIfEmpty(a.WaitEventType), nullIfEmpty(a.WaitEvent), nullIfEmpty(a.State), nil, nil, nil, a.Query, "client backend"})
	}
	return out
}

func timestampOrNull(t time.Time) types.Datum {
	if t.IsZero() {
		return nil
	}
	return types.TimestampTZOf(t)
}

func nullIfEmpty(s string) types.Datum {
	if s == "" {
		return nil
	}
	return s
}

// copyProgressRows is pg_stat_progress_copy: one row per running COPY.
func copyProgressRows(env *Env) []types.Row {
	var out []types.Row
	for _, a := range env.Activity {
		if cp := a.Copy; cp != nil {
			var relid types.Datum
			if cp.RelationOID != 0 {
				relid = cp.RelationOID
			}
			out = append(out, types.Row{a.PID, int64(oidDatabase), nullIfEmpty(a.Database), relid, cp.Command, cp.Type,
				cp.BytesDone, int64(0), cp.TuplesDone, int64(0)})
		}
	}
	return out
}
