package expr

import (
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// ArrayCtor is ARRAY[e1, e2, ...]: a one-dimensional array whose elements
// (already of the element type) are evaluated in order; NULL elements stay
// NULL elements.
type ArrayCtor struct {
	Elems []Expr
	Typ   types.Type
}

// NewArrayCtor builds ARRAY[elems] of array type typ, coercing each
// element to the element type.
func NewArrayCtor(typ types.Type, elems []Expr) (Expr, error) {
	out := make([]Expr, len(elems))
	for i, e := range elems {
		c, err := Coerce(e, *typ.Elem)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return &ArrayCtor{Elems: out, Typ: typ}, nil
}

func (a *ArrayCtor) Type() types.Type { return a.Typ }

func (a *ArrayCtor) Eval(env *Env, row types.Row) (types.Datum, error) {
	vals := make([]types.Datum, len(a.Elems))
	for i, e := range a.Elems {
		v, err := e.Eval(env, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return types.Array{Elem: *a.Typ.Elem, Values: vals}, nil
}

func (a *ArrayCtor) String() string {
	parts := make([]string, len(a.Elems))
	for i, e := range a.Elems {
		parts[i] = e.String()
	}
	return "ARRAY[" + strings.Join(parts, ", ") + "]"
}
