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
// delta into a selection vector, then gathers the kept rows (sharing them,
// not copying); StreamFilter, the reference, evaluates it row by row. A
// Filter feeding a Map or Project is fused with it by the circuit (see
// Fused), so the selection is never materialized as a batch.
type Filter struct {
	schema types.Schema
	pred   expr.Expr
	// program is pred compiled into column kernels (nil when nothing in
	// pred vectorizes).
	program *expr.Program
	// columns is pred compiled for columnar input (fallback kernels
	// included: EvalColumnsSel builds rows only for them).
	columns *expr.Program
	// all and sel are reused selection buffers.
	all, sel []int32
}

// NewFilter returns a Filter over rows of schema in.
func NewFilter(in types.Schema, pred expr.Expr) *Filter {
	f := &Filter{schema: in, pred: pred}
	p := expr.CompileVector(pred)
	f.columns = p
	if p.Vectorized {
		f.program = p
	}
	return f
}

// Schema implements Operator.
func (f *Filter) Schema() types.Schema { return f.schema }

// Step implements Operator.
func (f *Filter) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	in := inputs[0]
	f.all = expr.AllRows(f.all, len(in.Rows))
	sel, err := f.selectRows(ctx, in, f.all, f.sel[:0])
	f.sel = sel
	if err != nil {
		return zset.Batch{}, err
	}
	if len(sel) == len(in.Rows) {
		// NB: every row passed: the input batch is the output (batches
		// are never modified after they are produced).
		return in, nil
	}
	return gatherRows(in, sel), nil
}

// selectRows appends to dst the rows of sel (ascending) for which the
// predicate is true, recording evaluation errors in ctx in row order.
func (f *Filter) selectRows(ctx *Context, in zset.Batch, sel, dst []int32) ([]int32, error) {
	if f.program == nil {
		for _, i := range sel {
			ok, err := evalBool(ctx.Env, f.pred, in.Rows[i])
			if err != nil {
				if err := ctx.Fail(err, in.Rows[i], in.Weights[i]); err != nil {
					return dst, err
				}
				continue
			}
			if ok {
				dst = append(dst, i)
			}
		}
		return dst, nil
	}
	res := f.program.EvalSel(ctx.Env, in.Rows, sel)
	if res.Failed() {
		for _, i := range sel {
			if err := res.Err(int(i)); err != nil {
				if err := ctx.Fail(err, in.Rows[i], in.Weights[i]); err != nil {
					return dst, err
				}
			}
		}
	}
	return res.SelectTrue(dst, sel), nil
}

// gatherRows returns the entries sel of in, sharing the rows.
func gatherRows(in zset.Batch, sel []int32) zset.Batch {
	out := zset.Batch{Rows: make([]types.Row, len(sel)), Weights: make([]int64, len(sel))}
	for k, i := range sel {
		out.Rows[k], out.Weights[k] = in.Rows[i], in.Weights[i]
	}
	return out
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
