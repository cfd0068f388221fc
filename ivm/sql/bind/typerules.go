package bind

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
)

// This file holds the subset of PostgreSQL's type rules the binder needs
// (type categories, implicit casts, common-type resolution, operator
// result types). NB: it is a local adapter until ivm/expr's resolution
// helpers land; the rules follow PostgreSQL 15's pg_cast/pg_operator.

// category is PostgreSQL's typcategory.
type category byte

const (
	catNumeric  category = 'N'
	catString   category = 'S'
	catBool     category = 'B'
	catDatetime category = 'D'
	catTimespan category = 'T'
	catUser     category = 'U'
	catArray    category = 'A'
	catUnknown  category = 'X'
	catOther    category = 'O'
)

func categoryOf(k types.Kind) category {
	switch {
	case k.IsNumeric(), isOIDFamily(k): // oid and reg* are category N in pg_type
		return catNumeric
	case k.IsString():
		return catString
	}
	switch k {
	case types.KindBool:
		return catBool
	case types.KindDate, types.KindTimestamp, types.KindTimestampTZ, types.KindTime:
		return catDatetime
	case types.KindInterval:
		return catTimespan
	case types.KindUnknown:
		return catUnknown
	case types.KindArray:
		return catArray
	case types.KindUUID, types.KindJSON, types.KindJSONB:
		return catUser
	}
	return catOther
}

// datetimeRank orders date < timestamp < timestamptz (implicit casts).
func datetimeRank(k types.Kind) int {
	switch k {
	case types.KindDate:
		return 1
	case types.KindTimestamp:
		return 2
	case types.KindTimestampTZ:
		return 3
	}
	return 0
}

// implicitCastOK reports whether PostgreSQL casts from → to implicitly.
func implicitCastOK(from, to types.Type) bool {
	if from.Kind == to.Kind {
		return true
	}
	if from.Kind == types.KindUnknown {
		return true
	}
	if from.Kind.IsNumeric() && to.Kind.IsNumeric() {
		return expr.NumericRank(from.Kind) < expr.NumericRank(to.Kind)
	}
	if from.Kind.IsString() && to.Kind.IsString() {
		// char/varchar/name → text, text → varchar are implicit.
		return true
	}
	if datetimeRank(from.Kind) > 0 && datetimeRank(to.Kind) > 0 {
		return datetimeRank(from.Kind) < datetimeRank(to.Kind)
	}
	// PostgreSQL: integers → oid/reg* and oid ↔ reg* are implicit, and
	// oid → int8 (catalog queries compare c.reloftype = 0, oid = $1).
	if isOIDFamily(to.Kind) {
		return from.Kind.IsInteger() || isOIDFamily(from.Kind)
	}
	if isOIDFamily(from.Kind) && to.Kind == types.KindInt8 {
		return true
	}
	return false
}

// isOIDFamily reports oid and the reg* alias types.
func isOIDFamily(k types.Kind) bool {
	switch k {
	case types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return true
	}
	return false
}

// explicitCastOK reports whether CAST(from AS to) exists.
func explicitCastOK(from, to types.Type) bool {
	if implicitCastOK(from, to) || implicitCastOK(to, from) {
		return true
	}
	fc, tc := categoryOf(from.Kind), categoryOf(to.Kind)
	// Every type has I/O conversion casts to and from the string types.
	if fc == catString || tc == catString {
		return true
	}
	switch {
	case fc == catNumeric && tc == catNumeric:
		return true
	case from.Kind == types.KindBool && to.Kind == types.KindInt4, from.Kind == types.KindInt4 && to.Kind == types.KindBool:
		return true
	case fc == catDatetime && tc == catDatetime:
		return from.Kind != types.KindTime && to.Kind != types.KindTime || from.Kind == to.Kind ||
			(from.Kind == types.KindTimestamp || from.Kind == types.KindTimestampTZ) && to.Kind == types.KindTime
	case from.Kind == types.KindTime && to.Kind == types.KindInterval, from.Kind == types.KindInterval && to.Kind == types.KindTime:
		return true
	case (from.Kind == types.KindJSON && to.Kind == types.KindJSONB) || (from.Kind == types.KindJSONB && to.Kind == types.KindJSON):
		return true
	case isOIDFamily(from.Kind) && to.Kind.IsInteger():
		return true
	}
	return false
}

// preferred is the preferred type of a category.
func preferred(c category) types.Type {
	switch c {
	case catNumeric:
		return types.TFloat8
	case catString:
		return types.TText
	case catDatetime:
		return types.TTimestampTZ
	case catTimespan:
		return types.TInterval
	case catBool:
		return types.TBool
	}
	return types.TUnknown
}

// commonType implements PostgreSQL's select_common_type for UNION, CASE,
// COALESCE, IN lists and VALUES: all unknown → text; otherwise the first
// non-unknown type's category must be shared, and the result is the type
// every other input casts to implicitly (preferring the preferred type).
// ok is false on a category mismatch (42804).
func commonType(ts []types.Type) (types.Type, bool) {
	var result types.Type
	found := false
	for _, t := range ts {
		if t.Kind == types.KindUnknown {
			continue
		}
		if !found {
			result, found = t, true
			continue
		}
		if categoryOf(t.Kind) != categoryOf(result.Kind) {
			return types.Type{}, false
		}
		if result.Equal(t) {
			continue
		}
		if result.Kind == t.Kind {
			// Same kind, different modifiers: drop the modifier.
			result = types.Type{Kind: t.Kind, Typmod: -1, Elem: t.Elem}
			continue
		}
		pref := preferred(categoryOf(result.Kind))
		if result.Kind != pref.Kind && implicitCastOK(result, t) && (!implicitCastOK(t, result) || t.Kind == pref.Kind) {
			result = t
		}
	}
	if !found {
		return types.TText, true
	}
	for _, t := range ts {
		if t.Kind != types.KindUnknown && !implicitCastOK(t, result) {
			return types.Type{}, false
		}
	}
	return result, true
}

// arithmeticResult is the result type of + - * / % over two numeric
// types: the wider of the two along int2 < int4 < int8 < numeric, and
// float8 whenever a float meets anything but the same float.
func arithmeticResult(l, r types.Type) types.Type {
	lr, rr := expr.NumericRank(l.Kind), expr.NumericRank(r.Kind)
	if l.Kind == types.KindFloat4 && r.Kind == types.KindFloat4 {
		return types.TFloat4
	}
	if l.Kind == types.KindFloat4 || r.Kind == types.KindFloat4 || l.Kind == types.KindFloat8 || r.Kind == types.KindFloat8 {
		return types.TFloat8
	}
	hi := l.Kind
	if rr > lr {
		hi = r.Kind
	}
	return types.Type{Kind: hi, Typmod: -1}
}

// baseType drops typmods (operators work on unmodified types).
func baseType(t types.Type) types.Type {
	return types.Type{Kind: t.Kind, Typmod: -1, Elem: t.Elem}
}

// assignmentCastOK reports PostgreSQL's assignment casts (INSERT/UPDATE
// values, defaults): implicit casts plus numeric narrowing, string
// narrowing and datetime narrowing.
func assignmentCastOK(from, to types.Type) bool {
	if implicitCastOK(from, to) {
		return true
	}
	fc, tc := categoryOf(from.Kind), categoryOf(to.Kind)
	switch {
	case fc == catNumeric && tc == catNumeric:
		return true
	case fc == catString && tc == catString:
		return true
	case fc == catDatetime && tc == catDatetime:
		return from.Kind != types.KindTime && to.Kind != types.KindTime
	case to.Kind == types.KindText || to.Kind == types.KindVarchar || to.Kind == types.KindChar:
		// Every type has an assignment cast to the string types (I/O).
		return true
	}
	return false
}
