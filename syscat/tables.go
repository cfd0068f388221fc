package syscat

import (
	"math"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat/sysrel"
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
	tablesOnce.Do(func() { theTables = newRegistry(sysrel.All(), rowSources()) })
	return theTables
}

// relkind is pg_class.relkind.
func relkind(k catalog.Kind) string {
	switch k {
	case catalog.KindView:
		return "v"
	case catalog.KindMaterializedView:
		return "m"
	case catalog.KindSequence:
		return "S"
	case catalog.KindIndex:
		return "i"
	}
	return "r"
}

// rowSources generates the rows of the rockstream_catalog relations and
// pg_namespace, then of the pg_catalog and information_schema compatibility
// relations (pgCatalogRows); sysrel defines their columns.
func rowSources() []rowSource {
	return append([]rowSource{
		{SchemaRockStream, "tables", func(env *Env) []types.Row {
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
				out = append(out, types.Row{r.Name, r.Kind.String(), int64(len(r.Columns)), pk, r.InsertOnly})
			}
			return out
		}},
		{SchemaRockStream, "progress", progressRows},
		{SchemaRockStream, "views", func(env *Env) []types.Row {
			var out []types.Row
			byID := make(map[catalog.ID]*catalog.Relation, len(env.Relations))
			for _, r := range env.Relations {
				byID[r.ID] = r
			}
			current := func(id catalog.ID) (*catalog.Relation, bool) { r, ok := byID[id]; return r, ok }
			for _, r := range env.Relations {
				switch r.Kind {
				case catalog.KindMaterializedView:
					st := env.Views[r.ID]
					state, errText := ViewState(st)
					freshness := st.Freshness
					if freshness == nil {
						freshness = types.Row{nil, nil, nil, nil}
					}
					out = append(out, append(types.Row{r.Name, "materialized", r.SQL, state, st.Rows, st.StateRows, st.StateBytes,
						int64(env.Frontier), int64(env.LastEpoch - env.Frontier), errText, r.BehindInputs(current)}, freshness...))
				case catalog.KindView:
					out = append(out, types.Row{r.Name, "inline", r.SQL, "inline", nil, nil, nil, nil, nil, nil, false, nil, nil, nil, nil})
				}
			}
			return out
		}},
		{SchemaRockStream, "sources", sourceRows},
		{SchemaRockStream, "sinks", sinkRows},
		{SchemaPgCatalog, "pg_namespace", func(env *Env) []types.Row {
			out := []types.Row{
				{int64(OIDPgCatalog), SchemaPgCatalog, int64(ownerOID), nil},
				{int64(OIDPublic), SchemaPublic, int64(ownerOID), nil},
				{int64(OIDInfoSchema), SchemaInfo, int64(ownerOID), nil},
				{int64(OIDRockStream), SchemaRockStream, int64(ownerOID), nil},
			}
			for _, s := range env.Schemas {
				out = append(out, types.Row{RelationOID(s.ID), s.Name, int64(ownerOID), nil})
			}
			return out
		}},
	}, pgCatalogRows()...)
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

// progressRows is rockstream_catalog.progress: every COPY running now,
// then every materialized view being filled from its inputs (its phase:
// queued, reading inputs, catching up; the input rows fed so far and the
// estimated percent of its inputs).
func progressRows(env *Env) []types.Row {
	now := env.Now
	var out []types.Row
	for _, a := range env.Activity {
		cp := a.Copy
		if cp == nil {
			continue
		}
		var perSecond types.Datum
		if d := now.Sub(cp.Started); d > 0 && !now.IsZero() {
			perSecond = int64(float64(cp.TuplesDone) / d.Seconds())
		}
		out = append(out, types.Row{a.PID, "copy", nullIfEmpty(cp.Relation), strings.ToLower(cp.Command), cp.TuplesDone, nil, cp.BytesDone,
			timestampOrNull(cp.Started), perSecond, nil})
	}
	for _, r := range env.Relations {
		if st := env.Views[r.ID]; r.Kind == catalog.KindMaterializedView && st.Backfill != "" {
			out = append(out, types.Row{nil, "backfill", r.Name, st.Backfill, st.BackfillRowsRead, nil, nil, nil, nil, percent(st.BackfillPercent)})
		}
	}
	return out
}

// percent is a percentage rounded to a tenth, as a float4.
func percent(p float64) types.Datum {
	return float64(float32(math.Round(p*10) / 10))
}
