package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

type adder func(fs ...*Func)

func strict(name string, args []types.Type, result types.Type, fn func(env *Env, args []types.Datum) (types.Datum, error)) *Func {
	return &Func{Name: name, Args: args, Result: result, Strict: true, Volatility: Immutable,
		Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) { return fn(env, a) }}
}

func f1(name string, arg, result types.Type, fn func(a types.Datum) (types.Datum, error)) *Func {
	return strict(name, []types.Type{arg}, result, func(_ *Env, a []types.Datum) (types.Datum, error) { return fn(a[0]) })
}

func f2(name string, a1, a2, result types.Type, fn func(a, b types.Datum) (types.Datum, error)) *Func {
	return strict(name, []types.Type{a1, a2}, result, func(_ *Env, a []types.Datum) (types.Datum, error) { return fn(a[0], a[1]) })
}

func floatFn(name string, fn func(x float64) (types.Datum, error)) *Func {
	return f1(name, types.TFloat8, types.TFloat8, func(a types.Datum) (types.Datum, error) { return fn(a.(float64)) })
}

func pureFloat(fn func(float64) float64) func(float64) (types.Datum, error) {
	return func(x float64) (types.Datum, error) { return fn(x), nil }
}

func registerMath(add adder) {
	// abs
	for _, t := range []types.Type{types.TFloat8, types.TFloat4, types.TNumeric, types.TInt8, types.TInt4, types.TInt2} {
		fn, _ := absFunc(t)
		add(f1("abs", t, t, fn))
	}
	// round / trunc / ceil / floor / sign
	add(floatFn("round", pureFloat(math.RoundToEven)),
		f1("round", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numRound(a.(*apd.Decimal), 0) }),
		f2("round", types.TNumeric, types.TInt4, types.TNumeric, func(a, b types.Datum) (types.Datum, error) {
			return numRound(a.(*apd.Decimal), b.(int64))
		}),
		floatFn("trunc", pureFloat(math.Trunc)),
		f1("trunc", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numTrunc(a.(*apd.Decimal), 0) }),
		f2("trunc", types.TNumeric, types.TInt4, types.TNumeric, func(a, b types.Datum) (types.Datum, error) {
			return numTrunc(a.(*apd.Decimal), b.(int64))
		}),
	)
	for _, name := range []string{"ceil", "ceiling"} {
		add(floatFn(name, pureFloat(math.Ceil)),
			f1(name, types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numCeilFloor(a.(*apd.Decimal), true) }))
	}
	add(floatFn("floor", pureFloat(math.Floor)),
		f1("floor", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numCeilFloor(a.(*apd.Decimal), false) }),
		floatFn("sign", func(x float64) (types.Datum, error) {
			switch {
			case x > 0:
				return 1.0, nil
			case x < 0:
				return -1.0, nil
			}
			return 0.0, nil // NaN: PostgreSQL returns 0 too
		}),
		f1("sign", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) {
			d := a.(*apd.Decimal)
			if isNaN(d) {
				return d, nil
			}
			return apd.New(int64(d.Sign()), 0), nil
		}),
	)
	// sqrt / cbrt / exp / ln / log / power
	add(floatFn("sqrt", func(x float64) (types.Datum, error) {
		if x < 0 {
			return nil, EvalError(StateInvalidArgForPower, "cannot take square root of a negative number")
		}
		return math.Sqrt(x), nil
	}),
		f1("sqrt", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numSqrt(a.(*apd.Decimal)) }),
		floatFn("cbrt", pureFloat(math.Cbrt)),
		floatFn("exp", func(x float64) (types.Datum, error) {
			return checkFloat(math.Exp(x), 64, math.IsInf(x, 1), math.IsInf(x, -1))
		}),
		f1("exp", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numExp(a.(*apd.Decimal)) }),
		floatFn("ln", func(x float64) (types.Datum, error) { return floatLog(x, math.Log) }),
		f1("ln", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) { return numLn(a.(*apd.Decimal)) }),
		floatFn("log", func(x float64) (types.Datum, error) { return floatLog(x, math.Log10) }),
		f1("log", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) {
			return numLog(apd.New(10, 0), a.(*apd.Decimal))
		}),
		f2("log", types.TNumeric, types.TNumeric, types.TNumeric, func(a, b types.Datum) (types.Datum, error) {
			return numLog(a.(*apd.Decimal), b.(*apd.Decimal))
		}),
		floatFn("log10", func(x float64) (types.Datum, error) { return floatLog(x, math.Log10) }),
		f1("log10", types.TNumeric, types.TNumeric, func(a types.Datum) (types.Datum, error) {
			return numLog(apd.New(10, 0), a.(*apd.Decimal))
		}),
	)
	for _, name := range []string{"power", "pow"} {
		add(f2(name, types.TFloat8, types.TFloat8, types.TFloat8, func(a, b types.Datum) (types.Datum, error) {
			return floatPower(a.(float64), b.(float64))
		}),
			f2(name, types.TNumeric, types.TNumeric, types.TNumeric, func(a, b types.Datum) (types.Datum, error) {
				return numPower(a.(*apd.Decimal), b.(*apd.Decimal))
			}))
	}
	// mod / div
	for _, t := range []types.Type{types.TInt2, types.TInt4, types.TInt8} {
		add(f2("mod", t, t, t, func(a, b types.Datum) (types.Datum, error) { return intMod(a.(int64), b.(int64)) }))
	}
	add(f2("mod", types.TNumeric, types.TNumeric, types.TNumeric, func(a, b types.Datum) (types.Datum, error) {
		return numMod(a.(*apd.Decimal), b.(*apd.Decimal))
	}),
		f2("div", types.TNumeric, types.TNumeric, types.TNumeric, func(a, b types.Datum) (types.Datum, error) {
			x, y := a.(*apd.Decimal), b.(*apd.Decimal)
			if isNaN(x) || isNaN(y) {
				return numNaN(), nil
			}
			if y.Form == apd.Finite && y.IsZero() {
				return nil, errDivisionByZero()
			}
			q, err := numTruncDiv(x, y)
			if err != nil {
				return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
			}
			return numericResult(q)
		}),
	)
	// Trigonometry and constants (float8 only, as in PostgreSQL).
	add(&Func{Name: "pi", Result: types.TFloat8, Strict: true, Volatility: Immutable,
		Eval: func(*Env, []types.Type, []types.Datum) (types.Datum, error) { return math.Pi, nil }})
	for _, tf := range []struct {
		name string
		fn   func(float64) float64
	}{
		{"sin", math.Sin}, {"cos", math.Cos}, {"tan", math.Tan}, {"asin", math.Asin}, {"acos", math.Acos}, {"atan", math.Atan},
		{"degrees", func(x float64) float64 { return x * (180 / math.Pi) }}, {"radians", func(x float64) float64 { return x * (math.Pi / 180) }},
	} {
		name, fn := tf.name, tf.fn
		add(floatFn(name, func(x float64) (types.Datum, error) {
			r := fn(x)
			if math.IsNaN(r) && !math.IsNaN(x) {
				return nil, EvalError(StateNumericValueOutOfRange, "input is out of range")
			}
			return r, nil
		}))
	}
	add(f2("atan2", types.TFloat8, types.TFloat8, types.TFloat8, func(a, b types.Datum) (types.Datum, error) {
		return math.Atan2(a.(float64), b.(float64)), nil
	}))
}

func floatLog(x float64, fn func(float64) float64) (types.Datum, error) {
	if x == 0 {
		return nil, EvalError(StateInvalidArgForLog, "cannot take logarithm of zero")
	}
	if x < 0 {
		return nil, EvalError(StateInvalidArgForLog, "cannot take logarithm of a negative number")
	}
	return fn(x), nil
}

func floatPower(x, y float64) (types.Datum, error) {
	if x == 0 && y < 0 {
		return nil, EvalError(StateInvalidArgForPower, "zero raised to a negative power is undefined")
	}
	if x < 0 && math.Floor(y) != y && !math.IsInf(y, 0) && !math.IsNaN(y) {
		return nil, EvalError(StateInvalidArgForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	// PostgreSQL special cases (POSIX pow semantics).
	if math.IsNaN(x) {
		if y == 0 {
			return 1.0, nil
		}
		return math.NaN(), nil
	}
	if math.IsNaN(y) {
		if x == 1 {
			return 1.0, nil
		}
		return math.NaN(), nil
	}
	r := math.Pow(x, y)
	return checkFloat(r, 64, math.IsInf(x, 0) || math.IsInf(y, 0), x == 0 || math.IsInf(y, -1) || (math.IsInf(y, 1) && math.Abs(x) < 1) || (math.IsInf(x, 0) && y < 0))
}

// numRound rounds to scale digits (negative: to tens, hundreds, ...), half
// away from zero; the result has scale max(scale, 0).
func numRound(d *apd.Decimal, scale int64) (types.Datum, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	scale = max(min(scale, 1000), -1000)
	r, err := roundToScale(d, scale)
	if err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return numericResult(r)
}

func numTrunc(d *apd.Decimal, scale int64) (types.Datum, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	scale = max(min(scale, 1000), -1000)
	ctx := numCtx()
	ctx.Rounding = apd.RoundDown
	r := new(apd.Decimal)
	if _, err := ctx.Quantize(r, d, int32(-scale)); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	if r.IsZero() {
		r.Negative = false
	}
	return numericResult(r)
}

func numCeilFloor(d *apd.Decimal, ceil bool) (types.Datum, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	ctx := numCtx()
	ctx.Rounding = apd.RoundDown
	r := new(apd.Decimal)
	if _, err := ctx.Quantize(r, d, 0); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	// NB: apd's ceiling/floor rounding modes do not apply when the result
	// rounds to zero, so adjust the truncated value by hand.
	switch c := d.Cmp(r); {
	case ceil && c > 0:
		ctx.Add(r, r, apd.New(1, 0))
	case !ceil && c < 0:
		ctx.Sub(r, r, apd.New(1, 0))
	}
	if r.IsZero() {
		r.Negative = false
	}
	return numericResult(r)
}

// decWeight is the power of ten of d's most significant digit.
func decWeight(d *apd.Decimal) int64 { return int64(d.NumDigits()) + int64(d.Exponent) - 1 }

// highPrec returns a context precise enough for rscale digits after the
// point of a result whose integer part has about intDigits digits, rounding
// down so that the final rounding to rscale happens once.
func highPrec(intDigits, rscale int64) *apd.Context {
	ctx := numCtx()
	p := intDigits + rscale + 10
	if p < 20 {
		p = 20
	}
	ctx.Precision = uint32(p)
	return ctx
}

func finishScale(r *apd.Decimal, rscale int64) (types.Datum, error) {
	out, err := roundToScale(r, rscale)
	if err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return numericResult(out)
}

func clampScale(s int64) int64 { return max(min(s, 1000), 0) }

func numSqrt(d *apd.Decimal) (types.Datum, error) {
	switch {
	case isNaN(d):
		return d, nil
	case d.Sign() < 0:
		return nil, EvalError(StateInvalidArgForPower, "cannot take square root of a negative number")
	case d.Form == apd.Infinite:
		return d, nil
	}
	var weight int64
	if !d.IsZero() {
		weight, _ = nbaseWeight(d)
	}
	sweight := (weight+1)*4/2 - 1
	rscale := clampScale(max(numericMinSigDigits-sweight, dscale(d)))
	if d.IsZero() {
		return finishScale(&apd.Decimal{}, rscale)
	}
	r := new(apd.Decimal)
	if _, err := highPrec(decWeight(d)/2+1, rscale).Sqrt(r, d); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return finishScale(r, rscale)
}

func toFloat(d *apd.Decimal) float64 {
	f, _ := d.Float64()
	return f
}

func numExp(d *apd.Decimal) (types.Datum, error) {
	if isNaN(d) {
		return d, nil
	}
	if d.Form == apd.Infinite {
		if d.Negative {
			return &apd.Decimal{}, nil
		}
		return d, nil
	}
	val := toFloat(d) * 0.434294481903252
	val = max(min(val, 2000), -2000)
	if val > 131072 {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	rscale := clampScale(max(numericMinSigDigits-int64(val), dscale(d)))
	r := new(apd.Decimal)
	if _, err := highPrec(int64(val)+1, rscale).Exp(r, d); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return finishScale(r, rscale)
}

// estimateLnDweight is PostgreSQL's estimate_ln_dweight.
func estimateLnDweight(d *apd.Decimal) int64 {
	if d.Sign() <= 0 {
		return 0
	}
	lo, hi := apd.New(9, -1), apd.New(11, -1)
	if d.Cmp(lo) >= 0 && d.Cmp(hi) <= 0 {
		x := new(apd.Decimal)
		numCtx().Sub(x, d, apd.New(1, 0))
		if x.IsZero() {
			return 0
		}
		return decWeight(x)
	}
	// digits ≈ the first two NBASE digits; ln(d) ≈ ln(digits) + dweight*ln 10.
	weight, _ := nbaseWeight(d)
	// Take the value scaled to NBASE digits: d / 10000^(weight-1) truncated.
	scaled := new(apd.Decimal).Set(d)
	scaled.Exponent -= int32((weight - 1) * 4)
	intPart := new(apd.Decimal)
	numCtx().Quantize(intPart, scaled, 0)
	digits, _ := intPart.Float64()
	// Quantize rounds; PostgreSQL truncates the third digit group. The
	// difference cannot move log10(|ln|) across an integer in practice.
	lnVar := math.Log(digits) + float64((weight-1)*4)*2.302585092994046
	return int64(math.Log10(math.Abs(lnVar)))
}

func numLn(d *apd.Decimal) (types.Datum, error) {
	if isNaN(d) {
		return d, nil
	}
	if d.Sign() == 0 {
		return nil, EvalError(StateInvalidArgForLog, "cannot take logarithm of zero")
	}
	if d.Sign() < 0 {
		return nil, EvalError(StateInvalidArgForLog, "cannot take logarithm of a negative number")
	}
	if d.Form == apd.Infinite {
		return d, nil
	}
	rscale := clampScale(max(numericMinSigDigits-estimateLnDweight(d), dscale(d)))
	r := new(apd.Decimal)
	if _, err := highPrec(8, rscale).Ln(r, d); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return finishScale(r, rscale)
}

func numLog(base, num *apd.Decimal) (types.Datum, error) {
	if isNaN(base) || isNaN(num) {
		return numNaN(), nil
	}
	for _, d := range []*apd.Decimal{base, num} {
		if d.Sign() == 0 {
			return nil, EvalError(StateInvalidArgForLog, "cannot take logarithm of zero")
		}
		if d.Sign() < 0 {
			return nil, EvalError(StateInvalidArgForLog, "cannot take logarithm of a negative number")
		}
	}
	if base.Form == apd.Infinite || num.Form == apd.Infinite {
		return nil, EvalError(StateFeatureNotSupported, "logarithm of infinity is not supported")
	}
	if base.Cmp(apd.New(1, 0)) == 0 {
		return nil, errDivisionByZero()
	}
	resultDweight := estimateLnDweight(num) - estimateLnDweight(base)
	rscale := clampScale(max(numericMinSigDigits-resultDweight, dscale(base), dscale(num)))
	ctx := highPrec(8, rscale+8)
	lb, ln := new(apd.Decimal), new(apd.Decimal)
	if _, err := ctx.Ln(lb, base); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	if _, err := ctx.Ln(ln, num); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	r := new(apd.Decimal)
	if _, err := ctx.Quo(r, ln, lb); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return finishScale(r, rscale)
}

func isIntegral(d *apd.Decimal) bool {
	if d.Form != apd.Finite {
		return false
	}
	if d.Exponent >= 0 {
		return true
	}
	var frac, integ apd.Decimal
	d.Modf(&integ, &frac)
	return frac.IsZero()
}

func numPower(base, exp *apd.Decimal) (types.Datum, error) {
	if isNaN(base) || isNaN(exp) {
		if (isNaN(base) && exp.Form == apd.Finite && exp.IsZero()) || (isNaN(exp) && base.Form == apd.Finite && base.Cmp(apd.New(1, 0)) == 0) {
			return apd.New(1, 0), nil
		}
		return numNaN(), nil
	}
	if base.Form == apd.Finite && base.IsZero() && exp.Sign() < 0 {
		return nil, EvalError(StateInvalidArgForPower, "zero raised to a negative power is undefined")
	}
	if base.Sign() < 0 && !isIntegral(exp) && exp.Form == apd.Finite {
		return nil, EvalError(StateInvalidArgForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	if base.Form != apd.Finite || exp.Form != apd.Finite {
		f, err := floatPower(toFloat(base), toFloat(exp))
		if err != nil {
			return nil, err
		}
		return floatToNumeric(f.(float64), false, types.TNumeric)
	}
	if exp.IsZero() {
		return finishScale(apd.New(1, 0), clampScale(max(numericMinSigDigits, dscale(base))))
	}
	if base.IsZero() {
		return finishScale(&apd.Decimal{}, clampScale(max(numericMinSigDigits, dscale(base), dscale(exp))))
	}
	// Estimated decimal weight of the result.
	val := toFloat(exp) * math.Log10(math.Abs(toFloat(base)))
	if math.IsInf(val, 0) || math.IsNaN(val) {
		val = 0
	}
	if val > 131072*3 {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	var rscale int64
	if isIntegral(exp) && exp.Cmp(apd.New(math.MaxInt32, 0)) <= 0 && exp.Cmp(apd.New(math.MinInt32, 0)) >= 0 {
		// power_var's integer-exponent path: a fixed result scale.
		rscale = clampScale(max(numericMinSigDigits, dscale(base)))
	} else {
		rscale = clampScale(max(numericMinSigDigits-int64(val), dscale(base), dscale(exp)))
	}
	if val+1 < -1000 {
		return finishScale(&apd.Decimal{}, 1000)
	}
	ctx := highPrec(int64(math.Abs(val))+2, rscale+8)
	r := new(apd.Decimal)
	if _, err := ctx.Pow(r, base, exp); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return finishScale(r, rscale)
}
