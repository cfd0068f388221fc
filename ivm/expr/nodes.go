package expr

import (
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// ColumnRef reads column Index of the input row.
type ColumnRef struct {
	Index int
	Typ   types.Type
	// Name is used by String only.
	Name string
}

func (c *ColumnRef) Type() types.Type { return c.Typ }
func (c *ColumnRef) Eval(_ *Env, row types.Row) (types.Datum, error) {
	return row[c.Index], nil
}
func (c *ColumnRef) String() string {
	if c.Name != "" {
		return c.Name
	}
	return "$col" + strconv.Itoa(c.Index)
}

// Const is a constant (Value nil is a typed NULL).
type Const struct {
	Value types.Datum
	Typ   types.Type
}

// NewConst makes a constant.
func NewConst(t types.Type, v types.Datum) *Const { return &Const{Value: v, Typ: t} }

// Null makes a typed NULL constant.
func Null(t types.Type) *Const { return &Const{Typ: t} }

func (c *Const) Type() types.Type                              { return c.Typ }
func (c *Const) Eval(_ *Env, _ types.Row) (types.Datum, error) { return c.Value, nil }
func (c *Const) String() string {
	if c.Value == nil {
		return "NULL"
	}
	s := types.Format(c.Typ, c.Value)
	switch c.Typ.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric, types.KindBool:
		if c.Typ.Kind == types.KindBool {
			if c.Value.(bool) {
				return "true"
			}
			return "false"
		}
		if !strings.ContainsAny(s, "NI") { // not NaN/Infinity
			return s
		}
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'::" + c.Typ.SQLName()
}

// Param is $N (1-based), read from Env.Params.
type Param struct {
	N   int
	Typ types.Type
}

func (p *Param) Type() types.Type { return p.Typ }
func (p *Param) Eval(env *Env, _ types.Row) (types.Datum, error) {
	if env == nil || p.N < 1 || p.N > len(env.Params) {
		return nil, EvalError("08P01", "there is no parameter $%d", p.N)
	}
	return env.Params[p.N-1], nil
}
func (p *Param) String() string { return "$" + strconv.Itoa(p.N) }

// evalBool evaluates a boolean expression: value, isNull.
func evalBool(env *Env, e Expr, row types.Row) (bool, bool, error) {
	v, err := e.Eval(env, row)
	if err != nil || v == nil {
		return false, true, err
	}
	return v.(bool), false, nil
}

// Not is NOT x (NULL stays NULL).
type Not struct{ X Expr }

func (n *Not) Type() types.Type { return types.TBool }
func (n *Not) Eval(env *Env, row types.Row) (types.Datum, error) {
	b, null, err := evalBool(env, n.X, row)
	if err != nil || null {
		return nil, err
	}
	return !b, nil
}
func (n *Not) String() string { return "(NOT " + n.X.String() + ")" }

// And is x AND y AND ... with three-valued logic: false wins over NULL.
// Arguments are evaluated left to right and evaluation stops at the first
// false (PostgreSQL does not guarantee an order either).
type And struct{ Args []Expr }

func (a *And) Type() types.Type { return types.TBool }
func (a *And) Eval(env *Env, row types.Row) (types.Datum, error) {
	sawNull := false
	for _, x := range a.Args {
		b, null, err := evalBool(env, x, row)
		if err != nil {
			return nil, err
		}
		if null {
			sawNull = true
			continue
		}
		if !b {
			return false, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return true, nil
}
func (a *And) String() string { return joinExprs(a.Args, " AND ") }

// Or is x OR y OR ...: true wins over NULL.
type Or struct{ Args []Expr }

func (o *Or) Type() types.Type { return types.TBool }
func (o *Or) Eval(env *Env, row types.Row) (types.Datum, error) {
	sawNull := false
	for _, x := range o.Args {
		b, null, err := evalBool(env, x, row)
		if err != nil {
			return nil, err
		}
		if null {
			sawNull = true
			continue
		}
		if b {
			return true, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return false, nil
}
func (o *Or) String() string { return joinExprs(o.Args, " OR ") }

func joinExprs(es []Expr, sep string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "(" + strings.Join(parts, sep) + ")"
}

// IsNull is x IS NULL, or x IS NOT NULL when Negated. (For row values
// PostgreSQL's rule differs; RockStream has scalar x only.)
type IsNull struct {
	X       Expr
	Negated bool
}

func (n *IsNull) Type() types.Type { return types.TBool }
func (n *IsNull) Eval(env *Env, row types.Row) (types.Datum, error) {
	v, err := n.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	return (v == nil) != n.Negated, nil
}
func (n *IsNull) String() string {
	if n.Negated {
		return "(" + n.X.String() + " IS NOT NULL)"
	}
	return "(" + n.X.String() + " IS NULL)"
}

// BoolTestKind selects IS [NOT] TRUE/FALSE/UNKNOWN.
type BoolTestKind uint8

// Boolean tests.
const (
	IsTrue BoolTestKind = iota
	IsNotTrue
	IsFalse
	IsNotFalse
	IsUnknown
	IsNotUnknown
)

// BoolTest is x IS [NOT] TRUE / FALSE / UNKNOWN; never NULL.
type BoolTest struct {
	X    Expr
	Test BoolTestKind
}

func (b *BoolTest) Type() types.Type { return types.TBool }
func (b *BoolTest) Eval(env *Env, row types.Row) (types.Datum, error) {
	v, null, err := evalBool(env, b.X, row)
	if err != nil {
		return nil, err
	}
	switch b.Test {
	case IsTrue:
		return !null && v, nil
	case IsNotTrue:
		return null || !v, nil
	case IsFalse:
		return !null && !v, nil
	case IsNotFalse:
		return null || v, nil
	case IsUnknown:
		return null, nil
	}
	return !null, nil
}
func (b *BoolTest) String() string {
	names := [...]string{"IS TRUE", "IS NOT TRUE", "IS FALSE", "IS NOT FALSE", "IS UNKNOWN", "IS NOT UNKNOWN"}
	return "(" + b.X.String() + " " + names[b.Test] + ")"
}

// DistinctFrom is x IS DISTINCT FROM y (or IS NOT DISTINCT FROM when
// Negated): NULL-safe inequality, never NULL. Both sides must already have
// the comparison type Cmp (insert casts first).
type DistinctFrom struct {
	L, R    Expr
	Cmp     types.Type
	Negated bool
}

func (d *DistinctFrom) Type() types.Type { return types.TBool }
func (d *DistinctFrom) Eval(env *Env, row types.Row) (types.Datum, error) {
	l, err := d.L.Eval(env, row)
	if err != nil {
		return nil, err
	}
	r, err := d.R.Eval(env, row)
	if err != nil {
		return nil, err
	}
	eq := types.Equal(d.Cmp, l, r)
	return eq == d.Negated, nil
}
func (d *DistinctFrom) String() string {
	op := " IS DISTINCT FROM "
	if d.Negated {
		op = " IS NOT DISTINCT FROM "
	}
	return "(" + d.L.String() + op + d.R.String() + ")"
}

// When is one CASE branch.
type When struct {
	Cond   Expr // searched CASE: a boolean; simple CASE: the value compared
	Result Expr
}

// Case is CASE [operand] WHEN ... THEN ... [ELSE ...] END. For a simple CASE
// Operand is set and each When.Cond is compared with it by equality (in
// type Cmp); Else nil means ELSE NULL. Branch results must already be cast
// to Typ.
type Case struct {
	Operand Expr
	Cmp     types.Type
	Whens   []When
	Else    Expr
	Typ     types.Type
}

func (c *Case) Type() types.Type { return c.Typ }
func (c *Case) Eval(env *Env, row types.Row) (types.Datum, error) {
	var operand types.Datum
	if c.Operand != nil {
		v, err := c.Operand.Eval(env, row)
		if err != nil {
			return nil, err
		}
		operand = v
	}
	for _, w := range c.Whens {
		if c.Operand != nil {
			v, err := w.Cond.Eval(env, row)
			if err != nil {
				return nil, err
			}
			if operand == nil || v == nil || types.Compare(c.Cmp, operand, v) != 0 {
				continue
			}
		} else {
			b, null, err := evalBool(env, w.Cond, row)
			if err != nil {
				return nil, err
			}
			if null || !b {
				continue
			}
		}
		return w.Result.Eval(env, row)
	}
	if c.Else == nil {
		return nil, nil
	}
	return c.Else.Eval(env, row)
}
func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if c.Operand != nil {
		b.WriteString(" " + c.Operand.String())
	}
	for _, w := range c.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if c.Else != nil {
		b.WriteString(" ELSE " + c.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

// Coalesce returns its first non-NULL argument (arguments cast to Typ).
type Coalesce struct {
	Args []Expr
	Typ  types.Type
}

func (c *Coalesce) Type() types.Type { return c.Typ }
func (c *Coalesce) Eval(env *Env, row types.Row) (types.Datum, error) {
	for _, a := range c.Args {
		v, err := a.Eval(env, row)
		if err != nil || v != nil {
			return v, err
		}
	}
	return nil, nil
}
func (c *Coalesce) String() string { return "COALESCE" + joinExprs(c.Args, ", ") }

// NullIf is NULLIF(x, y): NULL when x = y, else x. Both in type Cmp; the
// result has x's type.
type NullIf struct {
	X, Y Expr
	Cmp  types.Type
}

func (n *NullIf) Type() types.Type { return n.X.Type() }
func (n *NullIf) Eval(env *Env, row types.Row) (types.Datum, error) {
	x, err := n.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	y, err := n.Y.Eval(env, row)
	if err != nil {
		return nil, err
	}
	if x != nil && y != nil && types.Compare(n.Cmp, x, y) == 0 {
		return nil, nil
	}
	return x, nil
}
func (n *NullIf) String() string { return "NULLIF(" + n.X.String() + ", " + n.Y.String() + ")" }

// MinMax is GREATEST(...) (Greatest true) or LEAST(...): NULLs are ignored;
// NULL only when every argument is NULL.
type MinMax struct {
	Args     []Expr
	Typ      types.Type
	Greatest bool
}

func (m *MinMax) Type() types.Type { return m.Typ }
func (m *MinMax) Eval(env *Env, row types.Row) (types.Datum, error) {
	var best types.Datum
	for _, a := range m.Args {
		v, err := a.Eval(env, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		c := types.Compare(m.Typ, v, best)
		if (m.Greatest && c > 0) || (!m.Greatest && c < 0) {
			best = v
		}
	}
	return best, nil
}
func (m *MinMax) String() string {
	if m.Greatest {
		return "GREATEST" + joinExprs(m.Args, ", ")
	}
	return "LEAST" + joinExprs(m.Args, ", ")
}

// InList is x [NOT] IN (v1, v2, ...): true if some vi = x; otherwise NULL if
// x or some vi is NULL; otherwise false. All in type Cmp.
type InList struct {
	X       Expr
	List    []Expr
	Cmp     types.Type
	Negated bool
}

func (in *InList) Type() types.Type { return types.TBool }
func (in *InList) Eval(env *Env, row types.Row) (types.Datum, error) {
	x, err := in.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	sawNull := x == nil
	for _, e := range in.List {
		v, err := e.Eval(env, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			sawNull = true
			continue
		}
		if x != nil && types.Compare(in.Cmp, x, v) == 0 {
			return !in.Negated, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return in.Negated, nil
}
func (in *InList) String() string {
	op := " IN "
	if in.Negated {
		op = " NOT IN "
	}
	return "(" + in.X.String() + op + joinExprs(in.List, ", ") + ")"
}

// Between is x [NOT] BETWEEN [SYMMETRIC] lo AND hi, i.e. x >= lo AND x <=
// hi with three-valued logic (SYMMETRIC swaps lo and hi when lo > hi). All
// in type Cmp.
type Between struct {
	X, Lo, Hi Expr
	Cmp       types.Type
	Negated   bool
	Symmetric bool
}

func (b *Between) Type() types.Type { return types.TBool }

// cmp3 compares with NULL → unknown.
func (b *Between) geLe(x, lo, hi types.Datum) types.Datum {
	var ge, le types.Datum
	if x != nil && lo != nil {
		ge = types.Compare(b.Cmp, x, lo) >= 0
	}
	if x != nil && hi != nil {
		le = types.Compare(b.Cmp, x, hi) <= 0
	}
	return and3(ge, le)
}

func and3(a, b types.Datum) types.Datum {
	if a == false || b == false {
		return false
	}
	if a == nil || b == nil {
		return nil
	}
	return true
}

func or3(a, b types.Datum) types.Datum {
	if a == true || b == true {
		return true
	}
	if a == nil || b == nil {
		return nil
	}
	return false
}

func (b *Between) Eval(env *Env, row types.Row) (types.Datum, error) {
	x, err := b.X.Eval(env, row)
	if err != nil {
		return nil, err
	}
	lo, err := b.Lo.Eval(env, row)
	if err != nil {
		return nil, err
	}
	hi, err := b.Hi.Eval(env, row)
	if err != nil {
		return nil, err
	}
	res := b.geLe(x, lo, hi)
	if b.Symmetric {
		res = or3(res, b.geLe(x, hi, lo))
	}
	if b.Negated && res != nil {
		return !res.(bool), nil
	}
	return res, nil
}
func (b *Between) String() string {
	op := " BETWEEN "
	if b.Negated {
		op = " NOT BETWEEN "
	}
	if b.Symmetric {
		op += "SYMMETRIC "
	}
	return "(" + b.X.String() + op + b.Lo.String() + " AND " + b.Hi.String() + ")"
}

// exprList renders for error messages.
func typeNames(ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.SQLName()
	}
	return strings.Join(parts, ", ")
}
