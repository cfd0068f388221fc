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
type Map struct {
	schema types.Schema
	exprs  []expr.Expr
	cols   []int // set for a pure projection
}

// NewMap returns a Map producing columns named names from exprs.
func NewMap(exprs []expr.Expr, names []string) *Map {
	schema := make(types.Schema, len(exprs))
	for i, e := range exprs {
		schema[i] = types.Column{Name: names[i], Type: e.Type(), Nullable: true}
	}
	return &Map{schema: schema, exprs: exprs}
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
	return StreamMap(ctx, m.exprs, inputs[0])
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
