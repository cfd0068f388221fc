package zset

// Delta is a batch in flight in either form: rows (a Batch) or columns (a
// Columns), whose rows are built only when some consumer asks for them.
// The zero Delta is the empty row batch.
type Delta struct {
	rows Batch
	cols *Columns
	// take, when set, is a columnar delta not gathered yet: the entries
	// take.sel of take.src with weights take.weights (TakeDelta).
	take *pendingTake
}

// pendingTake is Columns.Take deferred until the columns are asked for.
type pendingTake struct {
	src     *Columns
	sel     []int32
	weights []int64
	done    *Columns
}

// RowDelta is b as a Delta.
func RowDelta(b Batch) Delta { return Delta{rows: b} }

// ColumnDelta is c as a Delta.
func ColumnDelta(c *Columns) Delta { return Delta{cols: c} }

// TakeDelta is c.Take(sel, weights) as a Delta, gathered only when its
// columns or rows are asked for (a view's consolidated output that no
// downstream view or subscriber reads is never gathered).
func TakeDelta(c *Columns, sel []int32, weights []int64) Delta {
	// INVARIANT: one weight per entry taken.
	if len(weights) != len(sel) {
		panic("zset: TakeDelta needs one weight per entry")
	}
	if weights == nil {
		weights = []int64{}
	}
	return Delta{take: &pendingTake{src: c, sel: sel, weights: weights}}
}

// Len is the number of entries.
func (d Delta) Len() int {
	switch {
	case d.take != nil:
		return len(d.take.weights)
	case d.cols != nil:
		return d.cols.Len()
	}
	return d.rows.Len()
}

// Columns returns the columnar form, or nil for a row delta.
func (d Delta) Columns() *Columns {
	if t := d.take; t != nil {
		if t.done == nil {
			t.done = t.src.Take(t.sel, t.weights)
		}
		return t.done
	}
	return d.cols
}

// Columnar reports whether d is in columnar form (without gathering a
// pending TakeDelta).
func (d Delta) Columnar() bool { return d.take != nil || d.cols != nil }

// Batch returns the rows, materializing a columnar delta (each call
// builds them again: callers keep the result).
func (d Delta) Batch() Batch {
	if c := d.Columns(); c != nil {
		return c.Rows()
	}
	return d.rows
}
