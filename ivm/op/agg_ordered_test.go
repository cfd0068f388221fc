package op

import (
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func textOf(t *testing.T, e expr.Expr) expr.Expr {
	c, err := expr.NewCast(e, types.TText)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOrderedAggregateIncremental checks string_agg and array_agg (with and
// without ORDER BY, DISTINCT, per-row delimiters, FILTER) against the
// stream form at every step, including retractions of repeated values.
func TestOrderedAggregateIncremental(t *testing.T) {
	a, b := int8Col(1), int8Col(2)
	comma := expr.NewConst(types.TText, ",")
	calls := []AggregateCall{
		{Func: AggStringAgg, Arg: textOf(t, a), Delimiter: comma, Name: "s"},
		{Func: AggStringAgg, Arg: textOf(t, a), Delimiter: textOf(t, b), Name: "srow"},
		{Func: AggStringAgg, Arg: textOf(t, a), Delimiter: comma, OrderBy: []AggOrderKey{{Expr: b, Descending: true, NullsFirst: true}}, Name: "sord"},
		{Func: AggStringAgg, Arg: textOf(t, b), Delimiter: comma, Distinct: true, Name: "sdist"},
		{Func: AggArrayAgg, Arg: a, Name: "arr"},
		{Func: AggArrayAgg, Arg: b, OrderBy: []AggOrderKey{{Expr: a}, {Expr: b, Descending: true}}, Name: "arrord"},
		{Func: AggArrayAgg, Arg: a, Filter: mustBinary(t, ">", b, int8Const(0)), Name: "arrf"},
	}
	checkAggregateSpecs(t, []AggregateSpec{{GroupBy: []int{0}, Calls: calls}, {Calls: calls}})
}

// TestOrderedAggregateValues pins the output format on a fixed input.
func TestOrderedAggregateValues(t *testing.T) {
	a, b := int8Col(0), int8Col(1)
	spec := AggregateSpec{Calls: []AggregateCall{
		{Func: AggStringAgg, Arg: textOf(t, a), Delimiter: expr.NewConst(types.TText, "-"), OrderBy: []AggOrderKey{{Expr: b}}, Name: "s"},
		{Func: AggArrayAgg, Arg: a, Name: "arr"},
	}}
	var in zset.Batch
	in.Add(types.Row{int64(3), int64(1)}, 2)
	in.Add(types.Row{int64(1), int64(2)}, 1)
	in.Add(types.Row{nil, int64(0)}, 1)
	out, err := StreamAggregate(&Context{Env: &expr.Env{}}, intSchema(2), spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{("3-3-1",{bigint [1 3 3 <nil>]}):+1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestOrderedAggregateSizeLimits checks that string_agg and array_agg
// refuse results over PostgreSQL's limits (1 GB, 134217727 elements) with
// 54000 before building them: a row's weight can ask for any number of
// copies, which used to grow the result until the process died.
func TestOrderedAggregateSizeLimits(t *testing.T) {
	comma := expr.NewConst(types.TText, ",")
	text := AggregateCall{Func: AggStringAgg, Arg: textOf(t, int8Col(0)), Delimiter: comma, Name: "s"}
	array := AggregateCall{Func: AggArrayAgg, Arg: int8Col(0), Name: "a"}
	for _, c := range []struct {
		call     AggregateCall
		element  types.Row
		weight   int64
		refusing bool
	}{
		{text, types.Row{"ab", ","}, 1 << 40, true},
		{text, types.Row{"ab", ","}, expr.ValueBytesMax/3 + 1, true},
		{text, types.Row{"ab", ","}, 3, false},
		{array, types.Row{int64(1)}, 1 << 40, true},
		{array, types.Row{int64(1)}, expr.ArrayElementsMax + 1, true},
		{array, types.Row{int64(1)}, 3, false},
	} {
		got, err := buildOrdered(c.call, []types.Row{c.element}, []int64{c.weight})
		if !c.refusing {
			if err != nil || got == nil {
				t.Errorf("%s weight %d: %v, %v", c.call.Name, c.weight, got, err)
			}
			continue
		}
		e, ok := errcode.As(err)
		if !ok || e.State() != "54000" {
			t.Errorf("%s weight %d: %v, want 54000", c.call.Name, c.weight, err)
		}
	}
}
