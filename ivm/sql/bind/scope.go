package bind

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// scopeCol is one column visible to name resolution: column Index of the
// current row, reachable as `table.name` and (unless qualifiedOnly) `name`.
type scopeCol struct {
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
	// tables lists the range-table names (for `t.*` and error messages).
	tables []string
}

// lookupColumn resolves a possibly qualified column reference in this
// scope only. found=false means "not here" (try the parent).
func (s *scope) lookupColumn(table, name string, pos int) (col scopeCol, found bool, err error) {
	matches := 0
	for _, c := range s.cols {
		if c.name != name {
			continue
		}
		if table == "" {
			if c.qualifiedOnly {
				continue
			}
		} else if c.table != table || c.unqualifiedOnly {
			continue
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
		if t == table {
			return true
		}
	}
	return false
}
