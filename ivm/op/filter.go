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
type Filter struct {
	schema types.Schema
	pred   expr.Expr
}

// NewFilter returns a Filter over rows of schema in.
func NewFilter(in types.Schema, pred expr.Expr) *Filter {
	return &Filter{schema: in, pred: pred}
}

// Schema implements Operator.
func (f *Filter) Schema() types.Schema { return f.schema }

// Step implements Operator.
func (f *Filter) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	return StreamFilter(ctx, f.pred, inputs[0])
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
