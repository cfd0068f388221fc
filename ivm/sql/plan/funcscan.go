package plan

import (
	"strings"
)

// ScalarHolder is implemented by nodes outside the core set that hold
// scalar expressions, so Scalars and MapScalars (correlation checks,
// binding outer references) see them.
type ScalarHolder interface {
	HeldScalars() []Scalar
	WithScalars([]Scalar) Node
}

// FuncScan is a function in FROM (`generate_series(1, 10) AS g`,
// `unnest(arr) WITH ORDINALITY`): the rows the function returns for its
// arguments, which reference no FROM sibling (a function that does is a
// ProjectSet over them). Ad-hoc execution evaluates it into constant rows
// before the circuit is built; a view expands the one row of a constant
// relation by it (op.FlatMap).
type FuncScan struct {
	// Name is the function's name; "" for a scalar (non-set-returning)
	// function in FROM, which returns one row holding Args[0].
	Name string
	Args []Scalar
	// Ordinality appends the 1-based row number as a bigint column.
	Ordinality bool
	Cols       []Column
}

func (f *FuncScan) Schema() []Column         { return f.Cols }
func (f *FuncScan) Inputs() []Node           { return nil }
func (f *FuncScan) WithInputs(_ []Node) Node { return f }
func (f *FuncScan) Describe() string {
	parts := make([]string, len(f.Args))
	for i, a := range f.Args {
		parts[i] = a.String()
	}
	s := "FunctionScan " + f.Name + "(" + strings.Join(parts, ", ") + ")"
	if f.Ordinality {
		s += " WITH ORDINALITY"
	}
	return s
}
func (f *FuncScan) HeldScalars() []Scalar { return f.Args }
func (f *FuncScan) WithScalars(s []Scalar) Node {
	g := *f
	g.Args = s
	return &g
}
