package shard

import (
	"encoding/binary"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
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

// encodePKColumn appends one primary-key column (memcomparable, so a
// bucket's rows scan in primary-key order).
func encodePKColumn(dst []byte, t types.Type, d types.Datum) []byte {
	return keyenc.EncodeColumn(dst, t, d, keyenc.Asc)
}

// keyOf encodes the storage key of the row with primary-key values key.
func keyOf(rel *catalog.Relation, ts []types.Type, key types.Row) []byte {
	return appendKey(make([]byte, 0, tableKeyHeadBytes+16), rel, ts, key)
}

// appendKey appends the storage key of keyOf to dst (format v2, keys.go):
// the table prefix, the bucket of the encoded primary key, then the
// encoded primary key.
func appendKey(dst []byte, rel *catalog.Relation, ts []types.Type, key types.Row) []byte {
	dst = append(dst, kv.PrefixOpState, kindTableRows)
	dst = append(dst, rel.ID.Object[:]...)
	at := len(dst)
	dst = append(dst, 0, 0) // the bucket, once the key is encoded
	for j, c := range rel.PrimaryKey {
		dst = encodePKColumn(dst, ts[c], key[j])
	}
	partition.PutBucket(dst[at:], partition.BucketOf(dst[at+partition.BucketBytes:]))
	return dst
}

// BucketOfKey is the bucket of the row of table rel with primary-key values
// key (in PrimaryKey column order): the bucket its storage key carries.
func BucketOfKey(rel *catalog.Relation, key types.Row) partition.Bucket {
	var buf [64]byte
	enc := buf[:0]
	for j, c := range rel.PrimaryKey {
		enc = encodePKColumn(enc, rel.Columns[c].Type, key[j])
	}
	return partition.BucketOf(enc)
}

// BucketOfRow is the bucket of a row of a table without a primary key
// (INSERT_ONLY or declared without one): the row's whole value is its
// partition key, as its stored encoding (encodeStoredRow), which the
// commit computes anyway. Rows with equal values cannot be told apart, and
// deletes by value match exactly that encoding (rekey.go), so it is as
// good a key as a memcomparable one and costs only the hash.
//
// NB: the bucket is of the row as inserted: a row stored before an ALTER
// TABLE ADD COLUMN keeps the bucket of its narrower encoding. Nothing
// recomputes it from a row read later (deletes by value scan the table).
func BucketOfRow(ts []types.Type, row types.Row) partition.Bucket {
	var buf [128]byte
	return partition.BucketOf(encodeStoredRow(buf[:0], ts, row))
}

// deltaDecoder accumulates one table's delta from its stored rows: as rows
// (rowDecoder) or straight into Arrow columns (columnDecoder).
type deltaDecoder interface {
	// grow makes room for n more rows.
	grow(n int)
	// add decodes one stored row (encodeStoredRow bytes) with weight w.
	add(enc []byte, w int64) error
	// delta is the accumulated delta.
	delta() zset.Delta
}

// rowDecoder decodes stored rows into a row batch.
type rowDecoder struct {
	codec tableCodec
	batch zset.Batch
}

func (d *rowDecoder) grow(n int) {
	d.batch.Rows = slices.Grow(d.batch.Rows, n)
	d.batch.Weights = slices.Grow(d.batch.Weights, n)
}

func (d *rowDecoder) add(enc []byte, w int64) error {
	row, err := d.codec.decode(enc)
	if err != nil {
		return err
	}
	d.batch.Add(row, w)
	return nil
}

func (d *rowDecoder) delta() zset.Delta { return zset.RowDelta(d.batch) }

// columnDecoder decodes stored rows straight into column builders
// (keyenc.DecodeRowColumns): no Datum is boxed and no row is built, for
// tables whose every view consumes columnar deltas. Columns added by ALTER
// TABLE read as the codec's pad values for rows stored before them.
type columnDecoder struct {
	codec    tableCodec
	schema   types.Schema
	builders []*zset.ColumnBuilder
	weights  []int64
}

func newColumnDecoder(codec tableCodec, schema types.Schema) *columnDecoder {
	d := &columnDecoder{codec: codec, schema: schema, builders: make([]*zset.ColumnBuilder, len(schema))}
	for j, c := range schema {
		d.builders[j] = zset.NewColumnBuilder(c.Type, 0)
	}
	return d
}

func (d *columnDecoder) grow(n int) {
	for _, b := range d.builders {
		b.Grow(n)
	}
	d.weights = slices.Grow(d.weights, n)
}

func (d *columnDecoder) add(enc []byte, w int64) error {
	if w == 0 {
		// NB: as zset.Batch.Add, which the row decoder uses.
		return nil
	}
	ts := d.codec.ts
	n, used := binary.Uvarint(enc)
	if used <= 0 || n > uint64(len(ts)) {
		return corrupt("stored row has width %d for a table of %d columns", n, len(ts))
	}
	if err := keyenc.DecodeRowColumns(enc[used:], ts[:n], d.builders[:n]); err != nil {
		return err
	}
	for j := int(n); j < len(ts); j++ {
		var pad types.Datum
		if d.codec.pad != nil {
			var err error
			if pad, err = d.codec.pad(j); err != nil {
				return err
			}
		}
		if err := d.builders[j].AppendDatum(pad); err != nil {
			return corrupt("column %d default: %v", j, err)
		}
	}
	d.weights = append(d.weights, w)
	return nil
}

func (d *columnDecoder) delta() zset.Delta {
	cols := make([]arrow.Array, len(d.builders))
	for j, b := range d.builders {
		cols[j] = b.Finish()
	}
	return zset.ColumnDelta(zset.NewColumns(d.schema, cols, d.weights))
}

// The log entry format (written by commitBatch.encodeLog): uvarint table
// count; per table its object id (16 bytes), uvarint row count, and per row
// varint weight, uvarint length and the encodeStoredRow bytes. Rows are
// typed by the catalog at commit time; their widths are stored, so a later
// ADD COLUMN cannot misread them.
//
// decodeLog hands each table's rows to the decoder decoderOf returns for
// it (ok false: the table was dropped since, its rows are skipped).
func decodeLog(src []byte, ns catalog.NamespaceID, decoderOf func(catalog.ID) (deltaDecoder, bool)) (types.TimestampTZ, error) {
	return decodeLogMarks(src, ns, decoderOf, nil)
}

// decodeLogMarks is decodeLog that also hands the entry's watermarks
// (watermark.go) to marks (nil: skipped).
func decodeLogMarks(src []byte, ns catalog.NamespaceID, decoderOf func(catalog.ID) (deltaDecoder, bool), marks func(logWatermark)) (types.TimestampTZ, error) {
	r := byteReader{src: src}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		var id catalog.ID
		id.Namespace = ns
		copy(id.Object[:], r.bytes(16))
		count := r.uvarint()
		dec, ok := decoderOf(id)
		if ok && count <= uint64(len(r.src)) { // each row takes at least a byte
			dec.grow(int(count))
		}
		for j := uint64(0); j < count && r.err == nil; j++ {
			w := r.varint()
			enc := r.bytes(int(r.uvarint()))
			if !ok || r.err != nil {
				continue // the table was dropped since: its rows no longer matter
			}
			if err := dec.add(enc, w); err != nil {
				return 0, err
			}
		}
	}
	if r.err != nil {
		return 0, r.err
	}
	at, rest, ok := readLogTime(r.src)
	if !ok {
		return 0, corrupt("log entry has %d trailing bytes", len(r.src))
	}
	if rest, ok = readLogWatermarks(rest, marks); !ok {
		return 0, corrupt("log entry has a corrupt watermark trailer")
	}
	if len(rest) != 0 {
		return 0, corrupt("log entry has %d trailing bytes", len(rest))
	}
	return at, nil
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

// newDecoder returns the decoder of a table's delta for one epoch step
// (ok false: the table no longer exists): columnar when every installed
// view reading the table steps columnar deltas from it and reads the
// table's column types as they are stored, rows otherwise.
func (a *Actor) newDecoder(id catalog.ID) (deltaDecoder, bool) {
	rel, ok := a.snap.RelationByID(id)
	if !ok {
		return nil, false
	}
	codec, err := a.codecOf(rel)
	if err != nil {
		return nil, false
	}
	schema := Schema(rel)
	if a.columnarTable(id, schema) {
		return newColumnDecoder(codec, schema), true
	}
	return &rowDecoder{codec: codec}, true
}

// columnarTable reports whether table id's deltas (rows of schema) should
// be decoded into columns.
func (a *Actor) columnarTable(id catalog.ID, schema types.Schema) bool {
	if !zset.ColumnarSchema(schema) {
		return false
	}
	readers := 0
	for _, v := range a.views {
		if !slices.Contains(v.sources, id) {
			continue
		}
		readers++
		if !columnarReader(v, id, schema) {
			return false
		}
	}
	return readers > 0
}

// columnarReader reports whether view v's circuit steps columnar deltas
// of table id (rows of schema, zset.ColumnarSchema) and reads its column
// types as they are stored.
func columnarReader(v *installedView, id catalog.ID, schema types.Schema) bool {
	src := SourceID(id)
	planned := v.circuit.SourceSchema(src)
	if !v.circuit.ColumnarSource(src) || len(planned) > len(schema) {
		return false
	}
	for j, c := range planned {
		if !c.Type.Equal(schema[j].Type) {
			return false
		}
	}
	return true
}

// trimDelta is trim for a delta in either form: a columnar delta keeps
// the view's columns (sharing the arrays).
func (v *installedView) trimDelta(src catalog.ID, d zset.Delta) zset.Delta {
	c := d.Columns()
	if c == nil {
		return zset.RowDelta(v.trim(src, d.Batch()))
	}
	if v.spread != nil {
		c = v.spread.filterColumns(src, c)
		d = zset.ColumnDelta(c)
	}
	w, ok := v.widths[src]
	if !ok || w >= len(c.Schema()) {
		return d
	}
	cols := make([]int, w)
	for j := range cols {
		cols[j] = j
	}
	return zset.ColumnDelta(c.Select(cols))
}
