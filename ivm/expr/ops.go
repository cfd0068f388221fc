package expr

import (
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// BinaryFn computes a strict binary operator on two non-NULL values.
type BinaryFn func(env *Env, a, b types.Datum) (types.Datum, error)

// OpInfo is a resolved operator: the types its operands must be converted to
// (with Coerce) and its result.
type OpInfo struct {
	Op          string
	Left, Right types.Type
	Result      types.Type
	Fn          BinaryFn
}

// Binary applies a strict binary operator (NULL if either side is NULL).
// Build it with NewBinary, which inserts the casts OpInfo asks for.
type Binary struct {
	Info OpInfo
	L, R Expr
}

func (b *Binary) Type() types.Type { return b.Info.Result }
func (b *Binary) Eval(env *Env, row types.Row) (types.Datum, error) {
	l, err := b.L.Eval(env, row)
	if err != nil || l == nil {
		return nil, err
	}
	r, err := b.R.Eval(env, row)
	if err != nil || r == nil {
		return nil, err
	}
	return b.Info.Fn(env, l, r)
}
func (b *Binary) String() string {
	return "(" + b.L.String() + " " + b.Info.Op + " " + b.R.String() + ")"
}

// NewBinary resolves op for the operand types (unknown literals take the
// other side's type), inserts implicit casts, and folds nothing. Comparison
// operators are =, <>, !=, <, <=, >, >=; arithmetic +, -, *, /, %, ^;
// string || ; bitwise &, |, #, <<, >>; pattern matching ~~ (LIKE), ~~*
// (ILIKE), !~~, !~~*, ~, ~*, !~, !~*.
func NewBinary(op string, l, r Expr) (Expr, error) {
	if op == "!=" {
		op = "<>"
	}
	lt, rt := l.Type(), r.Type()
	info, ok := LookupBinaryOp(op, lt, rt)
	if !ok {
		return nil, errUndefinedOperator(op, lt.SQLName(), rt.SQLName())
	}
	var err error
	if l, err = coerceOperand(l, info.Left); err != nil {
		return nil, err
	}
	if r, err = coerceOperand(r, info.Right); err != nil {
		return nil, err
	}
	switch op {
	case "~~", "~~*", "!~~", "!~~*":
		return newLike(l, r, nil, op == "~~*" || op == "!~~*", op[0] == '!'), nil
	case "~", "~*", "!~", "!~*":
		return newRegexMatch(l, r, strings.Contains(op, "*"), op[0] == '!'), nil
	}
	return &Binary{Info: info, L: l, R: r}, nil
}

func coerceOperand(e Expr, t types.Type) (Expr, error) {
	if e.Type().Kind == t.Kind && (t.Kind != types.KindArray) {
		return e, nil
	}
	if e.Type().Equal(t) {
		return e, nil
	}
	return Coerce(e, t)
}

// resolveUnknown gives an unknown-typed operand the other side's type, or
// text when both are unknown (PostgreSQL's rule for operator arguments).
func resolveUnknown(l, r types.Type) (types.Type, types.Type) {
	switch {
	case l.Kind == types.KindUnknown && r.Kind == types.KindUnknown:
		return types.TText, types.TText
	case l.Kind == types.KindUnknown:
		return r, r
	case r.Kind == types.KindUnknown:
		return l, l
	}
	return l, r
}

func noTypmod(t types.Type) types.Type {
	t.Typmod = -1
	return t
}

// ComparisonType is the type both sides of a comparison (or IN, CASE
// operand, BETWEEN, DISTINCT FROM) are converted to; ok is false when the
// types are not comparable.
func ComparisonType(l, r types.Type) (types.Type, bool) {
	l, r = resolveUnknown(l, r)
	l, r = noTypmod(l), noTypmod(r)
	if l.Kind == r.Kind {
		if l.Kind == types.KindArray {
			if l.Elem == nil || r.Elem == nil {
				return types.Type{}, false
			}
			et, ok := ComparisonType(*l.Elem, *r.Elem)
			if !ok {
				return types.Type{}, false
			}
			return types.ArrayOf(et), true
		}
		if l.Kind == types.KindJSON || l.Kind == types.KindRecord || l.Kind == types.KindVoid {
			return types.Type{}, false
		}
		if l.Kind == types.KindVarchar || l.Kind == types.KindName {
			return types.TText, true
		}
		return l, true
	}
	if isNumericKind(l.Kind) && isNumericKind(r.Kind) {
		return promoteNumeric(l.Kind, r.Kind), true
	}
	if l.Kind.IsString() && r.Kind.IsString() {
		return types.TText, true
	}
	lc, rc := TypeCategory(l), TypeCategory(r)
	if lc == CatDateTime && rc == CatDateTime {
		if l.Kind == types.KindTime || r.Kind == types.KindTime {
			return types.Type{}, false
		}
		if l.Kind == types.KindTimestampTZ || r.Kind == types.KindTimestampTZ {
			return types.TTimestampTZ, true
		}
		return types.TTimestamp, true
	}
	if CanImplicitCast(l, r) {
		return r, true
	}
	if CanImplicitCast(r, l) {
		return l, true
	}
	return types.Type{}, false
}

func isComparison(op string) bool {
	switch op {
	case "=", "<>", "<", "<=", ">", ">=":
		return true
	}
	return false
}

func info(op string, l, r, res types.Type, fn BinaryFn) (OpInfo, bool) {
	return OpInfo{Op: op, Left: l, Right: r, Result: res, Fn: fn}, true
}

// LookupBinaryOp finds the operator op for operand types l and r following
// PostgreSQL's resolution (unknown literals take the other side's type;
// numeric operands promote along int2 → int4 → int8 → numeric → float8).
func LookupBinaryOp(op string, l, r types.Type) (OpInfo, bool) {
	if op == "!=" {
		op = "<>"
	}
	ol, or := l, r
	if oi, ok := lookupJSONOp(op, l, r); ok {
		return oi, true
	}
	if op == "||" {
		return lookupConcat(l, r)
	}
	l, r = resolveUnknown(l, r)
	if op == "@>" || op == "<@" || op == "&&" {
		return lookupArrayContains(op, l, r)
	}
	if isComparison(op) {
		ct, ok := ComparisonType(l, r)
		if !ok {
			return OpInfo{}, false
		}
		return info(op, ct, ct, types.TBool, comparisonFn(op, ct))
	}
	switch op {
	case "~~", "~~*", "!~~", "!~~*", "~", "~*", "!~", "!~*":
		ci := strings.Contains(op, "*")
		negated := op[0] == '!'
		// Fn compiles the pattern per call; NewBinary builds Like and
		// RegexMatch nodes that compile a constant pattern once.
		fn := func(_ *Env, a, b types.Datum) (types.Datum, error) {
			if strings.Contains(op, "~~") {
				p, err := compileLike(likeText(b), '\\', ci)
				if err != nil {
					return nil, err
				}
				s := likeText(a)
				if ci {
					s = asciiLower(s)
				}
				m, err := p.match(s)
				if err != nil {
					return nil, err
				}
				return m != negated, nil
			}
			re, err := compileRegex(b.(string), ci)
			if err != nil {
				return nil, err
			}
			return re.MatchString(a.(string)) != negated, nil
		}
		if l.Kind.IsString() && r.Kind.IsString() {
			return info(op, types.TText, types.TText, types.TBool, fn)
		}
		if l.Kind == types.KindBytea && r.Kind == types.KindBytea && (op == "~~" || op == "!~~") {
			return info(op, types.TBytea, types.TBytea, types.TBool, fn)
		}
		return OpInfo{}, false
	}
	lk, rk := l.Kind, r.Kind
	if (op == "<<" || op == ">>") && lk.IsInteger() && rk.IsInteger() {
		return numericOp(op, noTypmod(l))
	}
	// Numeric arithmetic.
	if isNumericKind(lk) && isNumericKind(rk) {
		t := promoteNumeric(lk, rk)
		return numericOp(op, t)
	}
	_ = ol
	_ = or
	switch {
	case lk == types.KindDate && rk.IsInteger() && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return info(op, types.TDate, types.TInt4, types.TDate, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return dateAddDays(a.(types.Date), sign*b.(int64))
		})
	case lk.IsInteger() && rk == types.KindDate && op == "+":
		return info(op, types.TInt4, types.TDate, types.TDate, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return dateAddDays(b.(types.Date), a.(int64))
		})
	case lk == types.KindDate && rk == types.KindDate && op == "-":
		return info(op, types.TDate, types.TDate, types.TInt4, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			x, y := a.(types.Date), b.(types.Date)
			if !x.IsFinite() || !y.IsFinite() {
				return nil, EvalError(StateDatetimeFieldOverflow, "cannot subtract infinite dates")
			}
			return int64(x) - int64(y), nil
		})
	case lk == types.KindDate && rk == types.KindTime && op == "+":
		return info(op, types.TDate, types.TTime, types.TTimestamp, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			ts, err := dateToTimestamp(a.(types.Date))
			if err != nil || !ts.(types.Timestamp).IsFinite() {
				return ts, err
			}
			return types.Timestamp(int64(ts.(types.Timestamp)) + int64(b.(types.TimeOfDay))), nil
		})
	case lk == types.KindTime && rk == types.KindDate && op == "+":
		return info(op, types.TTime, types.TDate, types.TTimestamp, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			ts, err := dateToTimestamp(b.(types.Date))
			if err != nil || !ts.(types.Timestamp).IsFinite() {
				return ts, err
			}
			return types.Timestamp(int64(ts.(types.Timestamp)) + int64(a.(types.TimeOfDay))), nil
		})
	case (lk == types.KindDate || lk == types.KindTimestamp) && rk == types.KindInterval && (op == "+" || op == "-"):
		neg := op == "-"
		return info(op, types.TTimestamp, types.TInterval, types.TTimestamp, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			iv := b.(types.Interval)
			if neg {
				var err error
				if iv, err = negInterval(iv); err != nil {
					return nil, err
				}
			}
			r, err := timestampPlusInterval(int64(a.(types.Timestamp)), iv)
			if err != nil {
				return nil, err
			}
			return types.Timestamp(r), nil
		})
	case lk == types.KindInterval && (rk == types.KindDate || rk == types.KindTimestamp) && op == "+":
		return info(op, types.TInterval, types.TTimestamp, types.TTimestamp, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			r, err := timestampPlusInterval(int64(b.(types.Timestamp)), a.(types.Interval))
			if err != nil {
				return nil, err
			}
			return types.Timestamp(r), nil
		})
	case lk == types.KindTimestampTZ && rk == types.KindInterval && (op == "+" || op == "-"):
		neg := op == "-"
		return info(op, types.TTimestampTZ, types.TInterval, types.TTimestampTZ, func(env *Env, a, b types.Datum) (types.Datum, error) {
			iv := b.(types.Interval)
			if neg {
				var err error
				if iv, err = negInterval(iv); err != nil {
					return nil, err
				}
			}
			return timestampTZPlusInterval(a.(types.TimestampTZ), iv, envZone(env))
		})
	case lk == types.KindInterval && rk == types.KindTimestampTZ && op == "+":
		return info(op, types.TInterval, types.TTimestampTZ, types.TTimestampTZ, func(env *Env, a, b types.Datum) (types.Datum, error) {
			return timestampTZPlusInterval(b.(types.TimestampTZ), a.(types.Interval), envZone(env))
		})
	case op == "-" && TypeCategory(l) == CatDateTime && TypeCategory(r) == CatDateTime && lk != types.KindTime && rk != types.KindTime:
		// timestamp - timestamp (a date operand promotes); with a
		// timestamptz operand the subtraction is in timestamptz.
		if lk == types.KindTimestampTZ || rk == types.KindTimestampTZ {
			return info(op, types.TTimestampTZ, types.TTimestampTZ, types.TInterval, func(_ *Env, a, b types.Datum) (types.Datum, error) {
				return timestampDiff(int64(a.(types.TimestampTZ)), int64(b.(types.TimestampTZ)))
			})
		}
		return info(op, types.TTimestamp, types.TTimestamp, types.TInterval, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return timestampDiff(int64(a.(types.Timestamp)), int64(b.(types.Timestamp)))
		})
	case lk == types.KindTime && rk == types.KindInterval && (op == "+" || op == "-"):
		sign := int64(1)
		if op == "-" {
			sign = -1
		}
		return info(op, types.TTime, types.TInterval, types.TTime, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return timeAddInterval(a.(types.TimeOfDay), b.(types.Interval), sign), nil
		})
	case lk == types.KindInterval && rk == types.KindTime && op == "+":
		return info(op, types.TInterval, types.TTime, types.TTime, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return timeAddInterval(b.(types.TimeOfDay), a.(types.Interval), 1), nil
		})
	case lk == types.KindTime && rk == types.KindTime && op == "-":
		return info(op, types.TTime, types.TTime, types.TInterval, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return types.Interval{Micros: int64(a.(types.TimeOfDay)) - int64(b.(types.TimeOfDay))}, nil
		})
	case lk == types.KindInterval && rk == types.KindInterval && (op == "+" || op == "-"):
		neg := op == "-"
		return info(op, types.TInterval, types.TInterval, types.TInterval, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			y := b.(types.Interval)
			if neg {
				var err error
				if y, err = negInterval(y); err != nil {
					return nil, err
				}
			}
			return addIntervals(a.(types.Interval), y)
		})
	case lk == types.KindInterval && isNumericKind(rk) && (op == "*" || op == "/"):
		div := op == "/"
		return info(op, types.TInterval, types.TFloat8, types.TInterval, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			if div {
				return intervalDiv(a.(types.Interval), b.(float64))
			}
			return intervalMul(a.(types.Interval), b.(float64))
		})
	case isNumericKind(lk) && rk == types.KindInterval && op == "*":
		return info(op, types.TFloat8, types.TInterval, types.TInterval, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return intervalMul(b.(types.Interval), a.(float64))
		})
	case lk == types.KindBool && rk == types.KindBool && (op == "AND" || op == "OR"):
		return OpInfo{}, false
	}
	return OpInfo{}, false
}

func numericOp(op string, t types.Type) (OpInfo, bool) {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8:
		bits := intBits(t.Kind)
		var fn func(a, b int64) (types.Datum, error)
		switch op {
		case "+":
			fn = func(a, b int64) (types.Datum, error) { return intAdd(bits, a, b) }
		case "-":
			fn = func(a, b int64) (types.Datum, error) { return intSub(bits, a, b) }
		case "*":
			fn = func(a, b int64) (types.Datum, error) { return intMul(bits, a, b) }
		case "/":
			fn = func(a, b int64) (types.Datum, error) { return intDiv(bits, a, b) }
		case "%":
			fn = intMod
		case "&":
			fn = func(a, b int64) (types.Datum, error) { return a & b, nil }
		case "|":
			fn = func(a, b int64) (types.Datum, error) { return a | b, nil }
		case "#":
			fn = func(a, b int64) (types.Datum, error) { return a ^ b, nil }
		case "<<", ">>":
			// The shift count is int4 in PostgreSQL; shifts wrap modulo the width.
			left := op == "<<"
			return info(op, t, types.TInt4, t, func(_ *Env, a, b types.Datum) (types.Datum, error) {
				return shiftInt(bits, a.(int64), b.(int64), left), nil
			})
		case "^":
			return numericOp(op, types.TFloat8)
		default:
			return OpInfo{}, false
		}
		if bits == 64 {
			switch op {
			case "+":
				return info(op, t, t, t, func(_ *Env, a, b types.Datum) (types.Datum, error) {
					x, y := a.(int64), b.(int64)
					s := x + y
					if (x >= 0) == (y >= 0) && (s >= 0) != (x >= 0) {
						return nil, errIntOutOfRange(64)
					}
					return s, nil
				})
			}
		} else if op == "+" || op == "-" || op == "*" {
			// int2/int4 results always fit in int64: compute, then range-check.
			sign := int64(1)
			if op == "-" {
				sign = -1
			}
			mul := op == "*"
			return info(op, t, t, t, func(_ *Env, a, b types.Datum) (types.Datum, error) {
				x, y := a.(int64), b.(int64)
				var r int64
				if mul {
					r = x * y
				} else {
					r = x + sign*y
				}
				if !intFits(r, bits) {
					return nil, errIntOutOfRange(bits)
				}
				return r, nil
			})
		}
		return info(op, t, t, t, func(_ *Env, a, b types.Datum) (types.Datum, error) { return fn(a.(int64), b.(int64)) })
	case types.KindFloat4, types.KindFloat8:
		bits := 64
		if t.Kind == types.KindFloat4 {
			bits = 32
		}
		var fn func(a, b float64) (types.Datum, error)
		switch op {
		case "+":
			fn = func(a, b float64) (types.Datum, error) { return floatAdd(bits, a, b) }
		case "-":
			fn = func(a, b float64) (types.Datum, error) { return floatSub(bits, a, b) }
		case "*":
			fn = func(a, b float64) (types.Datum, error) { return floatMul(bits, a, b) }
		case "/":
			fn = func(a, b float64) (types.Datum, error) { return floatDiv(bits, a, b) }
		case "^":
			return info(op, types.TFloat8, types.TFloat8, types.TFloat8, func(_ *Env, a, b types.Datum) (types.Datum, error) {
				return floatPower(a.(float64), b.(float64))
			})
		default:
			return OpInfo{}, false
		}
		return info(op, t, t, t, func(_ *Env, a, b types.Datum) (types.Datum, error) { return fn(a.(float64), b.(float64)) })
	case types.KindNumeric:
		var fn func(a, b *apd.Decimal) (types.Datum, error)
		switch op {
		case "+":
			fn = numAdd
		case "-":
			fn = numSub
		case "*":
			fn = numMul
		case "/":
			fn = numDiv
		case "%":
			fn = numMod
		case "^":
			fn = numPower
		default:
			return OpInfo{}, false
		}
		return info(op, t, t, t, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			return fn(a.(*apd.Decimal), b.(*apd.Decimal))
		})
	}
	return OpInfo{}, false
}

func shiftInt(bits int, a, n int64, left bool) int64 {
	n &= int64(bits - 1)
	var r int64
	if left {
		r = a << uint(n)
	} else {
		r = a >> uint(n)
	}
	switch bits {
	case 16:
		return int64(int16(r))
	case 32:
		return int64(int32(r))
	}
	return r
}

// lookupConcat resolves ||: text || text, and text || non-array (any value
// is converted with its output function), bytea || bytea.
func lookupConcat(l, r types.Type) (OpInfo, bool) {
	lk, rk := l.Kind, r.Kind
	if lk == types.KindBytea && (rk == types.KindBytea || rk == types.KindUnknown) ||
		rk == types.KindBytea && lk == types.KindUnknown {
		return info("||", types.TBytea, types.TBytea, types.TBytea, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			x, y := a.([]byte), b.([]byte)
			if err := CheckTextGrowth(len(x), len(y)); err != nil {
				return nil, err
			}
			out := make([]byte, 0, len(x)+len(y))
			return append(append(out, x...), y...), nil
		})
	}
	if lk == types.KindArray || rk == types.KindArray {
		return lookupArrayConcat(l, r)
	}
	lString := lk.IsString() || lk == types.KindUnknown
	rString := rk.IsString() || rk == types.KindUnknown
	if !lString && !rString {
		return OpInfo{}, false
	}
	// text || anynonarray converts the other side with its output function,
	// which is exactly a cast to text.
	return info("||", types.TText, types.TText, types.TText, func(_ *Env, a, b types.Datum) (types.Datum, error) {
		x, y := a.(string), b.(string)
		if err := CheckTextGrowth(len(x), len(y)); err != nil {
			return nil, err
		}
		return x + y, nil
	})
}

// lookupArrayContains resolves anyarray @> anyarray (contains), <@ (is
// contained by) and && (overlaps): both sides one array type, as
// PostgreSQL's anyarray requires (integer[] @> bigint[] does not exist).
func lookupArrayContains(op string, l, r types.Type) (OpInfo, bool) {
	l, r = noTypmod(l), noTypmod(r)
	if l.Kind != types.KindArray || r.Kind != types.KindArray || l.Elem == nil || r.Elem == nil || !noTypmod(*l.Elem).Equal(noTypmod(*r.Elem)) {
		return OpInfo{}, false
	}
	elem := noTypmod(*l.Elem)
	return info(op, l, l, types.TBool, func(_ *Env, a, b types.Datum) (types.Datum, error) {
		x, y := a.(types.Array), b.(types.Array)
		switch op {
		case "@>":
			return arrayContains(elem, x, y, false), nil
		case "<@":
			return arrayContains(elem, y, x, false), nil
		}
		return arrayContains(elem, x, y, true), nil
	})
}

func lookupArrayConcat(l, r types.Type) (OpInfo, bool) {
	switch {
	case l.Kind == types.KindArray && r.Kind == types.KindArray:
		ct, ok := ComparisonType(l, r)
		if !ok {
			return OpInfo{}, false
		}
		return info("||", ct, ct, ct, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			x, y := a.(types.Array), b.(types.Array)
			if err := CheckArrayElements(len(x.Values) + len(y.Values)); err != nil {
				return nil, err
			}
			vals := make([]types.Datum, 0, len(x.Values)+len(y.Values))
			vals = append(append(vals, x.Values...), y.Values...)
			return types.Array{Elem: x.Elem, Values: vals}, nil
		})
	case l.Kind == types.KindArray && l.Elem != nil:
		return info("||", l, *l.Elem, l, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			x := a.(types.Array)
			if err := CheckArrayElements(len(x.Values) + 1); err != nil {
				return nil, err
			}
			vals := append(append([]types.Datum{}, x.Values...), b)
			return types.Array{Elem: x.Elem, Values: vals}, nil
		})
	case r.Kind == types.KindArray && r.Elem != nil:
		return info("||", *r.Elem, r, r, func(_ *Env, a, b types.Datum) (types.Datum, error) {
			y := b.(types.Array)
			if err := CheckArrayElements(len(y.Values) + 1); err != nil {
				return nil, err
			}
			vals := append([]types.Datum{a}, y.Values...)
			return types.Array{Elem: y.Elem, Values: vals}, nil
		})
	}
	return OpInfo{}, false
}

// Unary is a strict prefix operator: - (negation), + , ~ (bitwise not),
// @ (absolute value).
type Unary struct {
	Op  string
	X   Expr
	Typ types.Type
	Fn  func(a types.Datum) (types.Datum, error)
}

func (u *Unary) Type() types.Type { return u.Typ }
func (u *Unary) Eval(env *Env, row types.Row) (types.Datum, error) {
	v, err := u.X.Eval(env, row)
	if err != nil || v == nil {
		return nil, err
	}
	return u.Fn(v)
}
func (u *Unary) String() string { return "(" + u.Op + u.X.String() + ")" }

// NewUnary resolves a prefix operator.
func NewUnary(op string, x Expr) (Expr, error) {
	t := x.Type()
	if t.Kind == types.KindUnknown {
		// PostgreSQL cannot choose among the prefix operators for an
		// untyped literal (-'1' fails with 42725).
		return nil, errcode.New(errcode.UndefinedFunction, "operator is not unique: %s unknown", op).WithSQLState("42725")
	}
	t = noTypmod(t)
	var fn func(a types.Datum) (types.Datum, error)
	switch op {
	case "+":
		if !isNumericKind(t.Kind) && t.Kind != types.KindInterval {
			return nil, errUndefinedOperator(op, t.SQLName())
		}
		return &Unary{Op: op, X: x, Typ: t, Fn: func(a types.Datum) (types.Datum, error) { return a, nil }}, nil
	case "-":
		switch {
		case t.Kind.IsInteger():
			bits := intBits(t.Kind)
			fn = func(a types.Datum) (types.Datum, error) { return intNeg(bits, a.(int64)) }
		case t.Kind == types.KindFloat4 || t.Kind == types.KindFloat8:
			fn = func(a types.Datum) (types.Datum, error) { return -a.(float64), nil }
		case t.Kind == types.KindNumeric:
			fn = func(a types.Datum) (types.Datum, error) { return numNeg(a.(*apd.Decimal)), nil }
		case t.Kind == types.KindInterval:
			fn = func(a types.Datum) (types.Datum, error) { return negInterval(a.(types.Interval)) }
		}
	case "~":
		if t.Kind.IsInteger() {
			bits := intBits(t.Kind)
			fn = func(a types.Datum) (types.Datum, error) { return shiftInt(bits, ^a.(int64), 0, true), nil }
		}
	case "@":
		if isNumericKind(t.Kind) {
			f, ok := absFunc(t)
			if ok {
				fn = f
			}
		}
	}
	if fn == nil {
		return nil, errUndefinedOperator(op, t.SQLName())
	}
	return &Unary{Op: op, X: x, Typ: t, Fn: fn}, nil
}

func absFunc(t types.Type) (func(a types.Datum) (types.Datum, error), bool) {
	switch {
	case t.Kind.IsInteger():
		bits := intBits(t.Kind)
		return func(a types.Datum) (types.Datum, error) {
			v := a.(int64)
			if v < 0 {
				return intNeg(bits, v)
			}
			return v, nil
		}, true
	case t.Kind == types.KindFloat4 || t.Kind == types.KindFloat8:
		return func(a types.Datum) (types.Datum, error) {
			v := a.(float64)
			if v < 0 || (v == 0) {
				return -v + 0, nil
			}
			return v, nil
		}, true
	case t.Kind == types.KindNumeric:
		return func(a types.Datum) (types.Datum, error) {
			d := a.(*apd.Decimal)
			if isNaN(d) {
				return d, nil
			}
			return new(apd.Decimal).Abs(d), nil
		}, true
	}
	return nil, false
}

// comparisonFn specializes a comparison operator for its type: integers
// compare unboxed without the generic Compare dispatch (the hot path of
// filters and joins).
func comparisonFn(op string, ct types.Type) BinaryFn {
	if ct.Kind.IsInteger() {
		switch op {
		case "=":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(int64) == b.(int64), nil }
		case "<>":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(int64) != b.(int64), nil }
		case "<":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(int64) < b.(int64), nil }
		case "<=":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(int64) <= b.(int64), nil }
		case ">":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(int64) > b.(int64), nil }
		case ">=":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(int64) >= b.(int64), nil }
		}
	}
	if ct.Kind == types.KindText || ct.Kind == types.KindVarchar {
		switch op {
		case "=":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(string) == b.(string), nil }
		case "<>":
			return func(_ *Env, a, b types.Datum) (types.Datum, error) { return a.(string) != b.(string), nil }
		}
	}
	var want func(c int) bool
	switch op {
	case "=":
		want = func(c int) bool { return c == 0 }
	case "<>":
		want = func(c int) bool { return c != 0 }
	case "<":
		want = func(c int) bool { return c < 0 }
	case "<=":
		want = func(c int) bool { return c <= 0 }
	case ">":
		want = func(c int) bool { return c > 0 }
	default:
		want = func(c int) bool { return c >= 0 }
	}
	return func(_ *Env, a, b types.Datum) (types.Datum, error) { return want(types.Compare(ct, a, b)), nil }
}

// LookupUnaryOp reports the result type of prefix operator op (-, +, ~, @)
// applied to t; ok is false when PostgreSQL has no such operator.
func LookupUnaryOp(op string, t types.Type) (types.Type, bool) {
	e, err := NewUnary(op, &ColumnRef{Typ: t})
	if err != nil {
		return types.Type{}, false
	}
	return e.Type(), true
}
