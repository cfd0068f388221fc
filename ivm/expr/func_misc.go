package expr

import (
	"github.com/rockstream/rockstream/ivm/types"
)

func registerMisc(add adder) {
	add(&Func{Name: "num_nulls", Args: []types.Type{anyType}, Variadic: true, Result: types.TInt4, Volatility: Immutable,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			n := int64(0)
			for _, v := range a {
				if v == nil {
					n++
				}
			}
			return n, nil
		}},
		&Func{Name: "num_nonnulls", Args: []types.Type{anyType}, Variadic: true, Result: types.TInt4, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				n := int64(0)
				for _, v := range a {
					if v != nil {
						n++
					}
				}
				return n, nil
			}},
		&Func{Name: "cardinality", Args: []types.Type{anyArrayType}, Result: types.TInt4, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				return int64(len(a[0].(types.Array).Values)), nil
			}},
		&Func{Name: "array_length", Args: []types.Type{anyArrayType, types.TInt4}, Result: types.TInt4, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				n := len(a[0].(types.Array).Values)
				if a[1].(int64) != 1 || n == 0 {
					return nil, nil
				}
				return int64(n), nil
			}},
		&Func{Name: "array_upper", Args: []types.Type{anyArrayType, types.TInt4}, Result: types.TInt4, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				n := len(a[0].(types.Array).Values)
				if a[1].(int64) != 1 || n == 0 {
					return nil, nil
				}
				return int64(n), nil
			}},
		&Func{Name: "array_lower", Args: []types.Type{anyArrayType, types.TInt4}, Result: types.TInt4, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				if a[1].(int64) != 1 || len(a[0].(types.Array).Values) == 0 {
					return nil, nil
				}
				return int64(1), nil
			}},
	)
}
