package op

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// var_pop, var_samp, stddev_pop and stddev_samp of int2/int4/int8/numeric
// arguments, computed as PostgreSQL 15 does (numeric.c
// numeric_stddev_internal): exact N, sumX and sumX² accumulators, then
//
//	numerator = N·sumX² − sumX·sumX     (at scale 2·dscale(sumX), exact)
//	var       = numerator / (N·N)  or  / (N·(N−1))   (select_div_scale)
//	stddev    = sqrt(var) at the same scale (rounded half up)
//
// numerator ≤ 0 gives 0 (scale 0); N = 0 (N ≤ 1 for the _samp forms)
// gives NULL. The accumulators are linear, so a deleted row is subtracted
// exactly. dscale(sumX) is the largest scale among the live inputs, kept
// as per-scale counts beside the sums (addScaleCount), which also count
// NaN and ±Infinity inputs instead of adding them (see scaleNaN): any of
// them live makes the result NaN, as in PostgreSQL.
//
// Generic-path state per call (aggregate.go): [sumX, sumX², nonNull,
// scales]; sumX and sumX² are nil while nonNull is 0.
//
// float4/float8 arguments are not supported: PostgreSQL accumulates them
// with the order-dependent Youngs–Cramer recurrence (float8_accum), which
// a retraction cannot undo exactly.

// varianceSlots is the number of state slots of a variance call.
const varianceSlots = 4

// isVarianceAgg reports the var_*/stddev_* aggregates.
func isVarianceAgg(f AggFunc) bool {
	return f == AggVarPop || f == AggVarSamp || f == AggStddevPop || f == AggStddevSamp
}

// varianceResultType is numeric for the supported argument types.
func varianceResultType(call AggregateCall) (types.Type, error) {
	switch t := call.Arg.Type(); t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric:
		return types.TNumeric, nil
	default:
		return types.Type{}, fmt.Errorf("%s(%s) is not supported", call.Func, t.SQLName())
	}
}

// varianceContext is exact for the squares of any numeric value
// (131072 + 16383 digits) and sums of them.
//
//lint:immutable a constant arithmetic context; never assigned after init.
var varianceContext = apd.Context{Precision: 400000, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.DefaultTraps, Rounding: apd.RoundHalfUp}

func decimalOrZero(d types.Datum) *apd.Decimal {
	if v, ok := d.(*apd.Decimal); ok {
		return v
	}
	return apd.New(0, 0)
}

func varianceArith(op func(d, x, y *apd.Decimal) (apd.Condition, error), x, y *apd.Decimal) *apd.Decimal {
	var out apd.Decimal
	if _, err := op(&out, x, y); err != nil {
		panic(fmt.Sprintf("op: variance arithmetic: %v", err)) // the context is wide enough
	}
	return &out
}

// varianceAdd adds input v with weight w to the state slots at st[slot:].
func varianceAdd(st types.Row, slot int, v types.Datum, w int64) {
	varianceAccum(st, slot, v, w)
	if st[slot+2] == int64(0) {
		// No non-NULL input left: forget the sums.
		st[slot], st[slot+1], st[slot+3] = nil, nil, nil
	}
}

// varianceAccum is varianceAdd without forgetting the sums at zero.
func varianceAccum(st types.Row, slot int, v types.Datum, w int64) {
	if d, ok := v.(*apd.Decimal); !ok || d.Form == apd.Finite {
		x := toDecimal(v)
		wd := apd.New(w, 0)
		ctx := &varianceContext
		st[slot] = varianceArith(ctx.Add, decimalOrZero(st[slot]), varianceArith(ctx.Mul, x, wd))
		sq := varianceArith(ctx.Mul, x, x)
		st[slot+1] = varianceArith(ctx.Add, decimalOrZero(st[slot+1]), varianceArith(ctx.Mul, sq, wd))
	}
	st[slot+2] = st[slot+2].(int64) + w
	st[slot+3] = addScaleCount(st[slot+3], v, w)
}

// emptyVarianceState is the state slots of a call with no input.
func emptyVarianceState() types.Row { return types.Row{nil, nil, int64(0), nil} }

// finalizeVariance is the result of variance call f from its state slots.
func finalizeVariance(f AggFunc, st types.Row) types.Datum {
	// NB: as in PostgreSQL 15, N counts NaN and infinite inputs too: too
	// few inputs → NULL, else any of them live → NaN.
	n := st[2].(int64)
	sample := f == AggVarSamp || f == AggStddevSamp
	if n <= 0 || (sample && n <= 1) {
		return nil
	}
	if nonFinite(st[3]) != nil {
		return &apd.Decimal{Form: apd.NaN}
	}
	scale, _ := maxScale(st[3])
	ctx := &varianceContext
	sumX := quantizeExact(decimalOrZero(st[0]), scale)
	sumX2 := quantizeExact(decimalOrZero(st[1]), 2*scale)
	vn := apd.New(n, 0)
	numer := varianceArith(ctx.Sub, varianceArith(ctx.Mul, vn, sumX2), varianceArith(ctx.Mul, sumX, sumX))
	numer = quantizeExact(numer, 2*scale)
	if numer.Sign() <= 0 {
		// NB: PostgreSQL guards against a negative numerator from roundoff
		// and returns a plain 0.
		return apd.New(0, 0)
	}
	denom := varianceArith(ctx.Mul, vn, vn)
	if sample {
		denom = varianceArith(ctx.Mul, vn, apd.New(n-1, 0))
	}
	v := numericDivide(numer, denom)
	if f == AggVarPop || f == AggVarSamp {
		return v
	}
	return numericSqrt(v, divScale(numer, denom))
}

// quantizeExact sets d's exponent to −scale (d has at most scale digits
// after the point, so nothing is rounded).
func quantizeExact(d *apd.Decimal, scale int32) *apd.Decimal {
	var out apd.Decimal
	if _, err := varianceContext.Quantize(&out, d, -scale); err != nil {
		panic(fmt.Sprintf("op: variance quantize: %v", err))
	}
	return &out
}

// numericSqrt is PostgreSQL's sqrt_var(v, rscale) for v > 0: the square
// root rounded half up to rscale digits after the point (sqrt_var
// computes the truncated root with at least one extra digit, then rounds).
func numericSqrt(v *apd.Decimal, rscale int) *apd.Decimal {
	// sqrt(c·10^e)·10^(rscale+1) = sqrt(c·10^(e+2·rscale+2)).
	var num, p, ten apd.BigInt
	num.Set(&v.Coeff)
	ten.SetInt64(10)
	if shift := int64(v.Exponent) + 2*int64(rscale) + 2; shift >= 0 {
		num.Mul(&num, p.Exp(&ten, p.SetInt64(shift), nil))
	} else {
		num.Quo(&num, p.Exp(&ten, p.SetInt64(-shift), nil))
	}
	var root, q, r apd.BigInt
	root.Sqrt(&num)
	q.QuoRem(&root, &ten, &r)
	if r.Cmp(apd.NewBigInt(5)) >= 0 {
		q.Add(&q, apd.NewBigInt(1))
	}
	out := &apd.Decimal{Exponent: int32(-rscale)}
	out.Coeff.Set(&q)
	return out
}

// varianceOf computes variance call f directly from weighted values (the
// non-incremental reference, and DISTINCT over a multiset).
func varianceOf(f AggFunc, values []types.Datum, weights []int64) types.Datum {
	st := emptyVarianceState()
	for i, v := range values {
		if v != nil && weights[i] != 0 {
			varianceAccum(st, 0, v, weights[i])
		}
	}
	return finalizeVariance(f, st)
}
