package bind

import (
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// scopeCol is one column visible to name resolution: column Index of the
// current row, reachable as `table.name` and (unless qualifiedOnly) `name`.
type scopeCol struct {
	// schema is the schema of an unaliased relation's columns ("" for
	// aliased and computed ones), for schema.table.column references.
	schema   string
	table    string
	name     string
	index    int
	typ      types.Type
	nullable bool
	// qualifiedOnly hides the column from unqualified lookup (the input
	// columns of a USING/NATURAL join, whose merged column takes the name).
	qualifiedOnly bool
	// unqualifiedOnly hides the column from qualified lookup (a merged
	// USING column of an unnamed join).
	unqualifiedOnly bool
	// rel and relCol identify the base-table column this is (nil for
	// computed columns), for functional dependencies on primary keys.
	rel    *catalog.Relation
	relCol int
	// origin is where the column comes from as PostgreSQL's
	// RowDescription reports it (resorigtbl/resorigcol): the table,
	// materialized view or (unexpanded) view named in FROM, traced through
	// subqueries and CTEs.
	origin Origin
}

// Origin is the relation column a result column is a plain reference to
// (Relation nil: computed, or not from a relation).
type Origin struct {
	Relation *catalog.Relation
	Column   int // 0-based column position
}

// originOf is the origin of the FROM-row column at index.
func (s *scope) originOf(index int) Origin {
	for _, c := range s.cols {
		if c.index == index && c.origin.Relation != nil {
			return c.origin
		}
	}
	return Origin{}
}

// withOrigins sets the origins of a relation scope's columns.
func (s *scope) withOrigins(origins []Origin) *scope {
	for i := range s.cols {
		if i < len(origins) {
			s.cols[i].origin = origins[i]
		}
	}
	return s
}

// relationOrigins are the origins of every column of rel.
func relationOrigins(rel *catalog.Relation, n int) []Origin {
	out := make([]Origin, n)
	for i := range out {
		out[i] = Origin{Relation: rel, Column: i}
	}
	return out
}

// scope is the set of columns a FROM clause makes visible. star lists the
// scopeCol positions `*` expands to, in order.
type scope struct {
	parent *scope
	cols   []scopeCol
	star   []int
	// tables lists the range-table names (for `t.*` and error messages);
	// an unaliased relation's entry is its name, NUL, and the relation's
	// id (tableName strips it), so that public.t and s.t may both be in
	// one FROM, as in PostgreSQL.
	tables []string
}

// lookupColumn resolves a possibly qualified column reference in this
// scope only. found=false means "not here" (try the parent).
func (s *scope) lookupColumn(schema, table, name string, pos int) (col scopeCol, found bool, err error) {
	matches := 0
	for _, c := range s.cols {
		if c.name != name {
			continue
		}
		if table == "" {
			if c.qualifiedOnly {
				continue
			}
		} else if c.table != table || c.unqualifiedOnly || (schema != "" && c.schema != schema) {
			continue
		}
		if matches > 0 && table != "" && schema == "" && c.schema != col.schema {
			return scopeCol{}, true, errcode.New(errcode.SQLAmbiguousColumn, "table reference \"%s\" is ambiguous", table).WithSQLState("42P09").WithPosition(pos)
		}
		matches++
		col = c
	}
	switch {
	case matches == 0:
		return scopeCol{}, false, nil
	case matches > 1:
		ref := name
		if table != "" {
			ref = table + "." + name
		}
		return scopeCol{}, true, errcode.New(errcode.SQLAmbiguousColumn, "column reference \"%s\" is ambiguous", ref).WithPosition(pos)
	}
	return col, true, nil
}

func (s *scope) hasTable(table string) bool {
	for _, t := range s.tables {
		if tableName(t) == table {
			return true
		}
	}
	return false
}

// conflicts reports whether range-table entry t (of scope.tables) may not
// join this scope: PostgreSQL refuses two entries of one name unless both
// are unaliased references to different relations.
func (s *scope) conflicts(t string) bool {
	for _, u := range s.tables {
		if tableName(u) != tableName(t) {
			continue
		}
		if u == t || !strings.Contains(u, "\x00") || !strings.Contains(t, "\x00") {
			return true
		}
	}
	return false
}

// tableName is a scope.tables entry's name.
func tableName(t string) string {
	if i := strings.IndexByte(t, 0); i >= 0 {
		return t[:i]
	}
	return t
}
