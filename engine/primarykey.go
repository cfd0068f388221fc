package engine

import (
	"context"
	"sort"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
)

// addPrimaryKey runs ALTER TABLE t ADD [CONSTRAINT c] PRIMARY KEY (cols) on
// a table that has none (e.g. pgbench -i, which loads its tables first).
// As in PostgreSQL the rows are checked first — a duplicated key fails with
// 23505 (`could not create unique index "t_pkey"`, Key (...)=(...) is
// duplicated), then a NULL in a key column with 23502 — and the key
// columns become NOT NULL. The catalog change then makes the shard re-key
// the stored rows (actors/shard/rekey.go); views over the table do not
// change, since its rows do not. If the shard finds the rows changed since
// the check (a concurrent write added a duplicate), the catalog change is
// reverted and its error returned.
func (s *session) addPrimaryKey(ctx context.Context, snap *control.Snapshot, st *ddl.AddPrimaryKey) error {
	rel, ok := snap.LookupRelation([]string{st.Table})
	if !ok {
		return errcode.New(errcode.SQLUndefinedTable, "relation %q does not exist", st.Table)
	}
	if rel.Kind != catalog.KindTable {
		return errcode.New(errcode.WrongObjectType, "%q is not a table", st.Table).WithSQLState("42809")
	}
	cols := make([]int, len(st.Columns))
	for i, name := range st.Columns {
		cols[i] = rel.ColumnIndex(name)
		if cols[i] < 0 {
			return errcode.New(errcode.SQLUndefinedColumn, "column %q of relation %q does not exist", name, st.Table)
		}
	}
	if len(rel.PrimaryKey) > 0 {
		return errcode.New(errcode.SQLSemanticError, "multiple primary keys for table %q are not allowed", st.Table).WithSQLState("42P16")
	}
	if rel.InsertOnly {
		return errcode.New(errcode.SQLInvalidParameterValue, "an insert_only table cannot have a PRIMARY KEY").WithSQLState("22023")
	}
	batches, err := s.readSnapshot(ctx, snap, []*catalog.Relation{rel})
	if err != nil {
		return err
	}
	index := (&catalog.Relation{Name: rel.Name, PrimaryKeyName: st.Name}).PrimaryKeyConstraint()
	if err := checkNewPrimaryKey(rel, cols, index, batches[rel.ID].Rows, s.outputStyle()); err != nil {
		return err
	}
	if _, err := s.control(ctx, control.SetPrimaryKey{Table: st.Table, Columns: cols, Name: st.Name}); err != nil {
		return err
	}
	if err := s.syncShard(ctx, true); err != nil {
		if _, rerr := s.control(ctx, control.SetPrimaryKey{Table: st.Table, Revert: true, Previous: rel}); rerr != nil {
			return errcode.Wrap(errcode.InternalError, rerr, "reverting the primary key of %q after: %v", st.Table, err)
		}
		_ = s.syncShard(ctx, true)
		return err
	}
	// NB: a session's own pending inserts into the table (made before the
	// ALTER in this transaction) carry no key; the shard checks them like
	// new inserts when they commit.
	return nil
}

// checkNewPrimaryKey checks rows for a primary key on cols the way
// PostgreSQL's ADD PRIMARY KEY does: first the unique index (rows with a
// NULL key never collide), then NOT NULL. Among several duplicated keys
// the smallest is reported.
func checkNewPrimaryKey(rel *catalog.Relation, cols []int, index string, rows []types.Row, st types.OutputStyle) error {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = rel.Columns[c].Type
	}
	keyed := &catalog.Relation{Name: rel.Name, Columns: rel.Columns, PrimaryKey: cols}
	type entry struct {
		enc string
		key types.Row
	}
	var keys []entry
	nullCol := -1
	for _, r := range rows {
		k := pkOf(keyed, r)
		hasNull := false
		for i, d := range k {
			if d == nil {
				hasNull = true
				if nullCol < 0 || cols[i] < nullCol {
					nullCol = cols[i]
				}
			}
		}
		if !hasNull {
			keys = append(keys, entry{enc: encodePK(keyed, k), key: k})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].enc < keys[j].enc })
	for i := 1; i < len(keys); i++ {
		if keys[i].enc == keys[i-1].enc {
			return errcode.New(errcode.UniqueViolation, "could not create unique index %q", index).
				WithDetail("Key %s is duplicated.", describeKey(keyed, keys[i].key, st))
		}
	}
	if nullCol >= 0 {
		return errcode.New(errcode.NotNullViolation, "column %q of relation %q contains null values", rel.Columns[nullCol].Name, rel.Name)
	}
	return nil
}
