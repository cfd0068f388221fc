// Package zset is the Z-set batch: rows with signed int64 weights (spec §2).
//
// An insert is (row, +1), a delete (row, -1), an update a delete plus an
// insert. Operators exchange Batches; Consolidate sums the weights of equal
// rows and drops zeros, giving the canonical form (rows sorted by their
// encoding, so output order is deterministic).
//
// Representation, honestly: ARCHITECTURE.md §5 asks deltas in flight to be
// Arrow RecordBatches. For now a Batch is row-oriented in memory
// ([]types.Row plus []int64 weights) and ToArrow/FromArrow convert at the
// boundaries (exchange, COPY, tests). The stateless operators (Filter, Map)
// evaluate columnar inside a step (ivm/expr Program: typed column vectors
// extracted from the rows, see vector.go for why not Arrow arrays), so the
// circuit API stays row-oriented.
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
