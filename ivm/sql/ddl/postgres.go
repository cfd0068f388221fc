package ddl

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// PostgresSource is CREATE SOURCE name FROM POSTGRES (...): change data
// capture from a PostgreSQL publication over logical replication
// (pgoutput). The tables of the publication and their columns are
// discovered from the upstream server when the source is created, not
// here: this package does no I/O.
//
//	CREATE SOURCE pg FROM POSTGRES (connection = 'postgres://u@host/db', publication = 'p')
//	CREATE SOURCE pg FROM POSTGRES (connection = '...', publication = 'p', slot = 'my_slot')
type PostgresSource struct {
	// Connection is a libpq connection string or URL of the upstream
	// database.
	Connection string
	// Publication names the upstream publication whose tables are
	// mirrored.
	Publication string
	// Slot is the replication slot's name; "" lets CREATE SOURCE draw
	// one (stored in the source's definition from then on).
	Slot string
}

// slotNameBytesMax is PostgreSQL's NAMEDATALEN-1, the longest slot name.
const slotNameBytesMax = 63

func postgresSource(cs *parse.CreateSource, out *CreateSource) error {
	bad := func(format string, args ...any) error {
		return errcode.New(errcode.SQLInvalidParameterValue, format, args...)
	}
	ps := &PostgresSource{}
	seen := map[string]bool{}
	for _, o := range cs.Postgres {
		if seen[o.Key] {
			return bad("POSTGRES option %s given twice", o.Key)
		}
		seen[o.Key] = true
		if !o.Value.IsString {
			return bad("POSTGRES option %s must be a string, got %s", o.Key, o.Value.Text)
		}
		switch o.Key {
		case "connection":
			ps.Connection = o.Value.Text
		case "publication":
			ps.Publication = o.Value.Text
		case "slot":
			if !validSlotName(o.Value.Text) {
				return bad("POSTGRES option slot must be 1 to %d lower-case letters, digits or underscores, got %q", slotNameBytesMax, o.Value.Text)
			}
			ps.Slot = o.Value.Text
		default:
			return bad("unknown POSTGRES option %s (have connection, publication, slot)", o.Key)
		}
	}
	if ps.Connection == "" {
		return bad("CREATE SOURCE ... FROM POSTGRES needs connection = '<connection string>'")
	}
	if ps.Publication == "" {
		return bad("CREATE SOURCE ... FROM POSTGRES needs publication = '<publication name>'")
	}
	out.Postgres = ps
	return nil
}

// validSlotName is PostgreSQL's rule for replication slot names.
func validSlotName(s string) bool {
	if s == "" || len(s) > slotNameBytesMax {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// ResolveColumnType resolves a column type written as SQL (as
// format_type prints it, e.g. "numeric(10,2)" or "timestamp with time
// zone") to a RockStream type.
func ResolveColumnType(column, typeSQL string) (types.Type, error) {
	return sourceColumnType(column, typeSQL)
}
