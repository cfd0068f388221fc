package expr

import (
	"strconv"

	"github.com/rockstream/rockstream/ivm/types"
)

// RelationNamer is implemented by a CatalogInfo that can name relations
// by pg_class oid (for regclass output).
type RelationNamer interface {
	// RelationName is the relation as regclassout prints it: quoted where
	// needed, schema-qualified when not visible in the search path.
	RelationName(oid int64) (string, bool)
}

// RegOut is the text form of an oid alias type value, as PostgreSQL's
// regtypeout / regclassout print it: the name, "-" for 0, and the number
// when nothing has that oid.
func RegOut(env *Env, k types.Kind, oid int64) string {
	if oid == 0 && k != types.KindOID {
		return "-"
	}
	switch k {
	case types.KindRegType:
		if _, ok := types.FromOID(uint32(oid)); ok {
			return FormatType(oid, 0, false)
		}
	case types.KindRegClass:
		if c, ok := catalogOf(env).(RelationNamer); ok {
			if name, ok := c.RelationName(oid); ok {
				return name
			}
		}
	}
	return strconv.FormatInt(oid, 10)
}

// IsRegType reports the oid alias types whose text form is a name.
func IsRegType(k types.Kind) bool {
	return k == types.KindRegType || k == types.KindRegClass
}
