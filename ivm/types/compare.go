package types

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Compare orders two non-NULL datums of type t as PostgreSQL's btree
// comparison does: floats with NaN above every other value and equal to
// itself and -0 equal to 0; numerics exactly (-Infinity < finite < Infinity <
// NaN, 1.0 = 1.00); text bytewise (C collation); char(n) ignoring trailing
// spaces; intervals by total duration with 1 month = 30 days; arrays element
// by element (NULL elements last), then by length; jsonb in its btree order
// (CompareJSONB).
//
// Compare panics if either datum is nil; use CompareNullsLast/First when
// NULLs are possible.
func Compare(t Type, a, b Datum) int {
	if a == nil || b == nil {
		panic("types.Compare: NULL datum")
	}
	switch t.Kind {
	case KindBool:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case KindInt2, KindInt4, KindInt8, KindOID, KindRegClass, KindRegType, KindRegProc, KindRegNamespace:
		return cmpInt(a.(int64), b.(int64))
	case KindFloat4, KindFloat8:
		return CompareFloat(a.(float64), b.(float64))
	case KindNumeric:
		return CompareNumeric(a.(*apd.Decimal), b.(*apd.Decimal))
	case KindText, KindVarchar, KindName, KindUnknown, KindJSON:
		return strings.Compare(a.(string), b.(string))
	case KindJSONB:
		return CompareJSONB(a.(string), b.(string))
	case KindChar:
		return strings.Compare(TrimBpchar(a.(string)), TrimBpchar(b.(string)))
	case KindBytea:
		return bytes.Compare(a.([]byte), b.([]byte))
	case KindDate:
		return cmpInt(int64(a.(Date)), int64(b.(Date)))
	case KindTime:
		return cmpInt(int64(a.(TimeOfDay)), int64(b.(TimeOfDay)))
	case KindTimestamp:
		return cmpInt(int64(a.(Timestamp)), int64(b.(Timestamp)))
	case KindTimestampTZ:
		return cmpInt(int64(a.(TimestampTZ)), int64(b.(TimestampTZ)))
	case KindInterval:
		return CompareInterval(a.(Interval), b.(Interval))
	case KindUUID:
		x, y := a.(UUID), b.(UUID)
		return bytes.Compare(x[:], y[:])
	case KindArray:
		return compareArrays(t, a.(Array), b.(Array))
	}
	panic(fmt.Sprintf("types.Compare: unsupported type %s", t))
}

// CompareNullsLast is Compare with NULL greater than every value (PostgreSQL's
// default for ASC).
func CompareNullsLast(t Type, a, b Datum) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return Compare(t, a, b)
}

// CompareNullsFirst is Compare with NULL smaller than every value.
func CompareNullsFirst(t Type, a, b Datum) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return Compare(t, a, b)
}

// Equal reports whether two datums of type t are equal in PostgreSQL's sense
// (Compare == 0); two NULLs are equal here (IS NOT DISTINCT FROM), which is
// what grouping and Z-set consolidation need.
func Equal(t Type, a, b Datum) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch t.Kind {
	case KindInt2, KindInt4, KindInt8, KindOID:
		return a.(int64) == b.(int64)
	case KindText, KindVarchar:
		return a.(string) == b.(string)
	}
	return Compare(t, a, b) == 0
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// CompareFloat orders floats as PostgreSQL does: NaN is equal to NaN and
// above every other value; -0 equals 0.
func CompareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// numericRank orders the forms: -Infinity, finite, +Infinity, NaN.
func numericRank(d *apd.Decimal) int {
	switch d.Form {
	case apd.Finite:
		return 1
	case apd.Infinite:
		if d.Negative {
			return 0
		}
		return 2
	}
	return 3 // NaN, NaNSignaling
}

// CompareNumeric orders numerics exactly: -Infinity < finite < Infinity <
// NaN, NaN = NaN, and 1.0 = 1.00.
func CompareNumeric(x, y *apd.Decimal) int {
	rx, ry := numericRank(x), numericRank(y)
	if rx != ry || rx != 1 {
		return cmpInt(int64(rx), int64(ry))
	}
	return x.Cmp(y)
}

// CompareInterval orders intervals by their total span (1 month = 30 days,
// 1 day = 24 hours), as PostgreSQL's interval_cmp does.
func CompareInterval(x, y Interval) int {
	sx, sy := x.Span(), y.Span()
	if c := cmpInt(sx.Days, sy.Days); c != 0 {
		return c
	}
	return cmpInt(sx.Micros, sy.Micros)
}

// TrimBpchar drops the trailing spaces char(n) ignores in comparisons.
func TrimBpchar(s string) string { return strings.TrimRight(s, " ") }

func compareArrays(t Type, x, y Array) int {
	elem := x.Elem
	if t.Elem != nil {
		elem = *t.Elem
	}
	n := len(x.Values)
	if len(y.Values) < n {
		n = len(y.Values)
	}
	for i := 0; i < n; i++ {
		if c := CompareNullsLast(elem, x.Values[i], y.Values[i]); c != 0 {
			return c
		}
	}
	return cmpInt(int64(len(x.Values)), int64(len(y.Values)))
}

// CompareRows compares rows column by column with NULLs last (ascending).
func CompareRows(ts []Type, a, b Row) int {
	for i, t := range ts {
		if c := CompareNullsLast(t, a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// EqualRows reports column-wise Equal (NULL equals NULL).
func EqualRows(ts []Type, a, b Row) bool {
	for i, t := range ts {
		if !Equal(t, a[i], b[i]) {
			return false
		}
	}
	return true
}

// Types returns the column types of a schema.
func (s Schema) Types() []Type {
	out := make([]Type, len(s))
	for i, c := range s {
		out[i] = c.Type
	}
	return out
}
