package op

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Filter keeps the rows for which a predicate is true (NULL and false drop
// the row). It is linear, so the incremental form is the stream form
// applied to the delta:
//
//	Filter(Δ) = σ_p(Δ)
//
//	time | input         | output
//	-----|---------------|--------------
//	0    | {1:+1, 5:+1}  | {5:+1}         (p: x > 2)
//	1    | {5:-1, 7:+2}  | {5:-1, 7:+2}
//
// Step evaluates the predicate vectorized (expr.Program) over the whole
// delta; StreamFilter, the reference, evaluates it row by row.
type Filter struct {
	schema types.Schema
	pred   expr.Expr
	// program is pred compiled into column kernels (nil when nothing in
	// pred vectorizes).
	program *expr.Program
}

// NewFilter returns a Filter over rows of schema in.
func NewFilter(in types.Schema, pred expr.Expr) *Filter {
	f := &Filter{schema: in, pred: pred}
	if p := expr.CompileVector(pred); p.Vectorized {
		f.program = p
	}
	return f
}

// Schema implements Operator.
func (f *Filter) Schema() types.Schema { return f.schema }

// Step implements Operator.
func (f *Filter) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	in := inputs[0]
	if f.program == nil || len(in.Rows) == 0 {
		return StreamFilter(ctx, f.pred, in)
	}
	res := f.program.Eval(ctx.Env, in.Rows)
	out := zset.Batch{Rows: make([]types.Row, 0, len(in.Rows)), Weights: make([]int64, 0, len(in.Rows))}
	for i, row := range in.Rows {
		if err := res.Err(i); err != nil {
			if err := ctx.Fail(err, row, in.Weights[i]); err != nil {
				return zset.Batch{}, err
			}
			continue
		}
		if res.Bool(i) {
			out.Add(row, in.Weights[i])
		}
	}
	return out, nil
}

// StreamFilter is the non-incremental Filter: σ_p(in).
func StreamFilter(ctx *Context, pred expr.Expr, in zset.Batch) (zset.Batch, error) {
	out := zset.Batch{Rows: make([]types.Row, 0, len(in.Rows)), Weights: make([]int64, 0, len(in.Rows))}
	for i, row := range in.Rows {
		ok, err := evalBool(ctx.Env, pred, row)
		if err != nil {
			if err := ctx.Fail(err, row, in.Weights[i]); err != nil {
				return zset.Batch{}, err
			}
			continue
		}
		if ok {
			out.Add(row, in.Weights[i])
		}
	}
	return out, nil
}
