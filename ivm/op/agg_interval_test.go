package op

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
)

// intervalOf maps an int8 column to an interval with every field set (so
// sums carry months, days and time apart, and avg cascades fractions), and
// NULL to NULL.
type intervalOf struct{ col int }

func (intervalOf) Type() types.Type { return types.TInterval }
func (c intervalOf) Eval(_ *expr.Env, row types.Row) (types.Datum, error) {
	if row[c.col] == nil {
		return nil, nil
	}
	v := row[c.col].(int64)
	return types.Interval{Months: int32(v % 3), Days: int32(v), Micros: v*1_000_001 - 7}, nil
}
func (c intervalOf) String() string { return fmt.Sprintf("interval($%d)", c.col) }

// TestAggregateIntervalIncremental: SUM/AVG(interval), plain, DISTINCT and
// filtered, maintained incrementally equal their non-incremental forms.
func TestAggregateIntervalIncremental(t *testing.T) {
	iv := intervalOf{col: 1}
	isBig := testexpr.Binary{Op: ">", L: testexpr.IntCol(2), R: testexpr.Int(1)}
	calls := []AggregateCall{
		{Func: AggSum, Arg: iv, Name: "s"},
		{Func: AggAvg, Arg: iv, Name: "a"},
		{Func: AggSum, Arg: iv, Distinct: true, Name: "sd"},
		{Func: AggAvg, Arg: iv, Distinct: true, Name: "ad"},
		{Func: AggAvg, Arg: iv, Filter: isBig, Name: "af"},
		{Func: AggCountStar, Name: "n"},
	}
	checkAggregateSpecs(t, []AggregateSpec{
		{GroupBy: []int{0}, Calls: calls},
		{GroupBy: nil, Calls: calls[:2]},
	})
}
