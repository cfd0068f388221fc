package engine

import (
	"context"
	"errors"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/source"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/runtime"
)

// startSource spawns the generator of a GENERATE ROWS source; its commits
// name catalogVersion, a catalog holding the source.
func (e *Engine) startSource(catalogVersion uint64, rel *catalog.Relation) error {
	st, err := parse.ParseOne(rel.SQL)
	if err != nil {
		return err
	}
	conv, err := ddl.Convert(st)
	if err != nil {
		return err
	}
	spec, ok := conv.(*ddl.CreateSource)
	if !ok {
		return errcode.New(errcode.InternalError, "source %s has no generator definition", rel.Name)
	}
	if spec.Postgres != nil {
		return e.startPostgresSource(catalogVersion, rel, spec.Postgres)
	}
	if spec.Kafka != nil {
		return e.startKafkaSource(catalogVersion, rel, spec.Kafka)
	}
	err = e.rt.Spawn("embedded", source.ActorID(rel.ID), source.New(source.Config{CatalogVersion: catalogVersion, Source: rel.ID, Spec: spec, Router: e.router}))
	if errors.Is(err, runtime.ErrDuplicateActor) {
		return nil
	}
	return err
}

// stopSource stops a dropped source: a generator's actor, or a POSTGRES
// source's replication (and its slot upstream: the error says why it
// could not be dropped).
func (e *Engine) stopSource(id catalog.ID) error {
	if ok, err := e.stopPostgresSource(id, true); ok {
		return err
	}
	_ = e.rt.Stop(source.ActorID(id))
	return nil
}

// startSources starts the generators of every source in the catalog (at
// start-up, after the shard is hydrated).
func (e *Engine) startSources(_ context.Context, snap *control.Snapshot) error {
	for _, rel := range snap.Relations() {
		// Mirrored tables (Upstream) are written by their source.
		if rel.Kind == catalog.KindSource && rel.Upstream == nil {
			if err := e.startSource(snap.Version, rel); err != nil {
				return err
			}
		}
	}
	for _, rel := range snap.Sinks() {
		if err := e.startSink(snap, rel); err != nil {
			return err
		}
	}
	return nil
}
