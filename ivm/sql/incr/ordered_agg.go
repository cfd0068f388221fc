package incr

import (
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// orderedAggregate lowers string_agg(value, delimiter [ORDER BY ...]) and
// array_agg(value [ORDER BY ...]): the ORDER BY expressions are the last
// len(a.Order) arguments (plan.AggCall.Order).
func (w *builder) orderedAggregate(call op.AggregateCall, a plan.AggCall) (op.AggregateCall, error) {
	values := a.ValueArgs()
	call.Func = op.AggArrayAgg
	want := 1
	if a.Func == "string_agg" {
		call.Func, want = op.AggStringAgg, 2
	}
	if len(values) != want {
		return call, unsupported(a.Func + "() with this argument list")
	}
	var err error
	if call.Arg, err = w.lower.Lower(values[0]); err != nil {
		return call, err
	}
	if want == 2 {
		if call.Delimiter, err = w.lower.Lower(values[1]); err != nil {
			return call, err
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
