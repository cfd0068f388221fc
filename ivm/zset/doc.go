// Package zset is the Z-set batch: rows with signed int64 weights (spec §2).
//
// An insert is (row, +1), a delete (row, -1), an update a delete plus an
// insert. Operators exchange Batches; Consolidate sums the weights of equal
// rows and drops zeros, giving the canonical form (rows sorted by their
// encoding, so output order is deterministic).
//
// Representation, honestly: ARCHITECTURE.md §5 asks deltas in flight to be
// Arrow RecordBatches. A Batch is row-oriented in memory ([]types.Row plus
// []int64 weights) and ToArrow/FromArrow convert at the boundaries
// (exchange, COPY, tests). The stateless operators evaluate columnar inside
// a step (ivm/expr Program: typed column vectors unboxed from the rows, see
// vector.go), and a circuit fuses a chain of Filters ending in a Map or
// Project into one pass (op.Fused), so the circuit API stays row-oriented.
//
// Arrow in flight was measured, not assumed (BenchmarkFilterMapArrow in
// ivm/op: WHERE k >= 0 AND v > 0 SELECT k + v * 2 over 10,000-row deltas,
// hand-written kernels over the Arrow arrays as an upper bound, rows/cpu-s
// on 2 shared cores at load ≈ 12, three runs):
//
//	path=rows              9.2M–13.5M   op.Fused over rows (what runs)
//	path=arrow             46M–61M      Arrow in, Arrow out
//	path=arrow-to-rows     9.9M–11.7M   Arrow in, rows materialized at the end
//	path=rows-arrow-rows   7.6M–11.0M   rows in, Arrow kernels, rows out
//
//	go test ./ivm/op -run '^$' -bench 'FilterMapArrow' -benchtime 2000x
//
// Columnar kernels are 4–5× faster only while no row is built. Every
// segment of a circuit today starts at a row source (shard deltas decoded
// from slate) and ends at a row-oriented consumer (Consolidate and
// arrangements key rows by EncodeRow/keyenc, stateful operators keep rows),
// so the segment pays unboxing or materialization at its ends and the
// Arrow path is no faster (arrow-to-rows ≈ rows) or slower (rows-arrow-rows)
// than the fused row path. Decision: deltas stay row-oriented in flight;
// carrying Arrow arrays pays once the consumers are columnar too (sink
// consolidation and keyenc over typed columns, columnar aggregation), which
// is where to start if the stateless path must get faster.
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
