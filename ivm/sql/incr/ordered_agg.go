package incr

import (
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// orderedAggregate lowers string_agg(value, delimiter [ORDER BY ...]),
// array_agg(value [ORDER BY ...]), json[b]_agg(value [ORDER BY ...]) and
// json[b]_object_agg(key, value [ORDER BY ...]): the ORDER BY expressions are the last
// len(a.Order) arguments (plan.AggCall.Order).
func (w *builder) orderedAggregate(call op.AggregateCall, a plan.AggCall) (op.AggregateCall, error) {
	switch a.Func {
	case "percentile_cont", "percentile_disc", "mode":
		return w.orderedSetAggregate(call, a)
	}
	values := a.ValueArgs()
	call.Func = op.AggArrayAgg
	want := 1
	switch a.Func {
	case "string_agg":
		call.Func, want = op.AggStringAgg, 2
	case "json_agg":
		call.Func = op.AggJSONAgg
	case "jsonb_agg":
		call.Func = op.AggJSONBAgg
	case "json_object_agg":
		call.Func, want = op.AggJSONObjectAgg, 2
	case "jsonb_object_agg":
		call.Func, want = op.AggJSONBObjectAgg, 2
	}
	if len(values) != want {
		return call, unsupported(a.Func + "() with this argument list")
	}
	var err error
	if call.Arg, err = w.lower.Lower(values[0]); err != nil {
		return call, err
	}
	if want == 2 {
		second, err := w.lower.Lower(values[1])
		if err != nil {
			return call, err
		}
		if a.Func == "string_agg" {
			call.Delimiter = second
		} else {
			call.Value = second
		}
	}
	for i, k := range a.Order {
		e, err := w.lower.Lower(a.Args[len(values)+i])
		if err != nil {
			return call, err
		}
		call.OrderBy = append(call.OrderBy, op.AggOrderKey{Expr: e, Descending: k.Desc, NullsFirst: k.NullsFirst})
	}
	if a.Filter != nil {
		if call.Filter, err = w.lower.Lower(a.Filter); err != nil {
			return call, err
		}
	}
	return call, nil
}

// orderedSetAggregate lowers percentile_cont(f), percentile_disc(f) and
// mode() WITHIN GROUP (ORDER BY x): x is the last argument (the call's one
// ORDER BY expression) and f, when present, the first. x is the
// aggregate's value, kept in ascending value order; a descending key
// orders the multiset by x descending first.
func (w *builder) orderedSetAggregate(call op.AggregateCall, a plan.AggCall) (op.AggregateCall, error) {
	values := a.ValueArgs()
	want := 1
	switch a.Func {
	case "percentile_cont":
		call.Func = op.AggPercentileCont
	case "percentile_disc":
		call.Func = op.AggPercentileDisc
	default:
		call.Func, want = op.AggMode, 0
	}
	if len(values) != want || len(a.Order) != 1 {
		return call, unsupported(a.Func + "() with this argument list")
	}
	var err error
	if call.Arg, err = w.lower.Lower(a.Args[len(a.Args)-1]); err != nil {
		return call, err
	}
	if a.Order[0].Desc {
		call.OrderBy = []op.AggOrderKey{{Expr: call.Arg, Descending: true, NullsFirst: a.Order[0].NullsFirst}}
	}
	if want == 1 {
		if call.Fraction, err = w.lower.Lower(values[0]); err != nil {
			return call, err
		}
	}
	if a.Filter != nil {
		if call.Filter, err = w.lower.Lower(a.Filter); err != nil {
			return call, err
		}
	}
	return call, nil
}
