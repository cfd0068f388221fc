package plan

import "strings"

// ProjectSet evaluates set-returning functions of the SELECT list
// (`SELECT k, generate_series(1, n) FROM t`) for each input row: its rows
// are the input row followed by the functions' columns, one row per
// position up to the longest function result, shorter results padded with
// NULLs (PostgreSQL 10+ semantics); an input row for which every function
// returns no rows produces none. The functions' arguments reference the
// input row. It is also a function in FROM that references the FROM items
// to its left (`FROM t, unnest(t.tags) AS u(x)`, implicitly LATERAL), and
// `LEFT JOIN LATERAL f(...) ON cond` (Outer, Cond). Incrementally it is a
// flat-map (op.FlatMap): linear in its input.
type ProjectSet struct {
	Input Node
	// Funcs are the functions in select-list order; their Cols follow the
	// input's columns in Cols, in the same order.
	Funcs []*FuncScan
	Cols  []Column
	// Cond, when set, keeps only the output rows for which it is true; it
	// references the output row (input columns, then the functions').
	Cond Scalar
	// Outer keeps an input row none of whose output rows remain as one
	// row with NULL function columns (LEFT JOIN LATERAL).
	Outer bool
}

func (p *ProjectSet) Schema() []Column { return p.Cols }
func (p *ProjectSet) Inputs() []Node   { return []Node{p.Input} }
func (p *ProjectSet) WithInputs(in []Node) Node {
	q := *p
	q.Input = in[0]
	return &q
}
func (p *ProjectSet) Describe() string {
	parts := make([]string, len(p.Funcs))
	for i, f := range p.Funcs {
		parts[i] = strings.TrimPrefix(f.Describe(), "FunctionScan ")
	}
	s := "ProjectSet " + strings.Join(parts, ", ")
	if p.Outer {
		s += " (outer)"
	}
	if p.Cond != nil {
		s += " ON " + p.Cond.String()
	}
	return s
}

// HeldScalars are every function's arguments, in order, then Cond.
func (p *ProjectSet) HeldScalars() []Scalar {
	var out []Scalar
	for _, f := range p.Funcs {
		out = append(out, f.Args...)
	}
	if p.Cond != nil {
		out = append(out, p.Cond)
	}
	return out
}

func (p *ProjectSet) WithScalars(s []Scalar) Node {
	q := *p
	q.Funcs = make([]*FuncScan, len(p.Funcs))
	for i, f := range p.Funcs {
		g := *f
		g.Args, s = s[:len(f.Args)], s[len(f.Args):]
		q.Funcs[i] = &g
	}
	if p.Cond != nil {
		q.Cond = s[0]
	}
	return &q
}
