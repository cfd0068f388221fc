package shard

import (
	"encoding/binary"

	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// columnTypes lists a relation's column types.
func columnTypes(rel *catalog.Relation) []types.Type {
	ts := make([]types.Type, len(rel.Columns))
	for i, c := range rel.Columns {
		ts[i] = c.Type
	}
	return ts
}

// Schema returns a relation's schema.
func Schema(rel *catalog.Relation) types.Schema {
	s := make(types.Schema, len(rel.Columns))
	for i, c := range rel.Columns {
		s[i] = types.Column{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
	}
	return s
}

// encodeStoredRow encodes a row with its width first, so rows written before
// an ALTER TABLE ADD COLUMN still decode (the new columns read as NULL).
func encodeStoredRow(dst []byte, ts []types.Type, row types.Row) []byte {
	// INVARIANT: a stored row is never wider than its table.
	if len(row) > len(ts) {
		panic("shard: row wider than its table")
	}
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	return keyenc.EncodeRow(dst, ts[:len(row)], row)
}

// tableCodec decodes a table's stored rows: its column types and, for
// columns added by ALTER TABLE ADD COLUMN, the value rows stored before the
// ALTER read for them (the column's constant default, or NULL) — as
// PostgreSQL fills existing rows when a column with a default is added.
type tableCodec struct {
	ts []types.Type
	// pad returns the value of column i for rows stored before it existed
	// (nil: NULL); called only for such rows, so volatile defaults of
	// original columns are never evaluated here.
	pad func(i int) (types.Datum, error)
}

func decodeStoredRow(src []byte, ts []types.Type) (types.Row, error) {
	return tableCodec{ts: ts}.decode(src)
}

func (c tableCodec) decode(src []byte) (types.Row, error) {
	ts := c.ts
	n, used := binary.Uvarint(src)
	if used <= 0 || n > uint64(len(ts)) {
		return nil, corrupt("stored row has width %d for a table of %d columns", n, len(ts))
	}
	row, err := keyenc.DecodeRow(src[used:], ts[:n], make(types.Row, 0, len(ts)))
	if err != nil {
		return nil, err
	}
	for len(row) < len(ts) {
		var pad types.Datum
		if c.pad != nil {
			if pad, err = c.pad(len(row)); err != nil {
				return nil, err
			}
		}
		row = append(row, pad)
	}
	return row, nil
}

// encodePKColumn appends one primary-key column (memcomparable, so a table
// scan is in primary-key order).
func encodePKColumn(dst []byte, t types.Type, d types.Datum) []byte {
	return keyenc.EncodeColumn(dst, t, d, keyenc.Asc)
}

// keyOf encodes the storage key of the row with primary-key values key.
func keyOf(rel *catalog.Relation, ts []types.Type, key types.Row) []byte {
	return appendKey(make([]byte, 0, 2+16+16), rel, ts, key)
}

// appendKey appends the storage key of keyOf to dst.
func appendKey(dst []byte, rel *catalog.Relation, ts []types.Type, key types.Row) []byte {
	dst = append(dst, kv.PrefixOpState, kindTableRows)
	dst = append(dst, rel.ID.Object[:]...)
	for j, c := range rel.PrimaryKey {
		dst = encodePKColumn(dst, ts[c], key[j])
	}
	return dst
}

// logEntry is one committed transaction's delta, per table.
type logEntry struct {
	tables []tableDelta
}

type tableDelta struct {
	table catalog.ID
	delta zset.Batch
}

// The log entry format (written by commitBatch.encodeLog): uvarint table
// count; per table its object id (16 bytes), uvarint row count, and per row
// varint weight, uvarint length and the encodeStoredRow bytes. Rows are
// typed by the catalog at commit time; their widths are stored, so a later
// ADD COLUMN cannot misread them.
func decodeLog(src []byte, ns catalog.NamespaceID, codecOf func(catalog.ID) (tableCodec, bool)) (logEntry, error) {
	var e logEntry
	r := byteReader{src: src}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		var id catalog.ID
		id.Namespace = ns
		copy(id.Object[:], r.bytes(16))
		count := r.uvarint()
		codec, ok := codecOf(id)
		td := tableDelta{table: id}
		if ok && count <= uint64(len(r.src)) { // each row takes at least a byte
			td.delta.Rows = make([]types.Row, 0, count)
			td.delta.Weights = make([]int64, 0, count)
		}
		for j := uint64(0); j < count && r.err == nil; j++ {
			w := r.varint()
			enc := r.bytes(int(r.uvarint()))
			if !ok || r.err != nil {
				continue // the table was dropped since: its rows no longer matter
			}
			row, err := codec.decode(enc)
			if err != nil {
				return e, err
			}
			td.delta.Add(row, w)
		}
		if ok {
			e.tables = append(e.tables, td)
		}
	}
	if r.err != nil {
		return e, r.err
	}
	if len(r.src) != 0 {
		return e, corrupt("log entry has %d trailing bytes", len(r.src))
	}
	return e, nil
}

type byteReader struct {
	src []byte
	err error
}

func (r *byteReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.src)
	if n <= 0 {
		r.err = corrupt("bad uvarint in log entry")
		return 0
	}
	r.src = r.src[n:]
	return v
}

func (r *byteReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.src)
	if n <= 0 {
		r.err = corrupt("bad varint in log entry")
		return 0
	}
	r.src = r.src[n:]
	return v
}

func (r *byteReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.src) {
		r.err = corrupt("log entry truncated")
		return nil
	}
	b := r.src[:n]
	r.src = r.src[n:]
	return b
}
