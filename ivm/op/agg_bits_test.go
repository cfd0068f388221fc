package op

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestAggregateBitsIncremental: BIT_AND/OR/XOR (plain, DISTINCT, filtered;
// int8 and int4, negative values included) maintained incrementally equal
// their non-incremental forms.
func TestAggregateBitsIncremental(t *testing.T) {
	a := testexpr.IntCol(1)
	b4 := testexpr.Col{Index: 2, T: types.TInt4}
	neg := testexpr.Binary{Op: "-", L: testexpr.Int(-3), R: a}
	isBig := testexpr.Binary{Op: ">", L: a, R: testexpr.Int(1)}
	calls := []AggregateCall{
		{Func: AggBitAnd, Arg: a, Name: "band"},
		{Func: AggBitOr, Arg: a, Name: "bor"},
		{Func: AggBitXor, Arg: a, Name: "bxor"},
		{Func: AggBitAnd, Arg: neg, Name: "bandneg"},
		{Func: AggBitOr, Arg: b4, Name: "bor4"},
		{Func: AggBitXor, Arg: b4, Distinct: true, Name: "bxord"},
		{Func: AggBitAnd, Arg: a, Distinct: true, Name: "bandd"},
		{Func: AggBitXor, Arg: neg, Filter: isBig, Name: "bxorf"},
		{Func: AggCountStar, Name: "n"},
	}
	checkAggregateSpecs(t, []AggregateSpec{
		{GroupBy: []int{0}, Calls: calls},
		{GroupBy: nil, Calls: calls[:3]},
	})
}

// TestFinalizeBitsSignExtends: the bits of a narrow type come back as its
// negative values.
func TestFinalizeBitsSignExtends(t *testing.T) {
	for _, tc := range []struct {
		t    types.Type
		v    int64
		want int64
	}{{types.TInt2, -2, -2}, {types.TInt4, -5, -5}, {types.TInt8, -9, -9}, {types.TInt2, 32767, 32767}} {
		for _, f := range []AggFunc{AggBitAnd, AggBitOr, AggBitXor} {
			got := streamBits(f, tc.t, []types.Datum{tc.v}, []int64{1})
			if got != tc.want {
				t.Fatalf("%s over %s of %d = %v, want %d", f, tc.t.SQLName(), tc.v, got, tc.want)
			}
		}
	}
}

// TestBitsKnownValues: the table in agg_bits.go's comment.
func TestBitsKnownValues(t *testing.T) {
	vals := []types.Datum{int64(5), int64(3), int64(3)}
	for _, tc := range []struct {
		f       AggFunc
		weights []int64
		want    int64
	}{
		{AggBitOr, []int64{1, 1, 0}, 7}, {AggBitAnd, []int64{1, 1, 0}, 1}, {AggBitXor, []int64{1, 1, 0}, 6},
		{AggBitOr, []int64{1, 1, -1}, 5}, {AggBitAnd, []int64{1, 1, -1}, 5}, {AggBitXor, []int64{1, 1, -1}, 5},
		{AggBitXor, []int64{1, 2, 0}, 5},
	} {
		if got := streamBits(tc.f, types.TInt8, vals, tc.weights); got != tc.want {
			t.Fatalf("%s with weights %v = %v, want %d", tc.f, tc.weights, got, tc.want)
		}
	}
}
