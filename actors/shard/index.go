package shard

import (
	"bytes"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// Secondary indexes (CREATE INDEX on a table with a primary key) are kept
// on the table shard beside the rows, one entry per row:
//
//	S|I|index id|index columns (memcomparable, ascending)|bucket|primary key → ""
//
// The entry ends with the row key after its table prefix, so the entries
// of one index value scan together and each names its row. A commit writes
// a row's entries in the same batch as the row (commitBatchOf), so the
// index and the rows never disagree, across crashes too. The entries are
// built over the stored rows when the shard adopts the catalog holding the
// index, in one batch with a marker (S|i|index id); they are deleted when
// the index leaves the catalog (DROP INDEX, DROP TABLE).
//
// A unique index refuses a commit that leaves two entries with the same
// non-NULL value (NULLs are distinct, as in PostgreSQL): 23505.
const (
	metaIndexEntry byte = 'I'
	metaIndexBuilt byte = 'i'
)

func indexPrefix(index catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaIndexEntry}, index.Object[:]...)
}

func indexBuiltKey(index catalog.ID) []byte {
	return append([]byte{kv.PrefixShardMeta, metaIndexBuilt}, index.Object[:]...)
}

// tableIndex is a maintained index of a table: its relation and the
// table's columns it keys on.
type tableIndex struct {
	rel  *catalog.Relation
	cols []int
}

// MaintainedIndex reports whether index (a KindIndex relation of snap's
// catalog) keeps entries, and the table columns it keys on: an index of a
// table with a primary key whose columns all exist. Other indexes are
// recorded in the catalog only.
func MaintainedIndex(table, index *catalog.Relation) ([]int, bool) {
	if index.Kind != catalog.KindIndex || index.Index == nil || table.Kind != catalog.KindTable || len(table.PrimaryKey) == 0 || table.InsertOnly {
		return nil, false
	}
	cols := make([]int, len(index.Index.Columns))
	for i, c := range index.Index.Columns {
		if cols[i] = table.ColumnIndex(c.Column); cols[i] < 0 {
			return nil, false
		}
	}
	return cols, true
}

// indexesOf returns the maintained indexes of a table (cached per catalog).
func (a *Actor) indexesOf(table *catalog.Relation) []tableIndex {
	if a.indexes == nil {
		a.indexes = map[catalog.ID][]tableIndex{}
	}
	idxs, ok := a.indexes[table.ID]
	if !ok {
		for _, r := range a.snap.Indexes(table.ID) {
			if cols, ok := MaintainedIndex(table, r); ok {
				idxs = append(idxs, tableIndex{rel: r, cols: cols})
			}
		}
		a.indexes[table.ID] = idxs
	}
	return idxs
}

// appendIndexKey appends the entry key of row (stored under rowKey) in
// idx; value is how long its index-value prefix is (the entries of rows
// with equal values share it).
func appendIndexKey(dst []byte, idx tableIndex, ts []types.Type, row types.Row, rowKey []byte) (key []byte, value int, hasNull bool) {
	dst = append(dst, kv.PrefixShardMeta, metaIndexEntry)
	dst = append(dst, idx.rel.ID.Object[:]...)
	for _, c := range idx.cols {
		hasNull = hasNull || row[c] == nil
		dst = encodePKColumn(dst, ts[c], row[c])
	}
	value = len(dst)
	return append(dst, rowKey[2+16:]...), value, hasNull
}

// indexKey is appendIndexKey into the commit's arena.
func (cb *commitBatch) indexKey(idx tableIndex, ts []types.Type, row types.Row, rowKey []byte) []byte {
	from := cb.arena.alloc(2 + 16 + 12*len(idx.cols) + len(rowKey))
	key, _, _ := appendIndexKey(from, idx, ts, row, rowKey)
	cb.arena.used(from, key)
	return key
}

// indexPut is an entry a commit wrote to a unique index, checked once the
// commit's writes are all applied.
type indexPut struct {
	key    []byte
	prefix int
	idx    tableIndex
	table  *catalog.Relation
	row    types.Row
}

// writeIndexEntries replaces a row's entries (old: the stored row, nil if
// none; row: the new one, nil for a delete) in the commit, noting the new
// entries of unique indexes in puts.
func writeIndexEntries(cb *commitBatch, rel *catalog.Relation, idxs []tableIndex, ts []types.Type, rowKey []byte, old, row types.Row, puts []indexPut) ([]indexPut, error) {
	for _, idx := range idxs {
		var oldKey []byte
		if old != nil {
			oldKey = cb.indexKey(idx, ts, old, rowKey)
		}
		if row != nil {
			from := cb.arena.alloc(2 + 16 + 12*len(idx.cols) + len(rowKey))
			newKey, prefix, hasNull := appendIndexKey(from, idx, ts, row, rowKey)
			cb.arena.used(from, newKey)
			if bytes.Equal(oldKey, newKey) {
				continue
			}
			if oldKey != nil {
				if err := cb.Delete(oldKey); err != nil {
					return nil, err
				}
			}
			if err := cb.Put(newKey, []byte{}); err != nil {
				return nil, err
			}
			if idx.rel.Index.Unique && !hasNull {
				puts = append(puts, indexPut{key: newKey, prefix: prefix, idx: idx, table: rel, row: row})
			}
			continue
		}
		if oldKey != nil {
			if err := cb.Delete(oldKey); err != nil {
				return nil, err
			}
		}
	}
	return puts, nil
}

// checkUnique fails the commit if a unique index entry it wrote (and
// did not remove again) shares its value with another entry. Checked after
// every write, so a commit may move a value from one row to another.
func checkUnique(cb *commitBatch, puts []indexPut) error {
	r := cb.reader()
	for _, p := range puts {
		if _, ok, err := r.Get(p.key); err != nil {
			return err
		} else if !ok {
			continue // replaced by a later write of the row
		}
		n := 0
		if err := kv.ScanPrefix(r, p.key[:p.prefix], func(_, _ []byte) error { n++; return nil }); err != nil {
			return err
		}
		if n > 1 {
			return errcode.New(errcode.UniqueViolation, "duplicate key value violates unique constraint %q", p.idx.rel.Name).
				WithDetail("Key %s already exists.", describeIndexKey(p.table, p.idx.cols, p.row))
		}
	}
	return nil
}

// describeIndexKey is PostgreSQL's (col, ...)=(val, ...) of an index key.
func describeIndexKey(rel *catalog.Relation, cols []int, row types.Row) string {
	names := make([]string, len(cols))
	vals := make([]string, len(cols))
	for i, c := range cols {
		names[i] = rel.Columns[c].Name
		if row[c] == nil {
			vals[i] = "null"
		} else {
			vals[i] = types.Format(rel.Columns[c].Type, row[c])
		}
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ")"
}

// writesUnique reports whether a commit writes a table with a maintained
// unique index: its batch is then built in exact mode, where the
// uniqueness check sees the commit's own entries. Other entries are fine
// in direct mode: an entry's key holds its row's key, so two writes of one
// entry are two writes of one row, which make the commit rebuild in exact
// mode anyway.
func (a *Actor) writesUnique(m Commit) bool {
	var last catalog.ID
	for i, w := range m.Writes {
		if i > 0 && w.Table == last {
			continue // commits write one or two tables
		}
		last = w.Table
		rel, ok := a.snap.RelationByID(w.Table)
		if !ok {
			continue
		}
		for _, idx := range a.indexesOf(rel) {
			if idx.rel.Index.Unique {
				return true
			}
		}
	}
	return false
}

// syncIndexes drops the entries of indexes that left the catalog since
// prev and builds those of maintained indexes not built yet.
func (a *Actor) syncIndexes(prev []*catalog.Relation) error {
	for _, r := range prev {
		if r.Kind != catalog.KindIndex {
			continue
		}
		if _, still := a.snap.RelationByID(r.ID); still {
			continue
		}
		if err := a.dropIndex(r.ID); err != nil {
			return err
		}
	}
	for _, r := range a.snap.Relations() {
		if r.Kind != catalog.KindIndex || r.Index == nil {
			continue
		}
		t, ok := a.snap.RelationByID(r.Index.Table)
		if !ok {
			continue
		}
		cols, ok := MaintainedIndex(t, r)
		if !ok {
			continue
		}
		_, built, err := a.store.Get(indexBuiltKey(r.ID))
		if err != nil {
			return err
		}
		if !built {
			if err := a.buildIndex(t, tableIndex{rel: r, cols: cols}); err != nil {
				return err
			}
		}
	}
	return nil
}

// buildIndex writes an index's entries for every stored row of its table
// and its marker in one batch; a unique index over duplicated values
// writes nothing and fails with 23505 (the session checked the rows
// before creating the index, so this fires only when rows changed in
// between, and the session then drops the index).
func (a *Actor) buildIndex(table *catalog.Relation, idx tableIndex) error {
	codec, err := a.codecOf(table)
	if err != nil {
		return err
	}
	var keys [][]byte
	var rows []types.Row
	var prefixes []int
	err = kv.ScanPrefix(a.store, tablePrefix(table.ID), func(k, v []byte) error {
		row, err := codec.decode(v)
		if err != nil {
			return err
		}
		key, prefix, hasNull := appendIndexKey(nil, idx, codec.ts, row, k)
		if hasNull {
			prefix = len(key) // NULLs are distinct
		}
		keys, rows, prefixes = append(keys, key), append(rows, row), append(prefixes, prefix)
		return nil
	})
	if err != nil {
		return err
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return bytes.Compare(keys[order[i]], keys[order[j]]) < 0 })
	var b kv.WriteBatch
	for n, i := range order {
		if idx.rel.Index.Unique && n > 0 {
			p := order[n-1]
			if prefixes[i] == prefixes[p] && bytes.Equal(keys[i][:prefixes[i]], keys[p][:prefixes[p]]) {
				return errcode.New(errcode.UniqueViolation, "could not create unique index %q", idx.rel.Name).
					WithDetail("Key %s is duplicated.", describeIndexKey(table, idx.cols, rows[i]))
			}
		}
		b.Ops = append(b.Ops, kv.Op{Key: keys[i], Value: []byte{}})
	}
	b.Ops = append(b.Ops, kv.Op{Key: indexBuiltKey(idx.rel.ID), Value: []byte{1}})
	sort.SliceStable(b.Ops, func(i, j int) bool { return bytes.Compare(b.Ops[i].Key, b.Ops[j].Key) < 0 })
	return a.store.Apply(&b)
}

// dropIndex deletes an index's entries and marker.
func (a *Actor) dropIndex(id catalog.ID) error {
	var b kv.WriteBatch
	err := kv.ScanPrefix(a.store, indexPrefix(id), func(k, _ []byte) error {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte(nil), k...), Delete: true})
		return nil
	})
	if err != nil {
		return err
	}
	b.Ops = append(b.Ops, kv.Op{Key: indexBuiltKey(id), Delete: true})
	sort.SliceStable(b.Ops, func(i, j int) bool { return bytes.Compare(b.Ops[i].Key, b.Ops[j].Key) < 0 })
	return a.store.Apply(&b)
}

// indexByID returns the maintained index id of table rel.
func (a *Actor) indexByID(rel *catalog.Relation, id catalog.ID) (tableIndex, bool) {
	for _, ti := range a.indexesOf(rel) {
		if ti.rel.ID == id {
			return ti, true
		}
	}
	return tableIndex{}, false
}

// readByIndex reads the rows of table rel in ranges over the columns of
// one of its maintained indexes (KeyRange.Index): a scan of the index's
// entries in each range, then a point read of each entry's row.
func (a *Actor) readByIndex(r kv.Reader, rel *catalog.Relation, idx tableIndex, codec tableCodec, ranges []KeyRange, add func(v []byte) error) error {
	keyTypes := make([]types.Type, len(idx.cols))
	for i, c := range idx.cols {
		keyTypes[i] = codec.ts[c]
	}
	prefix := indexPrefix(idx.rel.ID)
	table := tablePrefix(rel.ID)
	seen := map[string]bool{}
	var start, end, rowKey []byte
	var scratch types.Row
	for _, s := range mergeSpans(encodeColumnSpans(idx.cols, codec.ts, ranges)) {
		start = append(append(start[:0], prefix...), s.start...)
		if s.end != nil {
			end = append(append(end[:0], prefix...), s.end...)
		} else {
			end = append(end[:0], kv.PrefixEnd(prefix)...)
		}
		err := r.Scan(start, end, func(k, _ []byte) error {
			var rest []byte
			var err error
			scratch, rest, err = keyenc.DecodeKey(k[len(prefix):], keyTypes, nil, scratch)
			if err != nil {
				return err
			}
			rowKey = append(append(rowKey[:0], table...), rest...)
			if seen[string(rowKey)] {
				return nil
			}
			seen[string(rowKey)] = true
			v, ok, err := r.Get(rowKey)
			if err != nil {
				return err
			}
			if !ok {
				return corrupt("index %s names row %x, which is not stored", idx.rel.Name, rowKey)
			}
			return add(v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
