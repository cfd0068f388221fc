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
	// programs are exprs compiled into column kernels; nil entries are
	// plain column references (copied, not re-boxed).
	programs []*expr.Program
}

// NewMap returns a Map producing columns named names from exprs.
func NewMap(exprs []expr.Expr, names []string) *Map {
	schema := make(types.Schema, len(exprs))
	for i, e := range exprs {
		schema[i] = types.Column{Name: names[i], Type: e.Type(), Nullable: true}
	}
	m := &Map{schema: schema, exprs: exprs, programs: make([]*expr.Program, len(exprs))}
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
	return &Map{schema: schema, cols: cols}
}

// Schema implements Operator.
func (m *Map) Schema() types.Schema { return m.schema }

// Step implements Operator.
func (m *Map) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	if m.cols != nil {
		return StreamProject(m.cols, inputs[0]), nil
	}
	return m.stepVectorized(ctx, inputs[0])
}

// stepVectorized evaluates each expression over the whole batch, then
// assembles the rows. A row is dropped with the error of the first
// expression (in SELECT-list order) that fails on it, as in StreamMap;
// evaluating the later expressions on it has no effect (evaluation has no
// side effects).
func (m *Map) stepVectorized(ctx *Context, in zset.Batch) (zset.Batch, error) {
	width := len(m.exprs)
	results := make([]expr.Result, width)
	for j, p := range m.programs {
		if p != nil {
			results[j] = p.Eval(ctx.Env, in.Rows)
		}
	}
	out := zset.Batch{Rows: make([]types.Row, 0, len(in.Rows)), Weights: make([]int64, 0, len(in.Rows))}
	// NB: one backing array for all output rows of the batch saves an
	// allocation per row.
	values := make([]types.Datum, len(in.Rows)*width)
rows:
	for i, row := range in.Rows {
		outRow := types.Row(values[i*width : (i+1)*width : (i+1)*width])
		for j, e := range m.exprs {
			if m.programs[j] == nil {
				outRow[j] = row[e.(*expr.ColumnRef).Index]
				continue
			}
			if err := results[j].Err(i); err != nil {
				if err := ctx.Fail(err, row, in.Weights[i]); err != nil {
					return zset.Batch{}, err
				}
				continue rows
			}
			outRow[j] = results[j].Datum(i)
		}
		out.Add(outRow, in.Weights[i])
	}
	return out, nil
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
