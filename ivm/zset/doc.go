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
// boundaries (exchange, COPY, tests). Operators are written against Batch, so
// a later switch to columnar evaluation changes this package and the
// stateless operators, not the circuit API.
//
// Row encoding: codec.go holds a lossless, self-delimiting binary encoding of
// rows (EncodeRow/DecodeRow) and a canonical key encoding of selected columns
// (EncodeKey) in which equal SQL values encode equally (1.0 = 1.00, -0 = 0).
// NB: these are a private fallback until ivm/keyenc (memcomparable) lands;
// the encodings are only required to be deterministic and prefix-free, not
// order-preserving, and nothing outside ivm/ depends on their bytes.
//
//	b := zset.Batch{}
//	b.Add(types.Row{int64(1), "a"}, +1)
//	b.Add(types.Row{int64(1), "a"}, +1)
//	b.Add(types.Row{int64(2), "b"}, -1)
//	c := zset.Consolidate(b) // {(1,"a"):+2, (2,"b"):-1}
package zset
