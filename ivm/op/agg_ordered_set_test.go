package op

import (
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func float8Of(t *testing.T, e expr.Expr) expr.Expr {
	c, err := expr.NewCast(e, types.TFloat8)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fractionConst(f float64) expr.Expr { return expr.NewConst(types.TFloat8, f) }

func fractionsConst(fs ...types.Datum) expr.Expr {
	return expr.NewConst(types.ArrayOf(types.TFloat8), types.Array{Elem: types.TFloat8, Values: fs})
}

// TestOrderedSetAggregateIncremental checks percentile_cont,
// percentile_disc and mode (ascending and descending, the array form,
// FILTER) against the stream form at every step, including retractions
// of repeated values.
func TestOrderedSetAggregateIncremental(t *testing.T) {
	a, b := int8Col(1), int8Col(2)
	desc := func(e expr.Expr) []AggOrderKey { return []AggOrderKey{{Expr: e, Descending: true, NullsFirst: true}} }
	calls := []AggregateCall{
		{Func: AggPercentileCont, Arg: float8Of(t, a), Fraction: fractionConst(0.5), Name: "median"},
		{Func: AggPercentileCont, Arg: float8Of(t, b), OrderBy: desc(float8Of(t, b)), Fraction: fractionConst(0.3), Name: "p30desc"},
		{Func: AggPercentileCont, Arg: float8Of(t, a), Fraction: fractionsConst(0.0, 0.25, nil, 1.0, 0.75), Name: "pcarr"},
		{Func: AggPercentileDisc, Arg: a, Fraction: fractionConst(0.5), Name: "disc"},
		{Func: AggPercentileDisc, Arg: b, OrderBy: desc(b), Fraction: fractionsConst(0.0, 0.3, nil, 1.0), Name: "pdarr"},
		{Func: AggMode, Arg: a, Name: "mode"},
		{Func: AggMode, Arg: b, OrderBy: desc(b), Name: "modedesc"},
		{Func: AggMode, Arg: a, Filter: mustBinary(t, ">", b, int8Const(0)), Name: "modef"},
	}
	checkAggregateSpecs(t, []AggregateSpec{{GroupBy: []int{0}, Calls: calls}, {Calls: calls}})
}

// TestOrderedSetAggregateValues pins PostgreSQL 15's results on a fixed
// input (values 1, 1, 2, 4 and a NULL).
func TestOrderedSetAggregateValues(t *testing.T) {
	a := int8Col(0)
	desc := []AggOrderKey{{Expr: a, Descending: true}}
	spec := AggregateSpec{Calls: []AggregateCall{
		{Func: AggPercentileCont, Arg: float8Of(t, a), Fraction: fractionConst(0.5)},
		{Func: AggPercentileCont, Arg: float8Of(t, a), Fraction: fractionConst(0.3)},
		{Func: AggPercentileCont, Arg: float8Of(t, a), OrderBy: desc, Fraction: fractionConst(0.3)},
		{Func: AggPercentileDisc, Arg: a, Fraction: fractionConst(0.5)},
		{Func: AggPercentileDisc, Arg: a, Fraction: fractionConst(0)},
		{Func: AggPercentileDisc, Arg: a, Fraction: fractionsConst(1.0, nil, 0.75)},
		{Func: AggMode, Arg: a},
		{Func: AggPercentileCont, Arg: float8Of(t, a), Fraction: expr.NewConst(types.TFloat8, nil)},
	}}
	var in zset.Batch
	in.Add(types.Row{int64(1)}, 2)
	in.Add(types.Row{int64(4)}, 1)
	in.Add(types.Row{int64(2)}, 1)
	in.Add(types.Row{nil}, 1)
	out, err := StreamAggregate(&Context{Env: &expr.Env{}}, intSchema(1), spec, in)
	if err != nil {
		t.Fatal(err)
	}
	// SELECT percentile_cont(0.5), percentile_cont(0.3), ... DESC,
	// percentile_disc(0.5), percentile_disc(0), percentile_disc(ARRAY[1, NULL, 0.75]),
	// mode(), percentile_cont(NULL) on PostgreSQL 15: 1.5 | 1 | 2.2 | 1 | 1 | {4,NULL,2} | 1 | NULL
	if got, want := out.String(), `{(1.5,1,2.2,1,1,{bigint [4 <nil> 2]},1,NULL):+1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// TestOrderedSetAggregateErrors: a fraction outside [0, 1] is 22003 with
// PostgreSQL's %g text, even for a global aggregate over no rows (the
// single-fraction form checks first); the array form over no rows is NULL.
func TestOrderedSetAggregateErrors(t *testing.T) {
	a := float8Of(t, int8Col(0))
	for _, c := range []struct {
		fraction expr.Expr
		rows     int64
		message  string
	}{
		{fractionConst(2), 1, "percentile value 2 is not between 0 and 1"},
		{fractionConst(-0.1), 0, "percentile value -0.1 is not between 0 and 1"},
		{fractionConst(1.000001234567), 1, "percentile value 1 is not between 0 and 1"},
		{fractionConst(1e20), 1, "percentile value 1e+20 is not between 0 and 1"},
		{fractionsConst(0.5, 3.0, 2.0), 1, "percentile value 3 is not between 0 and 1"},
		{fractionsConst(0.5, 3.0), 0, ""},
	} {
		spec := AggregateSpec{Calls: []AggregateCall{{Func: AggPercentileCont, Arg: a, Fraction: c.fraction}}}
		var in zset.Batch
		if c.rows > 0 {
			in.Add(types.Row{int64(1)}, c.rows)
		}
		ctx := &Context{Env: &expr.Env{}}
		_, err := StreamAggregate(ctx, intSchema(1), spec, in)
		if c.message == "" {
			if err != nil || len(ctx.Errors.Rows) != 0 {
				t.Errorf("%v: want no error, got %v %v", c.fraction, err, ctx.Errors)
			}
			continue
		}
		if err == nil && len(ctx.Errors.Rows) == 1 {
			row := ctx.Errors.Rows[0]
			if row[0] != "22003" || row[2] != c.message {
				t.Errorf("%v: got %v, want 22003 %q", c.fraction, row, c.message)
			}
			continue
		}
		e, ok := errcode.As(err)
		if !ok || e.State() != "22003" || e.Message != c.message {
			t.Errorf("%v: got %v / %v, want 22003 %q", c.fraction, err, ctx.Errors, c.message)
		}
	}
}
