package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/connect/kafka"
	"github.com/rockstream/rockstream/connect/pgcdc"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat"
)

// createPostgresSource runs CREATE SOURCE name FROM POSTGRES (...): the
// upstream publication's tables are discovered (and refused with a named
// error if they cannot be mirrored), then the source and one mirrored
// relation per table enter the catalog in one change, and the source
// starts copying.
//
// A mirror is named like its upstream table (public.orders → orders;
// another schema's table gets the schema as prefix: sales.orders →
// sales_orders), with the upstream columns and primary key.
//
// Without a slot option the source gets a slot name of its own, random,
// so two RockStream deployments replicating from one upstream never share
// one; the stored definition names it (canonicalPostgresSource).
func (s *session) createPostgresSource(ctx context.Context, st *ddl.CreateSource, sqlText string) (string, error) {
	if st.Postgres.Slot == "" {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", errcode.Wrap(errcode.InternalError, err, "cannot draw a replication slot name")
		}
		spec := *st.Postgres
		spec.Slot = "rockstream_" + hex.EncodeToString(r[:])
		st.Postgres = &spec
		sqlText = canonicalPostgresSource(st.Name, &spec)
	}
	tables, err := pgcdc.Discover(ctx, st.Postgres.Connection, st.Postgres.Publication, st.Postgres.Slot)
	if err != nil {
		return "", err
	}
	subs := make([]*catalog.Relation, len(tables))
	for i, t := range tables {
		name := t.Name
		if t.Schema != "public" {
			name = t.Schema + "_" + t.Name
		}
		subs[i] = &catalog.Relation{Kind: catalog.KindSource, Name: name, Columns: t.Columns, PrimaryKey: t.PrimaryKey,
			Upstream: &catalog.Upstream{Schema: t.Schema, Table: t.Name}}
	}
	r, err := s.control(ctx, controlCreateSource(st.Name, sqlText, subs))
	if err != nil {
		return "", err
	}
	if err := s.syncShard(ctx, true); err != nil {
		return "", err
	}
	if r.Changed != nil {
		if err := s.e.startSource(r.Version, r.Changed); err != nil {
			return "", err
		}
	}
	return r.Notice, nil
}

// canonicalPostgresSource is the CREATE SOURCE statement a POSTGRES
// source is stored as, with every option spelled out.
func canonicalPostgresSource(name string, spec *ddl.PostgresSource) string {
	return fmt.Sprintf("CREATE SOURCE %s FROM POSTGRES (connection = %s, publication = %s, slot = %s)",
		quoteSourceName(name), quoteString(spec.Connection), quoteString(spec.Publication), quoteString(spec.Slot))
}

func quoteSourceName(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// startPostgresSource starts the replication of a POSTGRES source (at
// start-up or after CREATE SOURCE); its mirrors are the relations whose
// Upstream names it.
func (e *Engine) startPostgresSource(catalogVersion uint64, rel *catalog.Relation, spec *ddl.PostgresSource) error {
	snap, err := e.snapshot(context.Background())
	if err != nil {
		return err
	}
	if spec.Slot == "" {
		return errcode.New(errcode.InternalError, "POSTGRES source %s has no replication slot in its definition", rel.Name)
	}
	var mirrors []pgcdc.Mirror
	for _, r := range snap.Relations() {
		if r.Upstream != nil && r.Upstream.Source == rel.ID {
			mirrors = append(mirrors, pgcdc.Mirror{Relation: r})
		}
	}
	sort.Slice(mirrors, func(i, j int) bool { return mirrors[i].Relation.Name < mirrors[j].Relation.Name })
	e.cdcMu.Lock()
	defer e.cdcMu.Unlock()
	if _, running := e.cdc[rel.ID]; running {
		return nil
	}
	if e.cdc == nil {
		e.cdc = map[catalog.ID]*cdcSource{}
	}
	e.cdc[rel.ID] = &cdcSource{
		name: rel.Name,
		spec: spec,
		slot: spec.Slot,
	}
	c := e.cdc[rel.ID]
	c.src = pgcdc.Start(pgcdc.Config{
		Name: rel.Name, Connection: spec.Connection, Publication: spec.Publication, Slot: c.slot,
		Mirrors: mirrors, Sink: cdcSink{e: e, source: rel.ID, catalogVersion: max(catalogVersion, snap.Version)}, Logger: e.log,
	})
	return nil
}

// cdcSource is a running POSTGRES source, or (kafka set) a running
// KAFKA source (kafka.go).
type cdcSource struct {
	name  string
	spec  *ddl.PostgresSource
	slot  string
	src   *pgcdc.Source
	kafka *kafka.Source
}

// stopPostgresSource stops a source's replication; dropSlot also drops
// its slot upstream (DROP SOURCE), so the upstream stops keeping WAL for
// it. It reports whether id was a running POSTGRES source.
func (e *Engine) stopPostgresSource(id catalog.ID, dropSlot bool) (bool, error) {
	e.cdcMu.Lock()
	c, ok := e.cdc[id]
	delete(e.cdc, id)
	e.cdcMu.Unlock()
	if !ok {
		return false, nil
	}
	if c.kafka != nil {
		// A KAFKA source keeps nothing on the brokers.
		c.kafka.Stop()
		return true, nil
	}
	c.src.Stop()
	if !dropSlot {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), slotDropTimeout)
	defer cancel()
	return true, pgcdc.DropSlot(ctx, c.spec.Connection, c.slot)
}

// slotDropTimeout bounds DROP SOURCE's wait for the upstream to drop the
// slot (the walsender of the stopped source must exit first).
const slotDropTimeout = 30 * time.Second

// stopPostgresSources stops every POSTGRES source (engine shutdown); their
// slots stay for the next start.
func (e *Engine) stopPostgresSources() {
	e.cdcMu.Lock()
	ids := make([]catalog.ID, 0, len(e.cdc))
	for id := range e.cdc { //lint:maprange every entry is stopped; order does not matter
		ids = append(ids, id)
	}
	e.cdcMu.Unlock()
	for _, id := range ids {
		_, _ = e.stopPostgresSource(id, false)
	}
}

// SourceStatus is one POSTGRES or KAFKA source's line in
// rockstream_catalog.sources and /metrics.
type SourceStatus struct {
	Name string
	pgcdc.Status
	// Kafka marks a KAFKA source: LagRecords and BadRecords are its lag
	// in records and its count of records sent to the dead-letter
	// relation (Status has no slot or LSNs then).
	Kafka                  bool
	LagRecords, BadRecords uint64
}

// SourceStatuses returns the running POSTGRES sources' statuses, by name.
func (e *Engine) SourceStatuses() []SourceStatus {
	e.cdcMu.Lock()
	defer e.cdcMu.Unlock()
	out := make([]SourceStatus, 0, len(e.cdc))
	for _, c := range e.cdc { //lint:maprange sorted below
		if c.kafka != nil {
			k := c.kafka.Status()
			out = append(out, SourceStatus{Name: c.name, Kafka: true, LagRecords: k.Lag, BadRecords: k.BadRecords,
				Status: pgcdc.Status{State: k.State, Rows: k.Rows, Errors: k.Errors, LastError: k.LastError}})
			continue
		}
		out = append(out, SourceStatus{Name: c.name, Status: c.src.Status()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// cdcSink is the shard as a POSTGRES source sees it: commits of its
// mirrors' rows carrying the LSN as the source's offset.
type cdcSink struct {
	e              *Engine
	source         catalog.ID
	catalogVersion uint64
}

func (k cdcSink) Offset(ctx context.Context) (uint64, error) {
	m, err := k.e.ask(ctx, k.e.tableShard(), shard.GetSourceOffset{Source: k.source})
	if err != nil {
		return 0, err
	}
	return m.(shard.SourceOffset).Offset, nil
}

func (k cdcSink) Commit(ctx context.Context, writes []shard.RowWrite, lsn uint64) error {
	c := shard.Commit{CatalogVersion: k.catalogVersion, Writes: writes}
	if lsn != 0 {
		c.Offset = &shard.SourceOffset{Source: k.source, Offset: lsn}
	}
	m, err := k.e.ask(ctx, k.e.tableShard(), c)
	if err != nil {
		k.e.metrics.CommitErrors.Add(1)
		return err
	}
	if c, ok := m.(shard.Committed); ok {
		k.e.epochs.record(c.Epoch, time.Now())
	}
	k.e.metrics.Commits.Add(1)
	k.e.metrics.RowsWritten.Add(uint64(len(writes)))
	return nil
}

func (k cdcSink) Lookup(ctx context.Context, table catalog.ID, key types.Row) (types.Row, error) {
	m, err := k.e.ask(ctx, k.e.tableShard(), shard.Lookup{CatalogVersion: k.catalogVersion, Table: table, Keys: []types.Row{key}})
	if err != nil {
		return nil, err
	}
	rows := m.(shard.LookupResult).Rows
	if len(rows) != 1 {
		return nil, errcode.New(errcode.InternalError, "lookup of one key returned %d rows", len(rows))
	}
	return rows[0], nil
}

func (k cdcSink) Rows(ctx context.Context, table catalog.ID) ([]types.Row, error) {
	m, err := k.e.ask(ctx, k.e.tableShard(), shard.Read{CatalogVersion: k.catalogVersion, Relations: []catalog.ID{table}})
	if err != nil {
		return nil, err
	}
	b := m.(shard.ReadResult).Batches[0]
	out := make([]types.Row, 0, len(b.Rows))
	for i, row := range b.Rows {
		// INVARIANT: a keyed table holds each row once.
		if b.Weights[i] != 1 {
			return nil, errcode.New(errcode.InternalError, "mirror row with weight %d", b.Weights[i])
		}
		out = append(out, row)
	}
	return out, nil
}

// controlCreateSource is the catalog change of a POSTGRES source: the
// source relation (it holds no rows; its SQL is the definition the
// replication restarts from) with its mirrors as subsources.
func controlCreateSource(name, sqlText string, mirrors []*catalog.Relation) control.CreateRelation {
	return control.CreateRelation{
		Relation:   &catalog.Relation{Kind: catalog.KindSource, Name: name, InsertOnly: true, SQL: sqlText},
		Subsources: mirrors,
	}
}

// syscatSources are the POSTGRES sources' statuses for
// rockstream_catalog.sources (syscat.Env.Sources).
func (e *Engine) syscatSources() map[string]syscat.SourceStatus {
	out := map[string]syscat.SourceStatus{}
	for _, s := range e.SourceStatuses() {
		out[s.Name] = syscat.SourceStatus{State: s.State, Slot: s.Slot, UpstreamLSN: s.UpstreamLSN, CommittedLSN: s.CommittedLSN,
			Rows: s.Rows, Errors: s.Errors, Error: s.LastError, Kafka: s.Kafka, LagRecords: s.LagRecords, BadRecords: s.BadRecords}
	}
	return out
}

// Lag is how far the committed position trails the upstream's, in bytes
// of WAL (0 before the upstream reported one); for a KAFKA source, in
// records.
func (s SourceStatus) Lag() uint64 {
	if s.Kafka {
		return s.LagRecords
	}
	if s.UpstreamLSN <= s.CommittedLSN {
		return 0
	}
	return s.UpstreamLSN - s.CommittedLSN
}
