package circuit

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Fusing chains of stateless operators changes nothing observable: view
// outputs, view errors and per-node row counts are those of the same
// circuit built with Config.Unfused, and only links whose upstream node
// has no other consumer (and is not a sink) are fused.

func intBinary(t interface{ Fatal(...any) }, op string, l, r expr.Expr) expr.Expr {
	e, err := expr.NewBinary(op, l, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func col(i int) expr.Expr { return &expr.ColumnRef{Index: i, Typ: types.TInt8} }

func num(v int64) expr.Expr { return expr.NewConst(types.TInt8, v) }

// buildChains builds views over chains of Filters, Maps and Projects and
// returns the circuit and how many nodes fusion should fold away.
func buildChains(t interface{ Fatal(...any) }, unfused bool) (*Circuit, int) {
	b := NewBuilder()
	src := b.Source(tableT, kvSchema)
	// 6 / k > v fails on k = 0; k <> 0 keeps only rows it does not fail on.
	divides := func(in Node) Node { return b.Filter(in, intBinary(t, ">", intBinary(t, "/", num(6), col(0)), col(1))) }
	nonZero := func(in Node) Node { return b.Filter(in, intBinary(t, "<>", col(0), num(0))) }
	positive := func(in Node) Node {
		return b.Filter(in, testexpr.Binary{Op: ">", L: testexpr.IntCol(1), R: testexpr.Int(0)})
	}
	mapped := func(in Node) Node {
		return b.Map(in, []expr.Expr{intBinary(t, "+", col(0), intBinary(t, "*", col(1), num(2))), intBinary(t, "%", col(1), col(0))}, []string{"x", "r"})
	}
	// Filter → Map: one fold.
	b.Sink(200, mapped(divides(src)))
	// Filter → Filter → Project: two folds.
	b.Sink(201, b.Project(positive(nonZero(src)), []int{1}))
	// A Filter with two consumers is not fused; each consumer runs alone.
	shared := divides(src)
	b.Sink(202, mapped(shared))
	b.Sink(203, b.Project(shared, []int{1, 0}))
	// A Filter that is a view itself is not fused into its consumer.
	own := nonZero(src)
	b.Sink(204, own)
	b.Sink(205, mapped(own))
	// Map → Filter does not fuse; Filter → Filter after it does (one fold).
	b.Sink(206, positive(nonZero(mapped(src))))
	c, err := b.Build(Config{ID: 4, Unfused: unfused})
	if err != nil {
		t.Fatal(err)
	}
	return c, 4
}

func TestFusionIsInvisible(t *testing.T) {
	views := []ViewID{200, 201, 202, 203, 204, 205, 206}
	rapid.Check(t, func(t *rapid.T) {
		fused, folds := buildChains(t, false)
		unfused, _ := buildChains(t, true)
		skipped := 0
		for _, n := range fused.nodes {
			if n.fused {
				skipped++
			}
		}
		if skipped != folds {
			t.Fatalf("%d nodes fused away, want %d", skipped, folds)
		}
		fusedStore, unfusedStore := kv.NewMemory(), kv.NewMemory()
		values := []types.Datum{nil, int64(0), int64(1), int64(-1), int64(2)}
		for step := range rapid.IntRange(1, 6).Draw(t, "steps") {
			var delta zset.Batch
			for i := range rapid.IntRange(0, 8).Draw(t, "rows") {
				row := types.Row{
					rapid.SampledFrom(values).Draw(t, fmt.Sprintf("k%d", i)),
					rapid.SampledFrom(values).Draw(t, fmt.Sprintf("v%d", i)),
				}
				delta.Add(row, int64(rapid.SampledFrom([]int{-1, 1, 2}).Draw(t, "w")))
			}
			run := func(c *Circuit, store kv.Store) map[ViewID]zset.Batch {
				txn := kv.NewTxn(store)
				outs, err := c.Step(txn, map[SourceID]zset.Batch{tableT: delta})
				if err != nil {
					t.Fatal(err)
				}
				if err := store.Apply(txn.Batch()); err != nil {
					t.Fatal(err)
				}
				return outs
			}
			got, want := run(fused, fusedStore), run(unfused, unfusedStore)
			for _, v := range views {
				if !zset.Equal(got[v], want[v]) {
					t.Fatalf("step %d view %d: fused %v, unfused %v", step, v, got[v], want[v])
				}
				gotErrs, err := ViewErrors(fusedStore, v)
				if err != nil {
					t.Fatal(err)
				}
				wantErrs, err := ViewErrors(unfusedStore, v)
				if err != nil {
					t.Fatal(err)
				}
				if !zset.Equal(gotErrs, wantErrs) {
					t.Fatalf("step %d view %d: fused errors %v, unfused %v", step, v, gotErrs, wantErrs)
				}
			}
			gotStats, wantStats := fused.Stats(), unfused.Stats()
			for i := range gotStats {
				g, w := gotStats[i], wantStats[i]
				if g.Label != w.Label || g.RowsIn != w.RowsIn || g.RowsOut != w.RowsOut || g.Steps != w.Steps {
					t.Fatalf("step %d node %d: fused stats %+v, unfused %+v", step, i, g, w)
				}
			}
		}
	})
}
