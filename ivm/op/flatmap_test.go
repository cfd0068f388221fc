package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestFlatMapIncremental checks FlatMap (generate_series(a, b) WITH
// ORDINALITY per row, LEFT JOIN LATERAL style with an ON condition)
// against a reference written out by hand: each integrated row (r, w)
// gives (r ++ (g, i), w) for its series, or one NULL-padded row when no
// element passes.
func TestFlatMapIncremental(t *testing.T) {
	srf := &expr.SetReturning{Name: "generate_series", ArgTypes: []types.Type{types.TInt8, types.TInt8}, Cols: []types.Type{types.TInt8}, Ordinality: true}
	// ON g <> 1 (over the output row: a, b, g, ordinality).
	cond := testexpr.Binary{Op: "<>", L: testexpr.IntCol(2), R: testexpr.Int(1)}
	rapid.Check(t, func(t *rapid.T) {
		outer := rapid.Bool().Draw(t, "outer")
		spec := FlatMapSpec{Funcs: []FlatMapFunc{{Func: srf, Args: []expr.Expr{testexpr.IntCol(0), testexpr.IntCol(1)}, Names: []string{"g", "ordinality"}}}, Outer: outer}
		if outer {
			spec.Cond = cond
		}
		checkIncremental(t, incrementalCase{
			widths: []int{2}, nulls: true,
			make: func(State) Operator { return NewFlatMap(intSchema(2), spec) },
			stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
				var out zset.Batch
				for i, r := range in[0].Rows {
					kept := 0
					if r[0] != nil && r[1] != nil {
						n := int64(0)
						for g := r[0].(int64); g <= r[1].(int64); g++ {
							n++
							if outer && g == 1 {
								continue
							}
							out.Add(types.Row{r[0], r[1], g, n}, in[0].Weights[i])
							kept++
						}
					}
					if outer && kept == 0 {
						out.Add(types.Row{r[0], r[1], nil, nil}, in[0].Weights[i])
					}
				}
				return out, nil
			},
		})
	})
}
