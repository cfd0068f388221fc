package op

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// StepMemory accounts the bytes held by the deltas of one circuit step
// (every operator's output until the step ends) against a limit, so that
// a step that would outgrow the process's memory budget fails with 53200
// (RS-5502) instead of growing until the process is killed. The circuit
// charges each operator's output after the operator steps; an operator
// whose output can be far larger than its input (Join: a key matching m
// rows on one side and n on the other emits m·n rows) charges while it
// emits, through an OutputMeter, so it stops near the limit rather than
// after building the whole output.
//
// The charge is an estimate of the Go heap the rows occupy (RowBytes), not
// a measurement: it only has to grow with the real size, so the limit is
// set with room to spare (the server gives a step a quarter of
// --memory-budget).
type StepMemory struct {
	// LimitBytes is the most the step's deltas may hold (0: no limit).
	LimitBytes int64
	// Interrupt, when set, is polled at every charge: a cancelled
	// statement stops inside a long operator step, not only between
	// operators.
	Interrupt func() error
	// Shared, when set, is a budget shared with concurrent evaluations:
	// every charge is reserved there too, and Release gives it back.
	Shared    expr.MemoryReserver
	usedBytes int64
	// reservedBytes is what Shared holds for this step.
	reservedBytes int64
}

// Release gives what the step reserved in Shared back, at the step's end.
func (m *StepMemory) Release() {
	if m == nil || m.Shared == nil || m.reservedBytes == 0 {
		return
	}
	m.Shared.Release(m.reservedBytes)
	m.reservedBytes = 0
}

// UsedBytes is what was charged so far.
func (m *StepMemory) UsedBytes() int64 {
	if m == nil {
		return 0
	}
	return m.usedBytes
}

// Charge adds bytes to the step's use and fails once the limit is passed.
// A nil StepMemory charges nothing.
func (m *StepMemory) Charge(bytes int64) error {
	if m == nil {
		return nil
	}
	if m.Interrupt != nil {
		if err := m.Interrupt(); err != nil {
			return err
		}
	}
	if m.Shared != nil {
		if err := m.Shared.Reserve(bytes); err != nil {
			return err
		}
		m.reservedBytes += bytes
	}
	m.usedBytes += bytes
	if m.LimitBytes > 0 && m.usedBytes > m.LimitBytes {
		return errcode.New(errcode.StepMemoryExceeded, "out of memory: one evaluation step would hold more than %d MiB of intermediate rows (its share of --memory-budget)", m.LimitBytes>>20).
			WithDetail("an operator produced about %d MiB of rows in one step", m.usedBytes>>20)
	}
	return nil
}

// Row size estimate (RowBytes): a row is a slice header in its batch, a
// weight, and per datum an interface value plus what it points to.
const (
	rowOverheadBytes   = 24 + 8
	datumOverheadBytes = 16
	// datumBoxedBytes is a boxed fixed-width value (int64, float64, a
	// date, a timestamp).
	datumBoxedBytes = 8
	// datumHeaderBytes is a string's or a slice's own header.
	datumHeaderBytes = 16
)

// RowBytes estimates the heap bytes one delta entry with row occupies.
func RowBytes(row types.Row) int64 {
	n := int64(rowOverheadBytes)
	for _, d := range row {
		n += datumOverheadBytes
		switch v := d.(type) {
		case nil, bool:
		case string:
			n += datumHeaderBytes + int64(len(v))
		case []byte:
			n += datumHeaderBytes + 8 + int64(len(v))
		case types.Array:
			n += datumHeaderBytes + 8 + int64(len(v.Values))*(datumOverheadBytes+datumBoxedBytes)
		case types.Interval, types.UUID:
			n += 16
		default:
			n += datumBoxedBytes
		}
	}
	return n
}

// DeltaBytes estimates the heap bytes of a delta of rows width columns
// wide: the rows of a row batch are sampled (a batch is usually rows of
// similar size), a columnar delta counts a fixed width per value (without
// gathering a pending one).
func DeltaBytes(d zset.Delta, width int) int64 {
	if d.Columnar() {
		return int64(d.Len()) * (8 + int64(width)*(datumOverheadBytes+datumBoxedBytes))
	}
	return BatchBytes(d.Batch())
}

// deltaSampleRows is how many rows BatchBytes measures: enough to follow
// variable-width columns, few enough to cost nothing next to the step.
const deltaSampleRows = 64

// BatchBytes estimates the heap bytes of a row batch from a sample of its
// rows.
func BatchBytes(b zset.Batch) int64 {
	n := len(b.Rows)
	if n == 0 {
		return 0
	}
	stride := max(1, n/deltaSampleRows)
	var sampled, bytes int64
	for i := 0; i < n; i += stride {
		bytes += RowBytes(b.Rows[i])
		sampled++
	}
	return bytes * int64(n) / sampled
}

// meterEveryRows is how many rows an OutputMeter lets an operator emit
// between charges: rare enough to cost nothing per row, frequent enough
// that the step stops within a few hundred KiB of its limit.
const meterEveryRows = 1024

// OutputMeter charges the rows an operator appends to one output batch to
// the step's memory while it emits them.
type OutputMeter struct {
	charged int
}

// NewOutputMeter meters the rows appended to out from now on.
func NewOutputMeter(out *zset.Batch) OutputMeter { return OutputMeter{charged: len(out.Rows)} }

// Check charges the rows out gained since the last charge, once there are
// meterEveryRows of them, estimating each from the newest row. The bytes
// are added to ctx.MeteredBytes, so the circuit does not charge them again.
func (m *OutputMeter) Check(ctx *Context, out *zset.Batch) error {
	if ctx.Memory == nil || len(out.Rows)-m.charged < meterEveryRows {
		return nil
	}
	rows := len(out.Rows) - m.charged
	bytes := int64(rows) * RowBytes(out.Rows[len(out.Rows)-1])
	m.charged = len(out.Rows)
	ctx.MeteredBytes += bytes
	return ctx.Memory.Charge(bytes)
}
