package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/ivm/types"
)

// Integer, float and numeric arithmetic with PostgreSQL's errors.

func intBits(k types.Kind) int {
	switch k {
	case types.KindInt2:
		return 16
	case types.KindInt4:
		return 32
	}
	return 64
}

func intFits(v int64, bits int) bool {
	switch bits {
	case 16:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case 32:
		return v >= math.MinInt32 && v <= math.MaxInt32
	}
	return true
}

func intAdd(bits int, a, b int64) (types.Datum, error) {
	s := a + b
	if bits == 64 {
		if (a >= 0) == (b >= 0) && (s >= 0) != (a >= 0) {
			return nil, errIntOutOfRange(64)
		}
		return s, nil
	}
	if !intFits(s, bits) {
		return nil, errIntOutOfRange(bits)
	}
	return s, nil
}

func intSub(bits int, a, b int64) (types.Datum, error) {
	s := a - b
	if bits == 64 {
		if (a >= 0) != (b >= 0) && (s >= 0) != (a >= 0) {
			return nil, errIntOutOfRange(64)
		}
		return s, nil
	}
	if !intFits(s, bits) {
		return nil, errIntOutOfRange(bits)
	}
	return s, nil
}

func intMul(bits int, a, b int64) (types.Datum, error) {
	if bits == 64 {
		if a == 0 || b == 0 {
			return int64(0), nil
		}
		p := a * b
		if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return nil, errIntOutOfRange(64)
		}
		return p, nil
	}
	p := a * b // both fit in 32 bits: no int64 overflow
	if !intFits(p, bits) {
		return nil, errIntOutOfRange(bits)
	}
	return p, nil
}

func intDiv(bits int, a, b int64) (types.Datum, error) {
	if b == 0 {
		return nil, errDivisionByZero()
	}
	if b == -1 {
		// The one overflow: MIN / -1.
		return intMul(bits, a, -1)
	}
	return a / b, nil
}

func intMod(a, b int64) (types.Datum, error) {
	if b == 0 {
		return nil, errDivisionByZero()
	}
	if b == -1 {
		return int64(0), nil
	}
	return a % b, nil
}

func intNeg(bits int, a int64) (types.Datum, error) { return intMul(bits, a, -1) }

// checkFloat applies PostgreSQL's float overflow/underflow checks: an
// infinite result from finite inputs overflows, a zero result from nonzero
// inputs underflows.
func checkFloat(r float64, bits int, infOK bool, zeroOK bool) (types.Datum, error) {
	if bits == 32 {
		r32 := float32(r)
		if math.IsInf(float64(r32), 0) && !infOK {
			return nil, errFloatOverflow()
		}
		if r32 == 0 && !zeroOK {
			return nil, errFloatUnderflow()
		}
		return float64(r32), nil
	}
	if math.IsInf(r, 0) && !infOK {
		return nil, errFloatOverflow()
	}
	if r == 0 && !zeroOK {
		return nil, errFloatUnderflow()
	}
	return r, nil
}

func isInf(f float64) bool { return math.IsInf(f, 0) }

func floatAdd(bits int, a, b float64) (types.Datum, error) {
	return checkFloat(a+b, bits, isInf(a) || isInf(b), true)
}

func floatSub(bits int, a, b float64) (types.Datum, error) {
	return checkFloat(a-b, bits, isInf(a) || isInf(b), true)
}

func floatMul(bits int, a, b float64) (types.Datum, error) {
	return checkFloat(a*b, bits, isInf(a) || isInf(b), a == 0 || b == 0)
}

func floatDiv(bits int, a, b float64) (types.Datum, error) {
	if b == 0 && !math.IsNaN(a) {
		return nil, errDivisionByZero()
	}
	return checkFloat(a/b, bits, isInf(a), a == 0 || isInf(b))
}

// Numeric arithmetic. Every result is exact except division and the
// transcendental functions, which follow PostgreSQL's result-scale rules.

func numCtx() *apd.Context {
	c := types.NumericContext
	return &c
}

func isNaN(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

func numNaN() *apd.Decimal { return &apd.Decimal{Form: apd.NaN} }

func numInf(neg bool) *apd.Decimal { return &apd.Decimal{Form: apd.Infinite, Negative: neg} }

// numericOverflowCheck rejects results beyond numeric's range.
func numericResult(d *apd.Decimal) (types.Datum, error) {
	if d.Form == apd.Finite && !d.IsZero() {
		intDigits := int64(d.NumDigits()) + int64(d.Exponent)
		if intDigits > 131072 {
			return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
		}
	}
	return types.NormalizeNumeric(d), nil
}

func numAdd(a, b *apd.Decimal) (types.Datum, error) {
	if isNaN(a) || isNaN(b) {
		return numNaN(), nil
	}
	if a.Form == apd.Infinite || b.Form == apd.Infinite {
		if a.Form == apd.Infinite && b.Form == apd.Infinite && a.Negative != b.Negative {
			return numNaN(), nil
		}
		if a.Form == apd.Infinite {
			return numInf(a.Negative), nil
		}
		return numInf(b.Negative), nil
	}
	r := new(apd.Decimal)
	if _, err := numCtx().Add(r, a, b); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return numericResult(r)
}

func numNeg(a *apd.Decimal) *apd.Decimal {
	if isNaN(a) {
		return numNaN()
	}
	r := new(apd.Decimal).Neg(a)
	if r.Form == apd.Finite && r.IsZero() {
		r.Negative = false
	}
	return r
}

func numSub(a, b *apd.Decimal) (types.Datum, error) { return numAdd(a, numNeg(b)) }

func numMul(a, b *apd.Decimal) (types.Datum, error) {
	if isNaN(a) || isNaN(b) {
		return numNaN(), nil
	}
	if a.Form == apd.Infinite || b.Form == apd.Infinite {
		if (a.Form == apd.Finite && a.IsZero()) || (b.Form == apd.Finite && b.IsZero()) {
			return numNaN(), nil
		}
		return numInf(a.Sign()*b.Sign() < 0), nil
	}
	r := new(apd.Decimal)
	if _, err := numCtx().Mul(r, a, b); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return numericResult(r)
}

// nbaseWeight returns PostgreSQL's NBASE (10000) weight of the most
// significant nonzero digit group of a nonzero finite d, and that group's
// value (the "first digit" select_div_scale looks at).
func nbaseWeight(d *apd.Decimal) (weight int64, first int64) {
	digits := d.Coeff.String()
	if digits[0] == '-' {
		digits = digits[1:]
	}
	// Position (power of ten) of the most significant digit.
	p := int64(len(digits)) - 1 + int64(d.Exponent)
	weight = floorDiv(p, 4)
	// Digits of the leading group: from power p down to 4*weight.
	n := p - 4*weight + 1
	for i := int64(0); i < n; i++ {
		first *= 10
		if i < int64(len(digits)) {
			first += int64(digits[i] - '0')
		}
	}
	return weight, first
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func dscale(d *apd.Decimal) int64 {
	if d.Form != apd.Finite || d.Exponent >= 0 {
		return 0
	}
	return -int64(d.Exponent)
}

// numericMinSigDigits is PostgreSQL's NUMERIC_MIN_SIG_DIGITS.
const numericMinSigDigits = 16

// divScale is PostgreSQL's select_div_scale.
func divScale(a, b *apd.Decimal) int64 {
	var w1, f1, w2, f2 int64
	if !a.IsZero() {
		w1, f1 = nbaseWeight(a)
	}
	if !b.IsZero() {
		w2, f2 = nbaseWeight(b)
	}
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := numericMinSigDigits - qweight*4
	rscale = max(rscale, dscale(a), dscale(b), 0)
	return min(rscale, 1000)
}

// roundToScale rounds d to scale digits after the point, half away from
// zero.
func roundToScale(d *apd.Decimal, scale int64) (*apd.Decimal, error) {
	r := new(apd.Decimal)
	if _, err := numCtx().Quantize(r, d, int32(-scale)); err != nil {
		return nil, err
	}
	return r, nil
}

// divToScale computes a/b rounded to scale (half away from zero): the
// quotient is first truncated at a precision covering scale+1 digits, so
// rounding happens once.
func divToScale(a, b *apd.Decimal, scale int64) (*apd.Decimal, error) {
	ctx := numCtx()
	// Integer digits of the quotient: at most digits(a)+exp(a) - (digits(b)+exp(b)) + 1.
	intDigits := int64(a.NumDigits()) + int64(a.Exponent) - int64(b.NumDigits()) - int64(b.Exponent) + 2
	prec := intDigits + scale + 2
	if prec < 1 {
		prec = 1
	}
	ctx.Precision = uint32(prec)
	ctx.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := ctx.Quo(q, a, b); err != nil {
		return nil, err
	}
	return roundToScale(q, scale)
}

func numDiv(a, b *apd.Decimal) (types.Datum, error) {
	if isNaN(a) || isNaN(b) {
		return numNaN(), nil
	}
	if b.Form == apd.Finite && b.IsZero() {
		return nil, errDivisionByZero()
	}
	if a.Form == apd.Infinite {
		if b.Form == apd.Infinite {
			return numNaN(), nil
		}
		return numInf(a.Negative != b.Negative), nil
	}
	if b.Form == apd.Infinite {
		return &apd.Decimal{}, nil
	}
	if a.IsZero() {
		r := &apd.Decimal{}
		r.Exponent = int32(-divScale(a, b))
		return numericResult(r)
	}
	r, err := divToScale(a, b, divScale(a, b))
	if err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	return numericResult(r)
}

// numTruncDiv is a/b truncated toward zero (PostgreSQL's div()).
func numTruncDiv(a, b *apd.Decimal) (*apd.Decimal, error) {
	ctx := numCtx()
	q := new(apd.Decimal)
	if _, err := ctx.QuoInteger(q, a, b); err != nil {
		return nil, err
	}
	q.Exponent = 0
	return q, nil
}

func numMod(a, b *apd.Decimal) (types.Datum, error) {
	if isNaN(a) || isNaN(b) {
		return numNaN(), nil
	}
	if b.Form == apd.Finite && b.IsZero() {
		return nil, errDivisionByZero()
	}
	if a.Form == apd.Infinite {
		return numNaN(), nil
	}
	if b.Form == apd.Infinite {
		return a, nil
	}
	r := new(apd.Decimal)
	if _, err := numCtx().Rem(r, a, b); err != nil {
		return nil, EvalError(StateNumericValueOutOfRange, "value overflows numeric format")
	}
	if r.IsZero() {
		r.Negative = false
	}
	return numericResult(r)
}
