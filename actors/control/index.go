package control

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Indexes (CREATE INDEX) are catalog relations of KindIndex that name
// their table by id. On a table with a primary key the table shard keeps
// the index's entries (actors/shard/index.go); elsewhere an index is a
// name and a definition only. Either way it
// takes a relation name (unique among tables, views, sequences and the
// primary-key indexes), shows in pg_indexes and pg_class, survives a
// restart like any relation, and goes when its table is dropped.

// CreateIndex → DDLResult (CREATE INDEX).
type CreateIndex struct {
	// Name is "" for PostgreSQL's default (table_column_idx).
	Name        string
	Table       string
	Columns     []catalog.IndexColumn
	Unique      bool
	IfNotExists bool
}

// nameDataLenMax is PostgreSQL's NAMEDATALEN - 1: the longest identifier,
// which chosen index names are truncated to.
const nameDataLenMax = 63

func (a *Actor) createIndex(m CreateIndex) (DDLResult, error) {
	if len(m.Columns) == 0 {
		panic("control: CreateIndex needs columns")
	}
	// PostgreSQL's order: the table, its columns, then the index name.
	table, ok := a.snap.byName[m.Table]
	if !ok {
		return DDLResult{}, errcode.New(errcode.UndefinedObject, "relation %q does not exist", m.Table)
	}
	if table.Kind != catalog.KindTable && table.Kind != catalog.KindMaterializedView && table.Kind != catalog.KindSource {
		return DDLResult{}, errcode.New(errcode.WrongObjectType, "cannot create index on relation %q", m.Table).
			WithDetail("This operation is not supported for %ss.", table.Kind)
	}
	for _, c := range m.Columns {
		if table.ColumnIndex(c.Column) < 0 {
			return DDLResult{}, errcode.New(errcode.UndefinedColumnCode, "column %q does not exist", c.Column)
		}
	}
	if table.Partitioned() && m.Unique && !onPrimaryKey(table, m.Columns) {
		// NB: each table shard keeps the entries of the rows it stores,
		// so no one commit could see a value repeated on another shard.
		return DDLResult{}, errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support CREATE UNIQUE INDEX on %q yet: its rows are partitioned over the shards", m.Table).
			WithDetail("Make the columns the primary key, create a non-unique index, or create the table in a data directory started without --partition-tables.")
	}
	if m.Unique && !onPrimaryKey(table, m.Columns) && !maintainable(table) {
		names := make([]string, len(m.Columns))
		for i, c := range m.Columns {
			names[i] = c.Column
		}
		e := errcode.New(errcode.UniqueIndexNotEnforced, "RockStream does not support CREATE UNIQUE INDEX on (%s) of %q: the uniqueness would not be enforced", strings.Join(names, ", "), m.Table)
		e = e.WithDetail("Unique indexes are kept (and enforced) on tables with a primary key; %q is a %s without one.", m.Table, table.Kind)
		return DDLResult{}, e
	}
	name := m.Name
	if name == "" {
		name = a.chooseIndexName(table, m.Columns)
	} else if a.relationNameTaken(catalog.Key(table.Schema, name)) {
		if m.IfNotExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("relation %q already exists, skipping", name)}, nil
		}
		return DDLResult{}, errcode.New(errcode.DuplicateObject, "relation %q already exists", name)
	}
	next := a.snap.clone()
	idx := &catalog.Relation{
		Kind:   catalog.KindIndex,
		Name:   name,
		Schema: table.Schema,
		ID:     objectID(next.namespace, next.NextObject),
		Index:  &catalog.Index{Table: table.ID, Columns: append([]catalog.IndexColumn(nil), m.Columns...), Unique: m.Unique},
	}
	next.NextObject++
	next.put(idx, nil)
	if err := a.commit(next, []*catalog.Relation{idx}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: idx}, nil
}

// maintainable reports whether the shard keeps an index of table as a
// structure (actors/shard/index.go): a table with a primary key.
// Indexes of other relations are recorded in the catalog only.
func maintainable(table *catalog.Relation) bool {
	return table.Kind == catalog.KindTable && len(table.PrimaryKey) > 0 && !table.InsertOnly
}

// onPrimaryKey reports whether columns are exactly the table's primary-key
// columns (in any order), so a unique index on them holds already.
func onPrimaryKey(table *catalog.Relation, columns []catalog.IndexColumn) bool {
	if len(table.PrimaryKey) == 0 || len(columns) != len(table.PrimaryKey) {
		return false
	}
	seen := map[string]bool{}
	for _, c := range columns {
		seen[c.Column] = true
	}
	if len(seen) != len(columns) {
		return false
	}
	for _, k := range table.PrimaryKey {
		if !seen[table.Columns[k].Name] {
			return false
		}
	}
	return true
}

// relationNameTaken reports whether key (catalog.Key) is a relation's,
// counting the primary-key indexes (t_pkey), which are relations in
// PostgreSQL.
func (a *Actor) relationNameTaken(key string) bool {
	if _, ok := a.snap.byName[key]; ok {
		return true
	}
	for _, r := range a.snap.Relations() {
		if len(r.PrimaryKey) > 0 && catalog.Key(r.Schema, r.PrimaryKeyConstraint()) == key {
			return true
		}
	}
	return false
}

// chooseIndexName is PostgreSQL's ChooseIndexName: table_col1_col2_idx
// (also for CREATE UNIQUE INDEX: _key is for UNIQUE constraints),
// truncated to 63 characters, with a number after the label until the
// name is free.
func (a *Actor) chooseIndexName(table *catalog.Relation, columns []catalog.IndexColumn) string {
	const label = "idx"
	cols := indexNameAddition(columns)
	for pass := 0; ; pass++ {
		l := label
		if pass > 0 {
			l += strconv.Itoa(pass)
		}
		name := makeObjectName(table.Name, cols, l)
		if !a.relationNameTaken(catalog.Key(table.Schema, name)) {
			return name
		}
	}
}

// indexNameAddition is PostgreSQL's ChooseIndexNameAddition over
// ChooseIndexColumnNames: the column names made unique (a, a1, a2, …),
// joined by "_", stopping once the result is NAMEDATALEN long.
func indexNameAddition(columns []catalog.IndexColumn) string {
	var b strings.Builder
	taken := map[string]bool{}
	for _, c := range columns {
		name := c.Column
		for i := 1; taken[name]; i++ {
			suffix := strconv.Itoa(i)
			base := c.Column
			if len(base)+len(suffix) > nameDataLenMax {
				base = base[:nameDataLenMax-len(suffix)]
			}
			name = base + suffix
		}
		taken[name] = true
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(name)
		if b.Len() > nameDataLenMax {
			break
		}
	}
	return b.String()
}

// makeObjectName is PostgreSQL's makeObjectName: name1_name2_label, the
// longer of name1 and name2 shortened first until it fits in 63 bytes.
func makeObjectName(name1, name2, label string) string {
	avail := nameDataLenMax - len(label) - 1
	if name2 != "" {
		avail--
	}
	n1, n2 := len(name1), len(name2)
	for n1+n2 > avail {
		if n1 > n2 {
			n1--
		} else {
			n2--
		}
	}
	out := name1[:n1]
	if name2 != "" {
		out += "_" + name2[:n2]
	}
	return out + "_" + label
}

// ownedIndexes are the indexes of the dropped relations: they go with
// their table.
func ownedIndexes(snap *Snapshot, dropped []*catalog.Relation) []*catalog.Relation {
	gone := map[catalog.ID]bool{}
	for _, d := range dropped {
		gone[d.ID] = true
	}
	var out []*catalog.Relation
	for _, r := range snap.Relations() {
		if r.Kind == catalog.KindIndex && gone[r.Index.Table] {
			out = append(out, r)
		}
	}
	return out
}

// primaryKeyIndexOwner is the table whose primary-key index has key
// (catalog.Key).
func (a *Actor) primaryKeyIndexOwner(key string) (*catalog.Relation, bool) {
	for _, r := range a.snap.Relations() {
		if len(r.PrimaryKey) > 0 && catalog.Key(r.Schema, r.PrimaryKeyConstraint()) == key {
			return r, true
		}
	}
	return nil, false
}
