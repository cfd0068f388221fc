package expr

import (
	"math"

	"github.com/rockstream/rockstream/ivm/types"
)

// Array functions and subscripts over one-dimensional arrays with lower
// bound 1 (the only arrays RockStream builds). The binder resolves
// PostgreSQL's anycompatible signatures (array_append(anycompatiblearray,
// anycompatible), ...) and casts the arguments to one element type before
// these run, so here an array's element type is its argument type's.
//
// Subscripts are the internal functions "[]" (a[i]) and "[:]" (a[lo:hi];
// an omitted bound is 1 or SliceUpperOmitted, which clamping makes the
// array's own bound). A quoted identifier cannot reach them: the binder
// refuses function names with brackets.

// SubscriptFunc and SliceFunc name the subscript functions.
const (
	SubscriptFunc = "[]"
	SliceFunc     = "[:]"
	// SliceUpperOmitted stands for an omitted upper slice bound, a[lo:].
	SliceUpperOmitted = math.MaxInt32
)

func elemOf(t types.Type) types.Type {
	if t.Kind == types.KindArray && t.Elem != nil {
		return *t.Elem
	}
	return types.TUnknown
}

func resultArg(i int) func([]types.Type) types.Type {
	return func(ts []types.Type) types.Type { return ts[i] }
}

func registerArray(add adder) {
	add(&Func{Name: SubscriptFunc, Args: []types.Type{anyArrayType, types.TInt4}, Strict: true, Volatility: Immutable,
		ResultOf: func(ts []types.Type) types.Type { return elemOf(ts[0]) },
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			// PostgreSQL: a subscript outside the array gives NULL.
			values, i := a[0].(types.Array).Values, a[1].(int64)
			if i < 1 || i > int64(len(values)) {
				return nil, nil
			}
			return values[i-1], nil
		}},
		&Func{Name: SliceFunc, Args: []types.Type{anyArrayType, types.TInt4, types.TInt4}, Strict: true, Volatility: Immutable,
			ResultOf: resultArg(0),
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				// PostgreSQL clamps the bounds to the array's and gives an
				// empty array when nothing is left.
				arr := a[0].(types.Array)
				lo, hi := max(a[1].(int64), 1), min(a[2].(int64), int64(len(arr.Values)))
				if lo > hi {
					return types.Array{Elem: arr.Elem}, nil
				}
				return types.Array{Elem: arr.Elem, Values: append([]types.Datum(nil), arr.Values[lo-1:hi]...)}, nil
			}},
		&Func{Name: "array_append", Args: []types.Type{anyArrayType, anyType}, Volatility: Immutable,
			ResultOf: resultArg(0),
			Eval: func(_ *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
				var values []types.Datum
				if a[0] != nil {
					values = a[0].(types.Array).Values
				}
				if err := CheckArrayElements(len(values) + 1); err != nil {
					return nil, err
				}
				return types.Array{Elem: elemOf(ts[0]), Values: append(append([]types.Datum(nil), values...), a[1])}, nil
			}},
		&Func{Name: "array_prepend", Args: []types.Type{anyType, anyArrayType}, Volatility: Immutable,
			ResultOf: resultArg(1),
			Eval: func(_ *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
				var values []types.Datum
				if a[1] != nil {
					values = a[1].(types.Array).Values
				}
				if err := CheckArrayElements(len(values) + 1); err != nil {
					return nil, err
				}
				return types.Array{Elem: elemOf(ts[1]), Values: append([]types.Datum{a[0]}, values...)}, nil
			}},
		&Func{Name: "array_cat", Args: []types.Type{anyArrayType, anyArrayType}, Volatility: Immutable,
			ResultOf: resultArg(0),
			Eval: func(_ *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
				// PostgreSQL: a NULL side is ignored; both NULL is NULL.
				switch {
				case a[0] == nil:
					return a[1], nil
				case a[1] == nil:
					return a[0], nil
				}
				x, y := a[0].(types.Array).Values, a[1].(types.Array).Values
				if err := CheckArrayElements(len(x) + len(y)); err != nil {
					return nil, err
				}
				return types.Array{Elem: elemOf(ts[0]), Values: append(append([]types.Datum(nil), x...), y...)}, nil
			}},
		&Func{Name: "array_position", Args: []types.Type{anyArrayType, anyType}, Result: types.TInt4, Volatility: Immutable, Eval: arrayPosition},
		&Func{Name: "array_position", Args: []types.Type{anyArrayType, anyType, types.TInt4}, Result: types.TInt4, Volatility: Immutable, Eval: arrayPosition},
	)
}

// arrayPosition is array_position(a, x [, start]): the first subscript at
// or after start whose element IS NOT DISTINCT FROM x (NULL finds a NULL
// element), or NULL.
func arrayPosition(_ *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
	if a[0] == nil {
		return nil, nil
	}
	start := int64(1)
	if len(a) == 3 {
		if a[2] == nil {
			return nil, EvalError(StateNullValueNotAllowed, "initial position must not be null")
		}
		start = max(a[2].(int64), 1)
	}
	elem := elemOf(ts[0])
	values := a[0].(types.Array).Values
	for i := start; i <= int64(len(values)); i++ {
		v := values[i-1]
		if (v == nil && a[1] == nil) || (v != nil && a[1] != nil && types.Compare(elem, v, a[1]) == 0) {
			return i, nil
		}
	}
	return nil, nil
}

// arrayContains is PostgreSQL's array_contain_compare: every element of
// inner equals some element of outer (a NULL element equals nothing);
// with overlap, some element of inner equals some element of outer.
func arrayContains(elem types.Type, outer, inner types.Array, overlap bool) bool {
	for _, x := range inner.Values {
		found := false
		if x != nil {
			for _, y := range outer.Values {
				if y != nil && types.Compare(elem, x, y) == 0 {
					found = true
					break
				}
			}
		}
		if overlap && found {
			return true
		}
		if !overlap && !found {
			return false
		}
	}
	return !overlap
}
