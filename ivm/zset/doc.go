// Package zset is the Z-set batch: rows with signed int64 weights (spec §2).
//
// An insert is (row, +1), a delete (row, -1), an update a delete plus an
// insert. Operators exchange Batches; Consolidate sums the weights of equal
// rows and drops zeros, giving the canonical form (rows sorted by their
// encoding, so output order is deterministic).
//
// Representation (ARCHITECTURE.md §5): a delta in flight is a Batch
// (rows: []types.Row plus []int64 weights) or a Columns (one Arrow array
// per column, as ArrowSchema lays them out, plus the weights as the weight
// column); a Delta carries either. A Columns is a different type, not a
// Batch with an empty Rows slice, so no code can read a column-only batch
// as rows by mistake: rows exist only where code asks for them
// (Columns.Rows, Delta.Batch), and ivm/circuit counts every such
// materialization.
//
// The common stateless segment runs columnar end to end when every view
// reading a table is columnar-capable: the shard decodes stored rows
// straight into column builders (keyenc.DecodeRowColumns, no Datum
// boxing), op.Fused evaluates filters and the SELECT list over the arrays
// (expr.Program.EvalColumnsSel; a projection selects arrays without
// copying), and the view sink encodes each row's identity straight from
// the arrays (Columns.AppendEncodedRow: byte-identical to EncodeRow, so the
// stored format does not depend on the path). Types whose Arrow form is
// not exact (NUMERIC travels as text, float4, interval, arrays) keep their
// batches in rows (Columnar); stateful operators take rows, built at their
// input.
//
// Measured (rows/cpu-s, 2 shared cores at load ≈ 11, three runs each):
//
//	BenchmarkFilterMapArrow (ivm/op; WHERE k >= 0 AND v > 0 SELECT k + v * 2)
//	path=rows                   9.4M–11.7M  op.Fused over rows
//	path=fused-columns          18.7M–32.6M op.Fused over columns (what runs now)
//	path=fused-columns-to-rows  11.0M–13.0M the same, rows built from the output
//	path=arrow                  63M–70M     hand-written kernels, the upper bound
//
//	go test ./ivm/op -run '^$' -bench 'FilterMapArrow' -benchtime 2000x -count 3
//
// Over a whole epoch of a stateless view (BenchmarkDecodeFusedSink in
// actors/shard: decode, fused chain, sink into a kv.Txn) the columnar path
// is about as fast as the row path or somewhat faster: the sink's
// consolidation map and its writes, the same on both paths, dominate.
// Columnar kernels pay only while no row is built: the segment gains what
// decoding and evaluation cost, not more.
//
// Row identity: codec.go holds a lossless, self-delimiting, schema-free
// binary encoding of rows (EncodeRow/DecodeRow): two rows encode equally iff
// they are the same Go values. It identifies Z-set elements where no schema
// is at hand (Consolidate) and is the row part of arrangement keys. It is
// not a key encoding: SQL equality and ORDER BY order come from ivm/keyenc
// (memcomparable, typed), which the operators use for group, join, distinct
// and order keys. Nothing outside ivm/ depends on these bytes.
//
//	b := zset.Batch{}
//	b.Add(types.Row{int64(1), "a"}, +1)
//	b.Add(types.Row{int64(1), "a"}, +1)
//	b.Add(types.Row{int64(2), "b"}, -1)
//	c := zset.Consolidate(b) // {(1,"a"):+2, (2,"b"):-1}
package zset
