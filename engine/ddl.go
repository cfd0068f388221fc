package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat"
)

// ddl runs a DDL statement: the catalog change is durable in the control DB,
// then the shard installs (backfills) or drops view state before the
// statement returns.
func (s *session) ddl(ctx context.Context, snap *control.Snapshot, d *rsql.DDL, sqlText string) (gateway.Cursor, error) {
	tag := d.Tag()
	var notices []*errcode.Error
	notice := func(r control.DDLResult) {
		if r.Notice != "" {
			n := errcode.New(errcode.DDLNotice, "%s", r.Notice)
			if strings.HasPrefix(r.Notice, "relation ") && strings.HasSuffix(r.Notice, " already exists, skipping") {
				// PostgreSQL's IF NOT EXISTS notice carries duplicate_table.
				n = n.WithSQLState("42P07")
			}
			notices = append(notices, n)
		}
	}
	if err := s.checkConcurrently(d.Stmt); err != nil {
		return nil, err
	}
	stmt, schema, err := s.resolveDDL(snap, d.Stmt)
	if err != nil {
		if e, ok := errcode.As(err); ok && e.SQLState == "3F000" {
			if dr, ok := d.Stmt.(*ddl.Drop); ok && dr.IfExists {
				// PostgreSQL: DROP ... IF EXISTS of a name in a missing
				// schema is a notice.
				sc, _ := catalog.Split(dr.Names[0])
				notice(control.DDLResult{Notice: fmt.Sprintf("schema %q does not exist, skipping", sc)})
				return &rowsCursor{tag: tag, notices: notices}, nil
			}
		}
		return nil, err
	}
	dropped := func(rs []*catalog.Relation) {
		for _, d := range rs {
			if d.Kind == catalog.KindSink {
				s.e.stopSink(d.ID)
			}
			if d.Kind == catalog.KindSource {
				if err := s.e.stopSource(d.ID); err != nil {
					// The source is gone from the catalog; only its
					// upstream slot is left behind.
					notices = append(notices, errcode.Wrap(errcode.DDLNotice, err, "source %q was dropped, but its replication slot upstream was not; drop the slot the detail names upstream with pg_drop_replication_slot", d.Name))
				}
			}
		}
	}
	switch st := stmt.(type) {
	case *ddl.CreateSchema, *ddl.DropSchema:
		if err := s.schemaDDL(ctx, st, notice, dropped); err != nil {
			return nil, err
		}
	case *ddl.CreateTable:
		cols, checks, err := foldTableLiterals(st.Columns, st.Checks, s.inputStyle())
		if err != nil {
			return nil, err
		}
		seqs, deps, err := s.createTableSequences(snap, st, schema, cols)
		if err != nil {
			return nil, err
		}
		watermark, err := s.lateRowsTable(snap, st.Watermark, st.LateRows)
		if err != nil {
			return nil, err
		}
		r, err := s.control(ctx, control.CreateRelation{
			Relation:    &catalog.Relation{Kind: catalog.KindTable, Name: st.Name, Schema: schema, Columns: cols, PrimaryKey: st.PrimaryKey, InsertOnly: st.InsertOnly, Watermark: watermark, Checks: checks},
			IfNotExists: st.IfNotExists,
			Sequences:   seqs,
			Deps:        deps,
		})
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.CreateView:
		if err := s.createView(ctx, snap, d, st, schema, notice); err != nil {
			return nil, err
		}
	case *ddl.Drop:
		kind := map[ddl.DropKind]catalog.Kind{
			ddl.DropTable: catalog.KindTable, ddl.DropView: catalog.KindView,
			ddl.DropMaterializedView: catalog.KindMaterializedView, ddl.DropSource: catalog.KindSource,
			ddl.DropSequence: catalog.KindSequence, ddl.DropSink: catalog.KindSink, ddl.DropIndex: catalog.KindIndex,
		}[st.Kind]
		for _, name := range lateRowsFirst(snap, st.Names) {
			r, err := s.control(ctx, control.DropRelation{Name: name, Kind: kind, IfExists: st.IfExists, Cascade: st.Cascade})
			if err != nil {
				return nil, err
			}
			notice(r)
			dropped(r.Dropped)
		}
	case *ddl.CreateIndex:
		r, err := s.control(ctx, control.CreateIndex{Name: st.Name, Table: st.Table, Columns: st.Columns, Unique: st.Unique, IfNotExists: st.IfNotExists})
		if err != nil {
			return nil, err
		}
		if err := s.buildIndex(ctx, r.Changed); err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.AddColumn:
		col := st.Column
		if col.Default != "" {
			cols, _, err := foldTableLiterals([]catalog.Column{col}, nil, s.inputStyle())
			if err != nil {
				return nil, err
			}
			col = cols[0]
			if err := immutableDefault(col); err != nil {
				return nil, err
			}
		}
		r, err := s.control(ctx, control.AddColumn{Table: st.Table, Column: col, IfNotExists: st.IfNotExists})
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.Rename:
		r, err := s.control(ctx, control.RenameRelation{Name: st.Name, NewName: st.NewName, Kind: st.Kind, IfExists: st.IfExists})
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.Recompile:
		if err := s.recompile(ctx, snap, st.Name); err != nil {
			return nil, err
		}
	case *ddl.SetViewOptions:
		if err := s.setViewOptions(ctx, snap, st); err != nil {
			return nil, err
		}
	case *ddl.SetLateRows:
		var id *catalog.ID
		if st.LateRows != "" {
			w, err := s.lateRowsTable(snap, &catalog.Watermark{}, st.LateRows)
			if err != nil {
				return nil, err
			}
			id = w.LateRows
		}
		r, err := s.control(ctx, control.SetLateRows{Table: st.Name, LateRows: id})
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.AddPrimaryKey:
		if err := s.addPrimaryKey(ctx, snap, st); err != nil {
			return nil, err
		}
	case *ddl.CreateSequence, *ddl.AlterSequence:
		r, err := s.sequenceDDL(ctx, snap, st, schema)
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.CreateSink:
		r, err := s.createSink(ctx, snap, st, sqlText)
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.CreateSource:
		if st.Kafka != nil {
			r, err := s.createKafkaSource(ctx, st, sqlText)
			if err != nil {
				return nil, err
			}
			notice(r)
			break
		}
		if st.Postgres != nil {
			n, err := s.createPostgresSource(ctx, st, sqlText)
			if err != nil {
				return nil, err
			}
			notice(control.DDLResult{Notice: n})
			break
		}
		cols := make([]catalog.Column, len(st.Columns))
		for i, c := range st.Columns {
			cols[i] = c.Column
		}
		r, err := s.control(ctx, control.CreateRelation{
			Relation: &catalog.Relation{Kind: catalog.KindSource, Name: st.Name, Columns: cols, InsertOnly: true, Watermark: st.Watermark, SQL: sqlText},
		})
		if err != nil {
			return nil, err
		}
		notice(r)
		if err := s.syncShard(ctx, true); err != nil {
			return nil, err
		}
		if r.Changed != nil {
			if err := s.e.startSource(r.Version, r.Changed); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errcode.New(errcode.GatewayUnsupported, "%s is not supported", tag)
	}
	if err := s.syncShard(ctx, true); err != nil {
		return nil, err
	}
	return &rowsCursor{tag: tag, notices: notices}, nil
}

func (s *session) control(ctx context.Context, msg any) (control.DDLResult, error) {
	m, err := s.e.ask(ctx, control.ActorID, msg)
	if err != nil {
		return control.DDLResult{}, err
	}
	return m.(control.DDLResult), nil
}

// syncShard makes the shard run the current catalog (install/backfill new
// views, drop removed ones); background: without waiting for backfills.
// buildIndex waits for the shard to build a new index's entries over the
// stored rows (actors/shard/index.go). A unique index over duplicated
// values fails there with 23505 (could not create unique index), and is
// dropped again, as PostgreSQL leaves no index behind.
func (s *session) buildIndex(ctx context.Context, idx *catalog.Relation) error {
	if idx == nil || idx.Kind != catalog.KindIndex {
		return nil // IF NOT EXISTS found one
	}
	err := s.syncShard(ctx, true)
	if err == nil {
		return nil
	}
	if _, derr := s.control(ctx, control.DropRelation{Name: idx.Key(), Kind: catalog.KindIndex}); derr != nil {
		return errcode.Wrap(errcode.InternalError, derr, "dropping index %q after: %v", idx.Name, err)
	}
	_ = s.syncShard(ctx, true)
	return err
}

func (s *session) syncShard(ctx context.Context, background bool) error {
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		return err
	}
	return s.e.syncShards(ctx, snap, background)
}

func (s *session) createView(ctx context.Context, snap *control.Snapshot, d *rsql.DDL, st *ddl.CreateView, schema string, notice func(control.DDLResult)) error {
	rel := &catalog.Relation{Name: st.Name, Schema: schema, SQL: st.Query}
	if d.View != nil {
		rel.RetainHistory = d.View.RetainHistory
		rel.FreshnessTarget = d.View.FreshnessTarget
	}
	// The definition is bound again through a recorder: the names it uses
	// become its references (resolved by id from now on, and its
	// dependencies for DROP), and a materialized view pins every relation
	// it was compiled from (catalog.Pinned). Unqualified names resolve
	// through the session's search_path now, and by id from then on.
	rec := &catalog.Recorder{Base: catalog.WithSearchPath(snap, s.searchPath(snap, s.settings))}
	if st.Materialized {
		if d.View == nil {
			return errcode.New(errcode.InternalError, "materialized view %q was not compiled", st.Name)
		}
		rel.Kind = catalog.KindMaterializedView
		rel.Columns = catalogColumns(d.View.Columns, st.ColumnNames)
		// Maintained in the creating session's time zone, as PostgreSQL
		// evaluates CREATE MATERIALIZED VIEW's query in that session.
		if s.settings != nil {
			if tz, ok := s.settings.Get("TimeZone"); ok && !isUTCName(tz) {
				rel.TimeZone = tz
			}
			// And with its extra_float_digits (the digits of floats in
			// the text it makes), recorded when not the default.
			if n := s.settings.ExtraFloatDigits(); n != 1 {
				rel.ExtraFloatDigits = strconv.Itoa(n)
			}
			// And its DateStyle and IntervalStyle (the text of the
			// dates and intervals it prints, how it reads dates).
			if v := types.DateStyleSetting(s.settings.DateStyle()); v != "ISO, MDY" {
				rel.DateStyle = v
			}
			if v := s.settings.IntervalStyle(); v != types.IntervalStylePostgres {
				rel.IntervalStyle = v.String()
			}
		}
		// WITH (timezone = ..., extra_float_digits = ...) names them
		// instead (pg_class.reloptions lists them under the same names).
		if tz := d.View.TimeZone; tz != "" {
			rel.TimeZone = tz
			if isUTCName(tz) {
				rel.TimeZone = ""
			}
		}
		if n := d.View.ExtraFloatDigits; n != "" {
			rel.ExtraFloatDigits = n
			if n == "1" {
				rel.ExtraFloatDigits = ""
			}
		}
		rel.WindowsNeverClose = d.View.WindowsNeverClose
		if v := d.View.DateStyle; v != "" {
			rel.DateStyle = v
			if v == "ISO, MDY" {
				rel.DateStyle = ""
			}
		}
		if v := d.View.IntervalStyle; v != "" {
			rel.IntervalStyle = v
			if v == types.IntervalStylePostgres.String() {
				rel.IntervalStyle = ""
			}
		}
		for _, r := range scannedRelations(d.View.Plan) {
			if r.Kind == catalog.KindSequence {
				return errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support reading sequence %q in a materialized view", r.Name).
					WithDetail("a sequence's value changes outside transactions, so a view over it cannot be maintained incrementally")
			}
		}
		if _, err := rsql.CompileView(rec, st.Query); err != nil {
			return err
		}
		rel.Temporal = d.View.Temporal()
		rel.Pinned = pinnedRelations(rec.Reached)
		if err := s.placeView(snap, rel, d.View); err != nil {
			return err
		}
	} else {
		rel.Kind = catalog.KindView
		rel.Columns = catalogColumns(d.Columns, st.ColumnNames)
		if _, err := bind.QueryText(rec, st.Query, bind.Options{}); err != nil {
			return err
		}
	}
	rel.Refs = rec.Refs
	seen := map[string]bool{}
	for _, c := range rel.Columns {
		if seen[c.Name] {
			return errcode.New(errcode.DuplicateColumnCode, "column %q specified more than once", c.Name)
		}
		seen[c.Name] = true
	}
	r, err := s.control(ctx, control.CreateRelation{Relation: rel, Deps: userRelations(catalog.RefIDs(rel.Refs)), IfNotExists: st.IfNotExists, OrReplace: st.OrReplace})
	if err != nil {
		return err
	}
	notice(r)
	if st.Materialized && r.Changed != nil {
		if err := s.installView(ctx, r.Changed); err != nil {
			s.abandonView(r.Changed.Key(), r.Changed)
			return err
		}
	}
	return nil
}

// placeView chooses the shard new materialized view rel runs on
// (shard.PlaceView), spread over the view shards when its plan v can be
// (dist.SpreadKeys, or with exchange stages on dist.StageKeys). A view it reads on another shard is compiled into it
// (shard.Inlined): that view must have been created in the same time zone,
// since the one rel is maintained in applies to both.
func (s *session) placeView(snap *control.Snapshot, rel *catalog.Relation, v *rsql.View) error {
	readsViews := false
	for _, r := range scannedRelations(v.Plan) {
		cur, ok := snap.RelationByID(r.ID)
		if !ok || cur.Kind != catalog.KindMaterializedView {
			continue
		}
		readsViews = true
		if cur.Stages {
			return errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support materialized view %q reading materialized view %q yet: %q runs in stages (--exchange-stages)", rel.Name, cur.Name, cur.Name).
				WithDetail("read its query instead (a view computing it runs it whole), or create %q again on a server started without --exchange-stages", cur.Name)
		}
	}
	_, spreadable := s.e.spreadKeys(v.Plan)
	m := s.e.router.Map()
	rel.Placement = shard.PlaceView(snap, m, rel, spreadable)
	if !spreadable && !readsViews && s.e.cfg.ExchangeStages && !snap.Partitioned() && len(shard.SpreadShardsOf(m)) > 1 && stageable(v.Plan) {
		// Its lower stages run spread over the view shards, its upper
		// stage on the first view shard (actors/shard stages.go).
		rel.Stages = true
		rel.Placement = uint32(shard.ViewShardOf(m)) + 1
	}
	return s.checkInlined(snap, rel)
}

// stageable reports whether plan n can run in stages: cut into lower
// stages spread over the view shards and an upper stage reading only
// their outputs (dist.SplitStages).
func stageable(n plan.Node) bool {
	st, ok := dist.SplitStages(n, func(i int, cols []plan.Column) *catalog.Relation {
		return &catalog.Relation{Kind: catalog.KindMaterializedView, Name: fmt.Sprintf("stage%d", i), ID: catalog.StageID(catalog.ID{}, i)}
	})
	if !ok {
		return false
	}
	for _, r := range plan.ScannedRelations(st.Upper) {
		if !slices.ContainsFunc(st.Lowers, func(l dist.Lower) bool { return l.Relation == r }) {
			return false // it reads a table too: not yet
		}
	}
	return true
}

// checkInlined compiles materialized view rel as its shard will when it
// reads views of other shards (shard.Inlined).
func (s *session) checkInlined(snap *control.Snapshot, rel *catalog.Relation) error {
	m := s.e.router.Map()
	inlined := shard.InlinedViews(snap, m, rel)
	for _, u := range inlined {
		if u.ExtraFloatDigits != rel.ExtraFloatDigits {
			return errcode.New(errcode.SQLFeatureNotSupported, "materialized view %q would read materialized view %q, which runs on another shard and was created with another extra_float_digits setting", rel.Name, u.Name).
				WithDetail("%q was created with extra_float_digits %s and this session has %s (a view reading a view of another shard computes it itself, with one setting): SET extra_float_digits = %s and create the view again", u.Name, floatDigitsName(u.ExtraFloatDigits), floatDigitsName(rel.ExtraFloatDigits), floatDigitsName(u.ExtraFloatDigits))
		}
		if u.DateStyle != rel.DateStyle || u.IntervalStyle != rel.IntervalStyle {
			return errcode.New(errcode.SQLFeatureNotSupported, "materialized view %q would read materialized view %q, which runs on another shard and was created with another DateStyle or IntervalStyle setting", rel.Name, u.Name).
				WithDetail("%q was created with DateStyle %q and IntervalStyle %q and this session has %q and %q (a view reading a view of another shard computes it itself, with one setting): SET DateStyle = '%s', IntervalStyle = '%s' and create the view again",
					u.Name, dateStyleName(u.DateStyle), intervalStyleName(u.IntervalStyle), dateStyleName(rel.DateStyle), intervalStyleName(rel.IntervalStyle), dateStyleName(u.DateStyle), intervalStyleName(u.IntervalStyle))
		}
		if u.TimeZone != rel.TimeZone {
			return errcode.New(errcode.SQLFeatureNotSupported, "materialized view %q would read materialized view %q, which runs on another shard and was created with another TimeZone setting", rel.Name, u.Name).
				WithDetail("%q was created with TimeZone %q and this session has %q (a view reading a view of another shard computes it itself, in one time zone): SET TimeZone = '%s' and create the view again", u.Name, zoneName(u.TimeZone), zoneName(rel.TimeZone), zoneName(u.TimeZone))
		}
	}
	if len(inlined) == 0 {
		return nil
	}
	_, err := rsql.CompileViewWith(catalog.Pinned(snap, rel), rel.SQL, rsql.CompileOptions{InlineMaterialized: shard.Inlined(snap, m, rel)})
	return err
}

// dateStyleName is a view's recorded DateStyle ("" is the default).
func dateStyleName(v string) string {
	if v == "" {
		return "ISO, MDY"
	}
	return v
}

// intervalStyleName is a view's recorded IntervalStyle ("" is the
// default).
func intervalStyleName(v string) string {
	if v == "" {
		return types.IntervalStylePostgres.String()
	}
	return v
}

func floatDigitsName(n string) string {
	if n == "" {
		return "1"
	}
	return n
}

func zoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

// abandonView takes a materialized view whose CREATE failed back out, so
// nothing half-made stays behind: its backfill stops (the statement may
// have been canceled or timed out while it waited), and the view leaves
// the catalog. NB: detached from the statement's context, which a cancel
// has already ended; failures are logged, since the statement's error is
// what the client must see.
func (s *session) abandonView(name string, view *catalog.Relation) {
	for _, id := range s.e.router.Shards() {
		s.e.askDetached(s.e.router.ActorOf(id), shard.CancelBackfill{View: view.ID}, "stopping the backfill of an abandoned materialized view")
	}
	ctx, cancel := context.WithTimeout(context.Background(), detachedAskTimeout)
	defer cancel()
	if _, err := s.control(ctx, control.DropRelation{Name: name, Kind: catalog.KindMaterializedView, IfExists: true, Cascade: true}); err != nil {
		s.e.log.Error("dropping an abandoned materialized view", "view", name, "err", err)
		return
	}
	if err := s.syncShard(ctx, true); err != nil {
		s.e.log.Error("syncing the shards after dropping an abandoned materialized view", "view", name, "err", err)
	}
}

// installView syncs the shard after a materialized view was created or
// recompiled, and fails if the shard could not build it (the shard keeps
// such a view in its failed state rather than failing the sync, so that
// one broken view never keeps the rest from running).
func (s *session) installView(ctx context.Context, view *catalog.Relation) error {
	if err := s.syncShard(ctx, false); err != nil {
		return err
	}
	// NB: without row counts: counting scanned every view's rows, so each
	// CREATE cost as much as reading every view in the database.
	st, err := s.e.viewStates(ctx)
	if err != nil {
		return err
	}
	for _, v := range st.Views {
		if v.View == view.ID && v.Failed != "" {
			// NB: answered with the code of what failed it, so a backfill
			// refused for memory is 53200 (RS-5502), not only "failed".
			code, ok := errcode.Lookup(v.FailedCode)
			if !ok || code == errcode.InternalError {
				code = errcode.ViewBuildFailed
			}
			return errcode.New(code, "materialized view %s could not be built: %s", view.Name, strings.TrimPrefix(v.Failed, code.ID+": "))
		}
	}
	return nil
}

// recompile is ALTER MATERIALIZED VIEW name RECOMPILE (spec §4.3): the
// view's SQL is compiled again — its own names still resolve to what they
// meant at CREATE, the inline views it reads with today's definitions —
// the result is pinned, and the shard rebuilds the view's state from its
// inputs. A failed view is recompiled the same way.
func (s *session) recompile(ctx context.Context, snap *control.Snapshot, name string) error {
	rel, ok := snap.LookupRelation([]string{name})
	if !ok {
		return errcode.New(errcode.UndefinedObject, "materialized view %q does not exist", name)
	}
	if rel.Kind != catalog.KindMaterializedView {
		return errcode.New(errcode.WrongObjectType, "%q is not a materialized view", name)
	}
	if rel.Stages {
		return errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support ALTER MATERIALIZED VIEW %s RECOMPILE yet: it runs in stages (--exchange-stages)", rel.Name).
			WithDetail("drop %s and create it again", rel.Name)
	}
	if into := shard.InlinedInto(snap, s.e.router.Map(), rel.ID); len(into) > 0 {
		return errcode.New(errcode.IncompatibleEvolution, "ALTER MATERIALIZED VIEW %s RECOMPILE would change materialized view %s, which runs on another shard and computes %s itself", rel.Name, into[0].Name, rel.Name).
			WithDetail("drop %s, recompile %s, and create %s again", into[0].Name, rel.Name, into[0].Name)
	}
	rec := &catalog.Recorder{Base: snap}
	v, err := rsql.CompileView(catalog.WithRefs(rec, rel.Refs), rel.SQL)
	if err != nil {
		return err
	}
	cols := catalogColumns(v.Columns, nil)
	for i := range cols {
		if i < len(rel.Columns) {
			cols[i].Name = rel.Columns[i].Name
		}
	}
	if !sameColumns(cols, rel.Columns) {
		return errcode.New(errcode.IncompatibleEvolution, "ALTER MATERIALIZED VIEW %s RECOMPILE would change the view's columns", rel.Name).
			WithDetail("the view has %s; its definition now gives %s", columnList(rel.Columns), columnList(cols))
	}
	refs := append(append([]catalog.Ref(nil), rel.Refs...), rec.Refs...)
	pinned := pinnedRelations(rec.Reached)
	for _, p := range pinned {
		if p.Kind == catalog.KindMaterializedView && control.ObjectNumber(p.ID) > control.ObjectNumber(rel.ID) {
			// NB: views are maintained in creation order, each from the
			// outputs of those before it in the same step.
			return errcode.New(errcode.IncompatibleEvolution, "ALTER MATERIALIZED VIEW %s RECOMPILE would make it read materialized view %s, which was created after it", rel.Name, p.Name).
				WithDetail("a materialized view can read only materialized views created before it; drop %s and create it again", rel.Name)
		}
	}
	recompiled := *rel
	recompiled.Refs, recompiled.Pinned = refs, pinned
	if err := s.checkInlined(snap, &recompiled); err != nil {
		return err
	}
	r, err := s.control(ctx, control.RecompileView{Relation: &recompiled, Deps: userRelations(catalog.RefIDs(refs))})
	if err != nil {
		return err
	}
	return s.installView(ctx, r.Changed)
}

func sameColumns(a, b []catalog.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].Type.Equal(b[i].Type) {
			return false
		}
	}
	return true
}

func columnList(cols []catalog.Column) string {
	s := "("
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c.Name + " " + c.Type.SQLName()
	}
	return s + ")"
}

// pinnedRelations are the versions of the user relations a materialized
// view was compiled from (system relations are generated, not pinned).
func pinnedRelations(reached []*catalog.Relation) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range reached {
		if syscat.IsSystem(r.ID) {
			continue
		}
		p := *r
		// NB: a pinned materialized view is read, not compiled: its own
		// pins are not needed (and would nest without bound).
		p.Pinned = nil
		out = append(out, &p)
	}
	return out
}

// userRelations drops system relations from ids (they are never dropped,
// so nothing depends on them).
func userRelations(ids []catalog.ID) []catalog.ID {
	var out []catalog.ID
	for _, id := range ids {
		if !syscat.IsSystem(id) {
			out = append(out, id)
		}
	}
	return out
}

func catalogColumns(cols []plan.Column, names []string) []catalog.Column {
	out := make([]catalog.Column, len(cols))
	for i, c := range cols {
		out[i] = catalog.Column{Name: c.Name, Type: c.Type}
		if i < len(names) {
			out[i].Name = names[i]
		}
	}
	return out
}

// immutableDefault accepts ADD COLUMN defaults that are the same for every
// existing row (PostgreSQL would rewrite the table for a volatile one).
func immutableDefault(c catalog.Column) error {
	sc, err := bind.DefaultExpr(c.Default, c.Type, c.Name)
	if err != nil {
		return err
	}
	e, err := lower.Scalar(sc)
	if err != nil {
		return err
	}
	if expr.ExprVolatility(e) != expr.Immutable {
		return errcode.New(errcode.IncompatibleEvolution, "ADD COLUMN %q with the non-immutable default %s is not supported", c.Name, c.Default).
			WithDetail("existing rows would need a value computed per row")
	}
	return nil
}

// isUTCName reports whether a TimeZone setting names UTC itself (the
// default, Etc/UTC): a view created in it records no zone.
func isUTCName(tz string) bool {
	switch strings.ToLower(tz) {
	case "utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "etc/zulu", "universal", "etc/universal":
		return true
	}
	return false
}

// setViewOptions is ALTER MATERIALIZED VIEW ... SET / RESET (...): the
// options CREATE's WITH (...) takes, checked the same way; RESET puts an
// option back to its default. Options not named keep their values.
func (s *session) setViewOptions(ctx context.Context, snap *control.Snapshot, st *ddl.SetViewOptions) error {
	rel, ok := snap.LookupRelation([]string{st.Name})
	if !ok {
		return errcode.New(errcode.UndefinedObject, "relation %q does not exist", st.Name)
	}
	if rel.Kind != catalog.KindMaterializedView {
		return errcode.New(errcode.WrongObjectType, "%q is not a materialized view", st.Name)
	}
	retain, freshness := rel.RetainHistory, rel.FreshnessTarget
	for _, name := range []string{"timezone", "extra_float_digits", "datestyle", "intervalstyle"} {
		_, set := st.Options[name]
		if set || slices.Contains(st.Reset, name) {
			return errcode.New(errcode.SQLFeatureNotSupported, "the %s a materialized view is maintained with cannot be changed", name).
				WithDetail("Its rows were computed with it: drop the view and create it again WITH (%s = ...).", name)
		}
	}
	if _, set := st.Options["windows"]; set || slices.Contains(st.Reset, "windows") {
		return errcode.New(errcode.SQLFeatureNotSupported, "the windows option of a materialized view cannot be changed").
			WithDetail("It is checked against the view's query when the view is created: drop the view and create it again.")
	}
	set, err := rsql.ViewOptions(st.Options)
	if err != nil {
		return err
	}
	if _, ok := st.Options["retain_history"]; ok {
		retain = set.RetainHistory
	}
	if _, ok := st.Options["freshness_target"]; ok {
		freshness = set.FreshnessTarget
	}
	for _, name := range st.Reset {
		switch name {
		case "retain_history":
			retain = 0
		case "freshness_target":
			freshness = 0
		default:
			return errcode.New(errcode.SQLInvalidParameterValue, "unrecognized parameter \"%s\"", name).WithSQLState("22023")
		}
	}
	_, err = s.control(ctx, control.SetViewOptions{Name: rel.Key(), RetainHistory: retain, FreshnessTarget: freshness})
	return err
}

// checkConcurrently refuses CREATE / DROP INDEX CONCURRENTLY inside a
// transaction block, as PostgreSQL does (migration tools rely on the
// error to know they must run it in autocommit).
func (s *session) checkConcurrently(st ddl.Statement) error {
	what := ""
	switch x := st.(type) {
	case *ddl.CreateIndex:
		if x.Concurrently {
			what = "CREATE INDEX CONCURRENTLY"
		}
	case *ddl.Drop:
		if x.Concurrently {
			what = "DROP INDEX CONCURRENTLY"
		}
	}
	if what == "" || s.txn == nil || s.txnImplicit {
		return nil
	}
	return errcode.New(errcode.ConcurrentlyInTransactionBlock, "%s cannot run inside a transaction block", what)
}

// lateRowsTable resolves the dead-letter table a late_rows option names
// (key is its resolved name, "" for late_rows = 'drop') into a copy of
// watermark; the control plane checks that it fits (control.checkLateRows).
func (s *session) lateRowsTable(snap *control.Snapshot, watermark *catalog.Watermark, key string) (*catalog.Watermark, error) {
	if key == "" || watermark == nil {
		return watermark, nil
	}
	rel, ok := snap.LookupRelation([]string{key})
	if !ok {
		_, name := catalog.Split(key)
		return nil, errcode.New(errcode.LateRowsTableInvalid, "relation %q does not exist", name).WithSQLState("42P01").
			WithDetail("The late_rows option names the dead-letter table late rows are inserted into; create it first.")
	}
	out := *watermark
	id := rel.ID
	out.LateRows = &id
	return &out, nil
}

// lateRowsFirst orders the names of one DROP so that tables naming a
// dead-letter table come before the rest (keeping the order otherwise):
// DROP TABLE bids_late, bids then drops both, as PostgreSQL drops a group
// of objects that only depend on each other.
func lateRowsFirst(snap *control.Snapshot, names []string) []string {
	out := make([]string, 0, len(names))
	for pass := 0; pass < 2; pass++ {
		for _, name := range names {
			rel, ok := snap.LookupRelation([]string{name})
			namesOne := ok && rel.Watermark != nil && rel.Watermark.LateRows != nil
			if namesOne == (pass == 0) {
				out = append(out, name)
			}
		}
	}
	return out
}
