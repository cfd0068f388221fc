package circuit

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

var kvSchema = types.Schema{{Name: "k", Type: types.TInt8, Nullable: true}, {Name: "v", Type: types.TInt8, Nullable: true}}

const (
	tableT SourceID = 1
	tableU SourceID = 2

	viewSums   ViewID = 100 // SELECT k, count(*), sum(v) FROM t WHERE v > 0 GROUP BY k
	viewBig    ViewID = 101 // SELECT * FROM viewSums WHERE count > 1 (a view on a view)
	viewJoin   ViewID = 102 // SELECT * FROM t LEFT JOIN u ON t.k = u.k
	viewTotal  ViewID = 103 // SELECT count(*), max(v) FROM t
	viewDivide ViewID = 104 // SELECT k, 6 / v FROM t
	viewTop    ViewID = 105 // SELECT DISTINCT k FROM t ORDER BY k LIMIT 2
)

// buildTestCircuit builds several views sharing upstream nodes.
// With only != 0 just that view gets a sink (an ad-hoc query).
func buildTestCircuit(t interface{ Fatal(...any) }, only ViewID) *Circuit {
	b := &sinkFilter{Builder: NewBuilder(), only: only}
	src := b.Source(tableT, kvSchema)
	u := b.Source(tableU, kvSchema)
	positive := b.Filter(src, testexpr.Binary{Op: ">", L: testexpr.IntCol(1), R: testexpr.Int(0)})
	sums := b.Aggregate(positive, op.AggregateSpec{GroupBy: []int{0}, Calls: []op.AggregateCall{
		{Func: op.AggCountStar, Name: "n"},
		{Func: op.AggSum, Arg: testexpr.IntCol(1), Name: "s"},
	}})
	b.Sink(viewSums, sums)
	b.Sink(viewBig, b.Filter(sums, testexpr.Binary{Op: ">", L: testexpr.IntCol(1), R: testexpr.Int(1)}))
	b.Sink(viewJoin, b.Join(src, u, op.JoinSpec{Kind: op.JoinLeft, LeftKeys: []int{0}, RightKeys: []int{0}}))
	b.Sink(viewTotal, b.Aggregate(src, op.AggregateSpec{Calls: []op.AggregateCall{
		{Func: op.AggCountStar, Name: "n"}, {Func: op.AggMax, Arg: testexpr.IntCol(1), Name: "m"},
	}}))
	b.Sink(viewDivide, b.Map(src, []expr.Expr{testexpr.IntCol(0), testexpr.Binary{Op: "/", L: testexpr.Int(6), R: testexpr.IntCol(1)}}, []string{"k", "q"}))
	b.Sink(viewTop, b.TopK(b.Distinct(b.Project(src, []int{0})), op.TopKSpec{OrderBy: []op.SortKey{{Column: 0}}, Limit: 2}))
	c, err := b.Build(Config{ID: 9})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type sinkFilter struct {
	*Builder
	only ViewID
}

func (s *sinkFilter) Sink(v ViewID, n Node) {
	if s.only == 0 || s.only == v {
		s.Builder.Sink(v, n)
	}
}

var allViews = []ViewID{viewSums, viewBig, viewJoin, viewTotal, viewDivide, viewTop}

// TestCircuitMatchesAdHoc: after every epoch, each stored view equals the
// same circuit run ad hoc over the integrated inputs (one engine, two
// modes), including across restarts (a new circuit over the same store).
func TestCircuitMatchesAdHoc(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		store := kv.NewMemory()
		c := buildTestCircuit(t, 0)
		adHoc := map[ViewID]*Circuit{}
		for _, v := range allViews {
			adHoc[v] = buildTestCircuit(t, v)
		}
		integrated := map[SourceID]zset.Batch{}
		for step, n := 0, rapid.IntRange(1, 12).Draw(t, "steps"); step < n; step++ {
			inputs := map[SourceID]zset.Batch{}
			for _, src := range []SourceID{tableT, tableU} {
				var delta zset.Batch
				for i, rows := 0, rapid.IntRange(0, 6).Draw(t, "rows"); i < rows; i++ {
					row := types.Row{int64(rapid.IntRange(0, 3).Draw(t, "k")), int64(rapid.IntRange(-1, 2).Draw(t, "v"))}
					w := int64(rapid.SampledFrom([]int{-1, 1, 2}).Draw(t, "w"))
					if w < 0 && weightOf(integrated[src], row) < 1 {
						w = 1 // keep base tables multisets
					}
					delta.Add(row, w)
					integrated[src] = zset.Consolidate(zset.Sum(integrated[src], types1(row, w)))
				}
				inputs[src] = delta
			}
			if rapid.IntRange(0, 3).Draw(t, "restart") == 0 {
				c = buildTestCircuit(t, 0)
			}
			txn := kv.NewTxn(store)
			outs, err := c.Step(txn, inputs)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Apply(txn.Batch()); err != nil {
				t.Fatal(err)
			}
			for _, v := range allViews {
				want, adHocErr := adHoc[v].RunOnce(integrated)
				got, err := ReadView(store, v)
				// Incremental and ad-hoc modes agree on errors too: only the
				// dividing view fails, exactly while a v = 0 row is live.
				wantError := v == viewDivide && weightOfZero(integrated[tableT]) > 0
				if (err != nil) != wantError || (adHocErr != nil) != wantError {
					t.Fatalf("step %d view %d: stored error %v, ad-hoc error %v, want error %v", step, v, err, adHocErr, wantError)
				}
				if wantError {
					if e, _ := errcode.As(err); e.State() != "22012" || err.Error() != adHocErr.Error() {
						t.Fatalf("errors differ: %v / %v", err, adHocErr)
					}
					continue
				}
				if !zset.Equal(got, want[v]) {
					t.Fatalf("step %d view %d:\nstored %v\nad hoc %v", step, v, got, want[v])
				}
				if outs[v].Len() > 0 && zset.Consolidate(outs[v]).Len() != outs[v].Len() {
					t.Fatalf("view %d output delta not consolidated", v)
				}
			}
		}
	})
}

func types1(row types.Row, w int64) zset.Batch {
	return zset.Batch{Rows: []types.Row{row}, Weights: []int64{w}}
}

func weightOf(b zset.Batch, row types.Row) int64 {
	var w int64
	want := zset.FormatRow(row)
	for i, r := range b.Rows {
		if zset.FormatRow(r) == want {
			w += b.Weights[i]
		}
	}
	return w
}

func weightOfZero(b zset.Batch) int64 {
	var w int64
	for i, r := range b.Rows {
		if r[1] == int64(0) {
			w += b.Weights[i]
		}
	}
	return w
}

// TestEvaluationErrorsAreData: a division by zero puts only the dividing
// view in the error state, with SQLSTATE 22012 and the offending row, until
// the row is retracted.
func TestEvaluationErrorsAreData(t *testing.T) {
	store := kv.NewMemory()
	c := buildTestCircuit(t, 0)
	step := func(rows []types.Row, weights []int64) {
		txn := kv.NewTxn(store)
		if _, err := c.Step(txn, map[SourceID]zset.Batch{tableT: {Rows: rows, Weights: weights}}); err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	step([]types.Row{{int64(1), int64(2)}}, []int64{1})
	if got, err := ReadView(store, viewDivide); err != nil || !zset.Equal(got, types1(types.Row{int64(1), int64(3)}, 1)) {
		t.Fatalf("healthy view: %v %v", got, err)
	}
	step([]types.Row{{int64(7), int64(0)}}, []int64{1})
	_, err := ReadView(store, viewDivide)
	e, ok := errcode.As(err)
	if !ok || e.State() != "22012" || e.Code != errcode.ViewEvaluationError {
		t.Fatalf("want a 22012 view error, got %v", err)
	}
	if want := "(7,0)"; !contains(e.Detail, want) {
		t.Fatalf("detail %q does not name the offending row %s", e.Detail, want)
	}
	// Other views are unaffected.
	if got, err := ReadView(store, viewTotal); err != nil || !zset.Equal(got, types1(types.Row{int64(2), int64(2)}, 1)) {
		t.Fatalf("other view: %v %v", got, err)
	}
	// Retracting the row heals the view; nothing was lost meanwhile.
	step([]types.Row{{int64(7), int64(0)}, {int64(2), int64(1)}}, []int64{-1, 1})
	got, err := ReadView(store, viewDivide)
	if err != nil {
		t.Fatalf("view still in error: %v", err)
	}
	want := zset.Batch{Rows: []types.Row{{int64(1), int64(3)}, {int64(2), int64(6)}}, Weights: []int64{1, 1}}
	if !zset.Equal(got, want) {
		t.Fatalf("healed view %v want %v", got, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestRestartRoundTrip: state written, circuit rebuilt over the same store,
// next deltas give the right output deltas (no recomputation), statistics
// survive.
func TestRestartRoundTrip(t *testing.T) {
	store := kv.NewMemory()
	clock := int64(0)
	tick := func() int64 { clock += 5; return clock }
	build := func() *Circuit {
		b := NewBuilder()
		src := b.Source(tableT, kvSchema)
		agg := b.Aggregate(src, op.AggregateSpec{GroupBy: []int{0}, Calls: []op.AggregateCall{{Func: op.AggMin, Arg: testexpr.IntCol(1), Name: "m"}}})
		b.Sink(viewSums, agg)
		c, err := b.Build(Config{ID: 3, Clock: tick})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	run := func(c *Circuit, rows []types.Row, weights []int64) zset.Batch {
		txn := kv.NewTxn(store)
		outs, err := c.Step(txn, map[SourceID]zset.Batch{tableT: {Rows: rows, Weights: weights}})
		if err != nil {
			t.Fatal(err)
		}
		_ = store.Apply(txn.Batch())
		return outs[viewSums]
	}
	c := build()
	run(c, []types.Row{{int64(1), int64(5)}, {int64(1), int64(3)}, {int64(2), int64(9)}}, []int64{1, 1, 1})
	before := c.Stats()
	if before[1].StateRows == 0 || before[1].RowsIn != 3 || before[1].StepNanos == 0 {
		t.Fatalf("stats %+v", before[1])
	}
	c = build() // restart
	got := run(c, []types.Row{{int64(1), int64(3)}}, []int64{-1})
	want := zset.Batch{Rows: []types.Row{{int64(1), int64(3)}, {int64(1), int64(5)}}, Weights: []int64{-1, 1}}
	if !zset.Equal(got, want) {
		t.Fatalf("after restart got %v want %v", got, want)
	}
	after := c.Stats()
	if after[1].StateRows != before[1].StateRows-1 {
		t.Fatalf("state rows %d after restart, %d before (one multiset entry removed)", after[1].StateRows, before[1].StateRows)
	}
}

func TestBuilderErrors(t *testing.T) {
	b := NewBuilder()
	src := b.Source(tableT, kvSchema)
	b.Sink(1, src)
	b.Sink(1, src)
	if _, err := b.Build(Config{}); err == nil {
		t.Fatal("two sinks for one view accepted")
	}
	b = NewBuilder()
	b.Project(Node{}, []int{0})
	if _, err := b.Build(Config{}); err == nil {
		t.Fatal("invalid node accepted")
	}
	b = NewBuilder()
	b.Project(b.Source(tableT, kvSchema), []int{5})
	if _, err := b.Build(Config{}); err == nil {
		t.Fatal("out-of-range column accepted")
	}
}

// TestAdHocGlobalAggregate: an ad-hoc SELECT count(*) over an empty table
// yields one row, as in PostgreSQL.
func TestAdHocGlobalAggregate(t *testing.T) {
	b := NewBuilder()
	b.Sink(1, b.Aggregate(b.Source(tableT, kvSchema), op.AggregateSpec{Calls: []op.AggregateCall{{Func: op.AggCountStar, Name: "count"}, {Func: op.AggSum, Arg: testexpr.IntCol(1), Name: "sum"}}}))
	c, err := b.Build(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		outs, err := c.RunOnce(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !zset.Equal(outs[1], types1(types.Row{int64(0), nil}, 1)) {
			t.Fatalf("run %d: %v", i, outs[1])
		}
	}
}
