package engine

import (
	"context"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/connect/kafka"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
)

// createKafkaSource runs CREATE SOURCE name (columns) FROM KAFKA (...):
// the source relation (holding the records' rows, keyed by the key
// option's columns if any) and its dead-letter relation name_errors enter
// the catalog in one change, and the source starts consuming. No broker
// is asked here: an unreachable one shows as RETRYING in
// rockstream_catalog.sources.
func (s *session) createKafkaSource(ctx context.Context, st *ddl.CreateSource, sqlText string) (control.DDLResult, error) {
	spec := st.Kafka
	src := &catalog.Relation{Kind: catalog.KindSource, Name: st.Name, Columns: spec.Columns, PrimaryKey: spec.Key,
		InsertOnly: spec.Key == nil, SQL: sqlText}
	errs := &catalog.Relation{Kind: catalog.KindSource, Name: st.Name + ddl.KafkaErrorsSuffix, Columns: kafka.DeadLetterColumns(),
		PrimaryKey: kafka.DeadLetterKey, Upstream: &catalog.Upstream{Schema: "kafka", Table: spec.Topic}}
	r, err := s.control(ctx, control.CreateRelation{Relation: src, Subsources: []*catalog.Relation{errs}})
	if err != nil {
		return control.DDLResult{}, err
	}
	if err := s.syncShard(ctx, true); err != nil {
		return control.DDLResult{}, err
	}
	if r.Changed != nil {
		if err := s.e.startSource(r.Version, r.Changed); err != nil {
			return control.DDLResult{}, err
		}
	}
	return r, nil
}

// startKafkaSource starts consuming a KAFKA source's topic (at start-up
// or after CREATE SOURCE).
func (e *Engine) startKafkaSource(catalogVersion uint64, rel *catalog.Relation, spec *ddl.KafkaSource) error {
	snap, err := e.snapshot(context.Background())
	if err != nil {
		return err
	}
	var errorsID catalog.ID
	for _, r := range snap.Relations() {
		if r.Upstream != nil && r.Upstream.Source == rel.ID {
			errorsID = r.ID
		}
	}
	e.cdcMu.Lock()
	defer e.cdcMu.Unlock()
	if _, running := e.cdc[rel.ID]; running {
		return nil
	}
	if e.cdc == nil {
		e.cdc = map[catalog.ID]*cdcSource{}
	}
	e.cdc[rel.ID] = &cdcSource{name: rel.Name, kafka: kafka.Start(kafka.Config{
		Name: rel.Name, Source: rel.ID, Errors: errorsID, Spec: spec, Logger: e.log,
		Sink: kafkaSink{e: e, source: rel.ID, catalogVersion: max(catalogVersion, snap.Version)},
	})}
	return nil
}

// kafkaSink is the shard as a KAFKA source sees it: commits of its rows
// carrying the next offset of every partition they came from.
type kafkaSink struct {
	e              *Engine
	source         catalog.ID
	catalogVersion uint64
}

func (k kafkaSink) Offset(ctx context.Context, partition uint32) (uint64, error) {
	m, err := k.e.ask(ctx, k.e.tableShard(), shard.GetSourceOffset{Source: k.source, Partition: partition})
	if err != nil {
		return 0, err
	}
	return m.(shard.SourceOffset).Offset, nil
}

func (k kafkaSink) Commit(ctx context.Context, writes []shard.RowWrite, offsets []shard.SourceOffset) error {
	m, err := k.e.ask(ctx, k.e.tableShard(), shard.Commit{CatalogVersion: k.catalogVersion, Writes: writes, Offsets: offsets})
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
