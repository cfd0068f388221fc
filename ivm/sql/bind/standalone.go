package bind

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// assign casts s to a column type with assignment-cast rules, as INSERT,
// UPDATE and DEFAULT do (42804 when no such cast exists).
func (b *binder) assign(s plan.Scalar, t types.Type, column string, loc int32) (plan.Scalar, error) {
	from := s.Type()
	if from.Equal(t) {
		return s, nil
	}
	if from.Kind == types.KindUnknown || implicitCastOK(from, t) {
		if from.Kind == t.Kind && t.Typmod < 0 {
			return s, nil
		}
		return b.cast(s, t, false, loc)
	}
	if !assignmentCastOK(from, t) {
		return nil, errcode.New(errcode.SQLDatatypeMismatch, "column \"%s\" is of type %s but expression is of type %s", column, t.SQLName(), from.SQLName()).
			WithPosition(b.pos(loc)).WithDetail("You will need to rewrite or cast the expression.")
	}
	return &plan.Cast{Arg: s, Typ: t}, nil
}

// DefaultExpr binds a column DEFAULT expression (SQL text, no column
// references) and casts it to the column type. Stable functions such as
// now() are allowed: a default is evaluated per inserted row.
func DefaultExpr(text string, t types.Type, column string) (plan.Scalar, error) {
	st, err := parse.ParseOne("SELECT " + text)
	if err != nil {
		return nil, err
	}
	sel := st.(*parse.PG).Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 {
		return nil, errcode.New(errcode.SQLSyntaxError, "invalid DEFAULT expression: %s", text)
	}
	b := newBinder(catalog.NewMemory(catalog.NamespaceID{}), "SELECT "+text, 0, Options{})
	s, err := b.expr(sel.TargetList[0].GetResTarget().Val, &scope{}, exprCtx{clause: "DEFAULT expressions"})
	if err != nil {
		return nil, err
	}
	if plan.HasSubquery(s) {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "cannot use subquery in DEFAULT expression").WithSQLState("0A000")
	}
	if len(b.params) > 0 {
		return nil, errcode.New(errcode.SQLSemanticError, "there is no parameter $1").WithSQLState("42P02")
	}
	return b.assign(s, t, column, -1)
}

// DeparseExpr renders a pg_query expression back to SQL text (used to
// store DEFAULT expressions).
func DeparseExpr(n *pg_query.Node) (string, error) {
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: n}}}}}
	out, err := pg_query.Deparse(&pg_query.ParseResult{Version: pgQueryVersion(), Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
	if err != nil {
		return "", errcode.Wrap(errcode.InternalError, err, "deparse expression")
	}
	const prefix = "SELECT "
	if len(out) < len(prefix) {
		return "", errcode.New(errcode.InternalError, "deparse expression: %q", out)
	}
	return out[len(prefix):], nil
}

// pgQueryVersion is the parse-tree version pg_query's deparser expects.
func pgQueryVersion() int32 {
	r, err := parse.PGParse("SELECT 1")
	if err != nil {
		return 0
	}
	return r.Version
}
