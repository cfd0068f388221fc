package sqltest

import (
	"sort"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Store is an in-memory table store for tests: each relation's rows, in
// insertion order. It implements the ad-hoc Snapshot interface.
type Store struct {
	Rows map[catalog.ID][]types.Row
}

// NewStore makes an empty store.
func NewStore() *Store { return &Store{Rows: map[catalog.ID][]types.Row{}} }

// ScanRelation implements sql.Snapshot.
func (s *Store) ScanRelation(rel *catalog.Relation) (zset.Batch, error) {
	var b zset.Batch
	for _, r := range s.Rows[rel.ID] {
		b.Add(r, 1)
	}
	return b, nil
}

// Insert adds rows, enforcing NOT NULL and primary-key uniqueness like the
// table writer does; it returns the delta.
func (s *Store) Insert(rel *catalog.Relation, rows []types.Row) (zset.Batch, error) {
	var delta zset.Batch
	for _, r := range rows {
		for i, c := range rel.Columns {
			if c.NotNull && r[i] == nil {
				return zset.Batch{}, errcode.New(errcode.SQLSemanticError, "null value in column \"%s\" of relation \"%s\" violates not-null constraint", c.Name, rel.Name).WithSQLState("23502")
			}
		}
		if len(rel.PrimaryKey) > 0 {
			for _, old := range s.Rows[rel.ID] {
				if samePK(rel, old, r) {
					return zset.Batch{}, errcode.New(errcode.SQLSemanticError, "duplicate key value violates unique constraint \"%s_pkey\"", rel.Name).WithSQLState("23505")
				}
			}
		}
		s.Rows[rel.ID] = append(s.Rows[rel.ID], r)
		delta.Add(r, 1)
	}
	return delta, nil
}

// Delete removes one occurrence of each row; it returns the delta.
func (s *Store) Delete(rel *catalog.Relation, rows []types.Row) zset.Batch {
	var delta zset.Batch
	for _, r := range rows {
		cur := s.Rows[rel.ID]
		for i, old := range cur {
			if sameRow(rel, old, r) {
				s.Rows[rel.ID] = append(cur[:i:i], cur[i+1:]...)
				delta.Add(old, -1)
				break
			}
		}
	}
	return delta
}

func samePK(rel *catalog.Relation, a, b types.Row) bool {
	for _, k := range rel.PrimaryKey {
		if !types.Equal(rel.Columns[k].Type, a[k], b[k]) {
			return false
		}
	}
	return true
}

func sameRow(rel *catalog.Relation, a, b types.Row) bool {
	for i, c := range rel.Columns {
		if !types.Equal(c.Type, a[i], b[i]) {
			return false
		}
	}
	return true
}

// FormatRows renders rows one per line with PostgreSQL's text format
// (NULL as "NULL"), sorted unless ordered is set.
func FormatRows(ts []types.Type, rows []types.Row, ordered bool) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			if v == nil {
				parts[j] = "NULL"
			} else {
				parts[j] = types.Format(ts[j], v)
			}
		}
		lines[i] = strings.Join(parts, " | ")
	}
	if !ordered {
		sort.Strings(lines)
	}
	if len(lines) == 0 {
		return "(no rows)\n"
	}
	return strings.Join(lines, "\n") + "\n"
}
