// Package syscat defines RockStream's system relations — pg_catalog,
// information_schema and rockstream_catalog (spec §12.6.1) — as read-only
// virtual tables whose rows are generated from the catalog and the shard's
// status when a query reads them.
//
// System relations have fixed ids below the first user object id, so plans
// and catalog snapshots refer to them like any relation; the engine's read
// path asks Rows for them instead of the shard.
//
//	SELECT name, rows FROM rockstream_catalog.views
//	  └─ binder: Snapshot.LookupRelation(["rockstream_catalog","views"]) → syscat.Lookup
//	  └─ engine: readSnapshot → syscat.Rows(views, env) → zset.Batch
package syscat

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Schema names of the system relations.
const (
	SchemaPgCatalog  = "pg_catalog"
	SchemaInfo       = "information_schema"
	SchemaRockStream = "rockstream_catalog"
	SchemaPublic     = "public"
)

// FirstUserObject is the lowest object number user relations get; system
// relations live below it.
const FirstUserObject = 1000

// Env is what system rows are generated from.
type Env struct {
	// Relations are the namespace's user relations, sorted by id.
	Relations []*catalog.Relation
	// Dependencies returns the relations a view reads.
	Dependencies func(catalog.ID) []catalog.ID
	// Views are the shard's per-view statistics, by view id.
	Views map[catalog.ID]ViewStats
	// Frontier and LastEpoch are the shard's epochs.
	Frontier, LastEpoch uint64
	// User and Database name the session (current_user, current_database()).
	User, Database string
	// Settings lists the session's parameters for pg_settings: name → value.
	Settings []Setting
	// SequenceValue is a sequence's last_value and is_called (pg_sequences);
	// nil: unknown (last_value shows NULL).
	SequenceValue func(catalog.ID) (last int64, called bool, ok bool)
	// PreparedStatements are the session's named prepared statements
	// (pg_prepared_statements).
	PreparedStatements []PreparedStatement
}

// PreparedStatement is one pg_prepared_statements row.
type PreparedStatement struct {
	Name, Statement string
	// PrepareTime is microseconds since 2000-01-01 UTC (timestamptz).
	PrepareTime int64
	ParamTypes  []types.Type
	FromSQL     bool
	// GenericPlans and CustomPlans count executions by plan kind.
	GenericPlans, CustomPlans int64
}

// ViewStats are the numbers SHOW VIEW STATUS and rockstream_catalog.views show.
type ViewStats struct {
	Rows, StateRows, StateBytes int64
	Error                       string
	// Failed is why the view could not be built ("" when it runs).
	Failed string
}

// ViewState is a materialized view's state column and its error text:
// "running", "error" (an input row makes an expression fail) or "failed"
// (the view could not be built and is not maintained).
func ViewState(st ViewStats) (string, types.Datum) {
	switch {
	case st.Failed != "":
		return "failed", st.Failed
	case st.Error != "":
		return "error", st.Error
	}
	return "running", nil
}

// Setting is one pg_settings row.
type Setting struct {
	Name, Value, Category, Description, VarType string
}

// Table is one system relation.
type Table struct {
	Schema string
	Rel    *catalog.Relation
	Rows   func(env *Env) []types.Row
}

// registry holds every system table, by schema then name.
type registry struct {
	byName map[string]*Table
	byID   map[catalog.ID]*Table
	all    []*Table
}

func key(schema, name string) string { return schema + "." + name }

// columns builds a column list from "name type" pairs.
func columns(pairs ...any) []catalog.Column {
	var out []catalog.Column
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, catalog.Column{Name: pairs[i].(string), Type: pairs[i+1].(types.Type)})
	}
	return out
}

func newRegistry(tables []*Table) *registry {
	r := &registry{byName: map[string]*Table{}, byID: map[catalog.ID]*Table{}}
	for i, t := range tables {
		var obj catalog.ObjectID
		n := uint64(i + 1)
		for b := 0; b < 8; b++ {
			obj[15-b] = byte(n >> (8 * b))
		}
		t.Rel.ID = catalog.ID{Object: obj}
		t.Rel.Kind = catalog.KindTable
		// INVARIANT: system ids stay below user ids.
		if n >= FirstUserObject {
			panic("syscat: too many system tables")
		}
		r.byName[key(t.Schema, t.Rel.Name)] = t
		r.byID[t.Rel.ID] = t
		r.all = append(r.all, t)
	}
	return r
}

// Lookup resolves a (possibly qualified, folded) name to a system relation.
// Unqualified names resolve in pg_catalog, as PostgreSQL's implicit
// search_path does.
func Lookup(name []string) (*catalog.Relation, bool) {
	var t *Table
	switch len(name) {
	case 1:
		t = tables().byName[key(SchemaPgCatalog, name[0])]
	case 2:
		t = tables().byName[key(name[0], name[1])]
	}
	if t == nil {
		return nil, false
	}
	return t.Rel, true
}

// IsSystem reports whether id is a system relation.
func IsSystem(id catalog.ID) bool {
	_, ok := tables().byID[id]
	return ok
}

// ByID returns a system relation.
func ByID(id catalog.ID) (*catalog.Relation, bool) {
	t, ok := tables().byID[id]
	if !ok {
		return nil, false
	}
	return t.Rel, true
}

// SchemaOf returns the schema a system relation lives in.
func SchemaOf(id catalog.ID) string {
	if t, ok := tables().byID[id]; ok {
		return t.Schema
	}
	return SchemaPublic
}

// Rows generates a system relation's rows.
func Rows(id catalog.ID, env *Env) zset.Batch {
	t := tables().byID[id]
	var b zset.Batch
	for _, r := range t.Rows(env) {
		b.Add(r, 1)
	}
	return b
}

// All lists the system tables (for pg_class), in id order.
func All() []*Table { return tables().all }

func lower(s string) string { return strings.ToLower(s) }

// validate checks that every system table's generated rows match its
// column count (a programming error otherwise).
func validate(env *Env) error {
	for _, t := range All() {
		for _, r := range t.Rows(env) {
			if len(r) != len(t.Rel.Columns) {
				return fmt.Errorf("syscat: %s.%s: row has %d values, want %d", t.Schema, t.Rel.Name, len(r), len(t.Rel.Columns))
			}
		}
	}
	return nil
}
