package plan

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// FrameBound is one end of a window frame: "UNBOUNDED PRECEDING",
// "PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING" with an
// Offset for the two bounded forms.
type FrameBound struct {
	Kind   string
	Offset int64
	// Value is a RANGE frame's offset, of type ValueType (an interval for
	// dates and timestamps, numeric for numeric, ...).
	Value     types.Datum
	ValueType types.Type
}

func (b FrameBound) String() string {
	if b.Value != nil {
		return FormatDatum(b.Value, b.ValueType) + " " + b.Kind
	}
	if b.Kind == "PRECEDING" || b.Kind == "FOLLOWING" {
		return fmt.Sprintf("%d %s", b.Offset, b.Kind)
	}
	return b.Kind
}

// WindowFrame is ROWS/RANGE/GROUPS BETWEEN Start AND End. The zero value
// (Mode "") is the default frame, RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW.
type WindowFrame struct {
	Mode       string
	Start, End FrameBound
}

func (f WindowFrame) String() string {
	if f.Mode == "" {
		return ""
	}
	return fmt.Sprintf("%s BETWEEN %s AND %s", f.Mode, f.Start, f.End)
}

// WindowFunc is one window function call over a Window node's input.
// Aggregates (count, sum, avg, min, max, bool_and, bool_or) have Agg set;
// Args are scalars over the input row (for count(*) none).
type WindowFunc struct {
	Name   string
	Args   []Scalar
	Agg    bool
	Filter Scalar
	Frame  WindowFrame
	Typ    types.Type
}

func (f WindowFunc) String() string {
	args := make([]string, len(f.Args))
	for i, a := range f.Args {
		args[i] = a.String()
	}
	s := f.Name + "(" + strings.Join(args, ", ") + ")"
	if f.Name == "count" && len(f.Args) == 0 {
		s = "count(*)"
	}
	if f.Filter != nil {
		s += " FILTER (WHERE " + f.Filter.String() + ")"
	}
	if fr := f.Frame.String(); fr != "" {
		s += " " + fr
	}
	return s
}

// Window computes window functions over one OVER (PARTITION BY … ORDER BY
// …) clause: its output is the input row followed by one column per
// function. Limit ≥ 0 says only rows whose ROW_NUMBER() ≤ Limit are read
// above (every function is row_number and a filter keeps rn ≤ Limit), so
// each partition may be cut to its first Limit rows first (a TopK).
type Window struct {
	Input       Node
	PartitionBy []int
	Order       []SortKey
	Funcs       []WindowFunc
	Cols        []Column // the function columns
	Limit       int64
}

func (w *Window) Schema() []Column {
	return append(append([]Column(nil), w.Input.Schema()...), w.Cols...)
}
func (w *Window) Inputs() []Node { return []Node{w.Input} }
func (w *Window) WithInputs(in []Node) Node {
	x := *w
	x.Input = in[0]
	return &x
}
func (w *Window) Describe() string {
	in := w.Input.Schema()
	parts := make([]string, len(w.PartitionBy))
	for i, c := range w.PartitionBy {
		parts[i] = in[c].Name
	}
	fs := make([]string, len(w.Funcs))
	for i, f := range w.Funcs {
		fs[i] = f.String()
	}
	s := fmt.Sprintf("Window partition=[%s] order=[%s] funcs=[%s]", strings.Join(parts, ", "), formatKeys(in, w.Order), strings.Join(fs, ", "))
	if w.Limit >= 0 {
		s += fmt.Sprintf(" limit=%d", w.Limit)
	}
	return s
}

func (w *Window) scalars() []Scalar {
	var out []Scalar
	for _, f := range w.Funcs {
		out = append(out, f.Args...)
		if f.Filter != nil {
			out = append(out, f.Filter)
		}
	}
	return out
}

func (w *Window) mapScalars(fn func(Scalar) Scalar) Node {
	x := *w
	x.Funcs = make([]WindowFunc, len(w.Funcs))
	for i, f := range w.Funcs {
		args := make([]Scalar, len(f.Args))
		for j, a := range f.Args {
			args[j] = fn(a)
		}
		f.Args = args
		if f.Filter != nil {
			f.Filter = fn(f.Filter)
		}
		x.Funcs[i] = f
	}
	return &x
}
