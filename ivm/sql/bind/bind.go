// Package bind resolves parsed SQL (pg_query trees) against the catalog
// into typed PlanIR: names (aliases, qualified names, USING, NATURAL, star
// expansion), PostgreSQL's type rules and implicit casts, function
// resolution, parameter type inference, and semantic errors with
// PostgreSQL's SQLSTATEs.
//
// Walkthrough:
//
//	stmt, _ := parse.ParseOne("SELECT a, count(*) FROM t WHERE b > $1 GROUP BY a")
//	q, err := bind.Query(cat, stmt.(*parse.PG), bind.Options{})
//	// q.Plan is Aggregate(Project(Filter(Scan t))); q.ParamTypes[0] is b's type.
package bind

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Options configure one binding.
type Options struct {
	// ParamTypes are the types a client declared for $1..$n (Parse
	// message); zero Kind (or KindUnknown) means "infer from context".
	ParamTypes []types.Type
	// ForView binds the defining query of a materialized view: constructs
	// the engine cannot maintain fail with RS-2001, and stable/volatile
	// functions (now(), random()) are rejected.
	ForView bool
	// InlineMaterialized, when set, is asked about every materialized view
	// the query reads: one it returns (its current definition, with its
	// pins) is expanded like an inline view instead of read (a view
	// shard compiling a view that reads another view shard's view).
	InlineMaterialized func(*catalog.Relation) (*catalog.Relation, bool)
}

// BoundQuery is a bound SELECT (or VALUES / set operation).
type BoundQuery struct {
	// Plan computes the result rows. Its schema may carry hidden trailing
	// columns (ORDER BY expressions not in the select list) beyond Columns.
	Plan plan.Node
	// Columns is the visible result schema (a prefix of Plan.Schema()).
	Columns []plan.Column
	// Order, Limit and Offset are the query's final ORDER BY / LIMIT /
	// OFFSET; Limit < 0 when absent. Ad-hoc execution applies them after
	// running the plan; a view turns a LIMIT into a TopK node.
	Order  []plan.SortKey
	Limit  int64
	Offset int64
	// LimitParam / OffsetParam are N when LIMIT / OFFSET is $N (0: none);
	// the executor reads the value from the parameters.
	LimitParam, OffsetParam int
	// ParamTypes are the resolved types of $1..$n.
	ParamTypes []types.Type
	// Origins has one entry per column of Columns (nil: none known).
	Origins []Origin
	// RegColumns are the regclass/regtype columns returned as names.
	RegColumns []RegColumn
	// RecordHidden counts the hidden columns right after Columns that
	// carry record columns' fields (srf.go).
	RecordHidden int
	// TimeWindows are the streaming window functions in FROM (TUMBLE,
	// HOP, SESSION) the query uses, in its inline views too but not in
	// materialized views compiled into it (checked when they were
	// created).
	TimeWindows []TimeWindow
}

// noteWindow records a use of streaming window function fn over input
// (named rel) with time column timeCol.
func (b *binder) noteWindow(fn, rel string, input plan.Node, timeCol int) {
	if !b.inMaterialized {
		*b.windows = append(*b.windows, TimeWindow{Func: fn, Relation: rel, Input: input, Time: timeCol})
	}
}

// TimeWindow is one use of a streaming window function in FROM.
type TimeWindow struct {
	// Func is TUMBLE, HOP or SESSION.
	Func string
	// Relation is the relation argument as written; Input is its plan
	// and Time the index of the time column in Input's schema.
	Relation string
	Input    plan.Node
	Time     int
}

// binder holds the state of one statement's binding.
type binder struct {
	cat  catalog.Catalog
	opts Options
	// src and base locate the statement in the whole input for error
	// positions (pg_query locations are byte offsets into the statement).
	src  string
	base int
	// params are the types of $1..$n so far (KindUnknown = not yet known).
	params []types.Type
	// ctes are the visible WITH queries, innermost last.
	ctes []map[string]*cteDef
	// viewDepth guards inline view expansion against cycles.
	viewDepth int
	// workTables counts the recursive CTEs' working tables (shared with
	// the binders of inline views, so ids stay distinct per statement).
	workTables *uint64
	// windows collects the TimeWindows (shared with the binders of
	// inline views); inMaterialized is set while binding a materialized
	// view compiled into the query, whose windows are not collected.
	windows        *[]TimeWindow
	inMaterialized bool
}

type cteDef struct {
	node    plan.Node
	columns []plan.Column
	origins []Origin
}

const viewExpansionDepthMax = 32 // inline views nest at most this deep (cycle guard)

func newBinder(cat catalog.Catalog, src string, base int, opts Options) *binder {
	b := &binder{cat: cat, opts: opts, src: src, base: base, workTables: new(uint64), windows: new([]TimeWindow)}
	for _, t := range opts.ParamTypes {
		if t.Kind == types.KindInvalid {
			t = types.TUnknown
		}
		b.params = append(b.params, t)
	}
	return b
}

// pos converts a pg_query location to a 1-based character position.
func (b *binder) pos(loc int32) int {
	if loc < 0 {
		return 0
	}
	return parse.CharPosition(b.src, b.base+int(loc))
}

// unsupported is the error for a construct the engine cannot run or
// maintain: RS-2001 in a materialized view, RS-2109 ad hoc (both 0A000).
func (b *binder) unsupported(loc int32, construct string) error {
	code := errcode.SQLFeatureNotSupported
	if b.opts.ForView {
		code = errcode.UnsupportedSQLConstruct
	}
	msg := "RockStream does not support %s"
	if b.opts.ForView {
		msg = "materialized views do not support %s"
	}
	return errcode.New(code, msg, construct).WithPosition(b.pos(loc)).WithDetail("construct: %s", construct)
}

func (b *binder) semantic(state string, loc int32, format string, args ...any) error {
	return errcode.New(errcode.SQLSemanticError, format, args...).WithSQLState(state).WithPosition(b.pos(loc))
}

// Query binds a SELECT / VALUES / set-operation statement.
func Query(cat catalog.Catalog, stmt *parse.PG, opts Options) (*BoundQuery, error) {
	sel := stmt.Stmt.GetSelectStmt()
	if sel == nil {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "expected a query, got %s", StatementTag(stmt.Stmt))
	}
	b := newBinder(cat, stmt.SQL, 0, opts)
	b.src, b.base = stmt.SQL, 0
	return b.topQuery(sel)
}

// QueryText parses and binds one query.
func QueryText(cat catalog.Catalog, sql string, opts Options) (*BoundQuery, error) {
	st, err := parse.ParseOne(sql)
	if err != nil {
		return nil, err
	}
	pg, ok := st.(*parse.PG)
	if !ok {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "expected a query")
	}
	return Query(cat, pg, opts)
}

// topQuery binds a statement-level query and finalises parameter types.
func (b *binder) topQuery(sel *pg_query.SelectStmt) (*BoundQuery, error) {
	q, err := b.selectStmt(sel, nil)
	if err != nil {
		return nil, err
	}
	for _, c := range q.Columns {
		if c.Type.Kind == types.KindRecord {
			return nil, b.unsupported(-1, "record-valued columns in the result (select a field, as in (f(...)).x)")
		}
	}
	if err := b.finishParams(); err != nil {
		return nil, err
	}
	q.Plan = b.fixParams(q.Plan)
	q.ParamTypes = append([]types.Type(nil), b.params...)
	q.TimeWindows = *b.windows
	if !b.opts.ForView {
		b.regOutput(q)
	}
	return q, nil
}

// finishParams fails for parameters whose type could not be inferred, as
// PostgreSQL does (42P18).
func (b *binder) finishParams() error {
	for i, t := range b.params {
		if t.Kind == types.KindUnknown {
			return errcode.New(errcode.SQLIndeterminateDatatype, "could not determine data type of parameter $%d", i+1)
		}
	}
	return nil
}

// fixParams rewrites every Param in the plan to its final type (a
// parameter first seen in an untyped context gets its type later).
func (b *binder) fixParams(n plan.Node) plan.Node {
	fix := func(s plan.Scalar) plan.Scalar {
		return plan.Rewrite(s, func(x plan.Scalar) plan.Scalar {
			if p, ok := x.(*plan.Param); ok && !p.Typ.Equal(b.params[p.Index]) {
				return &plan.Param{Index: p.Index, Typ: b.params[p.Index]}
			}
			if sq, ok := x.(*plan.Subquery); ok {
				c := *sq
				c.Plan = b.fixParams(sq.Plan)
				return &c
			}
			return x
		})
	}
	return plan.Transform(n, func(n plan.Node) plan.Node { return plan.MapScalars(n, fix) })
}

// StatementTag is PostgreSQL's command tag word for a statement kind.
func StatementTag(n *pg_query.Node) string {
	switch n.Node.(type) {
	case *pg_query.Node_SelectStmt:
		return "SELECT"
	case *pg_query.Node_InsertStmt:
		return "INSERT"
	case *pg_query.Node_UpdateStmt:
		return "UPDATE"
	case *pg_query.Node_DeleteStmt:
		return "DELETE"
	}
	return fmt.Sprintf("%T", n.Node)
}
