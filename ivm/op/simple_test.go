package op

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/zset"
)

func TestFilterIncremental(t *testing.T) {
	// 6 / (a - 1) > b fails on a = 1: errors are data.
	pred := testexpr.Binary{Op: ">", L: testexpr.Binary{Op: "/", L: testexpr.Int(6), R: testexpr.Binary{Op: "-", L: testexpr.IntCol(0), R: testexpr.Int(1)}}, R: testexpr.IntCol(1)}
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{2}, nulls: true,
			make: func(State) Operator { return NewFilter(intSchema(2), pred) },
			stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamFilter(ctx, pred, in[0])
			},
		})
	})
}

func TestMapIncremental(t *testing.T) {
	exprs := []expr.Expr{testexpr.Binary{Op: "+", L: testexpr.IntCol(0), R: testexpr.IntCol(1)}, testexpr.Binary{Op: "/", L: testexpr.IntCol(1), R: testexpr.IntCol(0)}}
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{2}, nulls: true,
			make: func(State) Operator { return NewMap(exprs, []string{"s", "q"}) },
			stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamMap(ctx, exprs, in[0])
			},
		})
	})
}

func TestProjectIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{3},
			make:   func(State) Operator { return NewProject(intSchema(3), []int{2, 0}) },
			stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamProject([]int{2, 0}, in[0]), nil
			},
		})
	})
}

func TestUnionAllIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{1, 1},
			make: func(State) Operator {
				u, _ := NewUnionAll([]types.Schema{intSchema(1), intSchema(1)})
				return u
			},
			stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamUnionAll(in...), nil
			},
		})
	})
}

func TestDistinctIncremental(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkIncremental(t, incrementalCase{
			widths: []int{2}, nulls: true,
			make: func(s State) Operator { return NewDistinct(s, intSchema(2)) },
			stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
				return StreamDistinct(intSchema(2), in[0]), nil
			},
		})
	})
}

func TestSetOpIncremental(t *testing.T) {
	for _, kind := range []SetOpKind{SetIntersect, SetIntersectAll, SetExcept, SetExceptAll} {
		t.Run(fmt.Sprint(kind), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{1, 1},
					make: func(s State) Operator {
						o, _ := NewSetOp(s, kind, intSchema(1), intSchema(1))
						return o
					},
					stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamSetOp(kind, intSchema(1), in[0], in[1]), nil
					},
				})
			})
		})
	}
}

// TestSetOpTable checks the SQL formulas on a fixed example.
func TestSetOpTable(t *testing.T) {
	left := zset.Batch{Rows: []types.Row{{int64(1)}, {int64(2)}}, Weights: []int64{3, 1}}
	right := zset.Batch{Rows: []types.Row{{int64(1)}, {int64(3)}}, Weights: []int64{1, 1}}
	cases := map[SetOpKind]zset.Batch{
		SetIntersectAll: {Rows: []types.Row{{int64(1)}}, Weights: []int64{1}},
		SetIntersect:    {Rows: []types.Row{{int64(1)}}, Weights: []int64{1}},
		SetExceptAll:    {Rows: []types.Row{{int64(1)}, {int64(2)}}, Weights: []int64{2, 1}},
		SetExcept:       {Rows: []types.Row{{int64(2)}}, Weights: []int64{1}},
	}
	for _, kind := range []SetOpKind{SetIntersect, SetIntersectAll, SetExcept, SetExceptAll} {
		if got := StreamSetOp(kind, intSchema(1), left, right); !zset.Equal(got, cases[kind]) {
			t.Errorf("kind %d: got %v want %v", kind, got, cases[kind])
		}
	}
}

func TestIntegrateDifferentiateDelay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		steps := rapid.IntRange(1, stepsMax).Draw(t, "steps")
		stream := make([]zset.Batch, steps)
		for i := range stream {
			stream[i] = genDelta(t, "in", 1, false)
		}
		store := kv.NewMemory()
		integ := NewIntegrate(State{ID: arrange.MakeID(1, 1)}, intSchema(1))
		diff := NewDifferentiate(State{ID: arrange.MakeID(1, 2)}, intSchema(1))
		delay := NewDelay(State{ID: arrange.MakeID(1, 3)}, intSchema(1))
		wantI, wantD, wantZ := StreamIntegrate(stream), StreamDifferentiate(stream), StreamDelay(stream)
		for i, s := range stream {
			txn := kv.NewTxn(store)
			ctx := &Context{Txn: txn}
			gotI, err := integ.Step(ctx, []zset.Batch{s})
			if err != nil {
				t.Fatal(err)
			}
			gotD, err := diff.Step(ctx, []zset.Batch{s})
			if err != nil {
				t.Fatal(err)
			}
			gotZ, err := delay.Step(ctx, []zset.Batch{s})
			if err != nil {
				t.Fatal(err)
			}
			_ = store.Apply(txn.Batch())
			if !zset.Equal(gotI, wantI[i]) || !zset.Equal(gotD, wantD[i]) || !zset.Equal(gotZ, wantZ[i]) {
				t.Fatalf("step %d: I %v/%v D %v/%v z %v/%v", i, gotI, wantI[i], gotD, wantD[i], gotZ, wantZ[i])
			}
			// D(I(s)) = s.
			if i > 0 && !zset.Equal(zset.Sum(wantI[i], zset.Negate(wantI[i-1])), s) {
				t.Fatalf("D(I(s)) != s at %d", i)
			}
		}
	})
}
