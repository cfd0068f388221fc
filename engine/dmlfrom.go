package engine

import (
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// UPDATE ... FROM and DELETE ... USING join the target with other
// relations, so one target row comes out of the row plan once per source
// row it matches. PostgreSQL changes each physical target row once (with
// one unspecified matching source row). Tables with a primary key dedupe
// by key (writer.touched). Rows of a table without a key are told apart
// by nothing but their count: a value the table holds m times that
// matches k source rows comes out m×k times, and must be changed m times.

// withSources appends the source columns of a joined row to the target
// row RETURNING is evaluated over.
func withSources(row, sources types.Row) types.Row {
	if len(sources) == 0 {
		return row
	}
	return append(append(make(types.Row, 0, len(row)+len(sources)), row...), sources...)
}

// onePerPhysicalRow keeps, for each distinct target row value (the first
// width columns of rows), its first joined row repeated as many times as
// the table holds that value in what the statement read (w.read).
func (w *writer) onePerPhysicalRow(rows []types.Row) []types.Row {
	width := len(w.rel.Columns)
	held := map[string]int64{}
	var buf []byte
	for i, r := range w.read.Rows {
		buf = zset.EncodeRow(buf[:0], r[:width])
		held[string(buf)] += w.read.Weights[i]
	}
	out := make([]types.Row, 0, len(rows))
	for _, r := range rows {
		buf = zset.EncodeRow(buf[:0], r[:width])
		n, ok := held[string(buf)]
		if !ok {
			continue // a value already emitted (its count was consumed)
		}
		delete(held, string(buf))
		for ; n > 0; n-- {
			out = append(out, r)
		}
	}
	return out
}
