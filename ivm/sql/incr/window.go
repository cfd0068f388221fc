package incr

import (
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// window lowers a Window node: a TopK per partition first when only the
// first Limit rows by the window's order are read (ROW_NUMBER() ≤ k), then
// the Window operator.
func (w *builder) window(x *plan.Window) (circuit.Node, error) {
	in, err := w.node(x.Input)
	if err != nil {
		return circuit.Node{}, err
	}
	spec := op.WindowSpec{PartitionBy: x.PartitionBy, OrderBy: sortKeys(x.Order)}
	for i, f := range x.Funcs {
		call := op.WindowCall{Name: x.Cols[i].Name, Frame: frame(f.Frame)}
		args, err := w.exprs(f.Args)
		if err != nil {
			return circuit.Node{}, err
		}
		if f.Agg {
			call.Func = op.WinAggregate
			switch f.Name {
			case "count":
				call.Agg.Func = op.AggCount
				if len(args) == 0 {
					call.Agg.Func = op.AggCountStar
				}
			case "sum":
				call.Agg.Func = op.AggSum
			case "avg":
				call.Agg.Func = op.AggAvg
			case "min":
				call.Agg.Func = op.AggMin
			case "max":
				call.Agg.Func = op.AggMax
			case "bool_and":
				call.Agg.Func = op.AggBoolAnd
			case "bool_or":
				call.Agg.Func = op.AggBoolOr
			default:
				return circuit.Node{}, unsupported("aggregate function " + f.Name + "() as a window function")
			}
			if len(args) > 1 {
				return circuit.Node{}, unsupported(f.Name + "() with several arguments as a window function")
			}
			if len(args) == 1 {
				call.Agg.Arg = args[0]
			}
			if f.Filter != nil {
				if call.Agg.Filter, err = w.lower.Lower(f.Filter); err != nil {
					return circuit.Node{}, err
				}
			}
		} else {
			fn, ok := windowFuncs[f.Name]
			if !ok {
				return circuit.Node{}, unsupported("window function " + f.Name + "()")
			}
			call.Func, call.Args = fn, args
		}
		spec.Calls = append(spec.Calls, call)
	}
	if x.Limit >= 0 {
		in = w.b.TopK(in, op.TopKSpec{PartitionBy: x.PartitionBy, OrderBy: spec.OrderBy, Limit: x.Limit, InsertOnly: insertOnly(x.Input)})
	}
	return w.b.Window(in, spec), nil
}

//lint:immutable a constant table.
var windowFuncs = map[string]op.WindowFunc{
	"row_number": op.WinRowNumber, "rank": op.WinRank, "dense_rank": op.WinDenseRank,
	"percent_rank": op.WinPercentRank, "cume_dist": op.WinCumeDist, "ntile": op.WinNtile,
	"lag": op.WinLag, "lead": op.WinLead, "first_value": op.WinFirstValue,
	"last_value": op.WinLastValue, "nth_value": op.WinNthValue,
}

func frame(f plan.WindowFrame) op.Frame {
	var out op.Frame
	switch f.Mode {
	case "":
		return out
	case "ROWS":
		out.Mode = op.FrameRows
	case "GROUPS":
		out.Mode = op.FrameGroups
	}
	out.Start, out.End = bound(f.Start), bound(f.End)
	return out
}

func bound(b plan.FrameBound) op.FrameBound {
	switch b.Kind {
	case "UNBOUNDED PRECEDING":
		return op.FrameBound{Kind: op.BoundUnboundedPreceding}
	case "UNBOUNDED FOLLOWING":
		return op.FrameBound{Kind: op.BoundUnboundedFollowing}
	case "PRECEDING":
		return op.FrameBound{Kind: op.BoundPreceding, Offset: b.Offset, Value: b.Value}
	case "FOLLOWING":
		return op.FrameBound{Kind: op.BoundFollowing, Offset: b.Offset, Value: b.Value}
	}
	return op.FrameBound{Kind: op.BoundCurrentRow}
}
