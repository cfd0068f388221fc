package shard

import (
	"sort"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Tables without a PRIMARY KEY store their rows under hidden row ids
// (epoch, position), as INSERT_ONLY tables do. ALTER TABLE ... ADD PRIMARY
// KEY then changes how the rows are keyed, not what they are: the catalog
// marks the table PrimaryKeyAdded, and the shard, on adopting that catalog,
// moves every stored row from its row id to its primary key in ONE atomic
// batch together with a marker, so a crash leaves either the old layout (no
// marker: re-key again) or the new one. The table's contents, and so every
// view over it, do not change: no delta is logged.
//
//	catalog: PK set, PrimaryKeyAdded   marker absent ──rekey──▶ marker present
//	stored:  T|table|epoch|pos → row                    T|table|pk → row

// metaRekeyed marks a table whose rows the shard has re-keyed.
const metaRekeyed byte = 'K'

func rekeyedKey(table catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaRekeyed}, table.Object[:]...)
}

// rekeyTables re-keys every table of the current catalog that gained a
// primary key and is not re-keyed yet.
func (a *Actor) rekeyTables() error {
	for _, rel := range a.snap.Relations() {
		if rel.Kind != catalog.KindTable || !rel.PrimaryKeyAdded || len(rel.PrimaryKey) == 0 {
			continue
		}
		_, done, err := a.store.Get(rekeyedKey(rel.ID))
		if err != nil {
			return err
		}
		if done {
			continue
		}
		if err := a.rekey(rel); err != nil {
			return err
		}
	}
	return nil
}

// rekey moves a table's rows from row ids to primary keys, refusing (23502
// / 23505, nothing written) when a key is NULL or duplicated: the session
// checked that before changing the catalog, so this fires only when rows
// changed in between, and the session then reverts the catalog.
func (a *Actor) rekey(rel *catalog.Relation) error {
	codec, err := a.codecOf(rel)
	if err != nil {
		return err
	}
	type moved struct{ oldKey, newKey, row []byte }
	var rows []moved
	seen := map[string]bool{}
	prefixLen := len(tablePrefix(rel.ID))
	err = kv.ScanPrefix(a.store, tablePrefix(rel.ID), func(k, v []byte) error {
		row, err := codec.decode(v)
		if err != nil {
			return err
		}
		key := make(types.Row, len(rel.PrimaryKey))
		for j, c := range rel.PrimaryKey {
			if row[c] == nil {
				return errcode.New(errcode.NotNullViolation, "column %q of relation %q contains null values", rel.Columns[c].Name, rel.Name)
			}
			key[j] = row[c]
		}
		newKey := keyOf(rel, codec.ts, key)
		if seen[string(newKey[prefixLen:])] {
			return errcode.New(errcode.UniqueViolation, "could not create unique index %q", rel.PrimaryKeyConstraint()).
				WithDetail("Key %s is duplicated.", describeKey(rel, row))
		}
		seen[string(newKey[prefixLen:])] = true
		rows = append(rows, moved{oldKey: append([]byte(nil), k...), newKey: newKey, row: encodeStoredRow(nil, codec.ts, row)})
		return nil
	})
	if err != nil {
		return err
	}
	// NB: a new key may equal some old row id byte for byte; an overlay
	// transaction applies the deletes first and the puts last, so the
	// puts win.
	txn := kv.NewTxn(a.store)
	for _, m := range rows {
		if err := txn.Delete(m.oldKey); err != nil {
			return err
		}
	}
	sort.Slice(rows, func(i, j int) bool { return string(rows[i].newKey) < string(rows[j].newKey) })
	for _, m := range rows {
		if err := txn.Put(m.newKey, m.row); err != nil {
			return err
		}
	}
	if err := txn.Put(rekeyedKey(rel.ID), []byte{1}); err != nil {
		return err
	}
	return a.store.Apply(txn.Batch())
}

// deleteByValue applies a commit's deletes from tables without a primary
// key: each names a row by value, and removes one stored row equal to it
// (rows with equal values cannot be told apart in SQL, so any one will
// do). One scan of each such table per commit. A row that is no longer
// there was deleted or updated by another transaction since this one read
// it: the commit fails with RS-2008 rather than deleting something else.
func (a *Actor) deleteByValue(cb *commitBatch, table catalog.ID, values [][]byte) error {
	rel, ok := a.snap.RelationByID(table)
	if !ok {
		return errcode.New(errcode.UndefinedObject, "table %s does not exist (dropped while the transaction ran)", table)
	}
	codec, err := a.codecOf(rel)
	if err != nil {
		return err
	}
	want := map[string]int{}
	for _, v := range values {
		want[string(v)]++
	}
	left := len(values)
	td := cb.table(table)
	err = kv.ScanPrefix(a.store, tablePrefix(table), func(k, v []byte) error {
		if left == 0 {
			return nil
		}
		enc, err := cb.canonical(codec, v)
		if err != nil {
			return err
		}
		if want[string(enc)] == 0 {
			return nil
		}
		want[string(enc)]--
		left--
		td.add(enc, -1)
		return cb.Delete(append([]byte(nil), k...))
	})
	if err != nil {
		return err
	}
	if left > 0 {
		return errcode.New(errcode.OptimisticConflict, "could not serialize access due to concurrent update of %q", rel.Name).
			WithDetail("A row this transaction deleted or updated was changed by another transaction after this one read it.")
	}
	return nil
}

// valueDeletes are one table's deletes by value in a commit.
type valueDeletes struct {
	table  catalog.ID
	values [][]byte
}

func appendDeleteByValue(ds []valueDeletes, table catalog.ID, enc []byte) []valueDeletes {
	for i := range ds {
		if ds[i].table == table {
			ds[i].values = append(ds[i].values, enc)
			return ds
		}
	}
	return append(ds, valueDeletes{table: table, values: [][]byte{enc}})
}
