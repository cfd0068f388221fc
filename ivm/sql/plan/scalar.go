package plan

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/rockstream/rockstream/ivm/types"
)

// Scalar is a bound, typed scalar expression of PlanIR. Column references
// are positional (ColRef.Index into the input row of the node holding the
// expression). Scalars are immutable; rewrites build new trees.
//
// Scalars describe; they are lowered to ivm/expr nodes (which evaluate) when
// a plan is turned into a circuit.
type Scalar interface {
	Type() types.Type
	String() string
	// Children returns the direct sub-expressions (not subquery plans).
	Children() []Scalar
	// WithChildren returns a copy with the children replaced.
	WithChildren(children []Scalar) Scalar
}

// ColRef reads column Index of the input row.
type ColRef struct {
	Index int
	Typ   types.Type
	// Name is for display only; Qualifier is the table alias it came
	// from (for error messages), possibly empty.
	Name      string
	Qualifier string
}

func (c *ColRef) Type() types.Type                 { return c.Typ }
func (c *ColRef) Children() []Scalar               { return nil }
func (c *ColRef) WithChildren(_ []Scalar) Scalar   { return c }
func (c *ColRef) String() string                   { return c.Name }
func (o *OuterRef) Type() types.Type               { return o.Typ }
func (o *OuterRef) Children() []Scalar             { return nil }
func (o *OuterRef) WithChildren(_ []Scalar) Scalar { return o }
func (o *OuterRef) String() string                 { return "outer(" + o.Name + ")" }

// OuterRef reads column Index of the row of an enclosing query Depth levels
// out (a correlated subquery). Decorrelation removes every OuterRef before
// a plan is incrementalized.
type OuterRef struct {
	Depth int
	Index int
	Typ   types.Type
	Name  string
}

// Const is a literal value (nil = NULL).
type Const struct {
	Value types.Datum
	Typ   types.Type
}

func (c *Const) Type() types.Type               { return c.Typ }
func (c *Const) Children() []Scalar             { return nil }
func (c *Const) WithChildren(_ []Scalar) Scalar { return c }
func (c *Const) String() string                 { return FormatDatum(c.Value, c.Typ) }

// FormatDatum renders a value as a SQL literal for EXPLAIN.
func FormatDatum(v types.Datum, t types.Type) string {
	if v == nil {
		return "NULL"
	}
	switch x := v.(type) {
	case bool:
		if x {
			return "true"
		}
		return "false"
	case int64:
		return fmt.Sprintf("%d", x)
	case float64:
		return fmt.Sprintf("%g", x)
	case *apd.Decimal:
		return x.String()
	case string:
		s := "'" + strings.ReplaceAll(x, "'", "''") + "'"
		if t.Kind.IsString() || t.Kind == types.KindUnknown {
			return s
		}
		return s + "::" + t.SQLName()
	}
	return fmt.Sprintf("'%v'::%s", v, t.SQLName())
}

// Param is $n (Index 0 is $1). Typ is its inferred type.
type Param struct {
	Index int
	Typ   types.Type
}

func (p *Param) Type() types.Type               { return p.Typ }
func (p *Param) Children() []Scalar             { return nil }
func (p *Param) WithChildren(_ []Scalar) Scalar { return p }
func (p *Param) String() string                 { return fmt.Sprintf("$%d", p.Index+1) }

// Cast converts Arg to Typ (explicit CAST/:: or an implicit coercion).
type Cast struct {
	Arg Scalar
	Typ types.Type
	// Explicit is CAST / :: (explicit semantics: varchar(n) truncates);
	// otherwise an implicit or assignment coercion (varchar(n) overflow
	// is an error).
	Explicit bool
}

func (c *Cast) Type() types.Type   { return c.Typ }
func (c *Cast) Children() []Scalar { return []Scalar{c.Arg} }
func (c *Cast) WithChildren(ch []Scalar) Scalar {
	return &Cast{Arg: ch[0], Typ: c.Typ, Explicit: c.Explicit}
}
func (c *Cast) String() string { return fmt.Sprintf("%s::%s", c.Arg, c.Typ.SQLName()) }

// Func is a resolved function or operator call. Operators use their symbol
// as Name ("+", "=", "||", "~~" for LIKE) and Op = true.
type Func struct {
	Name string
	Op   bool
	Args []Scalar
	Typ  types.Type
	// Volatile marks functions whose result may change between calls with
	// the same arguments (random(), now()): never constant-folded and
	// rejected in materialized views.
	Volatile bool
}

func (f *Func) Type() types.Type   { return f.Typ }
func (f *Func) Children() []Scalar { return f.Args }
func (f *Func) WithChildren(ch []Scalar) Scalar {
	g := *f
	g.Args = ch
	return &g
}
func (f *Func) String() string {
	if f.Op && len(f.Args) == 2 {
		return fmt.Sprintf("(%s %s %s)", f.Args[0], f.Name, f.Args[1])
	}
	if f.Op && len(f.Args) == 1 {
		return fmt.Sprintf("(%s %s)", f.Name, f.Args[0])
	}
	parts := make([]string, len(f.Args))
	for i, a := range f.Args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", f.Name, strings.Join(parts, ", "))
}

// BoolOpKind is AND, OR or NOT.
type BoolOpKind uint8

// Boolean operators.
const (
	And BoolOpKind = iota + 1
	Or
	Not
)

// BoolOp is AND/OR over two or more arguments, or NOT over one, with
// three-valued logic.
type BoolOp struct {
	Op   BoolOpKind
	Args []Scalar
}

func (b *BoolOp) Type() types.Type   { return types.TBool }
func (b *BoolOp) Children() []Scalar { return b.Args }
func (b *BoolOp) WithChildren(ch []Scalar) Scalar {
	return &BoolOp{Op: b.Op, Args: ch}
}
func (b *BoolOp) String() string {
	if b.Op == Not {
		return fmt.Sprintf("NOT %s", b.Args[0])
	}
	sep := " AND "
	if b.Op == Or {
		sep = " OR "
	}
	parts := make([]string, len(b.Args))
	for i, a := range b.Args {
		parts[i] = a.String()
	}
	return "(" + strings.Join(parts, sep) + ")"
}

// IsNull is `Arg IS [NOT] NULL`.
type IsNull struct {
	Arg    Scalar
	Negate bool
}

func (n *IsNull) Type() types.Type   { return types.TBool }
func (n *IsNull) Children() []Scalar { return []Scalar{n.Arg} }
func (n *IsNull) WithChildren(ch []Scalar) Scalar {
	return &IsNull{Arg: ch[0], Negate: n.Negate}
}
func (n *IsNull) String() string {
	if n.Negate {
		return fmt.Sprintf("(%s IS NOT NULL)", n.Arg)
	}
	return fmt.Sprintf("(%s IS NULL)", n.Arg)
}

// IsDistinct is `L IS [NOT] DISTINCT FROM R` (NULL-safe comparison).
type IsDistinct struct {
	L, R   Scalar
	Negate bool
}

func (n *IsDistinct) Type() types.Type   { return types.TBool }
func (n *IsDistinct) Children() []Scalar { return []Scalar{n.L, n.R} }
func (n *IsDistinct) WithChildren(ch []Scalar) Scalar {
	return &IsDistinct{L: ch[0], R: ch[1], Negate: n.Negate}
}
func (n *IsDistinct) String() string {
	if n.Negate {
		return fmt.Sprintf("(%s IS NOT DISTINCT FROM %s)", n.L, n.R)
	}
	return fmt.Sprintf("(%s IS DISTINCT FROM %s)", n.L, n.R)
}

// Case is a searched CASE (a simple CASE is bound to this form).
type Case struct {
	Whens []When
	Else  Scalar // never nil: NULL Const when omitted
	Typ   types.Type
}

// When is one WHEN cond THEN result arm.
type When struct {
	Cond, Result Scalar
}

func (c *Case) Type() types.Type { return c.Typ }
func (c *Case) Children() []Scalar {
	out := make([]Scalar, 0, 2*len(c.Whens)+1)
	for _, w := range c.Whens {
		out = append(out, w.Cond, w.Result)
	}
	return append(out, c.Else)
}
func (c *Case) WithChildren(ch []Scalar) Scalar {
	d := &Case{Typ: c.Typ, Whens: make([]When, len(c.Whens))}
	for i := range c.Whens {
		d.Whens[i] = When{Cond: ch[2*i], Result: ch[2*i+1]}
	}
	d.Else = ch[len(ch)-1]
	return d
}
func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Result)
	}
	fmt.Fprintf(&b, " ELSE %s END", c.Else)
	return b.String()
}

// Coalesce returns its first non-NULL argument (evaluated lazily).
type Coalesce struct {
	Args []Scalar
	Typ  types.Type
}

func (c *Coalesce) Type() types.Type   { return c.Typ }
func (c *Coalesce) Children() []Scalar { return c.Args }
func (c *Coalesce) WithChildren(ch []Scalar) Scalar {
	return &Coalesce{Args: ch, Typ: c.Typ}
}
func (c *Coalesce) String() string {
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return "COALESCE(" + strings.Join(parts, ", ") + ")"
}

// SubqueryKind is the shape of a subquery expression.
type SubqueryKind uint8

// Subquery kinds.
const (
	// SubScalar is `(SELECT x ...)`: at most one row (21000 otherwise).
	SubScalar SubqueryKind = iota + 1
	// SubExists is `EXISTS (SELECT ...)`.
	SubExists
	// SubIn is `Test IN (SELECT x ...)` ( = ANY ).
	SubIn
	// SubArray is `ARRAY(SELECT x ...)`: the first column of every row, in
	// Order (over Plan's schema, which may carry hidden sort columns).
	SubArray
)

// Subquery is a subquery expression; Plan may contain OuterRefs (depth 1 =
// the row of the node holding this expression). Decorrelation replaces
// these with joins.
type Subquery struct {
	Kind SubqueryKind
	Plan Node
	// Test is the left operand of IN; nil otherwise.
	Test Scalar
	// Negate makes EXISTS into NOT EXISTS and IN into NOT IN.
	Negate bool
	Typ    types.Type
	// Order is the ORDER BY of an ARRAY subquery.
	Order []SortKey
}

func (s *Subquery) Type() types.Type { return s.Typ }
func (s *Subquery) Children() []Scalar {
	if s.Test != nil {
		return []Scalar{s.Test}
	}
	return nil
}
func (s *Subquery) WithChildren(ch []Scalar) Scalar {
	t := *s
	if len(ch) > 0 {
		t.Test = ch[0]
	}
	return &t
}
func (s *Subquery) String() string {
	switch s.Kind {
	case SubExists:
		if s.Negate {
			return "NOT EXISTS(subquery)"
		}
		return "EXISTS(subquery)"
	case SubIn:
		if s.Negate {
			return fmt.Sprintf("(%s NOT IN (subquery))", s.Test)
		}
		return fmt.Sprintf("(%s IN (subquery))", s.Test)
	case SubArray:
		return "ARRAY(subquery)"
	}
	return "(subquery)"
}

// Walk calls fn on every scalar of the tree in pre-order; fn returns false
// to skip a subtree.
func Walk(s Scalar, fn func(Scalar) bool) {
	if s == nil || !fn(s) {
		return
	}
	for _, c := range s.Children() {
		Walk(c, fn)
	}
}

// Rewrite rebuilds s bottom-up, replacing each node by fn(node) after its
// children were rewritten.
func Rewrite(s Scalar, fn func(Scalar) Scalar) Scalar {
	if s == nil {
		return nil
	}
	ch := s.Children()
	if len(ch) > 0 {
		out := make([]Scalar, len(ch))
		changed := false
		for i, c := range ch {
			out[i] = Rewrite(c, fn)
			if out[i] != c {
				changed = true
			}
		}
		if changed {
			s = s.WithChildren(out)
		}
	}
	return fn(s)
}

// ColumnsUsed returns the set of input column indexes s reads.
func ColumnsUsed(s Scalar) map[int]bool {
	used := map[int]bool{}
	Walk(s, func(x Scalar) bool {
		if c, ok := x.(*ColRef); ok {
			used[c.Index] = true
		}
		return true
	})
	return used
}

// RemapColumns returns s with every ColRef index i replaced by mapping[i];
// mapping must cover every used column.
func RemapColumns(s Scalar, mapping func(int) int) Scalar {
	return Rewrite(s, func(x Scalar) Scalar {
		if c, ok := x.(*ColRef); ok {
			return &ColRef{Index: mapping(c.Index), Typ: c.Typ, Name: c.Name, Qualifier: c.Qualifier}
		}
		return x
	})
}

// Conjuncts splits an AND tree into its conjuncts.
func Conjuncts(s Scalar) []Scalar {
	if s == nil {
		return nil
	}
	if b, ok := s.(*BoolOp); ok && b.Op == And {
		var out []Scalar
		for _, a := range b.Args {
			out = append(out, Conjuncts(a)...)
		}
		return out
	}
	return []Scalar{s}
}

// MakeAnd joins conjuncts (nil for none).
func MakeAnd(conjuncts []Scalar) Scalar {
	switch len(conjuncts) {
	case 0:
		return nil
	case 1:
		return conjuncts[0]
	}
	return &BoolOp{Op: And, Args: conjuncts}
}

// HasSubquery reports whether s contains a Subquery.
func HasSubquery(s Scalar) bool {
	found := false
	Walk(s, func(x Scalar) bool {
		if _, ok := x.(*Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// IsVolatile reports whether s calls a volatile function.
func IsVolatile(s Scalar) bool {
	found := false
	Walk(s, func(x Scalar) bool {
		if f, ok := x.(*Func); ok && f.Volatile {
			found = true
		}
		return !found
	})
	return found
}
