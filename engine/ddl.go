package engine

import (
	"context"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
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
			notices = append(notices, n)
		}
	}
	switch st := d.Stmt.(type) {
	case *ddl.CreateTable:
		cols := append([]catalog.Column(nil), st.Columns...)
		seqs, deps, err := createTableSequences(snap, st, cols)
		if err != nil {
			return nil, err
		}
		r, err := s.control(ctx, control.CreateRelation{
			Relation:    &catalog.Relation{Kind: catalog.KindTable, Name: st.Name, Columns: cols, PrimaryKey: st.PrimaryKey, InsertOnly: st.InsertOnly, Checks: st.Checks},
			IfNotExists: st.IfNotExists,
			Sequences:   seqs,
			Deps:        deps,
		})
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.CreateView:
		if err := s.createView(ctx, snap, d, st, notice); err != nil {
			return nil, err
		}
	case *ddl.Drop:
		kind := map[ddl.DropKind]catalog.Kind{
			ddl.DropTable: catalog.KindTable, ddl.DropView: catalog.KindView,
			ddl.DropMaterializedView: catalog.KindMaterializedView, ddl.DropSource: catalog.KindSource,
			ddl.DropSequence: catalog.KindSequence,
		}[st.Kind]
		for _, name := range st.Names {
			r, err := s.control(ctx, control.DropRelation{Name: name, Kind: kind, IfExists: st.IfExists, Cascade: st.Cascade})
			if err != nil {
				return nil, err
			}
			notice(r)
			for _, d := range r.Dropped {
				if d.Kind == catalog.KindSource {
					s.e.stopSource(d.ID)
				}
			}
		}
	case *ddl.AddColumn:
		if st.Column.Default != "" {
			if err := immutableDefault(st.Column); err != nil {
				return nil, err
			}
		}
		r, err := s.control(ctx, control.AddColumn{Table: st.Table, Column: st.Column, IfNotExists: st.IfNotExists})
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.AddPrimaryKey:
		if err := s.addPrimaryKey(ctx, snap, st); err != nil {
			return nil, err
		}
	case *ddl.CreateSequence, *ddl.AlterSequence:
		r, err := s.sequenceDDL(ctx, snap, st)
		if err != nil {
			return nil, err
		}
		notice(r)
	case *ddl.CreateSource:
		cols := make([]catalog.Column, len(st.Columns))
		for i, c := range st.Columns {
			cols[i] = c.Column
		}
		r, err := s.control(ctx, control.CreateRelation{
			Relation: &catalog.Relation{Kind: catalog.KindSource, Name: st.Name, Columns: cols, InsertOnly: true, SQL: sqlText},
		})
		if err != nil {
			return nil, err
		}
		notice(r)
		if err := s.syncShard(ctx); err != nil {
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
	if err := s.syncShard(ctx); err != nil {
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
// views, drop removed ones).
func (s *session) syncShard(ctx context.Context) error {
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		return err
	}
	return s.e.syncShards(ctx, snap)
}

func (s *session) createView(ctx context.Context, snap *control.Snapshot, d *rsql.DDL, st *ddl.CreateView, notice func(control.DDLResult)) error {
	rel := &catalog.Relation{Name: st.Name, SQL: st.Query}
	if d.View != nil {
		rel.RetainHistory = d.View.RetainHistory
	}
	var deps []catalog.ID
	if st.Materialized {
		if d.View == nil {
			return errcode.New(errcode.InternalError, "materialized view %q was not compiled", st.Name)
		}
		rel.Kind = catalog.KindMaterializedView
		rel.Columns = catalogColumns(d.View.Columns, st.ColumnNames)
		for _, r := range scannedRelations(d.View.Plan) {
			if r.Kind == catalog.KindSequence {
				return errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support reading sequence %q in a materialized view", r.Name).
					WithDetail("a sequence's value changes outside transactions, so a view over it cannot be maintained incrementally")
			}
			deps = append(deps, r.ID)
		}
	} else {
		rel.Kind = catalog.KindView
		rel.Columns = catalogColumns(d.Columns, st.ColumnNames)
		if q, err := bind.QueryText(snap, st.Query, bind.Options{}); err == nil {
			for _, r := range scannedRelations(q.Plan) {
				deps = append(deps, r.ID)
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range rel.Columns {
		if seen[c.Name] {
			return errcode.New(errcode.DuplicateColumnCode, "column %q specified more than once", c.Name)
		}
		seen[c.Name] = true
	}
	r, err := s.control(ctx, control.CreateRelation{Relation: rel, Deps: deps, IfNotExists: st.IfNotExists, OrReplace: st.OrReplace})
	if err != nil {
		return err
	}
	notice(r)
	if st.Materialized && r.Changed != nil {
		if err := s.syncShard(ctx); err != nil {
			// The view cannot be maintained: take it out of the catalog again
			// so nothing half-made stays behind.
			_, _ = s.control(ctx, control.DropRelation{Name: st.Name, Kind: catalog.KindMaterializedView, Cascade: true})
			_ = s.syncShard(ctx)
			return err
		}
	}
	return nil
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
