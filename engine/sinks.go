package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/subscriber"
	"github.com/rockstream/rockstream/connect/kafka"
	"github.com/rockstream/rockstream/connect/pgsink"
	"github.com/rockstream/rockstream/connect/sink"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/syscat"
)

// runningSink is a KAFKA or POSTGRES sink running in this process.
type runningSink struct {
	name string
	view catalog.ID
	w    interface {
		Stop()
		Status() sink.Status
	}
}

// sinkConfig is a sink's configuration from its definition and view.
type sinkConfig struct {
	spec *ddl.CreateSink
	view *catalog.Relation
	key  []int
}

// pgsinkConfig is a POSTGRES sink's configuration.
func (e *Engine) pgsinkConfig(c sinkConfig, name string) pgsink.Config {
	return pgsink.Config{Name: name, Spec: c.spec.Postgres, Columns: c.view.Columns, Key: c.key, Logger: e.log,
		Changes: viewChanges{e: e, view: c.view.ID, width: len(c.view.Columns)}}
}

// createSink runs CREATE SINK name FROM view INTO KAFKA | POSTGRES (...):
// the sink enters the catalog depending on its view (DROP MATERIALIZED
// VIEW refuses while it exists; CASCADE drops it), and starts. No Kafka
// broker is asked here (an unreachable one shows as RETRYING in
// rockstream_catalog.sinks); a POSTGRES sink's database is, to check its
// table (pgsink.Check) before anything is created.
func (s *session) createSink(ctx context.Context, snap *control.Snapshot, st *ddl.CreateSink, sqlText string) (control.DDLResult, error) {
	view, ok := snap.LookupRelation([]string{st.View})
	if !ok {
		return control.DDLResult{}, errcode.New(errcode.UndefinedObject, "materialized view %q does not exist", st.View)
	}
	if view.Kind != catalog.KindMaterializedView {
		return control.DDLResult{}, errcode.New(errcode.WrongObjectType, "CREATE SINK needs a materialized view; %q is a %s", st.View, view.Kind)
	}
	key, err := sinkKey(view, st)
	if err != nil {
		return control.DDLResult{}, err
	}
	if st.Postgres != nil {
		if st.Postgres.SinkID == "" {
			var r [8]byte
			if _, err := rand.Read(r[:]); err != nil {
				return control.DDLResult{}, errcode.Wrap(errcode.InternalError, err, "cannot draw a sink id")
			}
			spec := *st.Postgres
			spec.SinkID = "rockstream_" + hex.EncodeToString(r[:])
			st.Postgres = &spec
			sqlText = canonicalPostgresSink(st)
		}
		if err := pgsink.Check(ctx, s.e.pgsinkConfig(sinkConfig{spec: st, view: view, key: key}, st.Name)); err != nil {
			return control.DDLResult{}, err
		}
	}
	r, err := s.control(ctx, control.CreateRelation{
		Relation: &catalog.Relation{Kind: catalog.KindSink, Name: st.Name, SQL: sqlText},
		Deps:     []catalog.ID{view.ID},
	})
	if err != nil {
		return control.DDLResult{}, err
	}
	if r.Changed != nil {
		// NB: the control plane answers with its newest catalog, which
		// holds the sink.
		next, err := s.e.snapshot(ctx)
		if err != nil {
			return control.DDLResult{}, err
		}
		if err := s.e.startSink(next, r.Changed); err != nil {
			return control.DDLResult{}, err
		}
	}
	return r, nil
}

// canonicalPostgresSink is the CREATE SINK statement a POSTGRES sink is
// stored as, with every option spelled out (its drawn sink_id included).
func canonicalPostgresSink(st *ddl.CreateSink) string {
	spec := st.Postgres
	key := ""
	if len(spec.Key) > 0 {
		key = ", key = " + quoteString(strings.Join(spec.Key, ","))
	}
	return fmt.Sprintf("CREATE SINK %s FROM %s INTO POSTGRES (connection = %s, table = %s, mode = %s%s, sink_id = %s)",
		quoteSourceName(st.Name), quoteSourceName(st.View), quoteString(spec.Connection), quoteString(spec.Table),
		quoteString(spec.Mode), key, quoteString(spec.SinkID))
}

// sinkKey is the indexes of a sink's key columns in its view's columns.
func sinkKey(view *catalog.Relation, spec *ddl.CreateSink) ([]int, error) {
	var key []int
	for _, k := range spec.Key() {
		at := view.ColumnIndex(k)
		if at < 0 {
			return nil, errcode.New(errcode.ConnectorOptionUnsupported, "%s sink option key names column \"%s\", which materialized view %s does not have",
				strings.ToUpper(spec.Kind()), k, view.Name)
		}
		key = append(key, at)
	}
	return key, nil
}

// sinkSpec parses a sink's definition.
func sinkSpec(rel *catalog.Relation) (*ddl.CreateSink, error) {
	st, err := parse.ParseOne(rel.SQL)
	if err != nil {
		return nil, err
	}
	conv, err := ddl.Convert(st)
	if err != nil {
		return nil, err
	}
	spec, ok := conv.(*ddl.CreateSink)
	if !ok {
		return nil, errcode.New(errcode.InternalError, "sink %s has no sink definition", rel.Name)
	}
	return spec, nil
}

// startSink starts a sink (at start-up or after CREATE SINK). Its view is
// the one it depends on, whatever its name now.
func (e *Engine) startSink(snap *control.Snapshot, rel *catalog.Relation) error {
	spec, err := sinkSpec(rel)
	if err != nil {
		return err
	}
	deps := snap.Dependencies(rel.ID)
	if len(deps) != 1 {
		return errcode.New(errcode.InternalError, "sink %s depends on %d relations, not its view", rel.Name, len(deps))
	}
	view, ok := snap.RelationByID(deps[0])
	if !ok || view.Kind != catalog.KindMaterializedView {
		return errcode.New(errcode.InternalError, "the view of sink %s is missing", rel.Name)
	}
	key, err := sinkKey(view, spec)
	if err != nil {
		return err
	}
	e.cdcMu.Lock()
	defer e.cdcMu.Unlock()
	if _, running := e.sinks[rel.ID]; running {
		return nil
	}
	if e.sinks == nil {
		e.sinks = map[catalog.ID]*runningSink{}
	}
	run := &runningSink{name: rel.Name, view: view.ID}
	if spec.Postgres != nil {
		run.w = pgsink.Start(e.pgsinkConfig(sinkConfig{spec: spec, view: view, key: key}, rel.Name))
	} else {
		run.w = kafka.StartSink(kafka.SinkConfig{
			Name: rel.Name, ID: rel.ID, Spec: spec.Kafka, Columns: view.Columns, Key: key, Logger: e.log,
			Changes: viewChanges{e: e, view: view.ID, width: len(view.Columns)},
		})
	}
	e.sinks[rel.ID] = run
	return nil
}

// stopSink stops a dropped sink (a Kafka sink's open transaction, if any,
// is aborted by the brokers' transaction timeout; a PostgreSQL sink's by
// closing its connection).
func (e *Engine) stopSink(id catalog.ID) {
	e.cdcMu.Lock()
	s, ok := e.sinks[id]
	delete(e.sinks, id)
	e.cdcMu.Unlock()
	if ok {
		s.w.Stop()
	}
}

// stopSinks stops every sink (engine shutdown).
func (e *Engine) stopSinks() {
	e.cdcMu.Lock()
	ids := make([]catalog.ID, 0, len(e.sinks))
	for id := range e.sinks { //lint:maprange every entry is stopped; order does not matter
		ids = append(ids, id)
	}
	e.cdcMu.Unlock()
	for _, id := range ids {
		e.stopSink(id)
	}
}

// syscatSinks are rockstream_catalog.sinks' rows: every sink of the
// catalog, with the status of the ones running here; frontier is each
// view's frontier (a sink's lag is how far its delivered epoch is behind
// its view's).
func (e *Engine) syscatSinks(snap *control.Snapshot, frontier map[catalog.ID]uint64) []syscat.SinkStatus {
	e.cdcMu.Lock()
	defer e.cdcMu.Unlock()
	var out []syscat.SinkStatus
	for _, rel := range snap.Sinks() {
		row := syscat.SinkStatus{Name: rel.Name, Definition: rel.SQL}
		var view catalog.ID
		if deps := snap.Dependencies(rel.ID); len(deps) == 1 {
			if v, ok := snap.RelationByID(deps[0]); ok {
				row.View, view = v.Name, v.ID
			}
		}
		if spec, err := sinkSpec(rel); err == nil {
			row.Kind = spec.Kind()
			if spec.Postgres != nil {
				row.Target, row.Format = spec.Postgres.Table, spec.Postgres.Mode
			} else {
				row.Topic, row.Target, row.Format = spec.Kafka.Topic, spec.Kafka.Topic, spec.Kafka.Format
			}
		}
		if s, ok := e.sinks[rel.ID]; ok {
			st := s.w.Status()
			row.State, row.DeliveredEpoch, row.Records, row.Transactions = st.State, st.Epoch, st.Records, st.Transactions
			row.Errors, row.Error = st.Errors, st.LastError
			if f, ok := frontier[view]; ok && st.Epoch != 0 {
				row.Lag, row.HasLag = f-min(f, st.Epoch), true
			}
		}
		out = append(out, row)
	}
	return out
}

// SinkStatus is one running sink's line in /metrics.
type SinkStatus struct {
	Name string
	View catalog.ID
	sink.Status
}

// SinkStatuses returns the running sinks' statuses, by name.
func (e *Engine) SinkStatuses() []SinkStatus {
	e.cdcMu.Lock()
	defer e.cdcMu.Unlock()
	out := make([]SinkStatus, 0, len(e.sinks))
	for _, s := range e.sinks { //lint:maprange sorted below
		out = append(out, SinkStatus{Name: s.name, View: s.view, Status: s.w.Status()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// viewChanges is a view's change stream as a sink reads it: the SUBSCRIBE
// path (an edge actor owning the bounded queue, fed by the view's shard).
type viewChanges struct {
	e     *Engine
	view  catalog.ID
	width int
}

func (v viewChanges) Open(ctx context.Context, resume bool, asOf uint64) (sink.ChangeStream, error) {
	snap, err := v.e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := v.e.openSubscription(ctx, snap, v.view, subscriptionOptions{withSnapshot: !resume, resume: resume, asOf: asOf})
	if err != nil {
		return nil, err
	}
	st := &viewStream{e: v.e, sub: sub}
	if !resume && !sub.merged {
		st.pending = []sink.Update{{After: 0, Epoch: sub.frontier, Delta: sub.snapshot}}
	}
	return st, nil
}

type viewStream struct {
	e       *Engine
	sub     *subscription
	pending []sink.Update
}

func (s *viewStream) Next(ctx context.Context) ([]sink.Update, error) {
	if len(s.pending) > 0 {
		out := s.pending
		s.pending = nil
		return out, nil
	}
	for {
		m, err := s.e.ask(ctx, s.sub.edge, subscriber.Take{})
		if err != nil {
			return nil, err
		}
		t := m.(subscriber.Taken)
		out := make([]sink.Update, 0, len(t.Updates))
		for _, u := range t.Updates {
			if u.Epoch <= u.After && u.After != 0 {
				continue // the start of a merged stream that resumed: nothing after it yet
			}
			out = append(out, sink.Update{After: u.After, Epoch: u.Epoch, Delta: u.Delta})
		}
		if len(out) > 0 {
			return out, nil
		}
		if err := t.Err(); err != nil {
			return nil, err
		}
	}
}

func (s *viewStream) Close() { _ = s.sub.close(s.e, -1) }
