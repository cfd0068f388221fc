package gateway

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// PostgreSQL's text I/O for the types the gateway must format and parse
// (RowDescription format 0, text parameters, COPY). The output matches
// PostgreSQL 15 under the session's DateStyle, IntervalStyle, TimeZone
// and extra_float_digits; the oracle test compares it with a real server.

// appendText appends d's text form to buf: ivm/types' PostgreSQL output
// functions under the session's settings: floats honour its
// extra_float_digits (also inside arrays), timestamptz its TimeZone, dates
// and times its DateStyle, intervals its IntervalStyle.
func appendText(buf []byte, t types.Type, d types.Datum, s *Settings) (out []byte, err error) {
	if rv, ok := d.(RegValue); ok {
		return append(buf, rv.Name...), nil
	}
	switch t.Kind {
	case types.KindFloat4, types.KindFloat8:
		v, ok := d.(float64)
		if !ok {
			return nil, datumTypeError(t, d)
		}
		return appendFloat(buf, v, t.Kind == types.KindFloat4, s.ExtraFloatDigits()), nil
	case types.KindArray:
		v, ok := d.(types.Array)
		if !ok || t.Elem == nil {
			return nil, datumTypeError(t, d)
		}
		return appendArrayText(buf, *t.Elem, v, s)
	}
	// types.AppendFormat asserts the Datum's Go type; a wrong one is an
	// engine bug, reported as an error rather than a crashed connection.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%w (%v)", datumTypeError(t, d), r)
		}
	}()
	return types.AppendFormatStyle(buf, t, d, s.OutputStyle()), nil
}

func datumTypeError(t types.Type, d types.Datum) error {
	return fmt.Errorf("internal: datum of Go type %T for SQL type %s", d, t.SQLName())
}

// appendFloat formats like PostgreSQL's float8out/float4out: with
// extra_float_digits > 0 the shortest representation that round-trips, in
// %g style with the exponent threshold at the type's precision; otherwise
// %.{DIG+extra}g.
func appendFloat(buf []byte, v float64, isFloat4 bool, extraDigits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(buf, "NaN"...)
	case math.IsInf(v, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(v, -1):
		return append(buf, "-Infinity"...)
	}
	bits, digitsMax := 64, 15
	if isFloat4 {
		bits, digitsMax = 32, 6
	}
	if extraDigits <= 0 {
		prec := digitsMax + extraDigits
		if prec < 1 {
			prec = 1
		}
		return strconv.AppendFloat(buf, v, 'g', prec, bits)
	}
	// Shortest round-trip digits, then PostgreSQL's choice of notation:
	// exponential when the decimal exponent is < -4 or >= the type's
	// precision (15 for float8, 6 for float4).
	e := strconv.FormatFloat(v, 'e', -1, bits)
	mantissa, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp < -4 || exp >= digitsMax {
		buf = append(buf, mantissa...)
		buf = append(buf, 'e')
		if exp < 0 {
			buf = append(buf, '-')
			exp = -exp
		} else {
			buf = append(buf, '+')
		}
		if exp < 10 {
			buf = append(buf, '0')
		}
		return strconv.AppendInt(buf, int64(exp), 10)
	}
	return strconv.AppendFloat(buf, v, 'f', -1, bits)
}

// appendArrayText writes {a,b,NULL} with PostgreSQL's quoting.
func appendArrayText(buf []byte, elem types.Type, a types.Array, s *Settings) ([]byte, error) {
	buf = append(buf, '{')
	for i, v := range a.Values {
		if i > 0 {
			buf = append(buf, ',')
		}
		if v == nil {
			buf = append(buf, "NULL"...)
			continue
		}
		text, err := appendText(nil, elem, v, s)
		if err != nil {
			return nil, err
		}
		buf = appendArrayElement(buf, string(text))
	}
	return append(buf, '}'), nil
}

func appendArrayElement(buf []byte, text string) []byte {
	needQuote := text == "" || strings.EqualFold(text, "NULL")
	for i := 0; i < len(text) && !needQuote; i++ {
		switch text[i] {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			needQuote = true
		}
	}
	if !needQuote {
		return append(buf, text...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(text); i++ {
		if text[i] == '"' || text[i] == '\\' {
			buf = append(buf, '\\')
		}
		buf = append(buf, text[i])
	}
	return append(buf, '"')
}

// parseText reads a value in PostgreSQL's text input syntax (ivm/types'
// input functions; timestamptz without an offset is in the session zone,
// ambiguous dates in DateStyle's field order).
func parseText(t types.Type, text string, s *Settings) (types.Datum, error) {
	return types.ParseStyle(t, text, s.InputStyle())
}
