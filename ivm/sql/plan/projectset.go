package plan

import "strings"

// ProjectSet evaluates set-returning functions of the SELECT list
// (`SELECT k, generate_series(1, n) FROM t`) for each input row: its rows
// are the input row followed by the functions' columns, one row per
// position up to the longest function result, shorter results padded with
// NULLs (PostgreSQL 10+ semantics); an input row for which every function
// returns no rows produces none. The functions' arguments reference the
// input row. Ad-hoc execution evaluates it before the circuit is built;
// views reject it.
type ProjectSet struct {
	Input Node
	// Funcs are the functions in select-list order; their Cols follow the
	// input's columns in Cols, in the same order.
	Funcs []*FuncScan
	Cols  []Column
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
	return "ProjectSet " + strings.Join(parts, ", ")
}

// HeldScalars are every function's arguments, in order.
func (p *ProjectSet) HeldScalars() []Scalar {
	var out []Scalar
	for _, f := range p.Funcs {
		out = append(out, f.Args...)
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
	return &q
}
