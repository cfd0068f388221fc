package expr

import (
	"math"
	"strconv"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// Cast converts X to Typ with PostgreSQL's rules: explicit casts truncate
// varchar(n)/char(n) silently, implicit and assignment conversions do not;
// numeric→integer rounds half away from zero, float→integer half to even;
// anything↔text goes through the types' output/input functions (timestamptz
// in Env.TimeZone).
type Cast struct {
	X        Expr
	Typ      types.Type
	Explicit bool
}

func (c *Cast) Type() types.Type { return c.Typ }
func (c *Cast) Eval(env *Env, row types.Row) (types.Datum, error) {
	v, err := c.X.Eval(env, row)
	if err != nil || v == nil {
		return nil, err
	}
	return CastDatum(env, v, c.X.Type(), c.Typ, c.Explicit)
}
func (c *Cast) String() string { return "CAST(" + c.X.String() + " AS " + c.Typ.SQLName() + ")" }

// NewCast is an explicit CAST(e AS to) / e::to. It fails with 42846 when no
// conversion exists. Casting an untyped literal converts it here (errors
// surface at build time, as in PostgreSQL's parser) unless the result
// depends on the session time zone.
func NewCast(e Expr, to types.Type) (Expr, error) { return newCast(e, to, true) }

// Coerce converts e to type to implicitly (or by assignment when the target
// is a column): the conversion must exist; varchar(n) overflow is an error.
// It returns e unchanged when the types already agree.
func Coerce(e Expr, to types.Type) (Expr, error) {
	if e.Type().Equal(to) {
		return e, nil
	}
	return newCast(e, to, false)
}

func newCast(e Expr, to types.Type, explicit bool) (Expr, error) {
	from := e.Type()
	if !CanCast(from, to) {
		return nil, errcode.New(errcode.CannotCoerce, "cannot cast type %s to %s", from.SQLName(), to.SQLName()).WithSQLState(StateCannotCoerce)
	}
	c := &Cast{X: e, Typ: to, Explicit: explicit}
	// NB: like PostgreSQL's parser, an untyped literal is converted right
	// away (so 'abc'::int fails here even in an unreachable branch); other
	// constant casts are left to Fold, which follows the planner's order.
	if k, ok := e.(*Const); ok && from.Kind == types.KindUnknown && !castDependsOnZone(from, to) && sameUnderEveryStyle(k, to) {
		if k.Value == nil {
			return Null(to), nil
		}
		v, err := CastDatum(nil, k.Value, from, to, explicit)
		if err != nil {
			return nil, err
		}
		return NewConst(to, v), nil
	}
	return c, nil
}

func castDependsOnZone(from, to types.Type) bool {
	z := func(t types.Type) bool {
		if t.Kind == types.KindArray && t.Elem != nil {
			t = *t.Elem
		}
		return t.Kind == types.KindTimestampTZ
	}
	return z(from) || z(to)
}

// styledKind reports whether t's text form depends on DateStyle or
// IntervalStyle (date, timestamp, timestamptz, interval, arrays of them;
// time prints the same in every style).
func styledKind(t types.Type) bool {
	if t.Kind == types.KindArray && t.Elem != nil {
		t = *t.Elem
	}
	switch t.Kind {
	case types.KindDate, types.KindTimestamp, types.KindTimestampTZ, types.KindInterval:
		return true
	}
	return false
}

// castDependsOnStyle reports whether a cast's result depends on
// DateStyle or IntervalStyle: a date, timestamp or interval printed as
// text. (Text read as one depends on them only for some text:
// sameUnderEveryStyle.)
func castDependsOnStyle(from, to types.Type) bool {
	return styledKind(from) && to.Kind.IsString()
}

// sameUnderEveryStyle reports whether reading the constant k as type to
// gives the same value (or the same failure) under every DateStyle field
// order and IntervalStyle: '2024-01-31' does, '01/02/03' and, under
// sql_standard, '-1 2:00:00' do not. Only such a constant is converted
// when the statement is bound; the others are read when it runs, in the
// session's (or the view's) settings, as PostgreSQL reads them in the
// settings of the session that parses them.
func sameUnderEveryStyle(k *Const, to types.Type) bool {
	if k.Value == nil || !styledKind(to) || !(k.Typ.Kind == types.KindUnknown || k.Typ.Kind.IsString()) {
		return true
	}
	s, ok := k.Value.(string)
	if !ok {
		return true
	}
	read := func(in types.InputStyle) string {
		v, err := types.ParseStyle(to, s, in)
		if err != nil {
			if e, ok := errcode.As(err); ok {
				return "error " + e.State()
			}
			return "error"
		}
		return types.Format(to, v)
	}
	first := read(types.InputStyle{})
	for _, in := range []types.InputStyle{{DateOrder: types.DateOrderDMY}, {DateOrder: types.DateOrderYMD}, {IntervalStyle: types.IntervalStyleSQLStandard}} {
		if read(in) != first {
			return false
		}
	}
	return true
}

// CanCast reports whether an explicit cast from → to exists.
func CanCast(from, to types.Type) bool {
	if from.Kind == to.Kind && from.Kind != types.KindArray {
		return true
	}
	if from.Kind == types.KindUnknown || to.Kind.IsString() || from.Kind.IsString() {
		return to.Kind != types.KindRecord && from.Kind != types.KindRecord
	}
	if CanImplicitCast(from, to) {
		return true
	}
	fk, tk := from.Kind, to.Kind
	switch {
	case isNumericKind(fk) && isNumericKind(tk):
		return true
	case (fk == types.KindBool && tk == types.KindInt4) || (fk == types.KindInt4 && tk == types.KindBool):
		return true
	case fk == types.KindTimestamp || fk == types.KindTimestampTZ:
		return tk == types.KindDate || tk == types.KindTime || tk == types.KindTimestamp || tk == types.KindTimestampTZ
	case fk == types.KindInterval:
		return tk == types.KindTime
	case fk == types.KindJSONB:
		return tk == types.KindJSON
	case fk == types.KindArray && tk == types.KindArray:
		return from.Elem != nil && to.Elem != nil && CanCast(*from.Elem, *to.Elem)
	case tk == types.KindOID || fk == types.KindOID:
		return fk.IsInteger() || tk.IsInteger()
	}
	return false
}

func envZone(env *Env) *time.Location {
	if env == nil || env.TimeZone == nil {
		return time.UTC
	}
	return env.TimeZone
}

// envStyle is the text-output settings of env.
func envStyle(env *Env) types.OutputStyle {
	st := types.OutputStyle{Loc: envZone(env), ExtraFloatDigits: 1}
	if env != nil {
		if env.ExtraFloatDigitsSet {
			st.ExtraFloatDigits = env.ExtraFloatDigits
		}
		st.DateStyle, st.DateOrder, st.IntervalStyle = env.DateStyle, env.DateOrder, env.IntervalStyle
	}
	return st
}

// jsonStyle is envStyle for JSON: dates and timestamps are always ISO
// there (to_json writes XSD dates), intervals follow IntervalStyle.
func jsonStyle(env *Env) types.OutputStyle {
	st := envStyle(env)
	st.DateStyle, st.DateOrder = types.DateStyleISO, types.DateOrderMDY
	return st
}

// envInput is the text-input settings of env.
func envInput(env *Env) types.InputStyle {
	in := types.InputStyle{Loc: envZone(env)}
	if env != nil {
		in.DateOrder, in.IntervalStyle = env.DateOrder, env.IntervalStyle
	}
	return in
}

func kindName(k types.Kind) string { return types.Type{Kind: k, Typmod: -1}.SQLName() }

// CastDatum converts a non-NULL value between types.
func CastDatum(env *Env, v types.Datum, from, to types.Type, explicit bool) (types.Datum, error) {
	loc := envZone(env)
	in := envInput(env)
	fk, tk := from.Kind, to.Kind
	if fk == types.KindUnknown {
		if (tk == types.KindVarchar || tk == types.KindChar) && explicit {
			return types.ApplyStringTypmod(to, v.(string), true)
		}
		return types.ParseStyle(to, v.(string), in)
	}
	// To strings.
	if tk.IsString() {
		if (fk == types.KindText || fk == types.KindVarchar) && (tk == types.KindText || tk == types.KindVarchar && to.Typmod < 4) {
			// NB: the same string (a text or unbounded varchar is
			// its own text form), not a copy boxed again.
			return v, nil
		}
		var s string
		switch {
		case fk == types.KindText || fk == types.KindVarchar:
			s = v.(string)
		case fk == types.KindBool:
			if v.(bool) {
				s = "true"
			} else {
				s = "false"
			}
		case fk == types.KindChar:
			s = types.TrimBpchar(v.(string))
		case IsRegType(fk):
			s = RegOut(env, fk, v.(int64))
		default:
			s = types.FormatStyle(from, v, envStyle(env))
		}
		if tk == types.KindName {
			return types.Parse(to, s, loc)
		}
		return types.ApplyStringTypmod(to, s, explicit)
	}
	if fk.IsString() {
		return types.ParseStyle(to, v.(string), in)
	}
	if fk == tk && fk != types.KindArray {
		return applyTypmod(to, v)
	}
	switch {
	case fk.IsInteger() || fk == types.KindOID || fk == types.KindRegClass || fk == types.KindRegType || fk == types.KindRegProc || fk == types.KindRegNamespace:
		i := v.(int64)
		switch {
		case tk.IsInteger():
			bits := intBits(tk)
			if !intFits(i, bits) {
				return nil, errIntOutOfRange(bits)
			}
			return i, nil
		case tk == types.KindFloat8:
			return float64(i), nil
		case tk == types.KindFloat4:
			return float64(float32(i)), nil
		case tk == types.KindNumeric:
			return applyTypmod(to, apd.New(i, 0))
		case tk == types.KindBool:
			return i != 0, nil
		case tk == types.KindOID || tk == types.KindRegClass || tk == types.KindRegType || tk == types.KindRegProc || tk == types.KindRegNamespace:
			if i < math.MinInt32 || i > math.MaxUint32 {
				return nil, EvalError(StateNumericValueOutOfRange, "OID out of range")
			}
			return int64(uint32(i)), nil
		}
	case fk == types.KindFloat4 || fk == types.KindFloat8:
		f := v.(float64)
		switch {
		case tk.IsInteger():
			bits := intBits(tk)
			r := math.RoundToEven(f)
			if math.IsNaN(r) || r < -math.Ldexp(1, bits-1) || r >= math.Ldexp(1, bits-1) {
				return nil, errIntOutOfRange(bits)
			}
			return int64(r), nil
		case tk == types.KindFloat8:
			return f, nil
		case tk == types.KindFloat4:
			return checkFloat(f, 32, math.IsInf(f, 0), f == 0)
		case tk == types.KindNumeric:
			return floatToNumeric(f, fk == types.KindFloat4, to)
		}
	case fk == types.KindNumeric:
		d := v.(*apd.Decimal)
		switch {
		case tk.IsInteger():
			return numericToInt(d, intBits(tk))
		case tk == types.KindFloat8 || tk == types.KindFloat4:
			return numericToFloat(d, tk == types.KindFloat4)
		}
	case fk == types.KindBool && tk == types.KindInt4:
		if v.(bool) {
			return int64(1), nil
		}
		return int64(0), nil
	case fk == types.KindDate:
		d := v.(types.Date)
		switch tk {
		case types.KindTimestamp:
			return dateToTimestamp(d)
		case types.KindTimestampTZ:
			ts, err := dateToTimestamp(d)
			if err != nil {
				return nil, err
			}
			return timestampToTZ(ts.(types.Timestamp), loc)
		}
	case fk == types.KindTimestamp:
		ts := v.(types.Timestamp)
		switch tk {
		case types.KindDate:
			return timestampToDate(int64(ts))
		case types.KindTimestampTZ:
			r, err := timestampToTZ(ts, loc)
			if err != nil {
				return nil, err
			}
			return types.ApplyTimestampTypmod(to, r)
		case types.KindTime:
			if !ts.IsFinite() {
				return nil, nil // PostgreSQL: the time of an infinite timestamp is NULL
			}
			_, tod := types.SplitTimestamp(int64(ts))
			return tod, nil
		}
	case fk == types.KindTimestampTZ:
		ts := v.(types.TimestampTZ)
		switch tk {
		case types.KindTimestamp:
			r, err := tzToTimestamp(ts, loc)
			if err != nil {
				return nil, err
			}
			return types.ApplyTimestampTypmod(to, r)
		case types.KindDate:
			local, err := tzToTimestamp(ts, loc)
			if err != nil {
				return nil, err
			}
			return timestampToDate(int64(local.(types.Timestamp)))
		case types.KindTime:
			if !ts.IsFinite() {
				return nil, nil
			}
			local, _ := tzToTimestamp(ts, loc)
			_, tod := types.SplitTimestamp(int64(local.(types.Timestamp)))
			return tod, nil
		}
	case fk == types.KindTime && tk == types.KindInterval:
		return types.Interval{Micros: int64(v.(types.TimeOfDay))}, nil
	case fk == types.KindInterval && tk == types.KindTime:
		us := v.(types.Interval).Micros % types.MicrosPerDay
		if us < 0 {
			us += types.MicrosPerDay
		}
		return types.TimeOfDay(us), nil
	case fk == types.KindJSON || fk == types.KindJSONB:
		return v, nil
	case fk == types.KindArray && tk == types.KindArray:
		a := v.(types.Array)
		out := types.Array{Elem: *to.Elem, Values: make([]types.Datum, len(a.Values))}
		for i, e := range a.Values {
			if e == nil {
				continue
			}
			c, err := CastDatum(env, e, *from.Elem, *to.Elem, explicit)
			if err != nil {
				return nil, err
			}
			out.Values[i] = c
		}
		return out, nil
	}
	return nil, errcode.New(errcode.CannotCoerce, "cannot cast type %s to %s", from.SQLName(), to.SQLName()).WithSQLState(StateCannotCoerce)
}

// applyTypmod enforces a type modifier on a value already of the kind.
func applyTypmod(t types.Type, v types.Datum) (types.Datum, error) {
	if t.Typmod < 0 {
		return v, nil
	}
	switch t.Kind {
	case types.KindNumeric:
		return types.ApplyNumericTypmod(v.(*apd.Decimal), t.Typmod)
	case types.KindTimestamp, types.KindTimestampTZ:
		return types.ApplyTimestampTypmod(t, v)
	case types.KindInterval:
		return types.ApplyIntervalTypmod(v.(types.Interval), t.Typmod)
	}
	return v, nil
}

func floatToNumeric(f float64, isFloat4 bool, to types.Type) (types.Datum, error) {
	switch {
	case math.IsNaN(f):
		return applyTypmod(to, numNaN())
	case math.IsInf(f, 0):
		return applyTypmod(to, numInf(f < 0))
	}
	// PostgreSQL converts through "%.*g" with DBL_DIG (15) or FLT_DIG (6)
	// significant digits.
	digits := 15
	bits := 64
	if isFloat4 {
		digits, bits = 6, 32
	}
	s := strconv.FormatFloat(f, 'g', digits, bits)
	d, err := types.ParseNumeric(s)
	if err != nil {
		return nil, err
	}
	return applyTypmod(to, d)
}

func numericToInt(d *apd.Decimal, bits int) (types.Datum, error) {
	name := map[int]string{16: "smallint", 32: "integer", 64: "bigint"}[bits]
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return nil, EvalError(StateFeatureNotSupported, "cannot convert NaN to %s", name)
	case apd.Infinite:
		return nil, EvalError(StateFeatureNotSupported, "cannot convert infinity to %s", name)
	}
	r, err := roundToScale(d, 0)
	if err != nil {
		return nil, errIntOutOfRange(bits)
	}
	types.NormalizeNumeric(r)
	if !r.Coeff.IsInt64() {
		return nil, errIntOutOfRange(bits)
	}
	i := r.Coeff.Int64()
	if r.Negative {
		i = -i
	}
	if !intFits(i, bits) {
		return nil, errIntOutOfRange(bits)
	}
	return i, nil
}

func numericToFloat(d *apd.Decimal, isFloat4 bool) (types.Datum, error) {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return math.NaN(), nil
	case apd.Infinite:
		return math.Inf(1 - 2*boolInt(d.Negative)), nil
	}
	bits := 64
	if isFloat4 {
		bits = 32
	}
	f, err := types.ParseFloat(d.Text('G'), bits)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func dateToTimestamp(d types.Date) (types.Datum, error) {
	switch d {
	case types.DatePosInfinity:
		return types.TimestampPosInfinity, nil
	case types.DateNegInfinity:
		return types.TimestampNegInfinity, nil
	}
	us := int64(d) * types.MicrosPerDay
	if !types.TimestampInRange(us) {
		return nil, EvalError(StateDatetimeFieldOverflow, "date out of range for timestamp")
	}
	return types.Timestamp(us), nil
}

func timestampToDate(us int64) (types.Datum, error) {
	switch us {
	case math.MaxInt64:
		return types.DatePosInfinity, nil
	case math.MinInt64:
		return types.DateNegInfinity, nil
	}
	d, _ := types.SplitTimestamp(us)
	return d, nil
}

func timestampToTZ(ts types.Timestamp, loc *time.Location) (types.Datum, error) {
	if !ts.IsFinite() {
		return types.TimestampTZ(ts), nil
	}
	off := types.LocalOffset(int64(ts), loc)
	us := int64(ts) - int64(off)*types.MicrosPerSecond
	if !types.TimestampInRange(us) {
		return nil, EvalError(StateDatetimeFieldOverflow, "timestamp out of range")
	}
	return types.TimestampTZ(us), nil
}

func tzToTimestamp(ts types.TimestampTZ, loc *time.Location) (types.Datum, error) {
	if !ts.IsFinite() {
		return types.Timestamp(ts), nil
	}
	off := types.ZoneOffset(ts, loc)
	us := int64(ts) + int64(off)*types.MicrosPerSecond
	if !types.TimestampInRange(us) {
		return nil, EvalError(StateDatetimeFieldOverflow, "timestamp out of range")
	}
	return types.Timestamp(us), nil
}
