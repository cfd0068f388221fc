package expr

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// PostgreSQL's type categories (pg_type.typcategory) and preferred types,
// which drive implicit casts, operator and function resolution and
// select_common_type.

// Category is a type category.
type Category byte

// Categories.
const (
	CatUnknown  Category = 'X'
	CatBool     Category = 'B'
	CatNumeric  Category = 'N'
	CatString   Category = 'S'
	CatDateTime Category = 'D'
	CatTimespan Category = 'T'
	CatUser     Category = 'U'
	CatArray    Category = 'A'
	CatPseudo   Category = 'P'
)

// TypeCategory returns t's category.
func TypeCategory(t types.Type) Category {
	switch t.Kind {
	case types.KindUnknown:
		return CatUnknown
	case types.KindBool:
		return CatBool
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindFloat4, types.KindFloat8, types.KindNumeric,
		types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return CatNumeric
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName:
		return CatString
	case types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return CatDateTime
	case types.KindInterval:
		return CatTimespan
	case types.KindArray:
		return CatArray
	case types.KindRecord, types.KindVoid:
		return CatPseudo
	}
	return CatUser
}

// IsPreferred reports PostgreSQL's preferred type of each category.
func IsPreferred(t types.Type) bool {
	switch t.Kind {
	case types.KindFloat8, types.KindText, types.KindTimestampTZ, types.KindInterval, types.KindBool, types.KindOID:
		return true
	}
	return false
}

// CanImplicitCast reports whether PostgreSQL converts from to to implicitly
// (pg_cast castcontext 'i', binary-coercible pairs and unknown literals).
func CanImplicitCast(from, to types.Type) bool {
	if from.Kind == to.Kind {
		if from.Kind == types.KindArray {
			return from.Elem != nil && to.Elem != nil && (from.Elem.Kind == to.Elem.Kind || CanImplicitCast(*from.Elem, *to.Elem))
		}
		return true
	}
	if from.Kind == types.KindUnknown {
		return true
	}
	switch from.Kind {
	case types.KindInt2:
		switch to.Kind {
		case types.KindInt4, types.KindInt8, types.KindNumeric, types.KindFloat4, types.KindFloat8, types.KindOID:
			return true
		}
	case types.KindInt4:
		switch to.Kind {
		case types.KindInt8, types.KindNumeric, types.KindFloat4, types.KindFloat8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
			return true
		}
	case types.KindInt8:
		switch to.Kind {
		case types.KindNumeric, types.KindFloat4, types.KindFloat8, types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
			return true
		}
	case types.KindNumeric:
		return to.Kind == types.KindFloat4 || to.Kind == types.KindFloat8
	case types.KindFloat4:
		return to.Kind == types.KindFloat8
	case types.KindText:
		return to.Kind == types.KindVarchar || to.Kind == types.KindChar || to.Kind == types.KindName
	case types.KindVarchar:
		return to.Kind == types.KindText || to.Kind == types.KindChar || to.Kind == types.KindName
	case types.KindChar:
		return to.Kind == types.KindText || to.Kind == types.KindVarchar || to.Kind == types.KindName
	case types.KindName:
		return to.Kind == types.KindText
	case types.KindDate:
		return to.Kind == types.KindTimestamp || to.Kind == types.KindTimestampTZ
	case types.KindTimestamp:
		return to.Kind == types.KindTimestampTZ
	case types.KindTime:
		return to.Kind == types.KindInterval
	case types.KindOID, types.KindRegClass, types.KindRegType, types.KindRegProc, types.KindRegNamespace:
		return to.Kind == types.KindOID || to.Kind == types.KindRegClass || to.Kind == types.KindRegType || to.Kind == types.KindRegProc || to.Kind == types.KindRegNamespace
	case types.KindJSON:
		return to.Kind == types.KindJSONB
	}
	return false
}

// CommonType resolves the type of CASE/COALESCE/UNION/IN/GREATEST branches
// as PostgreSQL's select_common_type does: the first non-unknown type,
// replaced by a later one of the same category when the current type is not
// preferred and converts implicitly to it (but not back). All-unknown
// inputs resolve to text. context names the construct in the error
// ("CASE", "COALESCE", "UNION", ...).
func CommonType(context string, ts ...types.Type) (types.Type, error) {
	var ptype types.Type
	found := false
	for _, t := range ts {
		if t.Kind != types.KindUnknown {
			ptype = t
			found = true
			break
		}
	}
	if !found {
		return types.TText, nil
	}
	pcat := TypeCategory(ptype)
	ppref := IsPreferred(ptype)
	for _, nt := range ts {
		if nt.Kind == types.KindUnknown || nt.Equal(ptype) {
			continue
		}
		if nt.Kind == ptype.Kind && nt.Kind != types.KindArray {
			continue
		}
		ncat := TypeCategory(nt)
		if ncat != pcat {
			return types.Type{}, errcode.New(errcode.DatatypeMismatch, "%s types %s and %s cannot be matched", context, ptype, nt).WithSQLState(StateDatatypeMismatch)
		}
		if !ppref && CanImplicitCast(ptype, nt) && !CanImplicitCast(nt, ptype) {
			ptype = nt
			pcat = ncat
			ppref = IsPreferred(nt)
		}
	}
	// The modifier survives only if every input has exactly this type
	// (PostgreSQL's select_common_typmod).
	for _, t := range ts {
		if t.Kind != types.KindUnknown && !t.Equal(ptype) {
			ptype.Typmod = -1
			if ptype.Kind == types.KindArray && ptype.Elem != nil {
				e := *ptype.Elem
				e.Typmod = -1
				ptype.Elem = &e
			}
			break
		}
	}
	return ptype, nil
}

// NumericRank orders the numeric kinds along PostgreSQL's implicit-cast
// chain int2 → int4 → int8 → numeric → float4 → float8 (0 for others).
func NumericRank(k types.Kind) int {
	switch k {
	case types.KindInt2:
		return 1
	case types.KindInt4:
		return 2
	case types.KindInt8:
		return 3
	case types.KindNumeric:
		return 4
	case types.KindFloat4:
		return 5
	case types.KindFloat8:
		return 6
	}
	return 0
}

// promoteNumeric is the type both operands of a numeric operator are
// converted to. float4 with anything wider than float4 (or with an integer
// or numeric) computes in float8, as PostgreSQL resolves those operators.
func promoteNumeric(a, b types.Kind) types.Type {
	ra, rb := NumericRank(a), NumericRank(b)
	if a == types.KindFloat4 && b == types.KindFloat4 {
		return types.TFloat4
	}
	if a == types.KindFloat4 || b == types.KindFloat4 {
		return types.TFloat8
	}
	r := ra
	if rb > r {
		r = rb
	}
	switch r {
	case 1:
		return types.TInt2
	case 2:
		return types.TInt4
	case 3:
		return types.TInt8
	case 4:
		return types.TNumeric
	}
	return types.TFloat8
}

func isNumericKind(k types.Kind) bool { return NumericRank(k) > 0 }
