// Package zset is the Z-set batch: rows with signed int64 weights (spec §2).
//
// An insert is (row, +1), a delete (row, -1), an update a delete plus an
// insert. Operators exchange Batches (or Columns, see below); Consolidate sums the weights of equal
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
// Measured (rows/cpu-s, 2 shared cores at load ≈ 11–12, three runs each,
// ratios within one run):
//
//	BenchmarkFilterMapArrow (ivm/op; WHERE k >= 0 AND v > 0 SELECT k + v * 2)
//	path=rows                   10.4M–12.7M  op.Fused over rows (the row path)
//	path=fused-columns          22.0M–33.1M  op.Fused over columns (what runs)
//	path=fused-columns-to-rows  10.8M–14.7M  the same, rows built from the output
//	path=arrow                  40.5M–48.6M  hand-written kernels, an upper bound
//
//	BenchmarkDecodeFusedSink (actors/shard; stored rows decoded, WHERE v > 0
//	SELECT k, v * 2, s, view sink into a kv.Txn, 10,000 new rows per epoch)
//	path=rows                   0.57M–0.89M
//	path=columns                0.98M–1.73M
//
//	BenchmarkDecode (actors/shard; 10,000 stored bid-like rows of 7 columns)
//	path=rows                   2.08M–2.27M  87,149 allocations per epoch
//	path=columns                2.96M–3.44M  107 allocations per epoch
//
//	BenchmarkCircuitSink (ivm/circuit; Source → view, 10,000 new rows)
//	sink=view                   0.96M–1.89M  rows
//	sink=view-columns           1.63M–2.17M  columns
//	sink=reference              1.59M–2.04M  a Go map of encoded rows
//
//	go test ./ivm/op -run '^$' -bench 'FilterMapArrow' -benchtime 2000x -count 3
//	go test ./actors/shard -run '^$' -bench 'DecodeFusedSink|Decode$' -benchtime 100x -count 3 -benchmem
//	go test ./ivm/circuit -run '^$' -bench CircuitSink -benchtime 100x -count 3
//
// Columnar kernels pay only while no row is built (fused-columns-to-rows
// is no faster than rows): the gain is in the segment's decoding and
// evaluation, ~2–3× there, and about 1.1–2× over a whole stateless view's
// epoch, whose sink (a hash map of encoded rows, sorting, and the writes)
// costs the same on both paths and dominates. The generic kernels reach
// about half of the hand-written bound (selection vectors, builders).
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
