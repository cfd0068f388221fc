package bind

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// arrayCtor binds ARRAY[e1, e2, ...]: the elements meet at their common
// type like CASE branches do.
func (b *binder) arrayCtor(a *pg_query.A_ArrayExpr, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if len(a.Elements) == 0 {
		return nil, errcode.New(errcode.SQLSemanticError, "cannot determine type of empty array").WithSQLState("42P18").WithPosition(b.pos(a.Location))
	}
	elems, t, err := b.commonArgs(a.Elements, sc, ctx, "ARRAY", a.Location)
	if err != nil {
		return nil, err
	}
	if t.Kind == types.KindUnknown {
		t = types.TText
		for i := range elems {
			if elems[i], err = b.coerce(elems[i], t, a.Location); err != nil {
				return nil, err
			}
		}
	}
	if t.Kind == types.KindArray {
		return nil, b.unsupported(a.Location, "multidimensional arrays")
	}
	return &plan.ArrayCtor{Elems: elems, Typ: types.ArrayOf(baseType(t))}, nil
}

// anyAll binds `x op ANY (array)` and `x op ALL (array)`: an untyped array
// literal takes x's array type; the operator resolves like `x op element`
// and the array is coerced to the operand type it picks.
func (b *binder) anyAll(a *pg_query.A_Expr, opName string, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	x, err := b.expr(a.Lexpr, sc, ctx)
	if err != nil {
		return nil, err
	}
	arr, err := b.expr(a.Rexpr, sc, ctx)
	if err != nil {
		return nil, err
	}
	if arr.Type().Kind == types.KindUnknown {
		xt := baseType(x.Type())
		if xt.Kind == types.KindUnknown {
			xt = types.TText
		}
		if arr, err = b.coerce(arr, types.ArrayOf(xt), a.Location); err != nil {
			return nil, err
		}
	}
	at := arr.Type()
	if at.Kind != types.KindArray || at.Elem == nil {
		return nil, errcode.New(errcode.SQLUndefinedFunction, "op ANY/ALL (array) requires array on right side").
			WithSQLState("42809").WithPosition(b.pos(a.Location))
	}
	// Resolve `x op elem` with a stand-in for the element.
	elem := &plan.ColRef{Index: -1, Typ: *at.Elem, Name: "elem"}
	cmp, err := b.binaryOp(opName, x, elem, a.Location)
	if err != nil {
		return nil, err
	}
	f, ok := cmp.(*plan.Func)
	if !ok || len(f.Args) != 2 || f.Typ.Kind != types.KindBool {
		return nil, errcode.New(errcode.SQLDatatypeMismatch, "op ANY/ALL (array) requires operator to yield boolean").
			WithSQLState("42809").WithPosition(b.pos(a.Location))
	}
	if rt := f.Args[1].Type(); !rt.Equal(*at.Elem) {
		if arr, err = b.coerce(arr, types.ArrayOf(rt), a.Location); err != nil {
			return nil, err
		}
	}
	return &plan.AnyAll{Op: f.Name, X: f.Args[0], Arr: arr, All: a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL}, nil
}

// arraySubquery binds ARRAY(SELECT x ...): the rows' single column, in the
// subquery's ORDER BY, as an array (run ad hoc; views reject it).
func (b *binder) arraySubquery(q *BoundQuery, loc int32) (plan.Scalar, error) {
	if len(q.Columns) != 1 {
		return nil, b.semantic("42601", loc, "subquery must return only one column")
	}
	if q.LimitParam != 0 || q.OffsetParam != 0 {
		return nil, b.unsupported(loc, "LIMIT/OFFSET parameters in subqueries")
	}
	node := q.Plan
	if q.Limit >= 0 || q.Offset > 0 {
		node = &plan.TopK{Input: node, Order: q.Order, Limit: q.Limit, Offset: q.Offset}
	}
	et := q.Columns[0].Type
	if et.Kind == types.KindUnknown {
		et = types.TText
	}
	if et.Kind == types.KindArray {
		return nil, b.unsupported(loc, "ARRAY(subquery) of arrays")
	}
	return &plan.Subquery{Kind: plan.SubArray, Plan: node, Order: q.Order, Typ: types.ArrayOf(baseType(et))}, nil
}
