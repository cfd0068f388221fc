package circuit

import (
	"bytes"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/ivm/zset/zsettest"
)

// Columnar deltas in a circuit: a view fed columns stores exactly the
// bytes the same view fed rows stores, and a view whose operators are all
// columnar builds no row in flight.

// mixedSchema has a column of several columnar types.
var mixedSchema = types.Schema{
	{Name: "k", Type: types.TInt8, Nullable: true}, {Name: "v", Type: types.TInt4, Nullable: true},
	{Name: "s", Type: types.TText, Nullable: true}, {Name: "d", Type: types.TDate, Nullable: true},
	{Name: "f", Type: types.TFloat8, Nullable: true}, {Name: "b", Type: types.TBool, Nullable: true},
}

func mixedCol(j int) expr.Expr { return &expr.ColumnRef{Index: j, Typ: mixedSchema[j].Type} }

// buildMixed builds views over one source of mixedSchema: fused and lone
// stateless chains (vectorized and fallback kernels, errors), the source
// itself, and a stateful operator that takes rows.
func buildMixed(t interface{ Fatal(...any) }) *Circuit {
	must := func(e expr.Expr, err error) expr.Expr {
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	b := NewBuilder()
	src := b.Source(tableT, mixedSchema)
	// WHERE k >= 0 AND v > 0 SELECT k + v * 2, k / v: overflow and 22012.
	pos := b.Filter(src, must(expr.NewAnd(
		must(expr.NewBinary(">=", mixedCol(0), num(0))),
		must(expr.NewBinary(">", mixedCol(1), expr.NewConst(types.TInt4, int64(0)))))))
	b.Sink(300, b.Map(pos, []expr.Expr{
		must(expr.NewBinary("+", mixedCol(0), must(expr.NewBinary("*", mixedCol(1), expr.NewConst(types.TInt4, int64(2)))))),
		must(expr.NewBinary("/", mixedCol(0), mixedCol(1))),
	}, []string{"x", "q"}))
	// WHERE s <> '' SELECT s, d, k: a projection after a fallback filter.
	nonEmpty := b.Filter(src, must(expr.NewBinary("<>", mixedCol(2), expr.NewConst(types.TText, ""))))
	b.Sink(301, b.Project(nonEmpty, []int{2, 3, 0}))
	// A lone filter as a view: f > 0 OR b.
	b.Sink(302, b.Filter(src, must(expr.NewOr(must(expr.NewBinary(">", mixedCol(4), expr.NewConst(types.TFloat8, 0.0))), mixedCol(5)))))
	// The source itself.
	b.Sink(303, src)
	// A lone map with a fallback kernel and int4 overflow: upper(s), v * v.
	b.Sink(304, b.Map(src, []expr.Expr{must(expr.NewCall("upper", mixedCol(2))), must(expr.NewBinary("*", mixedCol(1), mixedCol(1)))}, []string{"u", "vv"}))
	// DISTINCT over a projection: a row-only operator.
	b.Sink(305, b.Distinct(b.Project(src, []int{5, 3})))
	c, err := b.Build(Config{ID: 9})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// buildDownstream builds views over view 301's output (s, d, k): a
// filter on k, and DISTINCT (rows only), as views on views read it.
func buildDownstream(t interface{ Fatal(...any) }) *Circuit {
	schema := types.Schema{mixedSchema[2], mixedSchema[3], mixedSchema[0]}
	b := NewBuilder()
	src := b.Source(tableU, schema)
	b.Sink(310, b.Filter(src, intBinary(t, ">=", &expr.ColumnRef{Index: 2, Typ: types.TInt8}, num(0))))
	b.Sink(311, b.Distinct(b.Project(src, []int{1})))
	c, err := b.Build(Config{ID: 12})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// storeDump renders every key and value of a store.
func storeDump(t interface{ Fatal(...any) }, s kv.Store) string {
	var buf bytes.Buffer
	if err := s.Scan(nil, nil, func(k, v []byte) error {
		fmt.Fprintf(&buf, "%x=%x\n", k, v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestColumnarInputStoresSameBytes: epoch by epoch, a circuit fed columnar
// deltas writes byte-identical state (view rows, view errors, operator
// state, statistics) to the same circuit fed the deltas as rows, and
// returns the same output deltas, which views on its views read (columnar
// from the columnar circuit); epochs whose write batch is thrown away
// (DiscardCaches) leave no trace in either.
func TestColumnarInputStoresSameBytes(t *testing.T) {
	views := []ViewID{300, 301, 302, 303, 304, 305}
	rapid.Check(t, func(t *rapid.T) {
		rowCircuit, colCircuit := buildMixed(t), buildMixed(t)
		rowDown, colDown := buildDownstream(t), buildDownstream(t)
		if !colCircuit.ColumnarSource(tableT) {
			t.Fatal("the source feeds only columnar consumers and sinks but is not columnar")
		}
		rowStore, colStore := kv.NewMemory(), kv.NewMemory()
		for step := range rapid.IntRange(1, 6).Draw(t, "steps") {
			in := zsettest.Batch(t, mixedSchema)
			rowTxn, colTxn := kv.NewTxn(rowStore), kv.NewTxn(colStore)
			want, err := rowCircuit.Step(rowTxn, map[SourceID]zset.Batch{tableT: in})
			if err != nil {
				t.Fatal(err)
			}
			got, err := colCircuit.StepDeltas(colTxn, map[SourceID]zset.Delta{tableT: zset.ColumnDelta(zsettest.Columns(t, mixedSchema, in))})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range views {
				if !zset.Equal(got[v].Batch(), want[v]) {
					t.Fatalf("step %d view %d: columnar %v, rows %v", step, v, got[v].Batch(), want[v])
				}
			}
			// Views on view 301 read its output delta as it comes.
			if _, err := rowDown.Step(rowTxn, map[SourceID]zset.Batch{tableU: want[301]}); err != nil {
				t.Fatal(err)
			}
			if !got[301].Columnar() {
				t.Fatalf("step %d: view 301's output delta is not columnar", step)
			}
			if _, err := colDown.StepDeltas(colTxn, map[SourceID]zset.Delta{tableU: got[301]}); err != nil {
				t.Fatal(err)
			}
			if rapid.Bool().Draw(t, "throw away") {
				for _, c := range []*Circuit{rowCircuit, colCircuit, rowDown, colDown} {
					c.DiscardCaches()
				}
				continue
			}
			if err := rowStore.Apply(rowTxn.Batch()); err != nil {
				t.Fatal(err)
			}
			if err := colStore.Apply(colTxn.Batch()); err != nil {
				t.Fatal(err)
			}
			if g, w := storeDump(t, colStore), storeDump(t, rowStore); g != w {
				t.Fatalf("step %d input %v: stores differ\ncolumnar:\n%s\nrows:\n%s", step, in, g, w)
			}
		}
	})
}

// TestColumnarViewBuildsNoRows: WHERE k >= 0 AND v > 0 SELECT k + v * 2
// fed columnar deltas keeps them columnar from source to sink: no row is
// built in the circuit, the output delta is columnar, and the stored view
// equals the row circuit's. A source with a row-only consumer (DISTINCT)
// is not columnar, and feeding it columns builds its rows (counted).
func TestColumnarViewBuildsNoRows(t *testing.T) {
	build := func() *Circuit {
		b := NewBuilder()
		src := b.Source(tableT, mixedSchema)
		pos := b.Filter(src, intBinary(t, ">=", mixedCol(0), num(0)))
		pos = b.Filter(pos, intBinary(t, ">", mixedCol(1), expr.NewConst(types.TInt4, int64(0))))
		b.Sink(400, b.Map(pos, []expr.Expr{intBinary(t, "+", mixedCol(0), intBinary(t, "*", mixedCol(1), expr.NewConst(types.TInt4, int64(2))))}, []string{"x"}))
		c, err := b.Build(Config{ID: 10})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cols, rows := build(), build()
	if !cols.ColumnarSource(tableT) {
		t.Fatal("source of a filter-map view is not columnar")
	}
	colStore, rowStore := kv.NewMemory(), kv.NewMemory()
	for epoch := int64(0); epoch < 5; epoch++ {
		var in zset.Batch
		for i := int64(0); i < 200; i++ {
			k := (i*7 + epoch) % 23
			in.Add(types.Row{k - 5, (i % 11) - 3, "s", types.Date(i), 1.5, i%2 == 0}, 1+i%3-epoch%2)
		}
		c, err := zset.ColumnsFromRows(mixedSchema, in)
		if err != nil {
			t.Fatal(err)
		}
		colTxn, rowTxn := kv.NewTxn(colStore), kv.NewTxn(rowStore)
		outs, err := cols.StepDeltas(colTxn, map[SourceID]zset.Delta{tableT: zset.ColumnDelta(c)})
		if err != nil {
			t.Fatal(err)
		}
		if outs[400].Columns() == nil {
			t.Fatalf("epoch %d: the view's output delta is rows", epoch)
		}
		if _, err := rows.Step(rowTxn, map[SourceID]zset.Batch{tableT: in}); err != nil {
			t.Fatal(err)
		}
		if err := colStore.Apply(colTxn.Batch()); err != nil {
			t.Fatal(err)
		}
		if err := rowStore.Apply(rowTxn.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	if n := cols.RowsMaterialized(); n != 0 {
		t.Fatalf("%d rows built from columnar deltas, want 0", n)
	}
	got, err := ReadView(colStore, 400)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadView(rowStore, 400)
	if err != nil {
		t.Fatal(err)
	}
	if want.Len() == 0 || !zset.Equal(got, want) {
		t.Fatalf("view from columns %v, from rows %v", got, want)
	}

	distinct := func() *Circuit {
		b := NewBuilder()
		b.Sink(401, b.Distinct(b.Source(tableT, mixedSchema)))
		c, err := b.Build(Config{ID: 11})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}()
	if distinct.ColumnarSource(tableT) {
		t.Fatal("a source feeding DISTINCT (rows only) reports columnar")
	}
	in := zset.Batch{Rows: []types.Row{{int64(1), int64(2), "a", types.Date(0), 0.5, true}}, Weights: []int64{1}}
	c, err := zset.ColumnsFromRows(mixedSchema, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := distinct.StepDeltas(kv.NewTxn(kv.NewMemory()), map[SourceID]zset.Delta{tableT: zset.ColumnDelta(c)}); err != nil {
		t.Fatal(err)
	}
	if n := distinct.RowsMaterialized(); n != 1 {
		t.Fatalf("%d rows built for DISTINCT's columnar input, want 1", n)
	}
}
