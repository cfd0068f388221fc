package bind

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Ordered-set aggregates: percentile_cont(f), percentile_disc(f) and
// mode(), each WITHIN GROUP (ORDER BY x). They are bound as plan.AggCall
// with Args [f, x] (mode: [x]) and Order the one WITHIN GROUP key, so x is
// the call's ORDER BY expression (plan.AggCall.Order) and f its value
// argument; the incrementalizer keeps x in the ordered multiset that
// string_agg and array_agg use. The fraction must be a constant (or a
// parameter): PostgreSQL also allows grouped columns there.

// isOrderedSetAggregate names the ordered-set aggregates RockStream runs.
func isOrderedSetAggregate(name string) bool {
	switch name {
	case "percentile_cont", "percentile_disc", "mode":
		return true
	}
	return false
}

// isHypotheticalSetAggregate names PostgreSQL's hypothetical-set
// aggregates (rank(v) WITHIN GROUP (ORDER BY x) and its kin).
func isHypotheticalSetAggregate(name string) bool {
	switch name {
	case "rank", "dense_rank", "percent_rank", "cume_dist":
		return true
	}
	return false
}

// withinGroup binds name(...) WITHIN GROUP (ORDER BY ...).
func (b *binder) withinGroup(name string, f *pg_query.FuncCall, sc *scope, ctx exprCtx) (plan.Scalar, error) {
	if isHypotheticalSetAggregate(name) {
		return nil, b.unsupported(f.Location, "hypothetical-set aggregate "+name+"() WITHIN GROUP")
	}
	if ctx.aggs == nil {
		clause := ctx.clause
		if clause == "" {
			clause = "this context"
		}
		return nil, errcode.New(errcode.SQLGroupingError, "aggregate functions are not allowed in %s", clause).WithPosition(b.pos(f.Location))
	}
	if ctx.inAgg {
		return nil, errcode.New(errcode.SQLGroupingError, "aggregate function calls cannot be nested").WithPosition(b.pos(f.Location))
	}
	inner := ctx
	inner.inAgg = true
	var direct, ordered []plan.Scalar
	var keys []plan.SortKey
	for _, a := range f.Args {
		s, err := b.expr(a, sc, inner)
		if err != nil {
			return nil, err
		}
		direct = append(direct, s)
	}
	for _, o := range f.AggOrder {
		sb := o.GetSortBy()
		if sb == nil || sb.UseOp != nil {
			return nil, b.unsupported(f.Location, "ORDER BY ... USING inside aggregate calls")
		}
		s, err := b.expr(sb.Node, sc, inner)
		if err != nil {
			return nil, err
		}
		ordered = append(ordered, s)
		keys = append(keys, sortKey(0, sb))
	}
	var written []types.Type
	for _, s := range append(append([]plan.Scalar(nil), direct...), ordered...) {
		written = append(written, s.Type())
	}
	wantDirect := 1
	if name == "mode" {
		wantDirect = 0
	}
	if !isOrderedSetAggregate(name) || len(direct) != wantDirect || len(ordered) != 1 {
		return nil, b.noFunctionTypes(name, written, f.Location)
	}
	x := ordered[0]
	xt := baseType(x.Type())
	var err error
	switch {
	case name == "percentile_cont" && xt.Kind == types.KindInterval:
	case name == "percentile_cont" && implicitCastOK(xt, types.TFloat8) && xt.Kind != types.KindArray:
		if x, err = b.coerce(x, types.TFloat8, f.Location); err != nil {
			return nil, err
		}
		xt = types.TFloat8
	case name == "percentile_cont":
		return nil, b.noFunctionTypes(name, written, f.Location)
	case xt.Kind == types.KindUnknown:
		return nil, errcode.New(errcode.SQLDatatypeMismatch, "could not determine polymorphic type because input has type unknown")
	case xt.Kind == types.KindJSON:
		return nil, errcode.New(errcode.SQLUndefinedFunction, "could not identify an ordering operator for type json").WithPosition(b.pos(f.Location))
	}
	call := plan.AggCall{Func: name, Typ: xt}
	if name != "mode" {
		fraction, array, ok, err := b.fraction(direct[0], f.Location)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, b.noFunctionTypes(name, written, f.Location)
		}
		if len(plan.ColumnsUsed(fraction)) > 0 || hasOuterRef(fraction) || plan.HasSubquery(fraction) || plan.IsVolatile(fraction) {
			return nil, b.unsupported(f.Location, name+"() with a fraction that is not a constant")
		}
		if array {
			call.Typ = types.ArrayOf(xt)
		}
		call.Args = append(call.Args, fraction)
	}
	call.Args = append(call.Args, x)
	call.Order = keys
	return b.addAggCall(f, sc, ctx, call)
}

// fraction casts a percentile's direct argument to float8 or float8[]
// (array reports which); ok is false when it is neither.
func (b *binder) fraction(s plan.Scalar, loc int32) (out plan.Scalar, array, ok bool, err error) {
	t := baseType(s.Type())
	want := types.TFloat8
	switch {
	case t.Kind == types.KindArray:
		if !implicitCastOK(baseType(*t.Elem), types.TFloat8) || t.Elem.Kind == types.KindArray {
			return nil, false, false, nil
		}
		want, array = types.ArrayOf(types.TFloat8), true
	case !implicitCastOK(t, types.TFloat8):
		return nil, false, false, nil
	}
	// NB: coerce keeps any array as it is (same kind), so an array is cast
	// explicitly once its element type is known to cast implicitly.
	out, err = b.cast(s, want, array, loc)
	return out, array, err == nil, err
}

// hasOuterRef reports a reference to an enclosing query's column.
func hasOuterRef(s plan.Scalar) bool {
	found := false
	plan.Walk(s, func(x plan.Scalar) bool {
		if _, ok := x.(*plan.OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}
