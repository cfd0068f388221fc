// Package plan is PlanIR: the logical plan of a query, one node kind per
// relational operator (Scan, Values, Filter, Project, Join, Aggregate,
// Distinct, SetOp, TopK), and typed scalar expressions over positional
// columns. New operators (Window, Recursive, TimeWindow) are new node kinds
// implementing Node; nothing switches on a closed enum without a default.
//
// Walkthrough: `SELECT a, sum(b) FROM t WHERE c > 1 GROUP BY a` binds to
//
//	Aggregate group=[#0] aggs=[sum(#1)]
//	  Project [a, b]
//	    Filter (c > 1)
//	      Scan t
//
// Every node's output is a Z-set of rows with Schema(); ColRef indexes in a
// node's expressions refer to its input's schema (for Join: left columns
// then right columns).
package plan

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Column is one output column of a node.
type Column struct {
	Name     string
	Type     types.Type
	Nullable bool
}

// Node is a PlanIR operator.
type Node interface {
	Schema() []Column
	Inputs() []Node
	// WithInputs returns a copy with the inputs replaced (same arity).
	WithInputs(inputs []Node) Node
	// Describe is the one-line form used by the plan printer.
	Describe() string
}

// Scan reads a base relation (table, source or materialized view output).
type Scan struct {
	Relation *catalog.Relation
	// Alias is the name the query used (for display).
	Alias string
	Cols  []Column
}

func (s *Scan) Schema() []Column         { return s.Cols }
func (s *Scan) Inputs() []Node           { return nil }
func (s *Scan) WithInputs(_ []Node) Node { return s }
func (s *Scan) Describe() string {
	if s.Alias != "" && s.Alias != s.Relation.Name {
		return fmt.Sprintf("Scan %s AS %s", s.Relation.Name, s.Alias)
	}
	return "Scan " + s.Relation.Name
}

// Values is a constant relation (VALUES lists, and SELECT without FROM as
// one empty row).
type Values struct {
	Rows [][]Scalar
	Cols []Column
}

func (v *Values) Schema() []Column         { return v.Cols }
func (v *Values) Inputs() []Node           { return nil }
func (v *Values) WithInputs(_ []Node) Node { return v }
func (v *Values) Describe() string {
	rows := make([]string, len(v.Rows))
	for i, r := range v.Rows {
		parts := make([]string, len(r))
		for j, s := range r {
			parts[j] = s.String()
		}
		rows[i] = "(" + strings.Join(parts, ", ") + ")"
	}
	return "Values " + strings.Join(rows, ", ")
}

// Filter keeps rows for which Pred is true (not NULL, not false).
type Filter struct {
	Input Node
	Pred  Scalar
}

func (f *Filter) Schema() []Column { return f.Input.Schema() }
func (f *Filter) Inputs() []Node   { return []Node{f.Input} }
func (f *Filter) WithInputs(in []Node) Node {
	return &Filter{Input: in[0], Pred: f.Pred}
}
func (f *Filter) Describe() string { return "Filter " + f.Pred.String() }

// Project computes one expression per output column.
type Project struct {
	Input Node
	Exprs []Scalar
	Cols  []Column
}

func (p *Project) Schema() []Column { return p.Cols }
func (p *Project) Inputs() []Node   { return []Node{p.Input} }
func (p *Project) WithInputs(in []Node) Node {
	return &Project{Input: in[0], Exprs: p.Exprs, Cols: p.Cols}
}
func (p *Project) Describe() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		s := e.String()
		if c, ok := e.(*ColRef); !ok || c.Name != p.Cols[i].Name {
			s += " AS " + p.Cols[i].Name
		}
		parts[i] = s
	}
	return "Project " + strings.Join(parts, ", ")
}

// JoinKind is the kind of a join.
type JoinKind uint8

// Join kinds. Semi and Anti come from decorrelated EXISTS/IN; their output
// is the left schema only.
const (
	InnerJoin JoinKind = iota + 1
	LeftJoin
	RightJoin
	FullJoin
	SemiJoin
	AntiJoin
)

func (k JoinKind) String() string {
	switch k {
	case InnerJoin:
		return "Inner"
	case LeftJoin:
		return "Left"
	case RightJoin:
		return "Right"
	case FullJoin:
		return "Full"
	case SemiJoin:
		return "Semi"
	case AntiJoin:
		return "Anti"
	}
	return fmt.Sprintf("JoinKind(%d)", uint8(k))
}

// EquiKey is one `left.col = right.col` pair of a join (indexes into the
// left and the right schema respectively).
type EquiKey struct {
	Left, Right int
	// NullSafe is IS NOT DISTINCT FROM (NULLs match), used by decorrelation.
	NullSafe bool
}

// Join combines Left and Right. Cond is over left columns then right
// columns; EquiKeys are equality conjuncts extracted from it (the join
// condition extraction rule moves them; Cond keeps the residual).
type Join struct {
	Kind        JoinKind
	Left, Right Node
	EquiKeys    []EquiKey
	Cond        Scalar // residual; nil = true
	// NullAware makes an AntiJoin with NOT IN semantics: a NULL key on the
	// right side, or a NULL left key when the right side is non-empty,
	// removes the left row.
	NullAware bool
}

// Schema: left columns then right columns (outer sides nullable); Semi and
// Anti joins output the left columns only.
func (j *Join) Schema() []Column {
	l := j.Left.Schema()
	if j.Kind == SemiJoin || j.Kind == AntiJoin {
		return l
	}
	r := j.Right.Schema()
	out := make([]Column, 0, len(l)+len(r))
	for _, c := range l {
		if j.Kind == RightJoin || j.Kind == FullJoin {
			c.Nullable = true
		}
		out = append(out, c)
	}
	for _, c := range r {
		if j.Kind == LeftJoin || j.Kind == FullJoin {
			c.Nullable = true
		}
		out = append(out, c)
	}
	return out
}
func (j *Join) Inputs() []Node { return []Node{j.Left, j.Right} }
func (j *Join) WithInputs(in []Node) Node {
	k := *j
	k.Left, k.Right = in[0], in[1]
	return &k
}
func (j *Join) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Join %s", j.Kind)
	if j.NullAware {
		b.WriteString(" null-aware")
	}
	if len(j.EquiKeys) > 0 {
		l, r := j.Left.Schema(), j.Right.Schema()
		parts := make([]string, len(j.EquiKeys))
		for i, k := range j.EquiKeys {
			op := "="
			if k.NullSafe {
				op = "IS NOT DISTINCT FROM"
			}
			parts[i] = fmt.Sprintf("%s %s %s", l[k.Left].Name, op, r[k.Right].Name)
		}
		fmt.Fprintf(&b, " keys=[%s]", strings.Join(parts, ", "))
	}
	if j.Cond != nil {
		fmt.Fprintf(&b, " on %s", j.Cond)
	}
	return b.String()
}

// AggCall is one aggregate of an Aggregate node.
type AggCall struct {
	// Func is the lower-case aggregate name: count, sum, avg, min, max, ...
	Func string
	// Args are over the Aggregate's input; empty for count(*).
	Args     []Scalar
	Distinct bool
	// Filter is the FILTER (WHERE ...) clause; nil when absent.
	Filter Scalar
	Typ    types.Type
	// Order is the ORDER BY inside the call (string_agg, array_agg): its
	// expressions are the last len(Order) Args (so every rewrite of Args
	// remaps them too); only Desc and NullsFirst of each key are used.
	Order []SortKey
}

// ValueArgs are the call's arguments without its ORDER BY expressions.
func (a AggCall) ValueArgs() []Scalar { return a.Args[:len(a.Args)-len(a.Order)] }

func (a AggCall) String() string {
	values := a.ValueArgs()
	parts := make([]string, len(values))
	for i, x := range values {
		parts[i] = x.String()
	}
	args := strings.Join(parts, ", ")
	if len(a.Order) > 0 {
		keys := make([]string, len(a.Order))
		for i, k := range a.Order {
			keys[i] = a.Args[len(values)+i].String()
			if k.Desc {
				keys[i] += " DESC"
			}
			if k.NullsFirst != k.Desc {
				if k.NullsFirst {
					keys[i] += " NULLS FIRST"
				} else {
					keys[i] += " NULLS LAST"
				}
			}
		}
		if a.Func == "percentile_cont" || a.Func == "percentile_disc" || a.Func == "mode" {
			// An ordered-set aggregate: the ORDER BY is WITHIN GROUP.
			s := a.Func + "(" + args + ") WITHIN GROUP (ORDER BY " + strings.Join(keys, ", ") + ")"
			if a.Filter != nil {
				s += " FILTER (WHERE " + a.Filter.String() + ")"
			}
			return s
		}
		args += " ORDER BY " + strings.Join(keys, ", ")
	}
	if len(a.Args) == 0 {
		args = "*"
	}
	if a.Distinct {
		args = "DISTINCT " + args
	}
	s := a.Func + "(" + args + ")"
	if a.Filter != nil {
		s += " FILTER (WHERE " + a.Filter.String() + ")"
	}
	return s
}

// Aggregate groups its input by GroupBy columns and computes Aggs. Output:
// the group columns then one column per aggregate. With no GroupBy it
// outputs exactly one row (even over empty input), as SQL requires.
type Aggregate struct {
	Input   Node
	GroupBy []int
	Aggs    []AggCall
	Cols    []Column
}

func (a *Aggregate) Schema() []Column { return a.Cols }
func (a *Aggregate) Inputs() []Node   { return []Node{a.Input} }
func (a *Aggregate) WithInputs(in []Node) Node {
	b := *a
	b.Input = in[0]
	return &b
}
func (a *Aggregate) Describe() string {
	in := a.Input.Schema()
	keys := make([]string, len(a.GroupBy))
	for i, g := range a.GroupBy {
		keys[i] = in[g].Name
	}
	aggs := make([]string, len(a.Aggs))
	for i, x := range a.Aggs {
		aggs[i] = x.String()
	}
	return fmt.Sprintf("Aggregate group=[%s] aggs=[%s]", strings.Join(keys, ", "), strings.Join(aggs, ", "))
}

// Distinct removes duplicates (set semantics). With On set it is DISTINCT
// ON: one row per distinct On-columns value, the first by Order.
type Distinct struct {
	Input Node
	On    []int
	Order []SortKey
}

func (d *Distinct) Schema() []Column { return d.Input.Schema() }
func (d *Distinct) Inputs() []Node   { return []Node{d.Input} }
func (d *Distinct) WithInputs(in []Node) Node {
	e := *d
	e.Input = in[0]
	return &e
}
func (d *Distinct) Describe() string {
	if len(d.On) == 0 {
		return "Distinct"
	}
	in := d.Input.Schema()
	on := make([]string, len(d.On))
	for i, c := range d.On {
		on[i] = in[c].Name
	}
	return fmt.Sprintf("Distinct on=[%s] order=[%s]", strings.Join(on, ", "), formatKeys(in, d.Order))
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind uint8

// Set operations.
const (
	Union SetOpKind = iota + 1
	Intersect
	Except
)

func (k SetOpKind) String() string {
	switch k {
	case Union:
		return "Union"
	case Intersect:
		return "Intersect"
	case Except:
		return "Except"
	}
	return fmt.Sprintf("SetOp(%d)", uint8(k))
}

// SetOp is UNION/INTERSECT/EXCEPT [ALL] of two inputs with the same arity
// (the binder casts both sides to the common column types).
type SetOp struct {
	Kind        SetOpKind
	All         bool
	Left, Right Node
	Cols        []Column
}

func (s *SetOp) Schema() []Column { return s.Cols }
func (s *SetOp) Inputs() []Node   { return []Node{s.Left, s.Right} }
func (s *SetOp) WithInputs(in []Node) Node {
	t := *s
	t.Left, t.Right = in[0], in[1]
	return &t
}
func (s *SetOp) Describe() string {
	if s.All {
		return s.Kind.String() + " All"
	}
	return s.Kind.String()
}

// SortKey is one ORDER BY key.
type SortKey struct {
	Col        int
	Desc       bool
	NullsFirst bool
}

func formatKeys(cols []Column, keys []SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		s := cols[k.Col].Name
		if k.Desc {
			s += " DESC"
		}
		// PostgreSQL's default is NULLS LAST for ASC, NULLS FIRST for DESC.
		if k.NullsFirst != k.Desc {
			if k.NullsFirst {
				s += " NULLS FIRST"
			} else {
				s += " NULLS LAST"
			}
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// TopK keeps the rows ranked Offset+1 .. Offset+Limit by Order (ORDER BY ...
// LIMIT inside views; the final ORDER BY/LIMIT of ad-hoc queries). Limit <
// 0 means no limit. Ties at the boundary are broken by the whole row so the
// result is deterministic.
type TopK struct {
	Input  Node
	Order  []SortKey
	Limit  int64
	Offset int64
}

func (t *TopK) Schema() []Column { return t.Input.Schema() }
func (t *TopK) Inputs() []Node   { return []Node{t.Input} }
func (t *TopK) WithInputs(in []Node) Node {
	u := *t
	u.Input = in[0]
	return &u
}
func (t *TopK) Describe() string {
	s := "TopK order=[" + formatKeys(t.Input.Schema(), t.Order) + "]"
	if t.Limit >= 0 {
		s += fmt.Sprintf(" limit=%d", t.Limit)
	}
	if t.Offset > 0 {
		s += fmt.Sprintf(" offset=%d", t.Offset)
	}
	return s
}

// Format prints a plan tree, one node per line, children indented.
func Format(n Node) string {
	var b strings.Builder
	var rec func(n Node, depth int)
	rec = func(n Node, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(n.Describe())
		b.WriteString("\n")
		for _, in := range n.Inputs() {
			rec(in, depth+1)
		}
	}
	rec(n, 0)
	return b.String()
}

// Transform rebuilds a plan bottom-up: fn sees each node after its inputs
// were transformed.
func Transform(n Node, fn func(Node) Node) Node {
	return fn(MapInputs(n, func(in Node) Node { return Transform(in, fn) }))
}

// MapInputs is n with fn applied to each of its inputs: n itself when fn
// changed none.
func MapInputs(n Node, fn func(Node) Node) Node {
	ins := n.Inputs()
	if len(ins) == 0 {
		return n
	}
	out := make([]Node, len(ins))
	changed := false
	for i, in := range ins {
		out[i] = fn(in)
		changed = changed || out[i] != in
	}
	if !changed {
		return n
	}
	return n.WithInputs(out)
}

// Scalars returns the scalar expressions a node holds (for walks that must
// see every expression, e.g. the correlation check).
func Scalars(n Node) []Scalar {
	switch x := n.(type) {
	case *Filter:
		return []Scalar{x.Pred}
	case *Project:
		return x.Exprs
	case *Join:
		if x.Cond != nil {
			return []Scalar{x.Cond}
		}
	case *Values:
		var out []Scalar
		for _, r := range x.Rows {
			out = append(out, r...)
		}
		return out
	case *Aggregate:
		var out []Scalar
		for _, a := range x.Aggs {
			out = append(out, a.Args...)
			if a.Filter != nil {
				out = append(out, a.Filter)
			}
		}
		return out
	case *Window:
		return x.scalars()
	case ScalarHolder:
		return x.HeldScalars()
	}
	return nil
}

// ColumnRefs builds ColRefs for every column of a schema.
func ColumnRefs(cols []Column) []Scalar {
	out := make([]Scalar, len(cols))
	for i, c := range cols {
		out[i] = &ColRef{Index: i, Typ: c.Type, Name: c.Name}
	}
	return out
}

// MapScalars returns n with fn applied to each scalar expression it holds
// (n itself when it holds none).
func MapScalars(n Node, fn func(Scalar) Scalar) Node {
	switch x := n.(type) {
	case *Filter:
		return &Filter{Input: x.Input, Pred: fn(x.Pred)}
	case *Project:
		exprs := make([]Scalar, len(x.Exprs))
		for i, e := range x.Exprs {
			exprs[i] = fn(e)
		}
		return &Project{Input: x.Input, Exprs: exprs, Cols: x.Cols}
	case *Join:
		if x.Cond == nil {
			return x
		}
		j := *x
		j.Cond = fn(x.Cond)
		return &j
	case *Values:
		rows := make([][]Scalar, len(x.Rows))
		for i, r := range x.Rows {
			rows[i] = make([]Scalar, len(r))
			for j, s := range r {
				rows[i][j] = fn(s)
			}
		}
		return &Values{Rows: rows, Cols: x.Cols}
	case *Aggregate:
		a := *x
		a.Aggs = make([]AggCall, len(x.Aggs))
		for i, c := range x.Aggs {
			args := make([]Scalar, len(c.Args))
			for j, s := range c.Args {
				args[j] = fn(s)
			}
			c.Args = args
			if c.Filter != nil {
				c.Filter = fn(c.Filter)
			}
			a.Aggs[i] = c
		}
		return &a
	case *Window:
		return x.mapScalars(fn)
	case ScalarHolder:
		held := x.HeldScalars()
		out := make([]Scalar, len(held))
		for i, s := range held {
			out[i] = fn(s)
		}
		return x.WithScalars(out)
	}
	return n
}

// Exchange repartitions its input: rows are routed to shards by a hash of
// Keys, or gathered onto one shard when Keys is empty (Single). The
// distribution pass inserts Exchanges where an operator needs a
// partitioning its input does not already have; with one shard an
// Exchange moves nothing and lowers to no operator.
type Exchange struct {
	Input  Node
	Keys   []int
	Single bool
}

func (e *Exchange) Schema() []Column { return e.Input.Schema() }
func (e *Exchange) Inputs() []Node   { return []Node{e.Input} }
func (e *Exchange) WithInputs(in []Node) Node {
	f := *e
	f.Input = in[0]
	return &f
}
func (e *Exchange) Describe() string {
	if e.Single {
		return "Exchange single"
	}
	cols := e.Input.Schema()
	names := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		names[i] = cols[k].Name
	}
	return "Exchange hash(" + strings.Join(names, ", ") + ")"
}
