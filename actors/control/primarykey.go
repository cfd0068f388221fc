package control

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// SetPrimaryKey → DDLResult (ALTER TABLE ... ADD PRIMARY KEY). The session
// has checked the table's rows (no NULL, no duplicate key); the shard
// re-keys the stored rows when it adopts the new catalog
// (actors/shard/rekey.go). Revert puts Previous back instead, for a shard
// that refused the re-keying (rows changed between the check and it).
type SetPrimaryKey struct {
	Table string
	// Columns are column indexes in key order (they become NOT NULL).
	Columns []int
	// Name is the constraint's name ("" = table_pkey).
	Name string
	// Revert, with Previous, undoes an earlier SetPrimaryKey of the table.
	Revert   bool
	Previous *catalog.Relation
}

func (a *Actor) setPrimaryKey(m SetPrimaryKey) (DDLResult, error) {
	rel, err := a.table(m.Table)
	if err != nil {
		return DDLResult{}, err
	}
	var altered catalog.Relation
	if m.Revert {
		if m.Previous == nil || m.Previous.ID != rel.ID {
			return DDLResult{}, errcode.New(errcode.InternalError, "cannot revert the primary key of %q: the table was replaced", m.Table)
		}
		altered = *m.Previous
		// Columns added since stay (nothing but the key is undone).
		altered.Columns = append([]catalog.Column(nil), rel.Columns...)
		for _, k := range rel.PrimaryKey {
			if k < len(m.Previous.Columns) {
				altered.Columns[k].NotNull = m.Previous.Columns[k].NotNull
			}
		}
	} else {
		if len(rel.PrimaryKey) > 0 {
			return DDLResult{}, errcode.New(errcode.SQLSemanticError, "multiple primary keys for table %q are not allowed", m.Table).WithSQLState("42P16")
		}
		if rel.InsertOnly {
			return DDLResult{}, errcode.New(errcode.SQLInvalidParameterValue, "an insert_only table cannot have a PRIMARY KEY").WithSQLState("22023")
		}
		if err := a.checkAlterLateRows(rel, "add a primary key to"); err != nil {
			return DDLResult{}, err
		}
		altered = *rel
		altered.Columns = append([]catalog.Column(nil), rel.Columns...)
		for _, k := range m.Columns {
			if k < 0 || k >= len(altered.Columns) {
				return DDLResult{}, errcode.New(errcode.InternalError, "primary key column %d of %q out of range", k, m.Table)
			}
			altered.Columns[k].NotNull = true
		}
		altered.PrimaryKey = append([]int(nil), m.Columns...)
		altered.PrimaryKeyAdded = true
		altered.PrimaryKeyName = m.Name
	}
	next := a.snap.clone()
	next.put(&altered, a.snap.deps[rel.ID])
	if err := a.commit(next, []*catalog.Relation{&altered}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &altered}, nil
}
