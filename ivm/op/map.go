package op

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Map computes one output row per input row from a list of expressions
// (SELECT-list projection). It is linear:
//
//	Map(Δ) = π_e(Δ)
//
//	time | input          | output
//	-----|----------------|-------------
//	0    | {(1,2):+1}     | {(3):+1}       (e: a+b)
//	1    | {(1,2):-1,     | {(3):-1,
//	     |  (2,2):+1}     |  (4):+1}
//
// A Map whose expressions are all column references is a Project; use
// NewProject, which needs no expressions.
//
// Step evaluates the expressions vectorized (expr.Program), one expression
// over the whole delta at a time; StreamMap, the reference, evaluates row
// by row.
type Map struct {
	schema types.Schema
	exprs  []expr.Expr
	cols   []int // set for a pure projection
	// identity is set for a projection keeping every column in order.
	identity bool
	// programs are exprs compiled into column kernels; nil entries are
	// plain column references (copied, not re-boxed).
	programs []*expr.Program
	// columnar is set when the output schema has a columnar form, so
	// columnar input gives columnar output (fused_columns.go).
	columnar bool
	// rowsBuilt counts rows built from columnar input (no columnar
	// output form).
	rowsBuilt int64
	// Reused buffers: the all-rows selection, each expression's result
	// and the rows no expression failed on.
	all, live []int32
	results   []expr.Result
}

// NewMap returns a Map producing columns named names from exprs.
func NewMap(exprs []expr.Expr, names []string) *Map {
	schema := make(types.Schema, len(exprs))
	for i, e := range exprs {
		schema[i] = types.Column{Name: names[i], Type: e.Type(), Nullable: true}
	}
	m := &Map{schema: schema, exprs: exprs, programs: make([]*expr.Program, len(exprs)), columnar: zset.ColumnarSchema(schema)}
	for i, e := range exprs {
		if _, ok := e.(*expr.ColumnRef); !ok {
			m.programs[i] = expr.CompileVector(e)
		}
	}
	return m
}

// NewProject returns a Map keeping columns cols of in.
func NewProject(in types.Schema, cols []int) *Map {
	schema := make(types.Schema, len(cols))
	for i, c := range cols {
		schema[i] = in[c]
	}
	identity := len(cols) == len(in)
	for j, c := range cols {
		identity = identity && c == j
	}
	return &Map{schema: schema, cols: cols, identity: identity, columnar: true}
}

// Schema implements Operator.
func (m *Map) Schema() types.Schema { return m.schema }

// Step implements Operator.
func (m *Map) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	in := inputs[0]
	if m.cols != nil {
		if m.identity {
			// NB: batches are never modified once produced, so the
			// input is the output.
			return in, nil
		}
		return projectRows(m.cols, in, nil, true), nil
	}
	m.all = expr.AllRows(m.all, len(in.Rows))
	return m.apply(ctx, in, m.all)
}

// apply maps the rows sel (ascending) of in.
func (m *Map) apply(ctx *Context, in zset.Batch, sel []int32) (zset.Batch, error) {
	if m.cols != nil {
		return projectRows(m.cols, in, sel, false), nil
	}
	return m.stepVectorized(ctx, in, sel)
}

// stepVectorized evaluates each expression over the selected rows, then
// assembles the output rows column by column into one backing array. A row
// is dropped with the error of the first expression (in SELECT-list order)
// that fails on it, as in StreamMap; evaluating the later expressions on it
// has no effect (evaluation has no side effects).
func (m *Map) stepVectorized(ctx *Context, in zset.Batch, sel []int32) (zset.Batch, error) {
	results, live, err := m.evalLive(ctx, sel, func(p *expr.Program) expr.Result {
		return p.EvalSel(ctx.Env, in.Rows, sel)
	}, func(i int32) (types.Row, int64) { return in.Rows[i], in.Weights[i] })
	if err != nil {
		return zset.Batch{}, err
	}
	return m.assemble(results, live, in.Weights, func(values []types.Datum, width, col int) {
		for k, i := range live {
			values[k*width] = in.Rows[i][col]
		}
	}), nil
}

// assemble builds the output rows of the rows live (with their weights)
// column by column into one backing array: boxed results, and column
// references copied by copyColumn (values[k*width] is output row k's
// slot; col is the input column).
func (m *Map) assemble(results []expr.Result, live []int32, weights []int64, copyColumn func(values []types.Datum, width, col int)) zset.Batch {
	if len(live) == 0 {
		return zset.Batch{}
	}
	width := len(m.exprs)
	out := zset.Batch{Rows: make([]types.Row, len(live)), Weights: make([]int64, len(live))}
	// NB: one backing array for all output rows of the batch saves an
	// allocation per row; it is filled one column at a time.
	values := make([]types.Datum, len(live)*width)
	for j, e := range m.exprs {
		if m.programs[j] != nil {
			results[j].Box(values[j:], width, live)
			continue
		}
		copyColumn(values[j:], width, e.(*expr.ColumnRef).Index)
	}
	for k, i := range live {
		out.Rows[k] = values[k*width : (k+1)*width : (k+1)*width]
		out.Weights[k] = weights[i]
	}
	return out
}

// evalLive evaluates every program with eval and returns the results and
// the rows of sel no expression failed on; a failing row is recorded in
// ctx (row gives it and its weight) with the error of its first failing
// expression in SELECT-list order.
func (m *Map) evalLive(ctx *Context, sel []int32, eval func(*expr.Program) expr.Result, row func(i int32) (types.Row, int64)) ([]expr.Result, []int32, error) {
	width := len(m.exprs)
	if cap(m.results) < width {
		m.results = make([]expr.Result, width)
	}
	results := m.results[:width]
	failed := false
	for j, p := range m.programs {
		if p != nil {
			results[j] = eval(p)
			failed = failed || results[j].Failed()
		}
	}
	if !failed {
		return results, sel, nil
	}
	live := m.live[:0]
rows:
	for _, i := range sel {
		for j, p := range m.programs {
			if p == nil {
				continue
			}
			if err := results[j].Err(int(i)); err != nil {
				r, w := row(i)
				if err := ctx.Fail(err, r, w); err != nil {
					return nil, nil, err
				}
				continue rows
			}
		}
		live = append(live, i)
	}
	m.live = live
	return results, live, nil
}

// StreamMap is the non-incremental Map.
func StreamMap(ctx *Context, exprs []expr.Expr, in zset.Batch) (zset.Batch, error) {
	out := zset.Batch{Rows: make([]types.Row, 0, len(in.Rows)), Weights: make([]int64, 0, len(in.Rows))}
	// NB: one backing array for all output rows of the batch saves an
	// allocation per row.
	values := make([]types.Datum, len(in.Rows)*len(exprs))
rows:
	for i, row := range in.Rows {
		outRow := types.Row(values[i*len(exprs) : (i+1)*len(exprs) : (i+1)*len(exprs)])
		for j, e := range exprs {
			v, err := e.Eval(ctx.Env, row)
			if err != nil {
				if err := ctx.Fail(err, row, in.Weights[i]); err != nil {
					return zset.Batch{}, err
				}
				continue rows
			}
			outRow[j] = v
		}
		out.Add(outRow, in.Weights[i])
	}
	return out, nil
}

// StreamProject is the non-incremental projection onto cols.
func StreamProject(cols []int, in zset.Batch) zset.Batch {
	out := zset.Batch{Rows: make([]types.Row, len(in.Rows)), Weights: in.Weights}
	values := make([]types.Datum, len(in.Rows)*len(cols))
	for i, row := range in.Rows {
		outRow := types.Row(values[i*len(cols) : (i+1)*len(cols) : (i+1)*len(cols)])
		for j, c := range cols {
			outRow[j] = row[c]
		}
		out.Rows[i] = outRow
	}
	return out
}

// projectRows projects the rows sel (ascending; every row, sharing in's
// weights, when all is set) of in onto cols. When cols is a run of adjacent columns
// (c, c+1, …) each output row is a slice of its input row, so nothing is
// copied: rows are immutable once produced, and the capacity limit keeps an
// append to the slice from writing into the input row.
func projectRows(cols []int, in zset.Batch, sel []int32, all bool) zset.Batch {
	n := len(sel)
	if all {
		n = len(in.Rows)
	}
	out := zset.Batch{Rows: make([]types.Row, n), Weights: in.Weights}
	if !all {
		out.Weights = make([]int64, n)
		for k, i := range sel {
			out.Weights[k] = in.Weights[i]
		}
	}
	row := func(k int) types.Row {
		if all {
			return in.Rows[k]
		}
		return in.Rows[sel[k]]
	}
	if first, ok := adjacentColumns(cols); ok {
		end := first + len(cols)
		for k := range out.Rows {
			out.Rows[k] = row(k)[first:end:end]
		}
		return out
	}
	width := len(cols)
	values := make([]types.Datum, n*width)
	for k := range out.Rows {
		outRow := types.Row(values[k*width : (k+1)*width : (k+1)*width])
		r := row(k)
		for j, c := range cols {
			outRow[j] = r[c]
		}
		out.Rows[k] = outRow
	}
	return out
}

// adjacentColumns reports whether cols is c, c+1, …, c+len(cols)-1 and
// returns c.
func adjacentColumns(cols []int) (int, bool) {
	if len(cols) == 0 {
		return 0, false
	}
	for j, c := range cols {
		if c != cols[0]+j {
			return 0, false
		}
	}
	return cols[0], true
}
