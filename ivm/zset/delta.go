package zset

// Delta is a batch in flight in either form: rows (a Batch) or columns (a
// Columns), whose rows are built only when some consumer asks for them.
// The zero Delta is the empty row batch.
type Delta struct {
	rows Batch
	cols *Columns
}

// RowDelta is b as a Delta.
func RowDelta(b Batch) Delta { return Delta{rows: b} }

// ColumnDelta is c as a Delta.
func ColumnDelta(c *Columns) Delta { return Delta{cols: c} }

// Len is the number of entries.
func (d Delta) Len() int {
	if d.cols != nil {
		return d.cols.Len()
	}
	return d.rows.Len()
}

// Columns returns the columnar form, or nil for a row delta.
func (d Delta) Columns() *Columns { return d.cols }

// Batch returns the rows, materializing a columnar delta (each call
// builds them again: callers keep the result).
func (d Delta) Batch() Batch {
	if d.cols != nil {
		return d.cols.Rows()
	}
	return d.rows
}
