// Package sql is the SQL compiler's front door: text in, compiled
// statements out. It ties together parse (pg_query + the RockStream front
// parser), bind (names and types against the catalog), opt (rule-based
// rewrites of PlanIR) and incr (lowering PlanIR to an ivm/circuit).
//
// Walkthrough:
//
//	stmts, err := sql.Compile(cat, "SELECT a, sum(b) FROM t GROUP BY a", sql.Options{})
//	q := stmts[0].(*sql.Query)      // q.Plan (optimized PlanIR), q.Columns, q.ParamTypes
//	v, err := sql.CompileView(cat, "SELECT a, count(*) FROM t GROUP BY a")
//	// v.Plan is ready for incr.Build into a circuit.
package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/adhoc"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/sql/opt"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Options configure compilation of one script.
type Options struct {
	// ParamTypes are the client-declared types of $1..$n (0 = infer).
	ParamTypes []types.Type
}

// Statement is one compiled statement.
type Statement interface {
	// Tag is the PostgreSQL command tag word (SELECT, INSERT, CREATE TABLE...).
	Tag() string
}

// Query is a compiled SELECT / VALUES / set operation.
type Query struct {
	SQL string
	// Query is what the ad-hoc executor runs: the optimized PlanIR, the
	// visible result schema (RowDescription), ORDER BY, LIMIT and OFFSET.
	adhoc.Query
	// ParamTypes are the types of $1..$n (ParameterDescription).
	ParamTypes []types.Type
	// Origins are the relation columns result columns plainly reference
	// (RowDescription's table OID and attribute number); nil: none.
	Origins []bind.Origin
	// RegColumns are the visible regclass/regtype columns, returned as
	// names, with the hidden column holding each one's oid.
	RegColumns []bind.RegColumn
}

// Tag implements Statement.
func (*Query) Tag() string { return "SELECT" }

// Insert, Update and Delete wrap the bound DML plans (see bind.Insert).
type Insert struct{ *bind.Insert }

// Update is a compiled UPDATE.
type Update struct{ *bind.Update }

// Delete is a compiled DELETE.
type Delete struct{ *bind.Delete }

// Tag implements Statement.
func (*Insert) Tag() string { return "INSERT" }

// Tag implements Statement.
func (*Update) Tag() string { return "UPDATE" }

// Tag implements Statement.
func (*Delete) Tag() string { return "DELETE" }

// Truncate is TRUNCATE: a DELETE of every row of each table, run in the
// statement's transaction, so it is transactional and maintains views like
// any delete.
type Truncate struct {
	Deletes []*Delete
	// RestartIdentity is RESTART IDENTITY: the sequences owned by the
	// tables' columns restart too.
	RestartIdentity bool
}

// Tag implements Statement.
func (*Truncate) Tag() string { return "TRUNCATE TABLE" }

// DDL is a converted DDL statement. For CREATE MATERIALIZED VIEW, View is
// the compiled (validated) view; for CREATE VIEW, Columns is the view's
// output schema.
type DDL struct {
	Stmt    ddl.Statement
	View    *View
	Columns []plan.Column
}

// Tag implements Statement.
func (d *DDL) Tag() string {
	switch x := d.Stmt.(type) {
	case *ddl.CreateTable:
		return "CREATE TABLE"
	case *ddl.CreateView:
		if x.Materialized {
			return "CREATE MATERIALIZED VIEW"
		}
		return "CREATE VIEW"
	case *ddl.Drop:
		switch x.Kind {
		case ddl.DropTable:
			return "DROP TABLE"
		case ddl.DropView:
			return "DROP VIEW"
		case ddl.DropMaterializedView:
			return "DROP MATERIALIZED VIEW"
		case ddl.DropSequence:
			return "DROP SEQUENCE"
		case ddl.DropSink:
			return "DROP SINK"
		case ddl.DropIndex:
			return "DROP INDEX"
		}
		return "DROP SOURCE"
	case *ddl.AddColumn, *ddl.AddPrimaryKey:
		return "ALTER TABLE"
	case *ddl.CreateSource:
		return "CREATE SOURCE"
	case *ddl.CreateSink:
		return "CREATE SINK"
	case *ddl.CreateIndex:
		return "CREATE INDEX"
	case *ddl.CreateSequence:
		return "CREATE SEQUENCE"
	case *ddl.AlterSequence:
		return "ALTER SEQUENCE"
	case *ddl.Rename:
		switch x.Kind {
		case catalog.KindView:
			return "ALTER VIEW"
		case catalog.KindMaterializedView:
			return "ALTER MATERIALIZED VIEW"
		case catalog.KindIndex:
			return "ALTER INDEX"
		}
		return "ALTER TABLE"
	case *ddl.SetLateRows:
		return "ALTER TABLE"
	case *ddl.Recompile, *ddl.SetViewOptions:
		return "ALTER MATERIALIZED VIEW"
	}
	return "DDL"
}

// Subscribe is SUBSCRIBE (see parse.Subscribe); the view is resolved.
type Subscribe struct {
	*parse.Subscribe
	View *catalog.Relation
}

// Tag implements Statement.
func (*Subscribe) Tag() string { return "SUBSCRIBE" }

// ExplainIncremental is EXPLAIN INCREMENTAL: the view's (or query's)
// compiled plan; Text renders it (spec §14.8 level 1, without runtime
// statistics, which the caller may add).
type ExplainIncremental struct {
	Verbose bool
	// Analyze asks for the running view's operator statistics (EXPLAIN
	// ANALYZE INCREMENTAL view): the engine adds them.
	Analyze bool
	// Name is the view's name ("" for an explained query).
	Name string
	View *View
}

// Tag implements Statement.
func (*ExplainIncremental) Tag() string { return "EXPLAIN" }

// Explain is plain EXPLAIN of an ad-hoc query, or of an UPDATE or DELETE
// (DML set, Query nil).
type Explain struct {
	Query *Query
	DML   *ExplainedDML
}

// ExplainedDML is an EXPLAINed UPDATE or DELETE: its verb ("Update",
// "Delete"), its table and the plan of the rows it changes.
type ExplainedDML struct {
	Verb  string
	Table *catalog.Relation
	Rows  plan.Node
}

// Plan is the plan EXPLAIN shows: the query's, or the rows a DML
// statement changes.
func (e *Explain) Plan() plan.Node {
	if e.DML != nil {
		return e.DML.Rows
	}
	return e.Query.Plan
}

// Tag implements Statement.
func (*Explain) Tag() string { return "EXPLAIN" }

// ShowViewStatus is SHOW VIEW STATUS [name].
type ShowViewStatus struct{ *parse.ShowViewStatus }

// Tag implements Statement.
func (*ShowViewStatus) Tag() string { return "SHOW" }

// Other is a statement the compiler does not compile (transaction
// control, SET/SHOW, ...): the gateway or control plane handles it.
type Other struct {
	PG *parse.PG
}

// Tag implements Statement.
func (o *Other) Tag() string { return otherTag(o.PG.Stmt) }

// Compile parses and compiles every statement of a script. Every statement
// binds against the same catalog: a script that creates an object and then
// uses it must be compiled one statement at a time (parse.Parse, then
// CompileStatement after applying each DDL), as a session does.
func Compile(cat catalog.Catalog, text string, opts Options) ([]Statement, error) {
	stmts, err := parse.Parse(text)
	if err != nil {
		return nil, err
	}
	return CompileParsed(cat, stmts, opts)
}

// CompileParsed is Compile of a script already parsed (parse.Parse or
// parse.ParseReusing).
func CompileParsed(cat catalog.Catalog, stmts []parse.Statement, opts Options) ([]Statement, error) {
	out := make([]Statement, 0, len(stmts))
	for _, st := range stmts {
		c, err := CompileStatement(cat, st, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CompileStatement compiles one parsed statement.
func CompileStatement(cat catalog.Catalog, st parse.Statement, opts Options) (Statement, error) {
	switch x := st.(type) {
	case *parse.CreateSource, *parse.DropSource, *parse.RecompileView, *parse.CreateSink:
		d, err := ddl.Convert(x)
		if err != nil {
			return nil, err
		}
		return &DDL{Stmt: d}, nil
	case *parse.Subscribe:
		rel, ok := cat.LookupRelation(x.Name)
		if !ok {
			return nil, errcode.New(errcode.SQLUndefinedTable, "relation \"%s\" does not exist", x.Name)
		}
		if rel.Kind != catalog.KindMaterializedView && rel.Kind != catalog.KindTable && rel.Kind != catalog.KindSource {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "SUBSCRIBE needs a materialized view, table or source; \"%s\" is a %s", rel.Name, rel.Kind)
		}
		return &Subscribe{Subscribe: x, View: rel}, nil
	case *parse.ExplainIncremental:
		if x.Analyze && x.Name == nil {
			return nil, errcode.New(errcode.UnsupportedSQLConstruct, "EXPLAIN ANALYZE INCREMENTAL needs the name of a materialized view: only a running view has operator statistics").
				WithDetail("Create the view, then run EXPLAIN ANALYZE INCREMENTAL view_name; EXPLAIN INCREMENTAL shows a query's plan without running it.")
		}
		if x.Name != nil {
			rel, ok := cat.LookupRelation(x.Name)
			if !ok {
				return nil, errcode.New(errcode.SQLUndefinedTable, "relation \"%s\" does not exist", x.Name)
			}
			if rel.Kind != catalog.KindMaterializedView && rel.Kind != catalog.KindView {
				return nil, errcode.New(errcode.SQLFeatureNotSupported, "EXPLAIN INCREMENTAL needs a view; \"%s\" is a %s", rel.Name, rel.Kind)
			}
			if x.Analyze && rel.Kind != catalog.KindMaterializedView {
				return nil, errcode.New(errcode.SQLFeatureNotSupported, "EXPLAIN ANALYZE INCREMENTAL needs a materialized view; \"%s\" is a %s computed by each query that reads it", rel.Name, rel.Kind)
			}
			// A materialized view's plan is the one that maintains it, not
			// one from today's definitions of the inline views it read.
			v, err := CompileView(catalog.Pinned(cat, rel), rel.SQL)
			if err != nil {
				return nil, err
			}
			v.Name = rel.Name
			return &ExplainIncremental{Verbose: x.Verbose, Analyze: x.Analyze, Name: rel.Name, View: v}, nil
		}
		q := x.Query
		if cv := q.Stmt.GetCreateTableAsStmt(); cv != nil {
			d, err := ddl.Convert(q)
			if err != nil {
				return nil, err
			}
			create := d.(*ddl.CreateView)
			v, err := CompileView(cat, create.Query)
			if err != nil {
				return nil, err
			}
			v.Name = create.Name
			return &ExplainIncremental{Verbose: x.Verbose, Name: create.Name, View: v}, nil
		}
		v, err := compileViewStmt(cat, q, CompileOptions{})
		if err != nil {
			return nil, err
		}
		return &ExplainIncremental{Verbose: x.Verbose, View: v}, nil
	case *parse.ShowViewStatus:
		return &ShowViewStatus{ShowViewStatus: x}, nil
	case *parse.PG:
		return compilePG(cat, x, opts)
	}
	return nil, errcode.New(errcode.InternalError, "unknown statement %T", st)
}

func compilePG(cat catalog.Catalog, st *parse.PG, opts Options) (Statement, error) {
	bopts := bind.Options{ParamTypes: opts.ParamTypes}
	switch n := st.Stmt.Node.(type) {
	case *pg_query.Node_SelectStmt:
		return compileQuery(cat, st, bopts)
	case *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt:
		d, err := bind.DML(cat, st, bopts)
		if err != nil {
			return nil, err
		}
		switch x := d.(type) {
		case *bind.Insert:
			x.Rows = opt.Optimize(x.Rows)
			return &Insert{x}, nil
		case *bind.Update:
			x.Rows = opt.Optimize(x.Rows)
			return &Update{x}, nil
		case *bind.Delete:
			x.Rows = opt.Optimize(x.Rows)
			return &Delete{x}, nil
		}
	case *pg_query.Node_TruncateStmt:
		return compileTruncate(cat, st, n.TruncateStmt, bopts)
	case *pg_query.Node_ExplainStmt:
		inner := &parse.PG{Stmt: n.ExplainStmt.Query, SQL: st.SQL, Offset: st.Offset}
		for _, o := range n.ExplainStmt.Options {
			if d := o.GetDefElem(); d != nil && d.Defname == "analyze" {
				return nil, errcode.New(errcode.SQLFeatureNotSupported, "EXPLAIN ANALYZE is not supported")
			}
		}
		if inner.Stmt.GetUpdateStmt() != nil || inner.Stmt.GetDeleteStmt() != nil {
			d, err := bind.DML(cat, inner, bopts)
			if err != nil {
				return nil, err
			}
			switch x := d.(type) {
			case *bind.Update:
				return &Explain{DML: &ExplainedDML{Verb: "Update", Table: x.Table, Rows: opt.Optimize(x.Rows)}}, nil
			case *bind.Delete:
				return &Explain{DML: &ExplainedDML{Verb: "Delete", Table: x.Table, Rows: opt.Optimize(x.Rows)}}, nil
			}
		}
		if inner.Stmt.GetSelectStmt() == nil {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "EXPLAIN supports queries, UPDATE and DELETE only")
		}
		q, err := compileQuery(cat, inner, bopts)
		if err != nil {
			return nil, err
		}
		return &Explain{Query: q}, nil
	}
	if ddl.IsDDL(st) {
		d, err := ddl.Convert(st)
		if err != nil {
			return nil, err
		}
		out := &DDL{Stmt: d}
		if cv, ok := d.(*ddl.CreateView); ok {
			if cv.Materialized {
				v, err := CompileView(cat, cv.Query)
				if err != nil {
					return nil, err
				}
				v.Name = cv.Name
				o, err := viewOptions(cv.Options)
				if err != nil {
					return nil, err
				}
				v.RetainHistory, v.FreshnessTarget = o.RetainHistory, o.FreshnessTarget
				v.TimeZone, v.ExtraFloatDigits = o.TimeZone, o.ExtraFloatDigits
				v.WindowsNeverClose = o.WindowsNeverClose
				if err := checkWindows(v); err != nil {
					return nil, err
				}
				v.DateStyle, v.IntervalStyle = o.DateStyle, o.IntervalStyle
				if err := renameColumns(v.Columns, cv.ColumnNames); err != nil {
					return nil, err
				}
				out.View = v
				out.Columns = v.Columns
			} else {
				q, err := bind.QueryText(cat, cv.Query, bind.Options{})
				if err != nil {
					return nil, err
				}
				out.Columns = append([]plan.Column(nil), q.Columns...)
				if err := renameColumns(out.Columns, cv.ColumnNames); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	return &Other{PG: st}, nil
}

func renameColumns(cols []plan.Column, names []string) error {
	if len(names) > len(cols) {
		return errcode.New(errcode.SQLSemanticError, "CREATE VIEW specifies more column names than columns").WithSQLState("42601")
	}
	for i, n := range names {
		cols[i].Name = n
	}
	return nil
}

func compileQuery(cat catalog.Catalog, st *parse.PG, opts bind.Options) (*Query, error) {
	q, err := bind.Query(cat, st, opts)
	if err != nil {
		return nil, err
	}
	readOrder(cat, q)
	return &Query{
		SQL: st.SQL,
		Query: adhoc.Query{
			Plan:       opt.Optimize(q.Plan),
			Columns:    q.Columns,
			Order:      q.Order,
			Limit:      q.Limit,
			Offset:     q.Offset,
			LimitParam: q.LimitParam, OffsetParam: q.OffsetParam,
		},
		ParamTypes: q.ParamTypes,
		Origins:    q.Origins,
		RegColumns: q.RegColumns,
	}, nil
}

// CompileQuery compiles one ad-hoc query (SELECT / VALUES / set operation).
func CompileQuery(cat catalog.Catalog, text string, opts Options) (*Query, error) {
	st, err := parse.ParseOne(text)
	if err != nil {
		return nil, err
	}
	pg, ok := st.(*parse.PG)
	if !ok || pg.Stmt.GetSelectStmt() == nil {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "expected a query")
	}
	return compileQuery(cat, pg, bind.Options{ParamTypes: opts.ParamTypes})
}

// otherTag is the command tag of a passthrough statement.
func otherTag(n *pg_query.Node) string {
	switch x := n.Node.(type) {
	case *pg_query.Node_TransactionStmt:
		switch x.TransactionStmt.Kind {
		case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
			return "BEGIN"
		case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
			return "COMMIT"
		case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			return "ROLLBACK"
		}
		return "TRANSACTION"
	case *pg_query.Node_VariableSetStmt:
		return "SET"
	case *pg_query.Node_VariableShowStmt:
		return "SHOW"
	}
	return "UTILITY"
}

// compileTruncate binds TRUNCATE t1, t2 as DELETE FROM t1; DELETE FROM t2.
func compileTruncate(cat catalog.Catalog, st *parse.PG, ts *pg_query.TruncateStmt, bopts bind.Options) (Statement, error) {
	out := &Truncate{RestartIdentity: ts.RestartSeqs}
	for _, r := range ts.Relations {
		rv := r.GetRangeVar()
		if rv == nil {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "TRUNCATE of this relation is not supported")
		}
		del := &pg_query.Node{Node: &pg_query.Node_DeleteStmt{DeleteStmt: &pg_query.DeleteStmt{Relation: rv}}}
		d, err := bind.DML(cat, &parse.PG{Stmt: del, SQL: st.SQL, Offset: st.Offset}, bopts)
		if err != nil {
			return nil, err
		}
		x := d.(*bind.Delete)
		x.Rows = opt.Optimize(x.Rows)
		out.Deletes = append(out.Deletes, &Delete{x})
	}
	return out, nil
}
