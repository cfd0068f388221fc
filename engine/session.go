package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/syscat"
)

// session is one client session (gateway.Session). The gateway calls it from
// one goroutine, one call at a time.
type session struct {
	e    *Engine
	id   uint64
	info gateway.SessionInfo
	// actor is the session's actor (actors/session): it holds the open
	// transaction's writes, locks and snapshot; txn is what this side
	// needs to know of it (txn.go).
	actor runtime.ActorID
	txn   *txnState
	// settings are the session parameters of the statement being run.
	settings *gateway.Settings
	// txnImplicit is set while txn is an implicit transaction.
	txnImplicit bool
	// prepared lists the connection's named prepared statements
	// (pg_prepared_statements), from the running request.
	prepared func() []gateway.PreparedStatementInfo
	// lastStatement are the statement settings last sent to the actor
	// (startStatement), sentStatement whether any were.
	lastStatement sessionactor.Statement
	sentStatement bool
	// justPrepared is the statement the last Prepare compiled, in catalog
	// justPreparedIn: its Execute right after, for a Query message's
	// statement (ExecuteRequest.JustPrepared), runs in that catalog
	// instead of asking the control plane again.
	justPrepared   *prepared
	justPreparedIn *control.Snapshot
}

// prepared is the engine's handle of a prepared statement.
type prepared struct {
	sql            string
	paramTypes     []types.Type
	catalogVersion uint64
	// searchPath is the search_path (existing schemas) names were
	// resolved through.
	searchPath string
	stmt       rsql.Statement
	// needs are the table privileges the statement needs (privileges.go),
	// computed only for sessions that are not superusers.
	needs []relationNeed
}

// Prepare implements gateway.Session.
func (s *session) Prepare(ctx context.Context, req gateway.PrepareRequest) (*gateway.Statement, error) {
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.settings = req.Settings
	s.justPrepared, s.justPreparedIn = nil, nil
	p, err := s.compile(snap, req.SQL, req.Parsed, req.ParamTypes)
	if err != nil {
		return nil, err
	}
	s.justPrepared, s.justPreparedIn = p, snap
	st := &gateway.Statement{ParamTypes: p.paramTypes, Handle: p}
	st.Columns = resultColumns(p.stmt)
	if q, ok := p.stmt.(*rsql.Query); ok {
		st.Origins = columnOrigins(q.Origins)
	}
	return st, nil
}

// compile binds a statement in the catalog snap, resolving unqualified
// names through the session's search_path (of s.settings). tree is the
// statement's pg_query tree when the caller already parsed it (nil: none),
// so that it is parsed once.
func (s *session) compile(snap *control.Snapshot, sqlText string, tree *parse.Tree, paramTypes []types.Type) (*prepared, error) {
	path := s.searchPath(snap, s.settings)
	cat := catalog.WithSearchPath(snap, path)
	text := syscat.Rewrite(sqlText, cat)
	parsed, err := parse.ParseReusing(text, tree)
	if err != nil {
		return nil, err
	}
	var needs []relationNeed
	if s.info.Unprivileged {
		// NB: before binding, which reads the same trees.
		if text == sqlText {
			needs = parsedNeeds(parsed)
		} else {
			needs = statementNeeds(sqlText)
		}
	}
	stmts, err := rsql.CompileParsed(cat, parsed, rsql.Options{ParamTypes: paramTypes})
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, errcode.New(errcode.MultipleStatementsInPrepare, "cannot insert multiple commands into a prepared statement")
	}
	p := &prepared{sql: sqlText, catalogVersion: snap.Version, searchPath: strings.Join(path, ","), stmt: stmts[0], needs: needs}
	p.paramTypes = paramTypesOf(stmts[0])
	return p, nil
}

func paramTypesOf(st rsql.Statement) []types.Type {
	switch x := st.(type) {
	case *rsql.Query:
		return x.ParamTypes
	case *rsql.Insert:
		return x.ParamTypes
	case *rsql.Update:
		return x.ParamTypes
	case *rsql.Delete:
		return x.ParamTypes
	}
	return nil
}

// columnOrigins turns the binder's column origins into RowDescription's
// table OIDs (pg_class.oid, as syscat numbers relations) and attnums.
func columnOrigins(origins []bind.Origin) []gateway.ColumnOrigin {
	if origins == nil {
		return nil
	}
	out := make([]gateway.ColumnOrigin, len(origins))
	for i, o := range origins {
		if o.Relation != nil {
			out[i] = gateway.ColumnOrigin{TableOID: uint32(syscat.RelationOID(o.Relation.ID)), AttNum: int16(o.Column + 1)}
		}
	}
	return out
}

func schemaOf(cols []plan.Column) types.Schema {
	out := make(types.Schema, len(cols))
	for i, c := range cols {
		out[i] = types.Column{Name: c.Name, Type: c.Type, Nullable: c.Nullable}
	}
	return out
}

func resultColumns(st rsql.Statement) types.Schema {
	switch x := st.(type) {
	case *rsql.Query:
		cols := schemaOf(x.Columns)
		for _, rc := range x.RegColumns {
			cols[rc.Col].Type = rc.Type
		}
		return cols
	case *rsql.Insert:
		if x.Returning != nil {
			return schemaOf(x.Returning.Columns)
		}
	case *rsql.Update:
		if x.Returning != nil {
			return schemaOf(x.Returning.Columns)
		}
	case *rsql.Delete:
		if x.Returning != nil {
			return schemaOf(x.Returning.Columns)
		}
	case *rsql.Subscribe:
		cols := types.Schema{{Name: "mz_timestamp", Type: types.TInt8}, {Name: "mz_progressed", Type: types.TBool}, {Name: "mz_diff", Type: types.TInt8}}
		for _, c := range x.View.Columns {
			cols = append(cols, types.Column{Name: c.Name, Type: c.Type, Nullable: true})
		}
		return cols
	case *rsql.ExplainIncremental, *rsql.Explain:
		return types.Schema{{Name: "QUERY PLAN", Type: types.TText}}
	case *rsql.ShowViewStatus:
		return viewStatusColumns
	}
	return nil
}

// Execute implements gateway.Session.
func (s *session) Execute(ctx context.Context, req gateway.ExecuteRequest) (gateway.Cursor, error) {
	p := req.Statement.Handle.(*prepared)
	snap := s.justPreparedIn
	if !req.JustPrepared || p != s.justPrepared || snap == nil {
		var err error
		if snap, err = s.e.snapshot(ctx); err != nil {
			return nil, err
		}
	}
	s.justPrepared, s.justPreparedIn = nil, nil
	s.settings = req.Settings
	path := s.searchPath(snap, req.Settings)
	if snap.Version != p.catalogVersion || strings.Join(path, ",") != p.searchPath {
		// The catalog or the search_path changed since Prepare: bind
		// again so plans never run against dropped or altered relations,
		// and names resolve as PostgreSQL's plan cache would.
		np, err := s.compile(snap, p.sql, nil, p.paramTypes)
		if err != nil {
			return nil, err
		}
		if len(np.paramTypes) != len(p.paramTypes) {
			return nil, errcode.New(errcode.ParameterCountMismatch, "cached plan must not change result type").WithSQLState("0A000")
		}
		p = np
	}
	if err := s.checkPrivileges(ctx, snap, p); err != nil {
		return nil, err
	}
	s.settings = req.Settings
	s.prepared = req.PreparedStatements
	env := s.env(req.Settings, req.Params)
	env.SearchPath, env.HasSearchPath = path, true
	env.Sequences = s.sequences(ctx)
	env.Notify = req.Notify
	if err := s.startStatement(ctx, snap, p.stmt); err != nil {
		return nil, err
	}
	switch st := p.stmt.(type) {
	case *rsql.Query:
		s.e.metrics.Queries.Add(1)
		rows, err := s.query(ctx, snap, st, env)
		if err != nil {
			return nil, err
		}
		return &rowsCursor{rows: rows, tag: ""}, nil
	case *rsql.Insert:
		return s.insert(ctx, snap, st, env)
	case *rsql.Update:
		if err := s.lockKeylessTable(ctx, st.Table); err != nil {
			return nil, err
		}
		return s.retryStale(func() (gateway.Cursor, error) { return s.update(ctx, snap, st, env) })
	case *rsql.Delete:
		if err := s.lockKeylessTable(ctx, st.Table); err != nil {
			return nil, err
		}
		return s.retryStale(func() (gateway.Cursor, error) { return s.delete(ctx, snap, st, env, true) })
	case *rsql.Truncate:
		return s.truncate(ctx, snap, st, env)
	case *rsql.DDL:
		cur, err := s.ddl(ctx, snap, st, p.sql)
		if err == nil && s.txn != nil && !s.txnImplicit {
			// PostgreSQL would undo it with the transaction; say that
			// RockStream does not rather than diverge silently.
			if rc, ok := cur.(*rowsCursor); ok {
				rc.notices = append(rc.notices, errcode.New(errcode.DDLNotTransactional, "%s inside a transaction block is not undone by ROLLBACK", st.Tag()))
			}
		}
		return cur, err
	case *rsql.Subscribe:
		return s.subscribe(ctx, snap, st)
	case *rsql.ExplainIncremental:
		return s.explainIncremental(ctx, snap, st)
	case *rsql.Explain:
		var text string
		if st.DML != nil {
			text = rsql.ExplainDML(st.DML)
		} else {
			text = rsql.ExplainQuery(st.Query)
		}
		for _, l := range rsql.PlanReads(st.Plan(), env, readIndexes{snap}).IndexScans {
			text += l + "\n"
		}
		return textCursor(text), nil
	case *rsql.ShowViewStatus:
		return s.showViewStatus(ctx, snap, st)
	case *rsql.Other:
		if vs := st.PG.Stmt.GetVacuumStmt(); vs != nil {
			return s.maintenance(ctx, snap, vs)
		}
		if cur, ok, err := s.roleStatement(ctx, st.PG.Stmt); ok {
			if err != nil {
				return nil, err
			}
			return cur, nil
		}
	}
	return nil, errcode.New(errcode.GatewayUnsupported, "statement %s is not supported", p.stmt.Tag())
}

// Begin implements gateway.Session.
func (s *session) Begin(ctx context.Context, opts gateway.TxOptions) error {
	if _, err := s.req(ctx, sessionactor.Begin{Isolation: actorIsolation(opts.Isolation), ReadOnly: opts.ReadOnly, Implicit: opts.Implicit}); err != nil {
		return err
	}
	s.txn = &txnState{readOnly: opts.ReadOnly, isolation: opts.Isolation}
	s.txnImplicit = opts.Implicit
	return nil
}

// Commit implements gateway.Session: the transaction's writes become one
// durable source epoch on the shard before this returns.
func (s *session) Commit(ctx context.Context) error {
	t := s.txn
	s.txn = nil
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		// NB: the actor still holds the transaction: end it.
		s.e.askDetached(s.actor, sessionactor.Rollback{}, "ending a transaction that could not commit")
		return err
	}
	m, err := s.req(ctx, sessionactor.Commit{CatalogVersion: snap.Version})
	if err != nil {
		s.e.metrics.CommitErrors.Add(1)
		if uerr := s.undoRestarts(ctx, t, 0); uerr != nil {
			s.e.log.Error("putting back sequences after a failed commit", "err", uerr)
		}
		return err
	}
	if c := m.(sessionactor.Committed); c.Epoch != 0 {
		s.e.metrics.Commits.Add(1)
		s.e.metrics.RowsWritten.Add(uint64(c.Rows))
		s.e.epochs.record(c.Epoch, time.Now())
	}
	return nil
}

// Rollback implements gateway.Session.
func (s *session) Rollback(ctx context.Context) error {
	t := s.txn
	s.txn = nil
	if _, err := s.req(ctx, sessionactor.Rollback{}); err != nil {
		return err
	}
	return s.undoRestarts(ctx, t, 0)
}

// Close implements gateway.Session: stopping the actor ends its
// transaction (locks and snapshot released).
func (s *session) Close() error {
	if err := s.undoRestarts(context.Background(), s.txn, 0); err != nil {
		s.e.log.Error("putting back sequences of an abandoned transaction", "err", err)
	}
	s.txn = nil
	if err := s.e.rt.Stop(s.actor); err != nil {
		s.e.log.Error("stopping a session actor", "actor", s.actor, "err", err)
	}
	s.e.sessionClosed(s)
	return nil
}

// startStatement tells the session actor what it needs to know of the
// statement: its settings when they changed since the last statement,
// and for a REPEATABLE READ transaction's first statement that reads or
// writes data, that the snapshot must be pinned. Otherwise it asks
// nothing (one round trip less per statement).
func (s *session) startStatement(ctx context.Context, snap *control.Snapshot, st rsql.Statement) error {
	m := s.statement(snap, st)
	pin := m.Data && s.txn.repeatable() && !s.txn.pinned
	settings := m
	settings.CatalogVersion, settings.Data = 0, false
	if !pin && s.sentStatement && settings == s.lastStatement {
		return nil
	}
	if _, err := s.req(ctx, m); err != nil {
		return err
	}
	s.lastStatement, s.sentStatement = settings, true
	if pin {
		s.txn.pinned = true
	}
	return nil
}

// lockKeylessTable takes an implicit transaction's lock of a whole table
// without a primary key before its UPDATE or DELETE reads
// (actors/session LockTable); other statements ask nothing.
func (s *session) lockKeylessTable(ctx context.Context, rel *catalog.Relation) error {
	if s.txn == nil || !s.txnImplicit || rel.Kind != catalog.KindTable || rel.InsertOnly || len(rel.PrimaryKey) > 0 {
		return nil
	}
	_, err := s.req(ctx, sessionactor.LockTable{Table: *rel})
	return err
}

// statement is the actor's Statement request for st: whether it reads or
// writes data (a REPEATABLE READ transaction pins its snapshot at its
// first such statement), its lock_timeout, and read-your-writes.
func (s *session) statement(snap *control.Snapshot, st rsql.Statement) sessionactor.Statement {
	m := sessionactor.Statement{CatalogVersion: snap.Version, LockTimeout: s.lockTimeout(), WaitForOwn: true}
	switch st.(type) {
	case *rsql.Query, *rsql.Insert, *rsql.Update, *rsql.Delete, *rsql.Truncate:
		m.Data = true
	}
	if s.settings != nil {
		if v, ok := s.settings.Get("rockstream.session_wait_for"); ok && strings.EqualFold(v, "off") {
			m.WaitForOwn = false
		}
	}
	return m
}

// lockTimeout is the session's lock_timeout (0: none).
func (s *session) lockTimeout() time.Duration {
	if s.settings == nil {
		return 0
	}
	v, ok := s.settings.Get("lock_timeout")
	if !ok {
		return 0
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// readSnapshot fetches the committed contents of relations (after this
// session's own commits, unless read-your-writes is switched off) and
// overlays the open transaction's writes on tables.
func (s *session) readSnapshot(ctx context.Context, snap *control.Snapshot, rels []*catalog.Relation) (map[catalog.ID]zset.Batch, error) {
	return s.readSnapshotKeys(ctx, snap, rels, nil, nil)
}

// readSnapshotKeys is readSnapshot reading the tables in points by
// primary key only and the others in ranges (as rsql.PlanReads chose).
func (s *session) readSnapshotKeys(ctx context.Context, snap *control.Snapshot, rels []*catalog.Relation, points map[catalog.ID][]types.Row, ranges map[catalog.ID][]shard.KeyRange) (map[catalog.ID]zset.Batch, error) {
	out := map[catalog.ID]zset.Batch{}
	var req sessionactor.Read
	var env *syscat.Env
	var sequences []*catalog.Relation
	for _, r := range rels {
		if r.Kind == catalog.KindSequence {
			sequences = append(sequences, r)
			continue
		}
		if keys, ok := points[r.ID]; ok {
			req.Points = append(req.Points, sessionactor.PointRead{Relation: *r, Keys: keys})
			continue
		}
		if !syscat.IsSystem(r.ID) {
			req.Relations = append(req.Relations, r.ID)
			req.Ranges = append(req.Ranges, ranges[r.ID])
			continue
		}
		if env == nil {
			var err error
			if env, err = s.systemEnv(ctx, snap); err != nil {
				return nil, err
			}
		}
		out[r.ID] = syscat.Rows(r.ID, env)
	}
	if len(sequences) > 0 {
		seqRows, err := s.sequenceRows(ctx, sequences)
		if err != nil {
			return nil, err
		}
		for id, b := range seqRows { //lint:maprange copying a map into a map
			out[id] = b
		}
	}
	if len(req.Relations) == 0 && len(req.Points) == 0 {
		return out, nil
	}
	// The actor reads the committed state the statement sees (its
	// REPEATABLE READ snapshot, or the newest after the session's own
	// last commit) and overlays the transaction's writes.
	req.CatalogVersion = snap.Version
	req.Homes = s.e.homesOfRead(snap, req.Relations)
	m, err := s.req(ctx, req)
	if err != nil {
		return nil, err
	}
	res := m.(sessionactor.ReadResult)
	for i, id := range req.Relations {
		out[id] = res.Batches[i]
	}
	for i, p := range req.Points {
		out[p.Relation.ID] = res.Batches[len(req.Relations)+i]
	}
	return out, nil
}

// rowsCursor streams materialized rows.
type rowsCursor struct {
	rows    []types.Row
	next    int
	tag     string
	notices []*errcode.Error
}

func (c *rowsCursor) Next(context.Context) (types.Row, error) {
	if c.next >= len(c.rows) {
		return nil, io.EOF
	}
	r := c.rows[c.next]
	c.next++
	return r, nil
}
func (c *rowsCursor) Tag() string               { return c.tag }
func (c *rowsCursor) Notices() []*errcode.Error { return c.notices }
func (c *rowsCursor) Close() error              { return nil }

func textCursor(text string) *rowsCursor {
	c := &rowsCursor{}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		c.rows = append(c.rows, types.Row{line})
	}
	return c
}

func (s *session) explainIncremental(ctx context.Context, snap *control.Snapshot, st *rsql.ExplainIncremental) (gateway.Cursor, error) {
	if st.Analyze {
		rel, ok := snap.LookupRelation([]string{st.Name})
		if !ok || rel.Kind != catalog.KindMaterializedView {
			return nil, errcode.New(errcode.UndefinedObject, "materialized view %q does not exist", st.Name)
		}
		text, err := s.explainAnalyze(ctx, snap, rel)
		if err != nil {
			return nil, err
		}
		return textCursor(text), nil
	}
	var rel *catalog.Relation
	if st.Name != "" {
		if r, ok := snap.LookupRelation([]string{st.Name}); ok && r.Kind == catalog.KindMaterializedView {
			rel = r
			m := s.e.router.Map()
			if len(shard.InlinedViews(snap, m, r)) > 0 {
				// The plan its shard runs: the views of other shards
				// it reads compiled into it.
				v, err := rsql.CompileViewWith(catalog.Pinned(snap, r), r.SQL, rsql.CompileOptions{InlineMaterialized: shard.Inlined(snap, m, r)})
				if err != nil {
					return nil, err
				}
				v.Name = r.Name
				shown := *st
				shown.View = v
				st = &shown
			}
		}
	}
	return textCursor(rsql.ExplainIncrementalText(st) + viewSettingsLine(rel) + watermarkLines(snap, rel) + windowsLine(rel) + s.e.explainPlacement(snap, rel, st.View)), nil
}

// watermarkLines are EXPLAIN INCREMENTAL's lines naming the watermark of
// each table materialized view rel reads and what happens to its late
// rows, by table name; "" for a query or a view reading no such table.
func watermarkLines(snap *control.Snapshot, rel *catalog.Relation) string {
	if rel == nil {
		return ""
	}
	seen := map[catalog.ID]bool{}
	var tables []*catalog.Relation
	note := func(id catalog.ID) {
		if seen[id] {
			return
		}
		seen[id] = true
		// NB: the table as it is now, not as pinned: its late_rows may
		// have changed since the view was compiled.
		if t, ok := snap.RelationByID(id); ok && t.Watermark != nil {
			tables = append(tables, t)
		}
	}
	for _, p := range rel.Pinned {
		note(p.ID)
	}
	for _, r := range rel.Refs {
		note(r.ID)
	}
	slices.SortFunc(tables, func(a, b *catalog.Relation) int { return strings.Compare(a.Key(), b.Key()) })
	byID := map[catalog.ID]*catalog.Relation{}
	for _, t := range tables {
		if t.Watermark.LateRows != nil {
			if dl, ok := snap.RelationByID(*t.Watermark.LateRows); ok {
				byID[dl.ID] = dl
			}
		}
	}
	var out strings.Builder
	for _, t := range tables {
		opts := syscat.WatermarkOptions(t, byID)
		mark := strings.TrimPrefix(opts[0], "watermark=")
		late := "late rows dropped"
		if len(opts) > 1 {
			late = "late rows into " + strings.TrimPrefix(opts[1], "late_rows=")
		}
		fmt.Fprintf(&out, "Watermark: %s (%s), %s\n", t.Key(), mark, late)
	}
	return out.String()
}

// windowsLine is EXPLAIN INCREMENTAL's line for a materialized view
// created WITH (windows = 'never_close'); "" otherwise.
func windowsLine(rel *catalog.Relation) string {
	if rel == nil || !rel.WindowsNeverClose {
		return ""
	}
	return "Windows: never close without a watermark (windows = 'never_close'): their state grows with the input\n"
}

// viewSettingsLine is EXPLAIN INCREMENTAL's line naming the session
// settings materialized view rel is maintained with when they are not
// the defaults, in the form of PostgreSQL's EXPLAIN (SETTINGS); "" for a
// query or a view with the defaults.
func viewSettingsLine(rel *catalog.Relation) string {
	if rel == nil {
		return ""
	}
	// In PostgreSQL's order (by name, ignoring case).
	var parts []string
	if rel.DateStyle != "" {
		parts = append(parts, fmt.Sprintf("DateStyle = '%s'", rel.DateStyle))
	}
	if rel.ExtraFloatDigits != "" {
		parts = append(parts, fmt.Sprintf("extra_float_digits = '%s'", rel.ExtraFloatDigits))
	}
	if rel.IntervalStyle != "" {
		parts = append(parts, fmt.Sprintf("IntervalStyle = '%s'", rel.IntervalStyle))
	}
	if rel.TimeZone != "" {
		parts = append(parts, fmt.Sprintf("TimeZone = '%s'", rel.TimeZone))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Settings: " + strings.Join(parts, ", ") + "\n"
}

// systemEnv gathers what system relations are generated from.
func (s *session) systemEnv(ctx context.Context, snap *control.Snapshot) (*syscat.Env, error) {
	st, err := s.e.Status(ctx)
	if err != nil {
		return nil, err
	}
	env := &syscat.Env{
		Relations:      snap.Relations(),
		Schemas:        snap.Schemas(),
		SearchPath:     s.searchPath(snap, s.settings),
		ViewDefinition: s.viewDefinition(snap, s.searchPath(snap, s.settings)),
		Dependencies:   snap.Dependencies,
		Views:          map[catalog.ID]syscat.ViewStats{},
		Frontier:       st.Frontier,
		LastEpoch:      st.LastEpoch,
		User:           s.info.User,
		Database:       s.info.Database,
	}
	if m, err := s.e.ask(ctx, control.ActorID, control.GetSequenceStates{}); err == nil {
		states := m.(control.SequenceStates)
		env.SequenceValue = func(id catalog.ID) (int64, bool, bool) {
			st, ok := states[id]
			return st.Last, st.Called, ok
		}
	} else {
		return nil, err
	}
	frontier := map[catalog.ID]uint64{}
	for _, v := range st.Views {
		stats := viewStats(v)
		if rel, ok := snap.RelationByID(v.View); ok {
			stats.Freshness = freshnessOf(v, rel.FreshnessTarget).Columns()
		}
		env.Views[v.View] = stats
		frontier[v.View] = v.Frontier
	}
	env.PreparedStatements = preparedStatementRows(s.prepared)
	env.Activity = s.activityRows(ctx, snap)
	env.Now = time.Now()
	env.Sources = s.e.syscatSources()
	env.Sinks = s.e.syscatSinks(snap, frontier)
	if env.Roles, err = s.roleRows(ctx); err != nil {
		return nil, err
	}
	if s.settings != nil {
		for _, row := range s.settings.All() {
			env.Settings = append(env.Settings, syscat.Setting{Name: row.Name, Value: row.Setting, Category: row.Category, Description: row.ShortDesc, VarType: row.Vartype})
		}
	}
	return env, nil
}
