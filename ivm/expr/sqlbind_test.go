package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/ivm/types"
)

// A tiny test-only binder from PostgreSQL's parse tree (pg_query) to expr
// nodes, so that tests can be written as SQL text and compared with a real
// PostgreSQL. The real binder lives in the compiler (ivm/sql).

func bindSQL(sql string) (Expr, error) {
	res, err := pg_query.Parse("SELECT " + sql)
	if err != nil {
		return nil, err
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return nil, fmt.Errorf("expected one target")
	}
	return bindNode(sel.TargetList[0].GetResTarget().Val)
}

func typeFromName(tn *pg_query.TypeName) (types.Type, error) {
	var name string
	for _, n := range tn.Names {
		name = n.GetString_().Sval
	}
	var mods []int32
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return types.Type{}, fmt.Errorf("bad typmod")
		}
		mods = append(mods, c.GetIval().Ival)
	}
	var t types.Type
	switch name {
	case "int2", "smallint":
		t = types.TInt2
	case "int4", "int", "integer":
		t = types.TInt4
	case "int8", "bigint":
		t = types.TInt8
	case "float4", "real":
		t = types.TFloat4
	case "float8", "double precision":
		t = types.TFloat8
	case "float":
		t = types.TFloat8
		if len(mods) == 1 && mods[0] <= 24 {
			t = types.TFloat4
		}
		mods = nil
	case "numeric", "decimal":
		t = types.TNumeric
		switch len(mods) {
		case 1:
			t.Typmod = types.MakeNumericTypmod(int(mods[0]), 0)
		case 2:
			t.Typmod = types.MakeNumericTypmod(int(mods[0]), int(mods[1]))
		}
		mods = nil
	case "text":
		t = types.TText
	case "varchar":
		t = types.TVarchar
	case "bpchar", "char":
		t = types.Type{Kind: types.KindChar, Typmod: -1}
		if name == "bpchar" && len(mods) == 0 && len(tn.Names) == 2 {
			t.Typmod = 5 // char without length is char(1)
		}
	case "name":
		t = types.TName
	case "bool", "boolean":
		t = types.TBool
	case "bytea":
		t = types.TBytea
	case "date":
		t = types.TDate
	case "time":
		t = types.TTime
	case "timestamp":
		t = types.TTimestamp
	case "timestamptz":
		t = types.TTimestampTZ
	case "interval":
		t = types.TInterval
	case "uuid":
		t = types.TUUID
	case "jsonb":
		t = types.TJSONB
	case "json":
		t = types.Type{Kind: types.KindJSON, Typmod: -1}
	default:
		return types.Type{}, fmt.Errorf("unknown type %s", name)
	}
	if len(mods) == 1 {
		switch t.Kind {
		case types.KindVarchar, types.KindChar:
			t.Typmod = mods[0] + 4
		case types.KindTimestamp, types.KindTimestampTZ, types.KindTime:
			t.Typmod = mods[0]
		}
	}
	if len(tn.ArrayBounds) > 0 {
		t = types.ArrayOf(t)
	}
	return t, nil
}

func bindConst(c *pg_query.A_Const) (Expr, error) {
	switch {
	case c.Isnull:
		return Null(types.TUnknown), nil
	case c.GetIval() != nil:
		return NewConst(types.TInt4, int64(c.GetIval().Ival)), nil
	case c.GetFval() != nil:
		s := c.GetFval().Fval
		if !strings.ContainsAny(s, ".eE") {
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				if v >= math.MinInt32 && v <= math.MaxInt32 {
					return NewConst(types.TInt4, v), nil
				}
				return NewConst(types.TInt8, v), nil
			}
		}
		d, err := types.ParseNumeric(s)
		if err != nil {
			return nil, err
		}
		return NewConst(types.TNumeric, d), nil
	case c.GetSval() != nil:
		return NewConst(types.TUnknown, c.GetSval().Sval), nil
	case c.GetBoolval() != nil:
		return NewConst(types.TBool, c.GetBoolval().Boolval), nil
	}
	return nil, fmt.Errorf("unsupported constant %v", c)
}

func bindList(ns []*pg_query.Node) ([]Expr, error) {
	out := make([]Expr, len(ns))
	for i, n := range ns {
		e, err := bindNode(n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func bindNode(n *pg_query.Node) (Expr, error) {
	switch {
	case n.GetAConst() != nil:
		return bindConst(n.GetAConst())
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		x, err := bindNode(tc.Arg)
		if err != nil {
			return nil, err
		}
		t, err := typeFromName(tc.TypeName)
		if err != nil {
			return nil, err
		}
		return NewCast(x, t)
	case n.GetBoolExpr() != nil:
		b := n.GetBoolExpr()
		args, err := bindList(b.Args)
		if err != nil {
			return nil, err
		}
		switch b.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			return NewAnd(args...)
		case pg_query.BoolExprType_OR_EXPR:
			return NewOr(args...)
		}
		return NewNot(args[0])
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		x, err := bindNode(nt.Arg)
		if err != nil {
			return nil, err
		}
		return NewIsNull(x, nt.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL), nil
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		x, err := bindNode(bt.Arg)
		if err != nil {
			return nil, err
		}
		m := map[pg_query.BoolTestType]BoolTestKind{
			pg_query.BoolTestType_IS_TRUE: IsTrue, pg_query.BoolTestType_IS_NOT_TRUE: IsNotTrue,
			pg_query.BoolTestType_IS_FALSE: IsFalse, pg_query.BoolTestType_IS_NOT_FALSE: IsNotFalse,
			pg_query.BoolTestType_IS_UNKNOWN: IsUnknown, pg_query.BoolTestType_IS_NOT_UNKNOWN: IsNotUnknown,
		}
		return NewBoolTest(x, m[bt.Booltesttype])
	case n.GetCaseExpr() != nil:
		c := n.GetCaseExpr()
		var operand, elseExpr Expr
		var err error
		if c.Arg != nil {
			if operand, err = bindNode(c.Arg); err != nil {
				return nil, err
			}
		}
		if c.Defresult != nil {
			if elseExpr, err = bindNode(c.Defresult); err != nil {
				return nil, err
			}
		}
		var whens []When
		for _, w := range c.Args {
			cw := w.GetCaseWhen()
			cond, err := bindNode(cw.Expr)
			if err != nil {
				return nil, err
			}
			res, err := bindNode(cw.Result)
			if err != nil {
				return nil, err
			}
			whens = append(whens, When{Cond: cond, Result: res})
		}
		return NewCase(operand, whens, elseExpr)
	case n.GetCoalesceExpr() != nil:
		args, err := bindList(n.GetCoalesceExpr().Args)
		if err != nil {
			return nil, err
		}
		return NewCoalesce(args...)
	case n.GetMinMaxExpr() != nil:
		m := n.GetMinMaxExpr()
		args, err := bindList(m.Args)
		if err != nil {
			return nil, err
		}
		if m.Op == pg_query.MinMaxOp_IS_GREATEST {
			return NewGreatest(args...)
		}
		return NewLeast(args...)
	case n.GetFuncCall() != nil:
		f := n.GetFuncCall()
		var name string
		for _, p := range f.Funcname {
			name = p.GetString_().Sval
		}
		args, err := bindList(f.Args)
		if err != nil {
			return nil, err
		}
		return NewCall(name, args...)
	case n.GetAExpr() != nil:
		return bindAExpr(n.GetAExpr())
	}
	return nil, fmt.Errorf("unsupported node %v", n)
}

func bindAExpr(a *pg_query.A_Expr) (Expr, error) {
	op := ""
	if len(a.Name) > 0 {
		op = a.Name[len(a.Name)-1].GetString_().Sval
	}
	var l, r Expr
	var err error
	if a.Lexpr != nil {
		if l, err = bindNode(a.Lexpr); err != nil {
			return nil, err
		}
	}
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_IN:
		list, err := bindList(a.Rexpr.GetList().Items)
		if err != nil {
			return nil, err
		}
		return NewIn(l, list, op == "<>")
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		bounds, err := bindList(a.Rexpr.GetList().Items)
		if err != nil {
			return nil, err
		}
		neg := a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN || a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
		sym := a.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM || a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM
		return NewBetween(l, bounds[0], bounds[1], neg, sym)
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		var escape Expr
		pat := a.Rexpr
		if fc := pat.GetFuncCall(); fc != nil && fc.Funcname[len(fc.Funcname)-1].GetString_().Sval == "like_escape" {
			if escape, err = bindNode(fc.Args[1]); err != nil {
				return nil, err
			}
			pat = fc.Args[0]
		}
		if r, err = bindNode(pat); err != nil {
			return nil, err
		}
		return NewLike(l, r, escape, a.Kind == pg_query.A_Expr_Kind_AEXPR_ILIKE, strings.HasPrefix(op, "!"))
	}
	if r, err = bindNode(a.Rexpr); err != nil {
		return nil, err
	}
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT:
		return NewDistinctFrom(l, r, false)
	case pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		return NewDistinctFrom(l, r, true)
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return NewNullIf(l, r)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY:
		return NewAnyAll(op, l, r, false)
	case pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return NewAnyAll(op, l, r, true)
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if l == nil {
			return NewUnary(op, r)
		}
		return NewBinary(op, l, r)
	}
	return nil, fmt.Errorf("unsupported A_Expr kind %v", a.Kind)
}

var _ = apd.New
