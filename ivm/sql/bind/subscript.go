package bind

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// subscript binds a[i] and a[lo:hi] (either bound may be omitted) over a
// one-dimensional array: PostgreSQL's 1-based subscripts, NULL for a
// subscript outside the array or a NULL subscript, slices clamped to the
// array (empty when nothing is left). ok is false when ind is not one
// array subscript.
func (b *binder) subscript(ind *pg_query.A_Indirection, sc *scope, ctx exprCtx) (plan.Scalar, bool, error) {
	if len(ind.Indirection) == 0 {
		return nil, false, nil
	}
	for _, n := range ind.Indirection {
		if n.GetAIndices() == nil {
			return nil, false, nil
		}
	}
	if len(ind.Indirection) > 1 {
		return nil, true, b.unsupported(-1, "multidimensional array subscripts")
	}
	idx := ind.Indirection[0].GetAIndices()
	arr, err := b.expr(ind.Arg, sc, ctx)
	if err != nil {
		return nil, true, err
	}
	if ref, ok := arr.(*plan.ColRef); ok && sc != nil {
		for _, c := range sc.cols {
			if c.index == ref.Index && c.rel != nil && c.relCol < len(c.rel.Columns) && isZeroBasedVector(c.rel.Name, c.rel.Columns[c.relCol].Name) {
				return nil, true, b.unsupported(-1, "subscripts of int2vector and oidvector catalog columns ("+c.rel.Name+"."+c.rel.Columns[c.relCol].Name+" is 0-based)")
			}
		}
	}
	t := baseType(arr.Type())
	switch {
	case t.Kind == types.KindJSONB:
		return nil, true, b.unsupported(-1, "jsonb subscripts")
	case t.Kind != types.KindArray || t.Elem == nil:
		return nil, true, errcode.New(errcode.SQLDatatypeMismatch, "cannot subscript type %s because it does not support subscripting", t.SQLName())
	}
	bound := func(n *pg_query.Node, omitted int64) (plan.Scalar, error) {
		if n == nil {
			return &plan.Const{Value: omitted, Typ: types.TInt4}, nil
		}
		s, err := b.expr(n, sc, ctx)
		if err != nil {
			return nil, err
		}
		// NB: PostgreSQL converts a subscript to integer as an assignment
		// would: bigint and numeric are cast (numeric rounds, a bigint out
		// of range is 22003), anything else is refused.
		st := baseType(s.Type())
		if !st.Kind.IsInteger() && !st.Kind.IsNumeric() && st.Kind != types.KindUnknown {
			return nil, errcode.New(errcode.SQLDatatypeMismatch, "array subscript must have type integer").WithPosition(b.pos(exprLocation(n)))
		}
		return b.cast(s, types.TInt4, st.Kind != types.KindUnknown, exprLocation(n))
	}
	if !idx.IsSlice {
		i, err := bound(idx.Uidx, 0)
		if err != nil {
			return nil, true, err
		}
		return &plan.Func{Name: expr.SubscriptFunc, Args: []plan.Scalar{arr, i}, Typ: *t.Elem}, true, nil
	}
	lo, err := bound(idx.Lidx, 1)
	if err != nil {
		return nil, true, err
	}
	hi, err := bound(idx.Uidx, expr.SliceUpperOmitted)
	if err != nil {
		return nil, true, err
	}
	return &plan.Func{Name: expr.SliceFunc, Args: []plan.Scalar{arr, lo, hi}, Typ: t}, true, nil
}

// isInternalFunc reports names only the binder creates (subscripts): a
// quoted identifier in SQL must not reach them.
func isInternalFunc(name string) bool { return strings.ContainsAny(name, "[]") }

// arrayFunc resolves PostgreSQL's anycompatible array functions
// array_append(anycompatiblearray, anycompatible), array_prepend,
// array_cat and array_position: the arguments are cast to one element type
// (the common type of the array's elements and the element; unknown
// literals take it), so array_append(ARRAY[1], 2.5) is numeric[]. ok is
// false for other names.
func (b *binder) arrayFunc(name string, args []plan.Scalar, loc int32) (plan.Scalar, bool, error) {
	var arrays, elems []int
	switch {
	case name == "array_append" && len(args) == 2:
		arrays, elems = []int{0}, []int{1}
	case name == "array_prepend" && len(args) == 2:
		arrays, elems = []int{1}, []int{0}
	case name == "array_cat" && len(args) == 2:
		arrays = []int{0, 1}
	case name == "array_position" && (len(args) == 2 || len(args) == 3):
		arrays, elems = []int{0}, []int{1}
	default:
		return nil, false, nil
	}
	var ts []types.Type
	for _, i := range arrays {
		t := baseType(args[i].Type())
		switch {
		case t.Kind == types.KindUnknown:
		case t.Kind == types.KindArray && t.Elem != nil:
			ts = append(ts, *t.Elem)
		default:
			return nil, true, b.noFunction(name, args, loc)
		}
	}
	for _, i := range elems {
		t := baseType(args[i].Type())
		if t.Kind == types.KindArray {
			// NB: PostgreSQL's anycompatible is a non-array here.
			return nil, true, b.noFunction(name, args, loc)
		}
		ts = append(ts, t)
	}
	elem := types.TText
	if len(ts) > 0 {
		var ok bool
		if elem, ok = commonType(ts); !ok {
			return nil, true, b.noFunction(name, args, loc)
		}
		if elem.Kind == types.KindUnknown {
			elem = types.TText
		}
	}
	out := append([]plan.Scalar(nil), args...)
	var err error
	for _, i := range arrays {
		if !baseType(out[i].Type()).Equal(types.ArrayOf(elem)) {
			// NB: coerce keeps an array of another element type as it is;
			// the cast is one PostgreSQL would make implicitly.
			if out[i], err = b.cast(out[i], types.ArrayOf(elem), out[i].Type().Kind == types.KindArray, loc); err != nil {
				return nil, true, err
			}
		}
	}
	for _, i := range elems {
		if out[i], err = b.coerce(out[i], elem, loc); err != nil {
			return nil, true, err
		}
	}
	if len(out) == 3 {
		if out[2], err = b.coerce(out[2], types.TInt4, loc); err != nil {
			return nil, true, err
		}
	}
	return b.registryCall(name, out, loc)
}

// isZeroBasedVector names the system catalog columns that are int2vector
// or oidvector in PostgreSQL: they are subscripted from 0, but the catalog
// serves them as ordinary (1-based) arrays, so a subscript would be off by
// one; they are refused rather than answered wrong.
func isZeroBasedVector(rel, col string) bool {
	switch rel + "." + col {
	case "pg_index.indkey", "pg_index.indcollation", "pg_index.indclass", "pg_index.indoption",
		"pg_proc.proargtypes", "pg_trigger.tgattr", "pg_statistic_ext.stxkeys",
		"pg_partitioned_table.partattrs", "pg_partitioned_table.partclass", "pg_partitioned_table.partcollation":
		return true
	}
	return false
}
