package expr

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

func registerMisc(add adder) {
	add(&Func{Name: "gen_random_uuid", Args: nil, Result: types.TUUID, Volatility: Volatile,
		Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
			if env == nil || env.Random == nil {
				return nil, errNoRandom("gen_random_uuid")
			}
			var u types.UUID
			for i := 0; i < 16; i += 8 {
				r := env.Random()
				for j := 0; j < 8; j++ {
					u[i+j] = byte(r >> (8 * j))
				}
			}
			u[6] = u[6]&0x0f | 0x40 // version 4
			u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
			return u, nil
		}},
		&Func{Name: "random", Args: nil, Result: types.TFloat8, Volatility: Volatile,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				if env == nil || env.Random == nil {
					return nil, errNoRandom("random")
				}
				return float64(env.Random()>>11) / float64(1<<53), nil
			}},
	)
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

func errNoRandom(fn string) error {
	return errcode.New(errcode.EvaluationError, "%s() is not available here", fn).WithSQLState("0A000")
}
