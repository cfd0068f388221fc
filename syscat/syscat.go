// Package syscat defines RockStream's system relations — pg_catalog,
// information_schema and rockstream_catalog (spec §12.6.1) — as read-only
// virtual tables whose rows are generated from the catalog and the shard's
// status when a query reads them.
//
// System relations have fixed ids below the first user object id, so plans
// and catalog snapshots refer to them like any relation; the engine's read
// path asks Rows for them instead of the shard. Their identity (schema, name,
// columns, id) lives in the leaf package sysrel, which the control actor
// imports; this package pairs each with the function generating its rows.
//
//	SELECT name, rows FROM rockstream_catalog.views
//	  └─ binder: Snapshot.LookupRelation(["rockstream_catalog","views"]) → sysrel.Lookup
//	  └─ engine: readSnapshot → syscat.Rows(views, env) → zset.Batch
package syscat

import (
	"fmt"
	"strings"
	"time"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/syscat/sysrel"
)

// Schema names of the system relations (defined with their identity in
// sysrel).
const (
	SchemaPgCatalog  = sysrel.SchemaPgCatalog
	SchemaInfo       = sysrel.SchemaInfo
	SchemaRockStream = sysrel.SchemaRockStream
	SchemaPublic     = sysrel.SchemaPublic
)

// FirstUserObject is the lowest object number user relations get; system
// relations live below it.
const FirstUserObject = sysrel.FirstUserObject

// Env is what system rows are generated from.
type Env struct {
	// Relations are the namespace's user relations, sorted by id.
	Relations []*catalog.Relation
	// Schemas are the schemas CREATE SCHEMA made, sorted by id.
	Schemas []*catalog.Relation
	// SearchPath is the session's search_path as the schemas that exist
	// (pg_table_is_visible, regclass output); nil: public.
	SearchPath []string
	// ViewDefinition is a view's definition as pg_get_viewdef shows it to
	// the session (names qualified off the search_path); nil: as written.
	ViewDefinition func(*catalog.Relation) string
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
	// Roles are the server's roles, sorted by name (pg_roles, pg_user,
	// pg_authid); nil: the session user is the one role shown.
	Roles []Role
	// Activity are the server's client sessions (pg_stat_activity).
	Activity []Activity
	// Now is the statement's time (rates in rockstream_catalog.progress).
	Now time.Time
	// Sources are the running change-data-capture sources' statuses
	// (rockstream_catalog.sources), by source name.
	Sources map[string]SourceStatus
	// Sinks are the sinks with their statuses (rockstream_catalog.sinks),
	// sorted by creation.
	Sinks []SinkStatus
}

// SinkStatus is one sink's definition and delivery progress.
type SinkStatus struct {
	// Kind is "kafka" or "postgres"; Target the topic or the table (as
	// written); Topic is set for Kafka sinks only; Format is a Kafka
	// sink's format or a PostgreSQL sink's mode.
	Name, Kind, View, Target, Topic, Format, Definition string
	// State is "" when the sink is not running in this process.
	State string
	// DeliveredEpoch is the last epoch committed downstream (0: none
	// yet); Records and Transactions count this process's commits.
	DeliveredEpoch                uint64
	Records, Transactions, Errors uint64
	Error                         string
	// Lag is how many epochs the view's frontier is past DeliveredEpoch
	// (HasLag false: not running here, or nothing delivered yet).
	Lag    uint64
	HasLag bool
}

// SourceStatus is a change-data-capture source's state and progress.
type SourceStatus struct {
	State, Slot string
	// UpstreamLSN is the newest upstream position seen; CommittedLSN the
	// one durably committed with the mirrored rows.
	UpstreamLSN, CommittedLSN uint64
	Rows, Errors              uint64
	Error                     string
	// Kafka marks a KAFKA source: it has no slot or LSNs but LagRecords
	// (high watermark − committed offset, summed over partitions) and
	// BadRecords (records sent to its dead-letter relation).
	Kafka                  bool
	LagRecords, BadRecords uint64
}

// Activity is one client session as pg_stat_activity shows it; zero
// times and empty strings show NULL where PostgreSQL shows NULL.
type Activity struct {
	PID                      int64
	User, Database           string
	ApplicationName          string
	ClientAddr               string
	ClientPort               int64
	BackendStart, XactStart  time.Time
	QueryStart, StateChange  time.Time
	WaitEventType, WaitEvent string
	State, Query             string
	// Copy is the session's running COPY (nil: none).
	Copy *CopyProgress
}

// CopyProgress is a running COPY (pg_stat_progress_copy and
// rockstream_catalog.progress).
type CopyProgress struct {
	// Command is "COPY FROM" or "COPY TO", Type "PIPE".
	Command, Type string
	// RelationOID is the table's pg_class oid (0: a query, NULL); Relation
	// its name.
	RelationOID           int64
	Relation              string
	Started               time.Time
	BytesDone, TuplesDone int64
}

// Role is one role as pg_roles shows it.
type Role struct {
	Name      string
	OID       int64
	Superuser bool
	Login     bool
	// Verifier is pg_authid.rolpassword ("" shows NULL).
	Verifier string
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
	// Backfill is the state of the view's first fill from its inputs
	// while it runs ("" once the view is maintained); BackfillRowsRead
	// the input rows it fed so far.
	Backfill         string
	BackfillRowsRead int64
	// BackfillPercent estimates how much of its inputs the backfill fed.
	BackfillPercent float64
	// Freshness are the view's freshness_target, freshness_lag,
	// freshness_met and freshness_reason columns (nil: all NULL).
	Freshness types.Row
}

// ViewState is a materialized view's state column and its error text:
// "running", "backfilling" (being filled from its inputs, not readable
// yet), "error" (an input row makes an expression fail) or "failed" (the
// view could not be built and is not maintained).
func ViewState(st ViewStats) (string, types.Datum) {
	switch {
	case st.Failed != "":
		return "failed", st.Failed
	case st.Backfill != "":
		return "backfilling", nil
	case st.Error != "":
		return "error", st.Error
	}
	return "running", nil
}

// Setting is one pg_settings row.
type Setting struct {
	Name, Value, Category, Description, VarType string
}

// Table is one system relation: its identity (sysrel) and its rows.
type Table struct {
	Schema string
	Rel    *catalog.Relation
	Rows   func(env *Env) []types.Row
}

// rowSource generates the rows of the system relation schema.name.
type rowSource struct {
	schema, name string
	rows         func(env *Env) []types.Row
}

// registry holds every system table, by id and in id order.
type registry struct {
	byID map[catalog.ID]*Table
	all  []*Table
}

// newRegistry pairs every system relation with its row source.
//
// INVARIANT: sysrel and syscat describe the same relations: each relation has
// exactly one row source and each row source names a relation. A mismatch is
// a programming error, caught by the first use (every test that reads a
// system relation).
func newRegistry(relations []sysrel.Relation, sources []rowSource) *registry {
	bySchemaName := map[string]rowSource{}
	for _, src := range sources {
		k := src.schema + "." + src.name
		if _, dup := bySchemaName[k]; dup {
			panic("syscat: two row sources for " + k)
		}
		bySchemaName[k] = src
	}
	r := &registry{byID: map[catalog.ID]*Table{}}
	for _, rel := range relations {
		k := rel.Schema + "." + rel.Rel.Name
		src, ok := bySchemaName[k]
		if !ok {
			panic("syscat: no rows for system relation " + k)
		}
		delete(bySchemaName, k)
		t := &Table{Schema: rel.Schema, Rel: rel.Rel, Rows: src.rows}
		r.byID[rel.Rel.ID] = t
		r.all = append(r.all, t)
	}
	if len(bySchemaName) > 0 {
		panic(fmt.Sprintf("syscat: %d row sources name no system relation", len(bySchemaName)))
	}
	return r
}

// Lookup resolves a (possibly qualified, folded) name to a system relation
// (sysrel.Lookup).
func Lookup(name []string) (*catalog.Relation, bool) { return sysrel.Lookup(name) }

// IsSystem reports whether id is a system relation (sysrel.IsSystem).
func IsSystem(id catalog.ID) bool { return sysrel.IsSystem(id) }

// SchemaOf returns the schema a system relation lives in (sysrel.SchemaOf).
func SchemaOf(id catalog.ID) string { return sysrel.SchemaOf(id) }

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
