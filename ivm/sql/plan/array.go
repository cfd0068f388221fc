package plan

import (
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// AnyAll is `x op ANY (array)` / `x op ALL (array)` (PostgreSQL's
// ScalarArrayOpExpr). X and the array's elements already have the
// operator's operand types.
type AnyAll struct {
	Op  string
	X   Scalar
	Arr Scalar
	All bool
}

func (a *AnyAll) Type() types.Type   { return types.TBool }
func (a *AnyAll) Children() []Scalar { return []Scalar{a.X, a.Arr} }
func (a *AnyAll) WithChildren(ch []Scalar) Scalar {
	b := *a
	b.X, b.Arr = ch[0], ch[1]
	return &b
}
func (a *AnyAll) String() string {
	q := "ANY"
	if a.All {
		q = "ALL"
	}
	return "(" + a.X.String() + " " + a.Op + " " + q + " (" + a.Arr.String() + "))"
}

// ArrayCtor is `ARRAY[e1, e2, ...]`: a one-dimensional array of Typ
// whose elements already have the element type.
type ArrayCtor struct {
	Elems []Scalar
	Typ   types.Type
}

func (a *ArrayCtor) Type() types.Type   { return a.Typ }
func (a *ArrayCtor) Children() []Scalar { return a.Elems }
func (a *ArrayCtor) WithChildren(ch []Scalar) Scalar {
	b := *a
	b.Elems = ch
	return &b
}
func (a *ArrayCtor) String() string {
	parts := make([]string, len(a.Elems))
	for i, e := range a.Elems {
		parts[i] = e.String()
	}
	return "ARRAY[" + strings.Join(parts, ", ") + "]"
}
