package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/zset"
)

// A Fused chain must equal the chain of Stream forms it replaces, outputs
// and error Z-sets, at every step: the second filter and the Map fail on
// some rows, so evaluating them on rows an earlier filter dropped would
// show up as extra errors.

// fusedStage is one operator of a chain under test and its Stream form.
type fusedStage struct {
	make   func() Operator
	stream func(ctx *Context, in zset.Batch) (zset.Batch, error)
}

func filterStage(pred expr.Expr) fusedStage {
	return fusedStage{
		make:   func() Operator { return NewFilter(intSchema(3), pred) },
		stream: func(ctx *Context, in zset.Batch) (zset.Batch, error) { return StreamFilter(ctx, pred, in) },
	}
}

func fusedStages(t testing.TB) map[string][]fusedStage {
	// a <> 0 (vectorized), then 6 / (a - 1) > b: fails on a = 1, which the
	// first filter keeps; row-at-a-time c >= 0.
	notZero := filterStage(mustBinary(t, "<>", int8Col(0), int8Const(0)))
	divides := filterStage(mustBinary(t, ">", mustBinary(t, "/", int8Const(6), mustBinary(t, "-", int8Col(0), int8Const(1))), int8Col(1)))
	rowAtATime := filterStage(testexpr.Binary{Op: ">=", L: testexpr.IntCol(2), R: testexpr.Int(0)})
	exprs := []expr.Expr{
		mustBinary(t, "+", int8Col(0), mustBinary(t, "*", int8Col(1), int8Const(2))),
		int8Col(2),
		mustBinary(t, "/", int8Col(1), mustBinary(t, "-", int8Col(2), int8Const(1))),
	}
	mapStage := fusedStage{
		make:   func() Operator { return NewMap(exprs, []string{"x", "c", "q"}) },
		stream: func(ctx *Context, in zset.Batch) (zset.Batch, error) { return StreamMap(ctx, exprs, in) },
	}
	project := func(cols ...int) fusedStage {
		return fusedStage{
			make:   func() Operator { return NewProject(intSchema(3), cols) },
			stream: func(_ *Context, in zset.Batch) (zset.Batch, error) { return StreamProject(cols, in), nil },
		}
	}
	return map[string][]fusedStage{
		"filter,map":             {notZero, mapStage},
		"filter,filter,map":      {notZero, divides, mapStage},
		"filter,filter,filter":   {notZero, rowAtATime, divides},
		"filter,adjacent":        {divides, project(1, 2)},
		"filter,filter,shuffled": {rowAtATime, divides, project(2, 0)},
		"filter,identity":        {notZero, project(0, 1, 2)},
	}
}

func TestFusedIncremental(t *testing.T) {
	//lint:maprange each case is an independent subtest
	for name, stages := range fusedStages(t) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{3}, nulls: true,
					make: func(State) Operator {
						chain := stages[0].make()
						for _, s := range stages[1:] {
							fused, ok := Fuse(chain, s.make())
							if !ok {
								t.Fatalf("chain does not fuse")
							}
							chain = fused
						}
						return chain
					},
					stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
						b := in[0]
						for _, s := range stages {
							var err error
							if b, err = s.stream(ctx, b); err != nil {
								return zset.Batch{}, err
							}
						}
						return b, nil
					},
				})
			})
		})
	}
}

func TestFuseRejects(t *testing.T) {
	pred := mustBinary(t, "<>", int8Col(0), int8Const(0))
	project := NewProject(intSchema(3), []int{0})
	if _, ok := Fuse(project, NewFilter(intSchema(1), pred)); ok {
		t.Fatal("a Project followed by a Filter fused")
	}
	fused, ok := Fuse(NewFilter(intSchema(3), pred), project)
	if !ok {
		t.Fatal("Filter→Project did not fuse")
	}
	if _, ok := Fuse(fused, NewFilter(intSchema(1), pred)); ok {
		t.Fatal("a chain ending in a Project took another stage")
	}
}
