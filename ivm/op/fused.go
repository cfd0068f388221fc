package op

import (
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Fused is a chain of stateless operators stepped as one pass: Filters
// followed by at most one Map or Project. Composing linear operators is
// linear, so
//
//	Fused(σ_p1, …, σ_pk, π_e)(Δ) = π_e(σ_pk(…σ_p1(Δ)))
//
//	time | input               | output
//	-----|---------------------|-----------
//	0    | {(1,5):+1, (2,0):+1} | {(5):+1}    (σ: v > 0, π: v)
//	1    | {(1,5):-1}           | {(5):-1}
//
// Each filter evaluates its predicate only on the rows the filters before
// it kept (a selection vector, as the unfused chain would see them), and
// the Map evaluates its expressions only on the rows every filter kept, so
// which rows raise which errors is exactly as in the unfused chain. The
// gain is that the intermediate batches (a row slice and a weight slice per
// operator) are never built: the one output batch is assembled from the
// input rows and the final selection. The circuit fuses chains by itself
// (ivm/circuit Build); the reference is the unfused chain of Stream forms.
type Fused struct {
	filters []*Filter
	// last is the final Map or Project (nil: the chain ends in a filter).
	last *Map
	// stageRowsOut is the number of rows each stage passed on in the last
	// step (filters first), for per-node statistics.
	stageRowsOut []int64
	// sel and next are the selection buffers the filters alternate between.
	sel, next []int32
}

// Fuse returns the chain a then b as one operator, or false when the pair
// cannot be fused: a must be a Filter or a Fused chain ending in a filter,
// and b a Filter, Map or Project.
func Fuse(a, b Operator) (*Fused, bool) {
	var f Fused
	switch x := a.(type) {
	case *Filter:
		f.filters = []*Filter{x}
	case *Fused:
		if x.last != nil {
			return nil, false
		}
		f.filters = append([]*Filter(nil), x.filters...)
	default:
		return nil, false
	}
	switch y := b.(type) {
	case *Filter:
		f.filters = append(f.filters, y)
	case *Map:
		f.last = y
	default:
		return nil, false
	}
	f.stageRowsOut = make([]int64, f.Stages())
	return &f, true
}

// Stages is the number of operators fused.
func (f *Fused) Stages() int {
	if f.last != nil {
		return len(f.filters) + 1
	}
	return len(f.filters)
}

// StageRowsOut returns, per fused operator in chain order, how many rows
// it passed on in the last step. The slice is reused by the next step.
func (f *Fused) StageRowsOut() []int64 { return f.stageRowsOut }

// Schema implements Operator.
func (f *Fused) Schema() types.Schema {
	if f.last != nil {
		return f.last.Schema()
	}
	return f.filters[len(f.filters)-1].Schema()
}

// runFilters runs the filters over n rows, leaving the rows every filter
// kept in f.sel; selectRows is one filter's selection over the input.
func (f *Fused) runFilters(n int, selectRows func(filter *Filter, sel, dst []int32) ([]int32, error)) error {
	f.sel = expr.AllRows(f.sel, n)
	for k, filter := range f.filters {
		next, err := selectRows(filter, f.sel, f.next[:0])
		if err != nil {
			return err
		}
		// NB: selectRows reads one buffer while appending to the other.
		f.sel, f.next = next, f.sel
		f.stageRowsOut[k] = int64(len(f.sel))
	}
	return nil
}

// Step implements Operator.
func (f *Fused) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	in := inputs[0]
	if err := f.runFilters(len(in.Rows), func(filter *Filter, sel, dst []int32) ([]int32, error) {
		return filter.selectRows(ctx, in, sel, dst)
	}); err != nil {
		return zset.Batch{}, err
	}
	if f.last == nil {
		if len(f.sel) == len(in.Rows) {
			return in, nil
		}
		return gatherRows(in, f.sel), nil
	}
	out, err := f.last.apply(ctx, in, f.sel)
	if err != nil {
		return zset.Batch{}, err
	}
	f.stageRowsOut[len(f.filters)] = int64(out.Len())
	return out, nil
}
