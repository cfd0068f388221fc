package op

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// sumKind is how a SUM/AVG accumulates its argument.
type sumKind uint8

const (
	sumInt      sumKind = iota + 1 // int2/int4: int64 accumulator (PostgreSQL: int8)
	sumDecimal                     // int8/numeric: exact decimal
	sumFloat                       // float4/float8
	sumInterval                    // interval: months, days and micros summed apart
)

func sumKindOf(t types.Type) (sumKind, error) {
	switch t.Kind {
	case types.KindInt2, types.KindInt4:
		return sumInt, nil
	case types.KindInt8, types.KindNumeric:
		return sumDecimal, nil
	case types.KindFloat4, types.KindFloat8:
		return sumFloat, nil
	case types.KindInterval:
		return sumInterval, nil
	}
	return 0, fmt.Errorf("sum/avg of %s is not supported", t.SQLName())
}

// aggResultType is PostgreSQL's result type of an aggregate.
func aggResultType(call AggregateCall) (types.Type, error) {
	switch call.Func {
	case AggStringAgg, AggArrayAgg, AggPercentileCont, AggPercentileDisc, AggMode,
		AggJSONAgg, AggJSONBAgg, AggJSONObjectAgg, AggJSONBObjectAgg:
		return orderedAggResultType(call)
	case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
		return varianceResultType(call)
	case AggCountStar, AggCount:
		return types.TInt8, nil
	case AggBoolAnd, AggBoolOr:
		if call.Arg.Type().Kind != types.KindBool {
			return types.Type{}, fmt.Errorf("%s of %s", call.Func, call.Arg.Type().SQLName())
		}
		return types.TBool, nil
	case AggMin, AggMax:
		return call.Arg.Type(), nil
	case AggBitAnd, AggBitOr, AggBitXor:
		if _, err := bitWidth(call.Arg.Type()); err != nil {
			return types.Type{}, err
		}
		return call.Arg.Type(), nil
	case AggSum:
		t := call.Arg.Type()
		switch t.Kind {
		case types.KindInt2, types.KindInt4:
			return types.TInt8, nil
		case types.KindInt8, types.KindNumeric:
			return types.TNumeric, nil
		case types.KindFloat4:
			return types.TFloat4, nil
		case types.KindFloat8:
			return types.TFloat8, nil
		case types.KindInterval:
			return types.TInterval, nil
		}
		return types.Type{}, fmt.Errorf("sum(%s) is not supported", t.SQLName())
	case AggAvg:
		t := call.Arg.Type()
		switch t.Kind {
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric:
			return types.TNumeric, nil
		case types.KindFloat4, types.KindFloat8:
			return types.TFloat8, nil
		case types.KindInterval:
			return types.TInterval, nil
		}
		return types.Type{}, fmt.Errorf("avg(%s) is not supported", t.SQLName())
	}
	return types.Type{}, fmt.Errorf("unknown aggregate %d", call.Func)
}

// decimalContext is wide enough that sums of int8 and numeric values are
// exact.
//
//lint:immutable a constant arithmetic context; never assigned after init.
var decimalContext = apd.Context{Precision: 2000, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps, Rounding: apd.RoundHalfUp}

func toDecimal(d types.Datum) *apd.Decimal {
	switch v := d.(type) {
	case int64:
		return apd.New(v, 0)
	case *apd.Decimal:
		return v
	}
	panic(fmt.Sprintf("op: %T is not an exact number", d))
}

func addDecimal(a, b *apd.Decimal) *apd.Decimal {
	var out apd.Decimal
	if _, err := decimalContext.Add(&out, a, b); err != nil {
		panic(fmt.Sprintf("op: decimal add: %v", err)) // the context is wide enough
	}
	return &out
}

func mulDecimal(a *apd.Decimal, w int64) *apd.Decimal {
	var out apd.Decimal
	if _, err := decimalContext.Mul(&out, a, apd.New(w, 0)); err != nil {
		panic(fmt.Sprintf("op: decimal mul: %v", err))
	}
	return &out
}

// errBigintOutOfRange is PostgreSQL's 22003 for an int8 accumulator.
func errBigintOutOfRange() error {
	return errcode.New(errcode.ViewEvaluationError, "bigint out of range").WithSQLState("22003")
}

// addInt is checked int64 addition of a weighted value (22003 on overflow).
func addInt(sum, v, w int64) (int64, error) {
	p := v * w
	if w != 0 && (p/w != v || (v == math.MinInt64 && w == -1)) {
		return 0, errBigintOutOfRange()
	}
	s := sum + p
	if (p > 0 && s < sum) || (p < 0 && s > sum) {
		return 0, errBigintOutOfRange()
	}
	return s, nil
}

// numericDivide is PostgreSQL's numeric division x / y with the result
// scale chosen by select_div_scale (numeric.c), rounded half away from
// zero: avg(1, 2) = 1.5000000000000000, avg(1, 1) = 1.00000000000000000000.
// Finite operands are divided exactly in integers (one big-integer
// division, no rounding but the last), the rest by apd.
func numericDivide(x, y *apd.Decimal) *apd.Decimal {
	rscale := divScale(x, y)
	if x.Form != apd.Finite || y.Form != apd.Finite || y.IsZero() {
		return numericDivideDecimal(x, y, rscale)
	}
	// x/y·10^rscale = cx·10^(ex+rscale−ey) / cy.
	var num, den, ten, q, r apd.BigInt
	num.Set(&x.Coeff)
	den.Set(&y.Coeff)
	ten.SetInt64(10)
	if shift := int64(x.Exponent) + int64(rscale) - int64(y.Exponent); shift >= 0 {
		var p apd.BigInt
		num.Mul(&num, p.Exp(&ten, p.SetInt64(shift), nil))
	} else {
		var p apd.BigInt
		den.Mul(&den, p.Exp(&ten, p.SetInt64(-shift), nil))
	}
	q.QuoRem(&num, &den, &r)
	if r.Lsh(&r, 1).CmpAbs(&den) >= 0 {
		q.Add(&q, ten.SetInt64(1))
	}
	out := &apd.Decimal{Exponent: int32(-rscale)}
	out.Coeff.Set(&q)
	out.Negative = x.Negative != y.Negative && q.Sign() != 0
	return out
}

// divScale is select_div_scale (numeric.c): the result scale of x / y.
func divScale(x, y *apd.Decimal) int {
	w1, f1 := nbaseLeading(x)
	w2, f2 := nbaseLeading(y)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := 16 - qweight*4
	rscale = max(rscale, dscale(x), dscale(y), 0)
	return min(rscale, 1000)
}

// numericDivideDecimal is x / y at rscale by apd (non-finite operands, and
// the reference of the exact division's test).
func numericDivideDecimal(x, y *apd.Decimal, rscale int) *apd.Decimal {
	var q apd.Decimal
	ctx := decimalContext
	ctx.Precision = uint32(rscale) + 2000
	if _, err := ctx.Quo(&q, x, y); err != nil {
		panic(fmt.Sprintf("op: decimal quo: %v", err))
	}
	var out apd.Decimal
	if _, err := ctx.Quantize(&out, &q, int32(-rscale)); err != nil {
		panic(fmt.Sprintf("op: decimal quantize: %v", err))
	}
	return &out
}

func dscale(d *apd.Decimal) int {
	if d.Exponent < 0 {
		return int(-d.Exponent)
	}
	return 0
}

// nbaseLeading returns PostgreSQL's base-10000 weight and first digit of d
// (0, 0 for zero).
func nbaseLeading(d *apd.Decimal) (int, int) {
	if d.IsZero() {
		return 0, 0
	}
	digits := d.Coeff.String()
	p := len(digits) - 1 + int(d.Exponent)
	w := p / 4
	if p < 0 && p%4 != 0 {
		w--
	}
	take := p - 4*w + 1 // decimal digits in the leading base-10000 digit
	k := min(take, len(digits))
	first, _ := strconv.Atoi(digits[:k])
	for i := k; i < take; i++ {
		first *= 10
	}
	return w, first
}

// finalizeSum turns a sum accumulator into the SUM result.
func finalizeSum(kind sumKind, resultType types.Type, sum types.Datum, nonNull int64) types.Datum {
	if nonNull == 0 {
		return nil
	}
	if kind == sumFloat {
		v, err := floatSumOf(sum).sum(resultType.Kind == types.KindFloat4)
		if err != nil {
			// NB: the error is reported by sumError.
			return nil
		}
		return v
	}
	return sum
}

// sumError is the error of a SUM/AVG result, or nil (float sums out of
// range; the value finalizeSum or finalizeAvg gives is then NULL).
func sumError(kind sumKind, resultType types.Type, avg bool, sum types.Datum, nonNull int64) error {
	if kind != sumFloat || nonNull == 0 {
		return nil
	}
	var err error
	if avg {
		_, err = floatSumOf(sum).avg(nonNull)
	} else {
		_, err = floatSumOf(sum).sum(resultType.Kind == types.KindFloat4)
	}
	return err
}

// finalizeAvg turns a sum accumulator into the AVG result.
func finalizeAvg(kind sumKind, sum types.Datum, nonNull int64) types.Datum {
	if nonNull == 0 {
		return nil
	}
	switch kind {
	case sumFloat:
		v, err := floatSumOf(sum).avg(nonNull)
		if err != nil {
			// NB: the error is reported by sumError.
			return nil
		}
		return v
	case sumInt:
		return numericDivide(apd.New(sum.(int64), 0), apd.New(nonNull, 0))
	case sumInterval:
		// PostgreSQL's interval_avg: interval_div(sum, count). Dividing by
		// a count ≥ 1 cannot leave the interval range.
		v, err := expr.IntervalDiv(sum.(types.Interval), float64(nonNull))
		if err != nil {
			panic(fmt.Sprintf("op: avg(interval): %v", err))
		}
		return v
	}
	if d, ok := sum.(*apd.Decimal); ok && d.Form != apd.Finite {
		// NaN and ±Infinity divided by a count are themselves.
		return d
	}
	return numericDivide(toDecimal(sum), apd.New(nonNull, 0))
}

// weightedAdd adds value × weight to a sum accumulator (nil = zero).
func weightedAdd(kind sumKind, sum, value types.Datum, w int64) (types.Datum, error) {
	switch kind {
	case sumInt:
		s, _ := sum.(int64)
		return addInt(s, value.(int64), w)
	case sumFloat:
		fs := floatSumOf(sum)
		fs.add(value.(float64), w)
		return fs.datum(), nil
	case sumInterval:
		s, _ := sum.(types.Interval)
		return addInterval(s, value.(types.Interval), w)
	}
	s, ok := sum.(*apd.Decimal)
	if !ok {
		s = apd.New(0, 0)
	}
	if d, ok := value.(*apd.Decimal); ok && d.Form != apd.Finite {
		// NB: counted by addScaleCount, not added (see scaleNaN).
		return s, nil
	}
	return addDecimal(s, mulDecimal(toDecimal(value), w)), nil
}

// errIntervalOutOfRange is PostgreSQL's 22008 for an interval sum whose
// months or days leave int4 or whose microseconds leave int8.
func errIntervalOutOfRange() error {
	return errcode.New(errcode.ViewEvaluationError, "interval out of range").WithSQLState("22008")
}

// addInterval adds v × w to sum field by field, as PostgreSQL's interval_pl
// does (no carrying between months, days and time), with its range checks.
// NB: PostgreSQL checks each running sum, so its error depends on the
// order rows are read; a sum is checked here after each weighted input.
func addInterval(sum, v types.Interval, w int64) (types.Datum, error) {
	months := int64(sum.Months) + int64(v.Months)*w
	days := int64(sum.Days) + int64(v.Days)*w
	if months < math.MinInt32 || months > math.MaxInt32 || days < math.MinInt32 || days > math.MaxInt32 {
		return nil, errIntervalOutOfRange()
	}
	micros, err := addInt(sum.Micros, v.Micros, w)
	if err != nil {
		return nil, errIntervalOutOfRange()
	}
	return types.Interval{Months: int32(months), Days: int32(days), Micros: micros}, nil
}

// extremum returns the least (or greatest) value among values with positive
// weight, or nil.
func extremum(t types.Type, values []types.Datum, weights []int64, greatest bool) types.Datum {
	var best types.Datum
	for i, v := range values {
		if weights[i] <= 0 {
			continue
		}
		if best == nil {
			best = v
			continue
		}
		c := types.Compare(t, v, best)
		if (greatest && c > 0) || (!greatest && c < 0) {
			best = v
		}
	}
	return best
}

// finalizeMultiset finalizes a multiset-based aggregate (MIN, MAX and the
// DISTINCT variants) from the group's values and weights.
func finalizeMultiset(call AggregateCall, argType types.Type, kind sumKind, resultType types.Type, values []types.Datum, weights []int64) (types.Datum, error) {
	switch call.Func {
	case AggMin:
		return extremum(argType, values, weights, false), nil
	case AggMax:
		return extremum(argType, values, weights, true), nil
	}
	if isVarianceAgg(call.Func) {
		// DISTINCT: each value with positive weight counts once.
		var distinct []types.Datum
		for i, v := range values {
			if weights[i] > 0 {
				distinct = append(distinct, v)
			}
		}
		return varianceOf(call.Func, distinct, ones(len(distinct))), nil
	}
	if isBitAgg(call.Func) {
		// DISTINCT: each value with positive weight counts once.
		var distinct []types.Datum
		for i, v := range values {
			if weights[i] > 0 {
				distinct = append(distinct, v)
			}
		}
		return streamBits(call.Func, argType, distinct, ones(len(distinct))), nil
	}
	// DISTINCT: each value with positive weight counts once.
	var count int64
	var sum types.Datum
	var trues, falses int64
	for i, v := range values {
		if weights[i] <= 0 {
			continue
		}
		count++
		switch call.Func {
		case AggSum, AggAvg:
			var err error
			if sum, err = weightedAdd(kind, sum, v, 1); err != nil {
				return nil, err
			}
		case AggBoolAnd, AggBoolOr:
			if v.(bool) {
				trues++
			} else {
				falses++
			}
		}
	}
	if kind == sumDecimal {
		var counts types.Datum
		for i, v := range values {
			if weights[i] > 0 {
				counts = addScaleCount(counts, v, 1)
			}
		}
		sum = rescale(sum, counts)
	}
	switch call.Func {
	case AggCount:
		return count, nil
	case AggSum:
		return finalizeSum(kind, resultType, sum, count), sumError(kind, resultType, false, sum, count)
	case AggAvg:
		return finalizeAvg(kind, sum, count), sumError(kind, resultType, true, sum, count)
	case AggBoolAnd:
		return finalizeBool(true, trues, falses), nil
	case AggBoolOr:
		return finalizeBool(false, trues, falses), nil
	}
	return nil, fmt.Errorf("aggregate %s has no multiset form", call.Func)
}

func ones(n int) []int64 {
	w := make([]int64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

func finalizeBool(and bool, trues, falses int64) types.Datum {
	if trues == 0 && falses == 0 {
		return nil
	}
	if and {
		return falses == 0
	}
	return trues > 0
}

// usesMultiset reports whether a call is computed from a per-group ordered
// multiset of its argument values rather than from a linear accumulator.
func usesMultiset(call AggregateCall) bool {
	return isOrderedAgg(call.Func) || call.Func == AggMin || call.Func == AggMax || (call.Distinct && call.Func != AggCountStar)
}

// Non-finite numeric inputs of SUM/AVG are counted beside the scales
// under these (impossible) scales, not added to the sum: NaN − NaN is
// NaN, so a sum that once added NaN (or both infinities) could never lose
// it again when the row is deleted. The result is then PostgreSQL's
// (do_numeric_accum counts them too): NaN if a NaN or both infinities are
// live, else ±Infinity if one infinity is, else the finite sum.
const (
	scaleNaN    int32 = -1
	scalePosInf int32 = -2
	scaleNegInf int32 = -3
)

// scaleOf is the display scale of an exact SUM/AVG input (0 for integers),
// or the count key of a non-finite one.
func scaleOf(v types.Datum) int32 {
	d, ok := v.(*apd.Decimal)
	switch {
	case !ok:
		return 0
	case d.Form == apd.Finite:
		return max(-d.Exponent, 0)
	case d.Form == apd.Infinite && d.Negative:
		return scaleNegInf
	case d.Form == apd.Infinite:
		return scalePosInf
	}
	return scaleNaN
}

// addScaleCount adds weight w to the count of v's scale in counts, a
// "scale:count,..." string sorted by scale (nil when empty). PostgreSQL's
// numeric SUM shows the largest scale among its inputs; keeping a count per
// scale lets a retraction lower it again.
func addScaleCount(counts types.Datum, v types.Datum, w int64) types.Datum {
	scale := scaleOf(v)
	s, _ := counts.(string)
	// NB: the counts are parsed by hand, not with fmt.Sscanf: this runs for
	// every input row of a numeric SUM or AVG (a tenth of an aggregate's
	// time went to fmt).
	var buf [64]byte
	out := buf[:0]
	done := false
	add := func(sc int32, n int64) {
		if n == 0 {
			return
		}
		if len(out) > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendInt(out, int64(sc), 10)
		out = append(out, ':')
		out = strconv.AppendInt(out, n, 10)
	}
	eachScaleCount(s, func(sc int32, n int64) {
		if !done && sc > scale {
			add(scale, w)
			done = true
		}
		if sc == scale {
			n += w
			done = true
		}
		add(sc, n)
	})
	if !done {
		add(scale, w)
	}
	if len(out) == 0 {
		return nil
	}
	if string(out) == s {
		return s
	}
	return string(out)
}

// eachScaleCount calls fn with each scale and count of a "scale:count,..."
// string (addScaleCount), in order; it panics on a corrupt one.
func eachScaleCount(s string, fn func(scale int32, count int64)) {
	for s != "" {
		part, rest, _ := strings.Cut(s, ",")
		s = rest
		a, b, ok := strings.Cut(part, ":")
		scale, err1 := strconv.ParseInt(a, 10, 32)
		count, err2 := strconv.ParseInt(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			panic(fmt.Sprintf("op: corrupt scale counts %q", part))
		}
		fn(int32(scale), count)
	}
}

// maxScale is the largest scale with a positive count.
func maxScale(counts types.Datum) (int32, bool) {
	s, ok := counts.(string)
	if !ok || s == "" {
		return 0, false
	}
	best, any := int32(0), false
	eachScaleCount(s, func(scale int32, count int64) {
		if count > 0 && scale >= 0 && (!any || scale > best) {
			best, any = scale, true
		}
	})
	return best, any
}

// nonFinite is the non-finite SUM of the live inputs counted in counts,
// or nil when they are all finite.
func nonFinite(counts types.Datum) *apd.Decimal {
	s, ok := counts.(string)
	if !ok || s == "" || s[0] != '-' {
		// NB: counts are sorted by scale, so non-finite ones lead.
		return nil
	}
	var nan, pos, neg bool
	eachScaleCount(s, func(scale int32, count int64) {
		if count == 0 {
			return
		}
		switch scale {
		case scaleNaN:
			nan = true
		case scalePosInf:
			pos = true
		case scaleNegInf:
			neg = true
		}
	})
	switch {
	case nan || (pos && neg):
		return &apd.Decimal{Form: apd.NaN}
	case pos:
		return &apd.Decimal{Form: apd.Infinite}
	case neg:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}
	}
	return nil
}

// rescale sets an exact sum to the largest scale among its live inputs
// (or to their non-finite sum, see scaleNaN).
func rescale(sum types.Datum, counts types.Datum) types.Datum {
	if nf := nonFinite(counts); nf != nil {
		return nf
	}
	d, ok := sum.(*apd.Decimal)
	if !ok || d.Form != apd.Finite {
		return sum
	}
	scale, ok := maxScale(counts)
	if !ok {
		return sum
	}
	var out apd.Decimal
	ctx := decimalContext
	if _, err := ctx.Quantize(&out, d, -scale); err != nil {
		return sum
	}
	return &out
}

// streamScaleCounts is addScaleCount over a whole (integrated) input.
func streamScaleCounts(values []types.Datum, weights []int64) types.Datum {
	var counts types.Datum
	for i, v := range values {
		if v != nil {
			counts = addScaleCount(counts, v, weights[i])
		}
	}
	return counts
}

// floatSum is a float SUM/AVG accumulator that matches PostgreSQL's float8
// sum (float8pl, float8_accum) after any sequence of inserts and deletes:
//
//   - Non-finite inputs are counted, not added: +Infinity, -Infinity and
//     NaN each have a weighted count, so retracting one restores the sum
//     of the rest (inf − inf would leave NaN behind for good).
//   - The finite inputs are added in a float whose exponent cannot
//     overflow: m·2^e, with e = 0 and m the plain float64 sum while it is
//     within float8 range (so in range the sum is the native, sequential
//     float64 sum), else m in [0.5, 1) and e the binary exponent, added at
//     53-bit precision. A sum that left the range comes back into it when
//     the rows that took it out are retracted; nothing is ever subtracted
//     that was not added.
//
// Result (PostgreSQL): NaN if a NaN or both infinities are live, else ±Inf
// if one infinity is, else, for finite inputs whose sum is out of range,
// the error 22003 "value out of range: overflow" (PostgreSQL raises it
// when a running sum overflows; ours is the sum of the live rows in an
// order where it does not overflow if one exists), else the sum. SUM of
// float4 also errs when the sum is outside float4's range (float4pl).
//
// NOTE: PostgreSQL's avg(float8) also errs when its Youngs–Cramer sum of
// squared deviations overflows (|deviations| beyond ~1e154); that
// order-dependent, non-linear condition is not reproduced.
type floatSum struct {
	m                   float64
	e                   int64
	posInf, negInf, nan int64
}

// add adds x with weight w.
func (s *floatSum) add(x float64, w int64) {
	switch {
	case math.IsNaN(x):
		s.nan += w
		return
	case math.IsInf(x, 1):
		s.posInf += w
		return
	case math.IsInf(x, -1):
		s.negInf += w
		return
	}
	if s.e == 0 {
		if r := s.m + x*float64(w); !math.IsInf(r, 0) {
			s.m = r
			return
		}
	}
	var acc, term big.Float
	acc.SetPrec(53).SetMode(big.ToNearestEven)
	acc.SetMantExp(big.NewFloat(s.m), int(s.e))
	term.SetPrec(53).SetMode(big.ToNearestEven).SetFloat64(x)
	term.Mul(&term, new(big.Float).SetInt64(w))
	acc.Add(&acc, &term)
	if f, _ := acc.Float64(); !math.IsInf(f, 0) {
		// Back in range (at 53 bits the value is a float64 exactly).
		s.m, s.e = f, 0
		return
	}
	var mant big.Float
	exp := acc.MantExp(&mant)
	s.m, _ = mant.Float64()
	s.e = int64(exp)
}

// reset forgets the sum (no non-NULL input left: no rounding residue).
func (s *floatSum) reset() { *s = floatSum{} }

// floatSumTag starts the text form of a floatSum that is not a plain
// float64 (the generic Aggregate path keeps a sum as a datum).
const floatSumTag = "floatsum:"

// datum is s as a state datum: the float64 sum while it is plain (in
// range, no non-finite input), else its text form.
func (s floatSum) datum() types.Datum {
	if s.e == 0 && s.posInf == 0 && s.negInf == 0 && s.nan == 0 {
		return s.m
	}
	return fmt.Sprintf("%s%x:%d:%d:%d:%d", floatSumTag, math.Float64bits(s.m), s.e, s.posInf, s.negInf, s.nan)
}

// floatSumOf reads a datum made by datum (nil: an empty sum).
func floatSumOf(d types.Datum) floatSum {
	switch v := d.(type) {
	case nil:
		return floatSum{}
	case float64:
		return floatSum{m: v}
	case string:
		var s floatSum
		var bits uint64
		if _, err := fmt.Sscanf(strings.TrimPrefix(v, floatSumTag), "%x:%d:%d:%d:%d", &bits, &s.e, &s.posInf, &s.negInf, &s.nan); err != nil || !strings.HasPrefix(v, floatSumTag) {
			panic(fmt.Sprintf("op: corrupt float sum %q", v))
		}
		s.m = math.Float64frombits(bits)
		return s
	}
	panic(fmt.Sprintf("op: %T is not a float sum", d))
}

// errFloatOverflow is PostgreSQL's 22003 for a float sum out of range.
func errFloatOverflow() error {
	return errcode.New(errcode.ViewEvaluationError, "value out of range: overflow").WithSQLState("22003")
}

// sum is the SUM result (float4: rounded to float4).
func (s floatSum) sum(float4 bool) (float64, error) {
	switch {
	case s.nan != 0 || (s.posInf != 0 && s.negInf != 0):
		return math.NaN(), nil
	case s.posInf != 0:
		return math.Inf(1), nil
	case s.negInf != 0:
		return math.Inf(-1), nil
	case s.e != 0:
		return 0, errFloatOverflow()
	}
	if float4 {
		r := float32(s.m)
		if math.IsInf(float64(r), 0) {
			return 0, errFloatOverflow()
		}
		return float64(r), nil
	}
	return s.m, nil
}

// avg is the AVG result over n non-NULL inputs (float8 arithmetic).
func (s floatSum) avg(n int64) (float64, error) {
	sum, err := s.sum(false)
	if err != nil {
		return 0, err
	}
	return sum / float64(n), nil
}

// streamFloatSum is SUM/AVG over float values computed directly: the
// exact sum of the finite values (no rounding on the way) rounded once,
// with the non-finite values and out-of-range sums giving what floatSum's
// result rules say. It is the reference the incremental floatSum is
// checked against (their results agree wherever the float sums are exact,
// e.g. on integers and on multiples of a power of two).
func streamFloatSum(avg, float4 bool, values []types.Datum, weights []int64) (types.Datum, error) {
	var n, posInf, negInf, nan int64
	exact := new(big.Float).SetPrec(4096)
	for i, v := range values {
		x, w := v.(float64), weights[i]
		n += w
		switch {
		case math.IsNaN(x):
			nan += w
		case math.IsInf(x, 1):
			posInf += w
		case math.IsInf(x, -1):
			negInf += w
		default:
			term := new(big.Float).SetPrec(4096).SetFloat64(x)
			exact.Add(exact, term.Mul(term, new(big.Float).SetInt64(w)))
		}
	}
	if n == 0 {
		return nil, nil
	}
	var sum float64
	switch {
	case nan != 0 || (posInf != 0 && negInf != 0):
		sum = math.NaN()
	case posInf != 0:
		sum = math.Inf(1)
	case negInf != 0:
		sum = math.Inf(-1)
	default:
		sum, _ = exact.Float64()
		if math.IsInf(sum, 0) || (float4 && !avg && math.IsInf(float64(float32(sum)), 0)) {
			return nil, errFloatOverflow()
		}
	}
	if avg {
		return sum / float64(n), nil
	}
	if float4 {
		return float64(float32(sum)), nil
	}
	return sum, nil
}
