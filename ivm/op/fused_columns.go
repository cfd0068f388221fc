package op

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Columnar is implemented by operators that step a columnar delta
// (zset.Columns) without building its rows. A circuit calls StepColumns
// when the operator's one input delta is columnar and Step otherwise
// (after materializing the rows).
type Columnar interface {
	Operator
	// StepColumns is Step over a columnar delta: the same output Z-set and
	// the same evaluation errors, in either form.
	StepColumns(ctx *Context, in *zset.Columns) (zset.Delta, error)
	// RowsBuilt counts the rows built from columnar input over the
	// operator's lifetime (expressions with no columnar kernel, outputs
	// with no columnar form).
	RowsBuilt() int64
}

// Single returns a lone Filter, Map or Project as a one-stage Fused, so it
// steps columnar deltas too.
func Single(o Operator) (*Fused, bool) {
	var f Fused
	switch x := o.(type) {
	case *Filter:
		f.filters = []*Filter{x}
	case *Map:
		f.last = x
	default:
		return nil, false
	}
	f.stageRowsOut = make([]int64, f.Stages())
	return &f, true
}

// StepColumns implements Columnar: the filters select over the arrays
// (expr.Program.EvalColumnsSel), a Project selects and gathers arrays, a
// Map builds its result arrays from the kernels' typed vectors. Errors are
// raised for the same rows, in the same order, as Step raises them; the
// offending row is built only to be named in the error.
func (f *Fused) StepColumns(ctx *Context, in *zset.Columns) (zset.Delta, error) {
	n := in.Len()
	if err := f.runFilters(n, func(filter *Filter, sel, dst []int32) ([]int32, error) {
		return filter.selectColumns(ctx, in, sel, dst)
	}); err != nil {
		return zset.Delta{}, err
	}
	if f.last == nil {
		if len(f.sel) == n {
			return zset.ColumnDelta(in), nil
		}
		return zset.ColumnDelta(in.Take(f.sel, nil)), nil
	}
	out, err := f.last.applyColumns(ctx, in, f.sel)
	if err != nil {
		return zset.Delta{}, err
	}
	f.stageRowsOut[len(f.filters)] = int64(out.Len())
	return out, nil
}

// RowsBuilt implements Columnar.
func (f *Fused) RowsBuilt() int64 {
	var n int64
	for _, filter := range f.filters {
		n += filter.columns.RowsBuilt
	}
	if f.last != nil {
		n += f.last.rowsBuilt
		for _, p := range f.last.programs {
			if p != nil {
				n += p.RowsBuilt
			}
		}
	}
	return n
}

// selectColumns is selectRows over a columnar delta.
func (f *Filter) selectColumns(ctx *Context, in *zset.Columns, sel, dst []int32) ([]int32, error) {
	res := f.columns.EvalColumnsSel(ctx.Env, in, sel)
	if res.Failed() {
		if err := failColumns(ctx, in, sel, res); err != nil {
			return dst, err
		}
	}
	return res.SelectTrue(dst, sel), nil
}

// failColumns records the errors of res on the rows sel, in row order.
func failColumns(ctx *Context, in *zset.Columns, sel []int32, res expr.Result) error {
	weights := in.Weights()
	for _, i := range sel {
		if err := res.Err(int(i)); err != nil {
			if err := ctx.Fail(err, in.Row(int(i)), weights[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyColumns maps the rows sel (ascending) of a columnar delta.
func (m *Map) applyColumns(ctx *Context, in *zset.Columns, sel []int32) (zset.Delta, error) {
	all := len(sel) == in.Len()
	if m.cols != nil {
		if m.identity && all {
			return zset.ColumnDelta(in), nil
		}
		proj := in.Select(m.cols)
		if all {
			return zset.ColumnDelta(proj), nil
		}
		return zset.ColumnDelta(proj.Take(sel, nil)), nil
	}
	weights := in.Weights()
	results, live, err := m.evalLive(ctx, sel, func(p *expr.Program) expr.Result {
		return p.EvalColumnsSel(ctx.Env, in, sel)
	}, func(i int32) (types.Row, int64) { return in.Row(int(i)), weights[i] })
	if err != nil {
		return zset.Delta{}, err
	}
	if !m.columnar {
		// No columnar form for the output (e.g. NUMERIC): the output rows
		// are built here, from the results and the input arrays.
		return zset.RowDelta(m.boxColumns(in, results, live)), nil
	}
	allLive := len(live) == in.Len()
	width := len(m.exprs)
	cols := make([]arrow.Array, width)
	for j, e := range m.exprs {
		if m.programs[j] == nil {
			col := e.(*expr.ColumnRef).Index
			if allLive {
				cols[j] = in.Column(col)
			} else {
				cols[j] = zset.TakeArray(m.schema[j].Type, in.Column(col), live)
			}
			continue
		}
		a, err := resultArray(m.schema[j].Type, results[j], live)
		if err != nil {
			return zset.Delta{}, fmt.Errorf("op: map column %q: %w", m.schema[j].Name, err)
		}
		cols[j] = a
	}
	if !allLive {
		weights = make([]int64, len(live))
		for k, i := range live {
			weights[k] = in.Weights()[i]
		}
	}
	return zset.ColumnDelta(zset.NewColumns(m.schema, cols, weights)), nil
}

// boxColumns builds the output rows of the rows live from the results
// and, for column references, the input arrays.
func (m *Map) boxColumns(in *zset.Columns, results []expr.Result, live []int32) zset.Batch {
	m.rowsBuilt += int64(len(live))
	return m.assemble(results, live, in.Weights(), func(values []types.Datum, width, col int) {
		for k, i := range live {
			values[k*width] = in.Datum(col, int(i))
		}
	})
}

// resultArray builds the array of a result's values on the rows live.
func resultArray(t types.Type, res expr.Result, live []int32) (arrow.Array, error) {
	cb := zset.NewColumnBuilder(t, len(live))
	if ints, nulls, ok := res.Ints(); ok {
		cb.AppendIntsSel(ints, nulls, live)
		return cb.Finish(), nil
	}
	if bools, nulls, ok := res.Bools(); ok {
		for _, i := range live {
			if nulls[i] {
				cb.AppendNull()
			} else {
				cb.AppendBool(bools[i])
			}
		}
		return cb.Finish(), nil
	}
	for _, i := range live {
		if err := cb.AppendDatum(res.Datum(int(i))); err != nil {
			return nil, err
		}
	}
	return cb.Finish(), nil
}
