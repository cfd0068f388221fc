package op

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op/testexpr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestWindowIncremental checks I(Window^Δ(Δ)) = StreamWindow(I(Δ)) for
// every window function and frame shape, errors included (a division by a
// column that may be zero).
func TestWindowIncremental(t *testing.T) {
	a, b, c := testexpr.IntCol(0), testexpr.IntCol(1), testexpr.IntCol(2)
	rows := func(s, e BoundKind, so, eo int64) Frame {
		return Frame{Mode: FrameRows, Start: FrameBound{Kind: s, Offset: so}, End: FrameBound{Kind: e, Offset: eo}}
	}
	cases := []WindowSpec{
		{PartitionBy: []int{0}, OrderBy: []SortKey{{Column: 1}}, Calls: []WindowCall{
			{Func: WinRowNumber, Name: "rn"}, {Func: WinRank, Name: "r"}, {Func: WinDenseRank, Name: "dr"},
			{Func: WinPercentRank, Name: "pr"}, {Func: WinCumeDist, Name: "cd"},
		}},
		{OrderBy: []SortKey{{Column: 0, Descending: true, NullsFirst: true}}, Calls: []WindowCall{
			{Func: WinLag, Args: []exprT{b}, Name: "lag"}, {Func: WinLead, Args: []exprT{b, testexpr.Int(2), c}, Name: "lead"},
			{Func: WinNtile, Args: []exprT{testexpr.Int(3)}, Name: "nt"},
		}},
		{PartitionBy: []int{2}, OrderBy: []SortKey{{Column: 0}}, Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Arg: b}, Name: "running"},
			{Func: WinAggregate, Agg: AggregateCall{Func: AggCountStar}, Frame: rows(BoundPreceding, BoundCurrentRow, 1, 0), Name: "cnt"},
			{Func: WinAggregate, Agg: AggregateCall{Func: AggAvg, Arg: b}, Frame: rows(BoundPreceding, BoundFollowing, 2, 1), Name: "avg"},
			{Func: WinAggregate, Agg: AggregateCall{Func: AggMax, Arg: a}, Frame: Frame{Mode: FrameGroups, Start: FrameBound{Kind: BoundPreceding, Offset: 1}, End: FrameBound{Kind: BoundUnboundedFollowing}}, Name: "mx"},
			{Func: WinFirstValue, Args: []exprT{b}, Name: "fv"},
			{Func: WinLastValue, Args: []exprT{b}, Frame: rows(BoundCurrentRow, BoundUnboundedFollowing, 0, 0), Name: "lv"},
			{Func: WinNthValue, Args: []exprT{b, testexpr.Int(2)}, Frame: rows(BoundUnboundedPreceding, BoundUnboundedFollowing, 0, 0), Name: "nv"},
		}},
		{Calls: []WindowCall{
			{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Arg: testexpr.Binary{Op: "/", L: testexpr.Int(6), R: a}}, Name: "div"},
			{Func: WinAggregate, Agg: AggregateCall{Func: AggCount, Arg: b, Filter: testexpr.Binary{Op: ">", L: c, R: testexpr.Int(1)}}, Name: "cf"},
		}},
	}
	for i, spec := range cases {
		spec := spec
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{3}, nulls: true, positive: true,
					make: func(s State) Operator {
						o, err := NewWindow(s, intSchema(3), spec)
						if err != nil {
							panic(err)
						}
						return o
					},
					stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamWindow(ctx, intSchema(3), spec, in[0])
					},
				})
			})
		})
	}
}

// TestWindowValues pins the functions' values on one partition with peers
// and a duplicate row (PostgreSQL's documented results).
func TestWindowValues(t *testing.T) {
	x := testexpr.IntCol(0)
	spec := WindowSpec{OrderBy: []SortKey{{Column: 0}}, Calls: []WindowCall{
		{Func: WinRowNumber}, {Func: WinRank}, {Func: WinDenseRank}, {Func: WinNtile, Args: []exprT{testexpr.Int(2)}},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggCountStar}}, {Func: WinLag, Args: []exprT{x}},
	}}
	in := zset.Batch{Rows: []types.Row{{int64(1)}, {int64(2)}, {int64(3)}}, Weights: []int64{1, 2, 1}}
	got, err := StreamWindow(&Context{}, intSchema(1), spec, in)
	if err != nil {
		t.Fatal(err)
	}
	i := func(v int64) types.Datum { return v }
	want := zset.Batch{}
	want.Add(types.Row{i(1), i(1), i(1), i(1), i(1), i(1), nil}, 1)
	want.Add(types.Row{i(2), i(2), i(2), i(2), i(1), i(3), i(1)}, 1)
	want.Add(types.Row{i(2), i(3), i(2), i(2), i(2), i(3), i(2)}, 1)
	want.Add(types.Row{i(3), i(4), i(4), i(3), i(2), i(4), i(2)}, 1)
	if !zset.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", zset.Consolidate(got), want)
	}
}

type exprT = expr.Expr

// topKWindow steps a Window over a TopK, reading its input from the TopK's
// state (Window.ReadInputFrom), as a circuit does for ROW_NUMBER() ≤ k.
type topKWindow struct {
	topK   *TopK
	window *Window
}

func (o topKWindow) Schema() types.Schema { return o.window.Schema() }

func (o topKWindow) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	mid, err := o.topK.Step(ctx, inputs)
	if err != nil {
		return zset.Batch{}, err
	}
	return o.window.Step(ctx, []zset.Batch{mid})
}

func (o topKWindow) Arrangements() []*arrange.Arrangement {
	return append(o.topK.Arrangements(), o.window.Arrangements()...)
}

func newTopKWindow(s State, topK TopKSpec, window WindowSpec) topKWindow {
	t, err := NewTopK(s, intSchema(3), topK)
	if err != nil {
		panic(err)
	}
	w, err := NewWindow(State{ID: arrange.MakeID(2, 2), CacheEntriesMax: s.CacheEntriesMax}, intSchema(3), window)
	if err != nil {
		panic(err)
	}
	if !w.ReadInputFrom(t) {
		panic("the window cannot read the top-k's state")
	}
	return topKWindow{topK: t, window: w}
}

// TestWindowOverTopKIncremental checks a Window reading its input from
// the TopK under it against StreamWindow(StreamTopK(I(Δ))), over inputs
// with retractions and insert-only (pruned TopK state), LIMIT and OFFSET
// or not, partitions of several rows and cached or uncached state.
func TestWindowOverTopKIncremental(t *testing.T) {
	window := WindowSpec{PartitionBy: []int{2}, OrderBy: []SortKey{{Column: 0, Descending: true}, {Column: 1}}, Calls: []WindowCall{
		{Func: WinRowNumber, Name: "rn"}, {Func: WinRank, Name: "r"},
		{Func: WinAggregate, Agg: AggregateCall{Func: AggSum, Arg: testexpr.IntCol(1)}, Name: "running"},
	}}
	for _, insertOnly := range []bool{false, true} {
		for _, lo := range [][2]int64{{2, 0}, {2, 1}, {-1, 0}, {-1, 1}} {
			topK := TopKSpec{PartitionBy: []int{2}, OrderBy: window.OrderBy, Limit: lo[0], Offset: lo[1], InsertOnly: insertOnly}
			t.Run(fmt.Sprintf("insertOnly=%v,limit=%d,offset=%d", insertOnly, lo[0], lo[1]), func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) {
					checkIncremental(t, incrementalCase{
						widths: []int{3}, nulls: true, positive: !insertOnly, insertOnly: insertOnly,
						make: func(s State) Operator { return newTopKWindow(s, topK, window) },
						stream: func(ctx *Context, in []zset.Batch) (zset.Batch, error) {
							return StreamWindow(ctx, intSchema(3), window, StreamTopK(intSchema(3), topK, in[0]))
						},
					})
				})
			})
		}
	}
}

// TestWindowOverTopKStoresNothing: a Window reading its input from the
// TopK under it writes no state of its own (it wrote each row the TopK
// keeps a second time) and says so in its state format.
func TestWindowOverTopKStoresNothing(t *testing.T) {
	window := WindowSpec{PartitionBy: []int{2}, OrderBy: []SortKey{{Column: 0}}, Calls: []WindowCall{{Func: WinRowNumber, Name: "rn"}}}
	o := newTopKWindow(State{ID: arrange.MakeID(1, 1)}, TopKSpec{PartitionBy: []int{2}, OrderBy: window.OrderBy, Limit: 2}, window)
	store := kv.NewMemory()
	var in zset.Batch
	for i := range 10 {
		in.Add(types.Row{int64(i), int64(i), int64(i % 3)}, 1)
	}
	txn := kv.NewTxn(store)
	out, err := o.Step(&Context{Txn: txn, Env: &expr.Env{}}, []zset.Batch{in})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(txn.Batch()); err != nil {
		t.Fatal(err)
	}
	if n := len(zset.Consolidate(out).Rows); n != 6 {
		t.Fatalf("%d output rows, want 6 (two per partition)", n)
	}
	windowPrefix := arrange.New(arrange.Config{Namespace: kv.PrefixOpState, Kind: arrange.KindWindow, ID: arrange.MakeID(2, 2), Grouped: true}).Prefix()
	var stored int
	if err := store.Scan(windowPrefix, kv.PrefixEnd(windowPrefix), func(_, _ []byte) error { stored++; return nil }); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Fatalf("the window stored %d rows; want none (the top-k holds them)", stored)
	}
	if f := StateFormat(o.window); f != "window.topk/1" {
		t.Fatalf("state format %q", f)
	}
}
