package bind

import (
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// exprCtx says what an expression may contain where it is being bound.
type exprCtx struct {
	// clause names the clause for error messages ("WHERE", "JOIN conditions").
	clause string
	// aggs collects aggregate calls; nil where aggregates are not allowed.
	aggs *[]aggRef
	// inAgg is set while binding an aggregate's arguments (no nesting).
	inAgg bool
	// wins collects window-function calls; nil where they are not allowed.
	wins *[]*winRef
	// srfs collects set-returning function calls of the SELECT list; nil
	// where they are not allowed (srf.go).
	srfs *srfCollector
	// groupings collects GROUPING() calls; nil where they are not allowed
	// (groupingsets.go).
	groupings *[]*groupingRef
}

// aggRef is a placeholder scalar for an aggregate call: lifted to a column
// of the Aggregate node once the query's grouping is known.
type aggRef struct {
	index int
	call  plan.AggCall
}

func (a *aggRef) Type() types.Type                         { return a.call.Typ }
func (a *aggRef) String() string                           { return a.call.String() }
func (a *aggRef) Children() []plan.Scalar                  { return nil }
func (a *aggRef) WithChildren(_ []plan.Scalar) plan.Scalar { return a }

// expr binds one expression in scope sc.
func (b *binder) expr(n *pg_query.Node, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if n == nil {
		return nil, errcode.New(errcode.InternalError, "nil expression")
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		s, err := b.columnRef(x.ColumnRef, sc)
		if err == nil && s.Type().Kind == types.KindRecord {
			return nil, b.unsupported(x.ColumnRef.Location, "record-valued columns outside field selection (r).x")
		}
		return s, err
	case *pg_query.Node_AConst:
		return b.constant(x.AConst)
	case *pg_query.Node_ParamRef:
		i := int(x.ParamRef.Number) - 1
		if i < 0 || i >= 65535 {
			return nil, b.semantic("42P02", x.ParamRef.Location, "there is no parameter $%d", i+1)
		}
		for len(b.params) <= i {
			b.params = append(b.params, types.TUnknown)
		}
		return &plan.Param{Index: i, Typ: b.params[i]}, nil
	case *pg_query.Node_TypeCast:
		arg, err := b.expr(x.TypeCast.Arg, sc, ctx)
		if err != nil {
			return nil, err
		}
		t, err := b.typeName(x.TypeCast.TypeName)
		if err != nil {
			return nil, err
		}
		return b.cast(arg, t, true, x.TypeCast.Location)
	case *pg_query.Node_AExpr:
		return b.aExpr(x.AExpr, sc, ctx)
	case *pg_query.Node_BoolExpr:
		args := make([]plan.Scalar, len(x.BoolExpr.Args))
		for i, a := range x.BoolExpr.Args {
			s, err := b.expr(a, sc, ctx)
			if err != nil {
				return nil, err
			}
			if s, err = b.coerceBool(s, ctx.clause, x.BoolExpr.Location); err != nil {
				return nil, err
			}
			args[i] = s
		}
		switch x.BoolExpr.Boolop {
		case pg_query.BoolExprType_AND_EXPR:
			return &plan.BoolOp{Op: plan.And, Args: args}, nil
		case pg_query.BoolExprType_OR_EXPR:
			return &plan.BoolOp{Op: plan.Or, Args: args}, nil
		default:
			return &plan.BoolOp{Op: plan.Not, Args: args}, nil
		}
	case *pg_query.Node_NullTest:
		arg, err := b.expr(x.NullTest.Arg, sc, ctx)
		if err != nil {
			return nil, err
		}
		if p, ok := arg.(*plan.Param); ok && p.Typ.Kind == types.KindUnknown {
			return nil, errcode.New(errcode.SQLIndeterminateDatatype, "could not determine data type of parameter $%d", p.Index+1)
		}
		return &plan.IsNull{Arg: arg, Negate: x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL}, nil
	case *pg_query.Node_BooleanTest:
		arg, err := b.expr(x.BooleanTest.Arg, sc, ctx)
		if err != nil {
			return nil, err
		}
		if arg, err = b.coerceBool(arg, "IS TRUE", x.BooleanTest.Location); err != nil {
			return nil, err
		}
		var val plan.Scalar
		negate := false
		switch x.BooleanTest.Booltesttype {
		case pg_query.BoolTestType_IS_TRUE:
			val = &plan.Const{Value: true, Typ: types.TBool}
			negate = true
		case pg_query.BoolTestType_IS_NOT_TRUE:
			val = &plan.Const{Value: true, Typ: types.TBool}
		case pg_query.BoolTestType_IS_FALSE:
			val = &plan.Const{Value: false, Typ: types.TBool}
			negate = true
		case pg_query.BoolTestType_IS_NOT_FALSE:
			val = &plan.Const{Value: false, Typ: types.TBool}
		case pg_query.BoolTestType_IS_UNKNOWN:
			return &plan.IsNull{Arg: arg}, nil
		default:
			return &plan.IsNull{Arg: arg, Negate: true}, nil
		}
		return &plan.IsDistinct{L: arg, R: val, Negate: negate}, nil
	case *pg_query.Node_CaseExpr:
		return b.caseExpr(x.CaseExpr, sc, ctx)
	case *pg_query.Node_CoalesceExpr:
		args, t, err := b.commonArgs(x.CoalesceExpr.Args, sc, ctx, "COALESCE", x.CoalesceExpr.Location)
		if err != nil {
			return nil, err
		}
		return &plan.Coalesce{Args: args, Typ: t}, nil
	case *pg_query.Node_MinMaxExpr:
		name := "greatest"
		if x.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			name = "least"
		}
		args, t, err := b.commonArgs(x.MinMaxExpr.Args, sc, ctx, strings.ToUpper(name), x.MinMaxExpr.Location)
		if err != nil {
			return nil, err
		}
		return &plan.Func{Name: name, Args: args, Typ: t}, nil
	case *pg_query.Node_FuncCall:
		return b.funcCall(x.FuncCall, sc, ctx)
	case *pg_query.Node_SubLink:
		return b.subLink(x.SubLink, sc, ctx)
	case *pg_query.Node_SqlvalueFunction:
		return b.sqlValueFunction(x.SqlvalueFunction)
	case *pg_query.Node_ResTarget:
		return b.expr(x.ResTarget.Val, sc, ctx)
	case *pg_query.Node_AArrayExpr:
		return b.arrayCtor(x.AArrayExpr, sc, ctx)
	case *pg_query.Node_RowExpr:
		return nil, b.unsupported(x.RowExpr.Location, "row constructors")
	case *pg_query.Node_CollateClause:
		if isDefaultCollation(x.CollateClause.Collname) {
			// psql's pattern matches add COLLATE pg_catalog.default: the
			// default collation is the only one, so it changes nothing.
			return b.expr(x.CollateClause.Arg, sc, ctx)
		}
		return nil, b.unsupported(x.CollateClause.Location, "COLLATE")
	case *pg_query.Node_AIndirection:
		if s, ok, err := b.srfField(x.AIndirection, sc, ctx); ok || err != nil {
			return s, err
		}
		if s, ok, err := b.subscript(x.AIndirection, sc, ctx); ok || err != nil {
			return s, err
		}
		return nil, b.unsupported(-1, "subscripts and field selection")
	case *pg_query.Node_GroupingFunc:
		return b.groupingFunc(x.GroupingFunc, sc, ctx)
	}
	return nil, b.unsupported(-1, "expression "+strings.TrimPrefix(strings.TrimPrefix(typeNameOf(n), "*pg_query.Node_"), "*pg_query."))
}

func typeNameOf(n *pg_query.Node) string {
	if n == nil || n.Node == nil {
		return "empty"
	}
	return strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(fmtType(n.Node), "*pg_query.Node_"), "*pg_query."), "Node_")
}

// columnRef resolves a (possibly qualified) column in sc or an enclosing
// scope (correlation).
func (b *binder) columnRef(c *pg_query.ColumnRef, sc *scope) (plan.Scalar, error) {
	var parts []string
	for _, f := range c.Fields {
		switch v := f.Node.(type) {
		case *pg_query.Node_String_:
			parts = append(parts, v.String_.Sval)
		case *pg_query.Node_AStar:
			return nil, b.semantic("42601", c.Location, "* is not allowed here")
		}
	}
	schema, table, name := "", "", ""
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		table, name = parts[0], parts[1]
	case 3:
		schema, table, name = parts[0], parts[1], parts[2]
	case 4:
		return nil, b.semantic("0A000", c.Location, "cross-database references are not implemented: %s", strings.Join(parts, "."))
	default:
		return nil, b.semantic("42601", c.Location, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
	}
	depth := 0
	for s := sc; s != nil; s, depth = s.parent, depth+1 {
		col, found, err := s.lookupColumn(schema, table, name, b.pos(c.Location))
		if err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if depth == 0 {
			return &plan.ColRef{Index: col.index, Typ: col.typ, Name: name, Qualifier: col.table}, nil
		}
		return &plan.OuterRef{Depth: depth, Index: col.index, Typ: col.typ, Name: name}, nil
	}
	if table != "" {
		for s := sc; s != nil; s = s.parent {
			if s.hasTable(table) {
				return nil, errcode.New(errcode.SQLUndefinedColumn, "column %s.%s does not exist", table, name).WithPosition(b.pos(c.Location))
			}
		}
		return nil, errcode.New(errcode.SQLUndefinedTable, "missing FROM-clause entry for table \"%s\"", table).WithPosition(b.pos(c.Location))
	}
	return nil, errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" does not exist", name).WithPosition(b.pos(c.Location))
}

// constant binds a literal: integers are int4 when they fit, else int8,
// else numeric; decimals are numeric; strings are unknown until context
// resolves them.
func (b *binder) constant(c *pg_query.A_Const) (plan.Scalar, error) {
	if c.Isnull {
		return &plan.Const{Value: nil, Typ: types.TUnknown}, nil
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return &plan.Const{Value: int64(v.Ival.Ival), Typ: types.TInt4}, nil
	case *pg_query.A_Const_Fval:
		s := v.Fval.Fval
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return &plan.Const{Value: i, Typ: types.TInt8}, nil
		}
		d, _, err := apd.NewFromString(s)
		if err != nil {
			return nil, b.semantic("22P02", c.Location, "invalid input syntax for type numeric: \"%s\"", s)
		}
		return &plan.Const{Value: d, Typ: types.TNumeric}, nil
	case *pg_query.A_Const_Boolval:
		return &plan.Const{Value: v.Boolval.Boolval, Typ: types.TBool}, nil
	case *pg_query.A_Const_Sval:
		return &plan.Const{Value: v.Sval.Sval, Typ: types.TUnknown}, nil
	case *pg_query.A_Const_Bsval:
		return nil, b.unsupported(c.Location, "bit-string literals")
	}
	return nil, b.unsupported(c.Location, "this literal")
}

// cast converts s to t: an unknown literal or parameter takes the type
// directly (PostgreSQL resolves them at parse time), a same-type cast with
// no modifier change disappears.
func (b *binder) cast(s plan.Scalar, t types.Type, explicit bool, loc int32) (plan.Scalar, error) {
	from := s.Type()
	if p, ok := s.(*plan.Param); ok && from.Kind == types.KindUnknown {
		b.params[p.Index] = t
		return &plan.Param{Index: p.Index, Typ: t}, nil
	}
	if from.Equal(t) || (!explicit && from.Kind == t.Kind && t.Typmod < 0) {
		return s, nil
	}
	if c, ok := s.(*plan.Const); ok {
		if folded, ok := foldLiteralCast(c, t); ok {
			return folded, nil
		}
	}
	if from.Kind == types.KindUnknown {
		if c, ok := s.(*plan.Const); ok {
			if c.Value == nil {
				return &plan.Const{Value: nil, Typ: t}, nil
			}
			// PostgreSQL converts an untyped literal when it resolves its
			// type: invalid input fails now, with the literal's position.
			var e expr.Expr
			var err error
			if explicit {
				e, err = expr.NewCast(expr.NewConst(types.TUnknown, c.Value), t)
			} else {
				e, err = expr.Coerce(expr.NewConst(types.TUnknown, c.Value), t)
			}
			if err != nil {
				if ce, ok := errcode.As(err); ok {
					return nil, ce.WithPosition(b.pos(loc))
				}
				return nil, err
			}
			if k, ok := e.(*expr.Const); ok {
				return &plan.Const{Value: k.Value, Typ: t}, nil
			}
		}
		return &plan.Cast{Arg: s, Typ: t, Explicit: explicit}, nil
	}
	ok := implicitCastOK(from, t)
	if explicit {
		ok = explicitCastOK(from, t)
	}
	if !ok {
		if explicit {
			return nil, b.semantic("42846", loc, "cannot cast type %s to %s", from.SQLName(), t.SQLName())
		}
		return nil, errcode.New(errcode.SQLDatatypeMismatch, "%s is of type %s but expression is of type %s", "column", t.SQLName(), from.SQLName()).WithPosition(b.pos(loc))
	}
	if c, isConst := s.(*plan.Const); isConst && c.Value == nil {
		return &plan.Const{Value: nil, Typ: t}, nil
	}
	return &plan.Cast{Arg: s, Typ: t, Explicit: explicit}, nil
}

// coerce implicitly casts s to t (unknown literals and parameters adopt t).
func (b *binder) coerce(s plan.Scalar, t types.Type, loc int32) (plan.Scalar, error) {
	return b.cast(s, t, false, loc)
}

// coerceBool requires a boolean (argument of AND/OR/NOT, WHERE, HAVING, ON).
func (b *binder) coerceBool(s plan.Scalar, clause string, loc int32) (plan.Scalar, error) {
	t := s.Type()
	if t.Kind == types.KindBool {
		return s, nil
	}
	if t.Kind == types.KindUnknown {
		return b.coerce(s, types.TBool, loc)
	}
	if clause == "" {
		clause = "argument of boolean operator"
	} else {
		clause = "argument of " + clause
	}
	return nil, errcode.New(errcode.SQLDatatypeMismatch, "%s must be type boolean, not type %s", clause, t.SQLName()).WithPosition(b.pos(loc))
}

// commonArgs binds args and casts them to their common type.
func (b *binder) commonArgs(nodes []*pg_query.Node, sc *scope, ctx exprCtx, what string, loc int32) ([]plan.Scalar, types.Type, error) {
	args := make([]plan.Scalar, len(nodes))
	ts := make([]types.Type, len(nodes))
	for i, a := range nodes {
		s, err := b.expr(a, sc, ctx)
		if err != nil {
			return nil, types.Type{}, err
		}
		args[i], ts[i] = s, s.Type()
	}
	t, err := b.common(ts, what, loc)
	if err != nil {
		return nil, types.Type{}, err
	}
	for i := range args {
		if args[i], err = b.coerce(args[i], t, loc); err != nil {
			return nil, types.Type{}, err
		}
	}
	return args, t, nil
}

func (b *binder) common(ts []types.Type, what string, loc int32) (types.Type, error) {
	t, ok := commonType(ts)
	if !ok {
		var a, c types.Type
		for _, x := range ts {
			if x.Kind == types.KindUnknown {
				continue
			}
			if a.Kind == types.KindInvalid {
				a = x
			} else if categoryOf(x.Kind) != categoryOf(a.Kind) || !implicitCastOK(x, a) && !implicitCastOK(a, x) {
				c = x
				break
			}
		}
		return types.Type{}, errcode.New(errcode.SQLDatatypeMismatch, "%s types %s and %s cannot be matched", what, a.SQLName(), c.SQLName()).WithPosition(b.pos(loc))
	}
	return t, nil
}

// caseExpr binds CASE; a simple CASE (CASE x WHEN v ...) becomes searched
// with x = v conditions.
func (b *binder) caseExpr(c *pg_query.CaseExpr, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	var operand plan.Scalar
	if c.Arg != nil {
		var err error
		if operand, err = b.expr(c.Arg, sc, ctx); err != nil {
			return nil, err
		}
	}
	var conds, results []plan.Scalar
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		var cond plan.Scalar
		var err error
		if operand != nil {
			v, err := b.expr(cw.Expr, sc, ctx)
			if err != nil {
				return nil, err
			}
			if cond, err = b.binaryOp("=", operand, v, cw.Location); err != nil {
				return nil, err
			}
		} else {
			if cond, err = b.expr(cw.Expr, sc, ctx); err != nil {
				return nil, err
			}
			if cond, err = b.coerceBool(cond, "CASE/WHEN", cw.Location); err != nil {
				return nil, err
			}
		}
		r, err := b.expr(cw.Result, sc, ctx)
		if err != nil {
			return nil, err
		}
		conds, results = append(conds, cond), append(results, r)
	}
	var elseExpr plan.Scalar = &plan.Const{Value: nil, Typ: types.TUnknown}
	if c.Defresult != nil {
		var err error
		if elseExpr, err = b.expr(c.Defresult, sc, ctx); err != nil {
			return nil, err
		}
	}
	ts := make([]types.Type, 0, len(results)+1)
	for _, r := range results {
		ts = append(ts, r.Type())
	}
	ts = append(ts, elseExpr.Type())
	t, err := b.common(ts, "CASE", c.Location)
	if err != nil {
		return nil, err
	}
	out := &plan.Case{Typ: t}
	for i := range conds {
		r, err := b.coerce(results[i], t, c.Location)
		if err != nil {
			return nil, err
		}
		out.Whens = append(out.Whens, plan.When{Cond: conds[i], Result: r})
	}
	if out.Else, err = b.coerce(elseExpr, t, c.Location); err != nil {
		return nil, err
	}
	return out, nil
}

// aExpr binds operator expressions (A_Expr).
func (b *binder) aExpr(a *pg_query.A_Expr, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	opName := ""
	if len(a.Name) > 0 {
		opName = a.Name[len(a.Name)-1].GetString_().GetSval()
	}
	bindSide := func(n *pg_query.Node) (plan.Scalar, error) {
		if n == nil {
			return nil, nil
		}
		return b.expr(n, sc, ctx)
	}
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		l, err := bindSide(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := bindSide(a.Rexpr)
		if err != nil {
			return nil, err
		}
		if l == nil {
			return b.unaryOp(opName, r, a.Location)
		}
		return b.binaryOp(opName, l, r, a.Location)
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		l, err := bindSide(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := bindSide(a.Rexpr)
		if err != nil {
			return nil, err
		}
		return b.binaryOp(opName, l, r, a.Location)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, err := bindSide(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := bindSide(a.Rexpr)
		if err != nil {
			return nil, err
		}
		eq, err := b.binaryOp("=", l, r, a.Location)
		if err != nil {
			return nil, err
		}
		f := eq.(*plan.Func)
		return &plan.IsDistinct{L: f.Args[0], R: f.Args[1], Negate: a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT}, nil
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, err := bindSide(a.Lexpr)
		if err != nil {
			return nil, err
		}
		r, err := bindSide(a.Rexpr)
		if err != nil {
			return nil, err
		}
		eq, err := b.binaryOp("=", l, r, a.Location)
		if err != nil {
			return nil, err
		}
		f := eq.(*plan.Func)
		// NULLIF(l, r) = CASE WHEN l = r THEN NULL ELSE l END, typed as l.
		return &plan.Case{Whens: []plan.When{{Cond: eq, Result: &plan.Const{Typ: f.Args[0].Type()}}}, Else: f.Args[0], Typ: f.Args[0].Type()}, nil
	case pg_query.A_Expr_Kind_AEXPR_IN:
		l, err := bindSide(a.Lexpr)
		if err != nil {
			return nil, err
		}
		list := a.Rexpr.GetList()
		if list == nil {
			return nil, b.unsupported(a.Location, "IN with a non-list operand")
		}
		// x IN (a, b) is x = a OR x = b; NOT IN is x <> a AND x <> b.
		cmp, combine := "=", plan.Or
		if opName == "<>" {
			cmp, combine = "<>", plan.And
		}
		nodes := list.Items
		vals := make([]plan.Scalar, len(nodes))
		ts := []types.Type{l.Type()}
		for i, n := range nodes {
			if vals[i], err = b.expr(n, sc, ctx); err != nil {
				return nil, err
			}
			ts = append(ts, vals[i].Type())
		}
		t, err := b.common(ts, "IN", a.Location)
		if err != nil {
			return nil, err
		}
		if l, err = b.coerce(l, t, a.Location); err != nil {
			return nil, err
		}
		var terms []plan.Scalar
		for _, v := range vals {
			term, err := b.binaryOp(cmp, l, v, a.Location)
			if err != nil {
				return nil, err
			}
			terms = append(terms, term)
		}
		if len(terms) == 1 {
			return terms[0], nil
		}
		return &plan.BoolOp{Op: combine, Args: terms}, nil
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		x, err := bindSide(a.Lexpr)
		if err != nil {
			return nil, err
		}
		bounds := a.Rexpr.GetList().GetItems()
		if len(bounds) != 2 {
			return nil, b.semantic("42601", a.Location, "BETWEEN needs two bounds")
		}
		lo, err := b.expr(bounds[0], sc, ctx)
		if err != nil {
			return nil, err
		}
		hi, err := b.expr(bounds[1], sc, ctx)
		if err != nil {
			return nil, err
		}
		ge, err := b.binaryOp(">=", x, lo, a.Location)
		if err != nil {
			return nil, err
		}
		le, err := b.binaryOp("<=", x, hi, a.Location)
		if err != nil {
			return nil, err
		}
		between := &plan.BoolOp{Op: plan.And, Args: []plan.Scalar{ge, le}}
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			return &plan.BoolOp{Op: plan.Not, Args: []plan.Scalar{between}}, nil
		}
		return between, nil
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return b.anyAll(a, opName, sc, ctx)
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		return nil, b.unsupported(a.Location, "SIMILAR TO")
	}
	return nil, b.unsupported(a.Location, "operator kind "+a.Kind.String())
}

// unaryOp binds prefix operators: - + NOT-like.
func (b *binder) unaryOp(op string, r plan.Scalar, loc int32) (plan.Scalar, error) {
	t := r.Type()
	if t.Kind == types.KindUnknown && op == "-" {
		var err error
		if r, err = b.coerce(r, types.TNumeric, loc); err != nil {
			return nil, err
		}
		t = types.TNumeric
	}
	switch op {
	case "-":
		if c, ok := r.(*plan.Const); ok {
			// Fold negative literals so -2147483648 stays an int4 literal
			// like PostgreSQL's grammar makes it.
			switch v := c.Value.(type) {
			case int64:
				return &plan.Const{Value: -v, Typ: c.Typ}, nil
			case *apd.Decimal:
				d := new(apd.Decimal).Neg(v)
				return &plan.Const{Value: d, Typ: c.Typ}, nil
			}
		}
		if t.Kind.IsNumeric() || t.Kind == types.KindInterval {
			return &plan.Func{Name: "-", Op: true, Args: []plan.Scalar{r}, Typ: baseType(t)}, nil
		}
	case "+":
		if t.Kind.IsNumeric() || t.Kind == types.KindInterval {
			return r, nil
		}
	}
	return nil, errcode.New(errcode.SQLUndefinedFunction, "operator does not exist: %s %s", op, t.SQLName()).WithPosition(b.pos(loc))
}

// binaryOp resolves a binary operator with PostgreSQL's rules: an unknown
// side takes the other side's type; numeric operands meet at the wider
// type; the result type follows pg_operator.
func (b *binder) binaryOp(op string, l, r plan.Scalar, loc int32) (plan.Scalar, error) {
	lt, rt := l.Type(), r.Type()
	var err error
	if lt.Kind == types.KindJSON {
		switch op {
		case "->", "->>", "#>", "#>>":
			// NB: json (unlike jsonb) keeps its text, and these operators
			// return pieces of it verbatim; only jsonb's are built.
			return nil, b.unsupported(loc, "the json operator "+op+" (cast the json value to jsonb)")
		}
	}
	// An untyped side adopts the other side's type, except on the right of
	// jsonb -> 'key' and its kin, where PostgreSQL picks the text overload.
	if t, ok := expr.JSONOperandType(op, lt); ok && rt.Kind == types.KindUnknown {
		if r, err = b.coerce(r, t, loc); err != nil {
			return nil, err
		}
		rt = r.Type()
	}
	if lt.Kind == types.KindUnknown && rt.Kind != types.KindUnknown {
		target := baseType(rt)
		if op == "||" && rt.Kind != types.KindJSONB {
			target = types.TText
		}
		if l, err = b.coerce(l, target, loc); err != nil {
			return nil, err
		}
		lt = l.Type()
	} else if rt.Kind == types.KindUnknown && lt.Kind != types.KindUnknown {
		target := baseType(lt)
		if op == "||" {
			target = types.TText
		}
		if r, err = b.coerce(r, target, loc); err != nil {
			return nil, err
		}
		rt = r.Type()
	} else if lt.Kind == types.KindUnknown && rt.Kind == types.KindUnknown {
		// Two untyped literals resolve as text (PostgreSQL's preferred
		// string type), e.g. 'a' = 'b' or 'a' || 'b'.
		if l, err = b.coerce(l, types.TText, loc); err != nil {
			return nil, err
		}
		if r, err = b.coerce(r, types.TText, loc); err != nil {
			return nil, err
		}
		lt, rt = types.TText, types.TText
	}
	if op == "!=" {
		op = "<>"
	}
	// Operator resolution is the expression engine's (PostgreSQL's
	// pg_operator rules); the binder inserts the casts it asks for.
	info, ok := expr.LookupBinaryOp(op, lt, rt)
	if !ok {
		return nil, errcode.New(errcode.SQLUndefinedFunction, "operator does not exist: %s %s %s", lt.SQLName(), op, rt.SQLName()).WithPosition(b.pos(loc))
	}
	// text || anynonarray and anynonarray || text (textanycat/anytextcat)
	// convert the other side with its output function: an explicit cast.
	concatCast := op == "||" && info.Result.Kind == types.KindText
	if info.Left.Kind != types.KindInvalid {
		if l, err = b.cast(l, info.Left, concatCast && lt.Kind != types.KindArray, loc); err != nil {
			return nil, err
		}
	}
	if info.Right.Kind != types.KindInvalid {
		if r, err = b.cast(r, info.Right, concatCast && rt.Kind != types.KindArray, loc); err != nil {
			return nil, err
		}
	}
	return &plan.Func{Name: op, Op: true, Args: []plan.Scalar{l, r}, Typ: info.Result}, nil
}

// sqlValueFunction binds CURRENT_DATE, CURRENT_TIMESTAMP, LOCALTIMESTAMP...
func (b *binder) sqlValueFunction(f *pg_query.SQLValueFunction) (plan.Scalar, error) {
	var name string
	var t types.Type
	switch f.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		name, t = "current_date", types.TDate
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		name, t = "current_timestamp", types.TTimestampTZ
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		name, t = "localtimestamp", types.TTimestamp
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER,
		pg_query.SQLValueFunctionOp_SVFOP_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		// The session's one role (ivm/expr/func_catalog.go).
		return b.sessionFunc(f, "current_user", types.TName)
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return b.sessionFunc(f, "current_database", types.TName)
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return b.sessionFunc(f, "current_schema", types.TName)
	default:
		return nil, b.unsupported(f.Location, "SQL value function "+f.Op.String())
	}
	if b.opts.ForView {
		if f.Op == pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP {
			// now(): accepted only in a temporal filter (ivm/sql/temporal.go).
			return plan.Now(), nil
		}
		return nil, b.unsupported(f.Location, strings.ToUpper(name)+" (its value changes over time)")
	}
	return &plan.Func{Name: name, Typ: t, Volatile: true}, nil
}

// foldLiteralCast folds casts of numeric literals between numeric types
// (1::numeric, 2.5::float8) so plans show plain constants. Other literal
// conversions are left to evaluation (constant folding).
func foldLiteralCast(c *plan.Const, t types.Type) (plan.Scalar, bool) {
	if c.Value == nil || t.Typmod >= 0 {
		return nil, false
	}
	switch v := c.Value.(type) {
	case int64:
		switch t.Kind {
		case types.KindInt8:
			return &plan.Const{Value: v, Typ: t}, true
		case types.KindInt4:
			if v >= -1<<31 && v < 1<<31 {
				return &plan.Const{Value: v, Typ: t}, true
			}
		case types.KindInt2:
			if v >= -1<<15 && v < 1<<15 {
				return &plan.Const{Value: v, Typ: t}, true
			}
		case types.KindNumeric:
			return &plan.Const{Value: apd.New(v, 0), Typ: t}, true
		case types.KindFloat8:
			return &plan.Const{Value: float64(v), Typ: t}, true
		}
	case *apd.Decimal:
		if t.Kind == types.KindFloat8 {
			f, err := v.Float64()
			if err == nil {
				return &plan.Const{Value: f, Typ: t}, true
			}
		}
	}
	return nil, false
}

// isDefaultCollation reports COLLATE "default", pg_catalog.default, "C" and
// "POSIX": RockStream compares strings bytewise, which is what these mean.
func isDefaultCollation(name []*pg_query.Node) bool {
	if len(name) == 2 && name[0].GetString_().GetSval() != "pg_catalog" || len(name) == 0 || len(name) > 2 {
		return false
	}
	switch name[len(name)-1].GetString_().GetSval() {
	case "default", "C", "POSIX":
		return true
	}
	return false
}

// sessionFunc binds CURRENT_USER, CURRENT_CATALOG and CURRENT_SCHEMA, which
// depend on the session: ad-hoc queries only.
func (b *binder) sessionFunc(f *pg_query.SQLValueFunction, name string, t types.Type) (plan.Scalar, error) {
	if b.opts.ForView {
		return nil, b.unsupported(f.Location, strings.ToUpper(name)+" (its value depends on the session)")
	}
	return &plan.Func{Name: name, Typ: t, Volatile: true}, nil
}
