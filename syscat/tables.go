package syscat

import (
	"sync"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// OIDs of namespaces and the object-id offset of user relations
// (PostgreSQL's FirstNormalObjectId).
const (
	OIDPgCatalog      = 11
	OIDPublic         = 2200
	OIDInfoSchema     = 13000
	OIDRockStream     = 13001
	firstNormalOID    = 16384
	systemRelationOID = 14000 // system relation n has oid systemRelationOID+n
	ownerOID          = 10
)

// RelationOID is the pg_class.oid of a relation.
func RelationOID(id catalog.ID) int64 {
	n := objectNumber(id)
	if n < FirstUserObject {
		return systemRelationOID + int64(n)
	}
	return firstNormalOID + int64(n)
}

// NamespaceOID is the pg_namespace.oid of a schema name.
func NamespaceOID(schema string) int64 {
	switch schema {
	case SchemaPgCatalog:
		return OIDPgCatalog
	case SchemaInfo:
		return OIDInfoSchema
	case SchemaRockStream:
		return OIDRockStream
	}
	return OIDPublic
}

func objectNumber(id catalog.ID) uint64 {
	var n uint64
	for _, b := range id.Object[8:] {
		n = n<<8 | uint64(b)
	}
	return n
}

var (
	tablesOnce sync.Once
	theTables  *registry
)

func tables() *registry {
	tablesOnce.Do(func() { theTables = newRegistry(definitions()) })
	return theTables
}

// kindText is how rockstream_catalog names a relation kind.
func kindText(k catalog.Kind) string {
	switch k {
	case catalog.KindTable:
		return "table"
	case catalog.KindView:
		return "view"
	case catalog.KindMaterializedView:
		return "materialized view"
	case catalog.KindSource:
		return "source"
	}
	return "unknown"
}

// relkind is pg_class.relkind.
func relkind(k catalog.Kind) string {
	switch k {
	case catalog.KindView:
		return "v"
	case catalog.KindMaterializedView:
		return "m"
	}
	return "r"
}

func definitions() []*Table {
	t, i8, i4, i2, b, oid, name := types.TText, types.TInt8, types.TInt4, types.TInt2, types.TBool, types.TOID, types.TName
	return []*Table{
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "tables", Columns: columns(
			"name", t, "kind", t, "columns", i8, "primary_key", t, "insert_only", b)},
			Rows: func(env *Env) []types.Row {
				var out []types.Row
				for _, r := range env.Relations {
					if r.Kind != catalog.KindTable && r.Kind != catalog.KindSource {
						continue
					}
					var pk types.Datum
					if len(r.PrimaryKey) > 0 {
						s := ""
						for j, c := range r.PrimaryKey {
							if j > 0 {
								s += ", "
							}
							s += r.Columns[c].Name
						}
						pk = s
					}
					out = append(out, types.Row{r.Name, kindText(r.Kind), int64(len(r.Columns)), pk, r.InsertOnly})
				}
				return out
			}},
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "views", Columns: columns(
			"name", t, "kind", t, "definition", t, "state", t, "rows", i8, "state_rows", i8, "state_bytes", i8,
			"frontier", i8, "lag_epochs", i8, "error", t)},
			Rows: func(env *Env) []types.Row {
				var out []types.Row
				for _, r := range env.Relations {
					switch r.Kind {
					case catalog.KindMaterializedView:
						st := env.Views[r.ID]
						state := "running"
						var errText types.Datum
						if st.Error != "" {
							state, errText = "error", st.Error
						}
						out = append(out, types.Row{r.Name, "materialized", r.SQL, state, st.Rows, st.StateRows, st.StateBytes,
							int64(env.Frontier), int64(env.LastEpoch - env.Frontier), errText})
					case catalog.KindView:
						out = append(out, types.Row{r.Name, "inline", r.SQL, "inline", nil, nil, nil, nil, nil, nil})
					}
				}
				return out
			}},
		{Schema: SchemaRockStream, Rel: &catalog.Relation{Name: "sources", Columns: columns(
			"name", t, "kind", t, "definition", t)},
			Rows: func(env *Env) []types.Row {
				var out []types.Row
				for _, r := range env.Relations {
					if r.Kind == catalog.KindSource {
						out = append(out, types.Row{r.Name, "generate rows", r.SQL})
					}
				}
				return out
			}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_namespace", Columns: columns(
			"oid", oid, "nspname", name, "nspowner", oid, "nspacl", t)},
			Rows: func(*Env) []types.Row {
				return []types.Row{
					{int64(OIDPgCatalog), SchemaPgCatalog, int64(ownerOID), nil},
					{int64(OIDPublic), SchemaPublic, int64(ownerOID), nil},
					{int64(OIDInfoSchema), SchemaInfo, int64(ownerOID), nil},
					{int64(OIDRockStream), SchemaRockStream, int64(ownerOID), nil},
				}
			}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_class", Columns: columns(
			"oid", oid, "relname", name, "relnamespace", oid, "reltype", oid, "relowner", oid, "relam", oid,
			"relkind", t, "relnatts", i2, "relhasindex", b, "relpersistence", t, "relispartition", b,
			"reltuples", types.TFloat4, "relpages", i4, "relchecks", i2, "relhasrules", b, "relhastriggers", b,
			"relrowsecurity", b, "relforcerowsecurity", b, "relispopulated", b, "relreplident", t,
			"reloftype", oid, "reltablespace", oid, "relacl", t)},
			Rows: func(env *Env) []types.Row {
				var out []types.Row
				add := func(r *catalog.Relation, schema string) {
					hasIndex := len(r.PrimaryKey) > 0
					out = append(out, types.Row{RelationOID(r.ID), r.Name, NamespaceOID(schema), int64(0), int64(ownerOID), int64(0),
						relkind(r.Kind), int64(len(r.Columns)), hasIndex, "p", false,
						float64(-1), int64(0), int64(0), false, false, false, false, true, "d", int64(0), int64(0), nil})
				}
				for _, st := range All() {
					add(st.Rel, st.Schema)
				}
				for _, r := range env.Relations {
					add(r, SchemaPublic)
				}
				return out
			}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_attribute", Columns: columns(
			"attrelid", oid, "attname", name, "atttypid", oid, "attnum", i2, "atttypmod", i4, "attnotnull", b,
			"attisdropped", b, "atthasdef", b, "attidentity", t, "attgenerated", t, "attlen", i2, "attcollation", oid)},
			Rows: func(env *Env) []types.Row {
				var out []types.Row
				add := func(r *catalog.Relation) {
					for i, c := range r.Columns {
						out = append(out, types.Row{RelationOID(r.ID), c.Name, int64(c.Type.OID()), int64(i + 1), int64(c.Type.Typmod),
							c.NotNull, false, c.Default != "", "", "", int64(c.Type.TypLen()), int64(0)})
					}
				}
				for _, st := range All() {
					add(st.Rel)
				}
				for _, r := range env.Relations {
					add(r)
				}
				return out
			}},
		{Schema: SchemaPgCatalog, Rel: &catalog.Relation{Name: "pg_type", Columns: columns(
			"oid", oid, "typname", name, "typnamespace", oid, "typlen", i2, "typtype", t, "typelem", oid,
			"typarray", oid, "typbasetype", oid, "typtypmod", i4, "typnotnull", b)},
			Rows: func(*Env) []types.Row {
				var out []types.Row
				for _, ty := range builtinTypes() {
					elem, arr := int64(0), int64(types.ArrayOf(ty).OID())
					out = append(out, types.Row{int64(ty.OID()), pgTypeName(ty), int64(OIDPgCatalog), int64(ty.TypLen()), "b", elem, arr, int64(0), int64(-1), false})
					out = append(out, types.Row{arr, "_" + pgTypeName(ty), int64(OIDPgCatalog), int64(-1), "b", int64(ty.OID()), int64(0), int64(0), int64(-1), false})
				}
				return out
			}},
	}
}

// builtinTypes lists the scalar types pg_type describes.
func builtinTypes() []types.Type {
	return []types.Type{types.TBool, types.TInt2, types.TInt4, types.TInt8, types.TFloat4, types.TFloat8, types.TNumeric,
		types.TText, types.TVarchar, {Kind: types.KindChar, Typmod: -1}, types.TName, types.TBytea, types.TDate, types.TTime,
		types.TTimestamp, types.TTimestampTZ, types.TInterval, types.TUUID, types.TJSONB, {Kind: types.KindJSON, Typmod: -1}, types.TOID}
}

// pgTypeName is pg_type.typname (the internal name, e.g. int4).
func pgTypeName(t types.Type) string {
	switch t.Kind {
	case types.KindBool:
		return "bool"
	case types.KindInt2:
		return "int2"
	case types.KindInt4:
		return "int4"
	case types.KindInt8:
		return "int8"
	case types.KindFloat4:
		return "float4"
	case types.KindFloat8:
		return "float8"
	case types.KindVarchar:
		return "varchar"
	case types.KindChar:
		return "bpchar"
	case types.KindTime:
		return "time"
	case types.KindTimestamp:
		return "timestamp"
	case types.KindTimestampTZ:
		return "timestamptz"
	}
	return lower(t.SQLName())
}

