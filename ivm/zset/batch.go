package zset

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// Batch is a Z-set: Rows[i] has weight Weights[i]. A Batch may hold the same
// row several times and zero weights until consolidated.
//
// INVARIANT: len(Rows) == len(Weights).
type Batch struct {
	Rows    []types.Row
	Weights []int64
}

// Len is the number of (row, weight) entries.
func (b Batch) Len() int { return len(b.Rows) }

// Add appends (row, weight). Zero weights are skipped.
func (b *Batch) Add(row types.Row, weight int64) {
	if weight == 0 {
		return
	}
	b.Rows = append(b.Rows, row)
	b.Weights = append(b.Weights, weight)
}

// AddBatch appends every entry of o scaled by factor.
func (b *Batch) AddBatch(o Batch, factor int64) {
	for i, r := range o.Rows {
		b.Add(r, o.Weights[i]*factor)
	}
}

// Negate returns the batch with every weight negated.
func Negate(b Batch) Batch {
	out := Batch{Rows: b.Rows, Weights: make([]int64, len(b.Weights))}
	for i, w := range b.Weights {
		out.Weights[i] = -w
	}
	return out
}

// Sum returns the Z-set sum of the batches (not consolidated).
func Sum(batches ...Batch) Batch {
	var out Batch
	for _, b := range batches {
		out.AddBatch(b, 1)
	}
	return out
}

// consolidateSampleRows is how many rows Consolidate reads before it
// sizes its table: if at least half of them were distinct, the table
// is rebuilt for every row of the batch (no growth steps); otherwise it
// grows as needed. Presizing for all rows made duplicate-heavy deltas
// (a view's output) pay for a table they never fill, growing made
// all-distinct deltas (inserts) pay for rehashing; BenchmarkConsolidate
// measures both.
const consolidateSampleRows = 256

// Consolidate sums the weights of equal rows, drops zero weights and sorts
// rows by their encoding, so the result is canonical: two batches denote the
// same Z-set iff their consolidations are equal.
func Consolidate(b Batch) Batch {
	type entry struct {
		key    string
		row    types.Row
		weight int64
	}
	// NB: one string per distinct row serves as map key and sort key.
	var entries []entry
	index := make(map[string]int)
	var buf []byte
	for i, r := range b.Rows {
		if i == consolidateSampleRows && len(entries)*2 >= i {
			sized := make(map[string]int, len(b.Rows))
			for j, e := range entries {
				sized[e.key] = j
			}
			index = sized
			entries = append(make([]entry, 0, len(b.Rows)), entries...)
		}
		buf = EncodeRow(buf[:0], r)
		if j, ok := index[string(buf)]; ok {
			entries[j].weight += b.Weights[i]
			continue
		}
		key := string(buf)
		index[key] = len(entries)
		entries = append(entries, entry{key: key, row: r, weight: b.Weights[i]})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	out := Batch{Rows: make([]types.Row, 0, len(entries)), Weights: make([]int64, 0, len(entries))}
	for _, e := range entries {
		out.Add(e.row, e.weight)
	}
	return out
}

// Equal reports whether a and b denote the same Z-set.
func Equal(a, b Batch) bool {
	ca, cb := Consolidate(a), Consolidate(b)
	if ca.Len() != cb.Len() {
		return false
	}
	var ka, kb []byte
	for i := range ca.Rows {
		ka = EncodeRow(ka[:0], ca.Rows[i])
		kb = EncodeRow(kb[:0], cb.Rows[i])
		if !bytes.Equal(ka, kb) || ca.Weights[i] != cb.Weights[i] {
			return false
		}
	}
	return true
}

// String renders the consolidated batch, one "row: weight" per line, for
// test failures.
func (b Batch) String() string {
	c := Consolidate(b)
	var sb strings.Builder
	sb.WriteString("{")
	for i, r := range c.Rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%s:%+d", FormatRow(r), c.Weights[i])
	}
	sb.WriteString("}")
	return sb.String()
}

// FormatRow renders a row for diagnostics.
func FormatRow(r types.Row) string {
	parts := make([]string, len(r))
	for i, d := range r {
		switch v := d.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			parts[i] = fmt.Sprintf("%q", v)
		case fmt.Stringer:
			parts[i] = v.String()
		default:
			parts[i] = fmt.Sprint(v)
		}
	}
	return "(" + strings.Join(parts, ",") + ")"
}
