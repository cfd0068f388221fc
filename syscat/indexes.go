package syscat

import (
	"strings"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Indexes made by CREATE INDEX (catalog.KindIndex) are relations of their
// own (pg_class relkind 'i', oid RelationOID) with a pg_index row, their
// key columns in pg_attribute, and a pg_indexes row, as PostgreSQL shows
// them. Primary-key indexes are derived from their table (IndexOID).

// pg_index.indoption bits (PostgreSQL's INDOPTION_DESC, _NULLS_FIRST).
const (
	indexOptionDesc       = 1
	indexOptionNullsFirst = 2
)

// userIndex pairs a CREATE INDEX index with its table.
type userIndex struct {
	index, table *catalog.Relation
}

// userIndexes lists the indexes whose table is in env, in id order.
func userIndexes(env *Env) []userIndex {
	if env == nil {
		return nil
	}
	byID := map[catalog.ID]*catalog.Relation{}
	for _, r := range env.Relations {
		byID[r.ID] = r
	}
	var out []userIndex
	for _, r := range env.Relations {
		if r.Kind != catalog.KindIndex || r.Index == nil {
			continue
		}
		t := byID[r.Index.Table]
		if t == nil {
			continue
		}
		ok := true
		for _, c := range r.Index.Columns {
			ok = ok && t.ColumnIndex(c.Column) >= 0
		}
		// INVARIANT: an index's columns are its table's (there is no DROP
		// COLUMN); a violating index is left out rather than shown wrong.
		if ok {
			out = append(out, userIndex{r, t})
		}
	}
	return out
}

// tablesWithIndexes are the ids of relations with a CREATE INDEX index
// (pg_class.relhasindex, pg_tables.hasindexes).
func tablesWithIndexes(env *Env) map[catalog.ID]bool {
	out := map[catalog.ID]bool{}
	for _, ix := range userIndexes(env) {
		out[ix.table.ID] = true
	}
	return out
}

func (ix userIndex) attnums() []int64 {
	out := make([]int64, len(ix.index.Index.Columns))
	for i, c := range ix.index.Index.Columns {
		out[i] = int64(ix.table.ColumnIndex(c.Column) + 1)
	}
	return out
}

func (ix userIndex) options() []int64 {
	out := make([]int64, len(ix.index.Index.Columns))
	for i, c := range ix.index.Index.Columns {
		if c.Descending {
			out[i] |= indexOptionDesc
		}
		if c.NullsFirst {
			out[i] |= indexOptionNullsFirst
		}
	}
	return out
}

// def is pg_get_indexdef: CREATE [UNIQUE] INDEX name ON public.t USING
// btree (col [opclass] [DESC] [NULLS FIRST|LAST], …), options printed only
// where they differ from the default, as PostgreSQL prints them.
func (ix userIndex) def() string {
	cols := make([]string, len(ix.index.Index.Columns))
	for i, c := range ix.index.Index.Columns {
		s := quoteIdent(c.Column)
		if c.OperatorClass != "" {
			s += " " + c.OperatorClass
		}
		if c.Descending {
			s += " DESC"
			if !c.NullsFirst {
				s += " NULLS LAST"
			}
		} else if c.NullsFirst {
			s += " NULLS FIRST"
		}
		cols[i] = s
	}
	unique := ""
	if ix.index.Index.Unique {
		unique = "UNIQUE "
	}
	return "CREATE " + unique + "INDEX " + quoteIdent(ix.index.Name) + " ON " + quoteIdent(ix.table.SchemaName()) + "." + quoteIdent(ix.table.Name) +
		" USING btree (" + strings.Join(cols, ", ") + ")"
}

// indexesView is pg_indexes: every index of a table or materialized view,
// primary keys included.
func indexesView(env *Env) []types.Row {
	var out []types.Row
	for _, r := range env.Relations {
		if len(r.PrimaryKey) > 0 && (r.Kind == catalog.KindTable || r.Kind == catalog.KindSource) {
			out = append(out, types.Row{r.SchemaName(), r.Name, pkName(r), nil, IndexDef(r)})
		}
	}
	for _, ix := range userIndexes(env) {
		out = append(out, types.Row{ix.table.SchemaName(), ix.table.Name, ix.index.Name, nil, ix.def()})
	}
	return out
}
