package op

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
)

// Ordered-set aggregates: percentile_cont, percentile_disc and mode, each
// WITHIN GROUP (ORDER BY x). They are holistic, so they share the ordered
// multiset of string_agg and array_agg (agg_ordered.go): an element is the
// row's non-NULL x, kept in WITHIN GROUP order, and a retraction removes
// exactly one occurrence. Finalizing a touched group scans its multiset:
// percentile_* count the live values, then walk to the rows they need
// (stopping there); mode walks the runs of equal values once. Memory is
// O(1) per group however large it is; time is O(group size) per touched
// group and step, the price of an exact answer under retractions.
//
//	time | input (g, x)         | output (g, percentile_cont(0.5), mode())
//	-----|----------------------|------------------------------------------
//	0    | {(a,1):+2,(a,4):+1}  | {(a,1,1):+1}
//	1    | {(a,1):-1}           | {(a,1,1):-1, (a,2.5,1):+1}
//	2    | {(a,1):-1,(a,4):-1}  | {(a,2.5,1):-1}
//
// The results follow PostgreSQL 15 (orderedsetaggs.c): NULL x values are
// ignored and a group without values gives NULL; percentile_disc(f) is the
// first value whose position k (1-based, of n) has k/n ≥ f;
// percentile_cont(f) interpolates linearly between the values at 0-based
// positions floor(f·(n−1)) and ceil(f·(n−1)); mode() is the first value, in
// WITHIN GROUP order, of the most frequent ones (the smallest for ORDER BY
// x, the largest for ORDER BY x DESC). A fraction outside [0, 1] (or NaN)
// is 22003 "percentile value f is not between 0 and 1"; a NULL fraction
// gives NULL. The array form (f a float8[]) gives an array of results,
// NULL where the fraction is NULL, and NULL for a group without values.

// isOrderedSetAgg reports percentile_cont, percentile_disc and mode.
func isOrderedSetAgg(f AggFunc) bool {
	return f == AggPercentileCont || f == AggPercentileDisc || f == AggMode
}

// orderedSetResultType is PostgreSQL's result type of an ordered-set
// aggregate.
func orderedSetResultType(call AggregateCall) (types.Type, error) {
	t := call.Arg.Type()
	if call.Func == AggMode {
		if call.Fraction != nil {
			return types.Type{}, fmt.Errorf("mode() takes no direct argument")
		}
		return t, nil
	}
	if call.Fraction == nil {
		return types.Type{}, fmt.Errorf("%s needs a fraction", call.Func)
	}
	ft := call.Fraction.Type()
	array := ft.Kind == types.KindArray
	if array {
		ft = *ft.Elem
	}
	if ft.Kind != types.KindFloat8 {
		return types.Type{}, fmt.Errorf("%s fraction of type %s is not supported", call.Func, call.Fraction.Type().SQLName())
	}
	if call.Func == AggPercentileCont && t.Kind != types.KindFloat8 && t.Kind != types.KindInterval {
		return types.Type{}, fmt.Errorf("percentile_cont of %s is not supported", t.SQLName())
	}
	if array {
		return types.ArrayOf(t), nil
	}
	return t, nil
}

// orderedValues visits a group's live values in WITHIN GROUP order, each
// with its multiplicity (> 0); fn returns kv.ErrStop to end the visit.
type orderedValues func(fn func(value types.Datum, count int64) error) error

// multisetValues visits the values of call's multiset in group groupKey.
func (a *Aggregate) multisetValues(ctx *Context, groupKey []byte, callIndex int) orderedValues {
	return func(fn func(types.Datum, int64) error) error {
		var stopped bool
		err := a.scanMultiset(ctx, groupKey, callIndex, func(element types.Row, w int64) error {
			err := fn(element[0], w)
			stopped = err == kv.ErrStop
			return err
		})
		if stopped {
			return kv.ErrStop
		}
		return err
	}
}

// sortedValues visits sorted elements (the stream form's reference).
func sortedValues(elements []types.Row, weights []int64) orderedValues {
	return func(fn func(types.Datum, int64) error) error {
		for i, e := range elements {
			if weights[i] <= 0 {
				continue
			}
			if err := fn(e[0], weights[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// visit runs values, treating an early stop as success.
func visit(values orderedValues, fn func(types.Datum, int64) error) error {
	if err := values(fn); err != nil && err != kv.ErrStop {
		return err
	}
	return nil
}

// finalizeOrderedSet computes an ordered-set aggregate over a group's
// values. valueErr is a data error of the result (a fraction out of range,
// an interval out of range), recorded against the group; err is a failure
// to read the state.
func finalizeOrderedSet(env *expr.Env, call AggregateCall, values orderedValues) (result types.Datum, valueErr, err error) {
	if call.Func == AggMode {
		v, err := modeOf(call.Arg.Type(), values)
		return v, nil, err
	}
	fraction, err := call.Fraction.Eval(env, nil)
	if err != nil {
		return nil, err, nil
	}
	array, isArray := fraction.(types.Array)
	if !isArray && fraction != nil {
		// NB: PostgreSQL checks a single fraction before looking at the
		// rows, so an empty group errs too (the array form does not).
		if err := checkFraction(fraction.(float64)); err != nil {
			return nil, err, nil
		}
	}
	var total int64
	if err := visit(values, func(_ types.Datum, n int64) error {
		total += n
		return nil
	}); err != nil {
		return nil, nil, err
	}
	if total == 0 || fraction == nil {
		return nil, nil, nil
	}
	fractions := []types.Datum{fraction}
	if isArray {
		fractions = array.Values
		for _, f := range fractions {
			if f != nil {
				if err := checkFraction(f.(float64)); err != nil {
					return nil, err, nil
				}
			}
		}
	}
	// The 0-based positions each fraction needs, then one walk to fetch them.
	var positions []int64
	for _, f := range fractions {
		if f == nil {
			continue
		}
		lo, hi, _ := percentileRows(call.Func, f.(float64), total)
		positions = append(positions, lo, hi)
	}
	at, err := valuesAt(values, positions)
	if err != nil {
		return nil, nil, err
	}
	results := make([]types.Datum, len(fractions))
	for i, f := range fractions {
		if f == nil {
			continue
		}
		lo, hi, proportion := percentileRows(call.Func, f.(float64), total)
		if lo == hi {
			results[i] = at[lo]
			continue
		}
		if results[i], err = lerp(at[lo], at[hi], proportion); err != nil {
			return nil, err, nil
		}
	}
	if isArray {
		return types.Array{Elem: call.Arg.Type(), Values: results}, nil, nil
	}
	return results[0], nil, nil
}

// checkFraction is PostgreSQL's check of a percentile.
func checkFraction(f float64) error {
	if f >= 0 && f <= 1 {
		return nil
	}
	return errcode.New(errcode.ViewEvaluationError, "percentile value %s is not between 0 and 1", formatPercentile(f)).WithSQLState("22003")
}

// formatPercentile is C's %g as PostgreSQL's snprintf prints it.
func formatPercentile(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// percentileRows gives the 0-based positions (of total values) a
// percentile reads and the interpolation weight of the second:
// percentile_disc reads the single position ceil(f·n)−1 (at least 0),
// percentile_cont floor(f·(n−1)) and ceil(f·(n−1)).
func percentileRows(f AggFunc, fraction float64, total int64) (lo, hi int64, proportion float64) {
	if f == AggPercentileDisc {
		row := max(int64(math.Ceil(fraction*float64(total))), 1)
		return row - 1, row - 1, 0
	}
	x := fraction * float64(total-1)
	lo, hi = int64(math.Floor(x)), int64(math.Ceil(x))
	return lo, hi, x - math.Floor(x)
}

// valuesAt fetches the values at the given 0-based positions in one walk.
func valuesAt(values orderedValues, positions []int64) (map[int64]types.Datum, error) {
	sorted := append([]int64(nil), positions...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	at := make(map[int64]types.Datum, len(sorted))
	next, seen := 0, int64(0)
	err := visit(values, func(v types.Datum, n int64) error {
		for next < len(sorted) && sorted[next] < seen+n {
			at[sorted[next]] = v
			next++
		}
		seen += n
		if next == len(sorted) {
			return kv.ErrStop
		}
		return nil
	})
	return at, err
}

// lerp is PostgreSQL's float8_lerp and interval_lerp: lo + proportion·(hi − lo).
func lerp(lo, hi types.Datum, proportion float64) (types.Datum, error) {
	if l, ok := lo.(float64); ok {
		// NB: the conversion keeps the product rounded on its own (no fused
		// multiply-add), as PostgreSQL computes it.
		return l + float64(proportion*(hi.(float64)-l)), nil
	}
	return expr.IntervalLerp(lo.(types.Interval), hi.(types.Interval), proportion)
}

// modeOf is PostgreSQL's mode_final: the first value (in order) of the
// longest run of equal values; NULL without values.
func modeOf(t types.Type, values orderedValues) (types.Datum, error) {
	var mode, run types.Datum
	var modeCount, runCount int64
	err := visit(values, func(v types.Datum, n int64) error {
		if runCount > 0 && types.Compare(t, v, run) == 0 {
			runCount += n
		} else {
			run, runCount = v, n
		}
		if runCount > modeCount {
			mode, modeCount = run, runCount
		}
		return nil
	})
	return mode, err
}
