package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// topKCases are the TopK specs the incremental tests run.
//
//lint:immutable a constant test table.
var topKCases = []TopKSpec{
	{OrderBy: []SortKey{{Column: 0}}, Limit: 2},
	{OrderBy: []SortKey{{Column: 0, Descending: true, NullsFirst: true}, {Column: 1}}, Limit: 3, Offset: 1},
	{PartitionBy: []int{1}, OrderBy: []SortKey{{Column: 0}}, Limit: 1},
	{OrderBy: []SortKey{{Column: 1}}, Limit: -1, Offset: 2},
}

func TestTopKIncremental(t *testing.T) { checkTopKCases(t, false) }

// An insert-only TopK keeps only each partition's first OFFSET + LIMIT
// rows, with the same output as one keeping them all.
func TestTopKInsertOnly(t *testing.T) { checkTopKCases(t, true) }

// checkTopKCases checks each of topKCases incrementally, over inputs of
// any non-negative multiplicities or (insertOnly) over insertions only.
func checkTopKCases(t *testing.T, insertOnly bool) {
	for i, spec := range topKCases {
		spec.InsertOnly = insertOnly
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{2}, nulls: true, positive: !insertOnly, insertOnly: insertOnly,
					make: func(s State) Operator {
						o, err := NewTopK(s, intSchema(2), spec)
						if err != nil {
							panic(err)
						}
						return o
					},
					stream: func(_ *Context, in []zset.Batch) (zset.Batch, error) {
						return StreamTopK(intSchema(2), spec, in[0]), nil
					},
				})
			})
		})
	}
}

// The pruned state holds at most OFFSET + LIMIT rows per partition, and
// a deletion fails the step instead of reading a state that lacks rows.
func TestTopKInsertOnlyState(t *testing.T) {
	spec := TopKSpec{PartitionBy: []int{1}, OrderBy: []SortKey{{Column: 0, Descending: true}}, Limit: 2, Offset: 1, InsertOnly: true}
	store := kv.NewMemory()
	o, err := NewTopK(State{ID: arrange.MakeID(1, 1)}, intSchema(2), spec)
	if err != nil {
		t.Fatal(err)
	}
	step := func(b zset.Batch) error {
		txn := kv.NewTxn(store)
		if _, err := o.Step(&Context{Txn: txn, Env: &expr.Env{}}, []zset.Batch{b}); err != nil {
			return err
		}
		return store.Apply(txn.Batch())
	}
	for s := int64(0); s < 20; s++ {
		var b zset.Batch
		for v := int64(0); v < 10; v++ {
			b.Add(types.Row{s*10 + v, v % 2}, 1)
		}
		if err := step(b); err != nil {
			t.Fatal(err)
		}
	}
	rows := 0
	prefix := o.state.Prefix()
	if err := store.Scan(prefix, kv.PrefixEnd(prefix), func(_, _ []byte) error { rows++; return nil }); err != nil {
		t.Fatal(err)
	}
	if rows > 2*3 {
		t.Fatalf("%d rows stored for 2 partitions of OFFSET 1 LIMIT 2", rows)
	}
	if err := step(zset.Batch{Rows: []types.Row{{int64(199), int64(1)}}, Weights: []int64{-1}}); err == nil {
		t.Fatal("a deletion stepped an insert-only TopK")
	}
}

// TestTopKOrder pins PostgreSQL's ORDER BY x LIMIT semantics with NULLs
// (ASC: NULLS LAST) and duplicates.
func TestTopKOrder(t *testing.T) {
	in := zset.Batch{Rows: []types.Row{{nil}, {int64(3)}, {int64(1)}}, Weights: []int64{1, 2, 1}}
	got := StreamTopK(intSchema(1), TopKSpec{OrderBy: []SortKey{{Column: 0}}, Limit: 2, Offset: 1}, in)
	want := zset.Batch{Rows: []types.Row{{int64(3)}}, Weights: []int64{2}}
	if !zset.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	got = StreamTopK(intSchema(1), TopKSpec{OrderBy: []SortKey{{Column: 0, Descending: true, NullsFirst: true}}, Limit: 2}, in)
	want = zset.Batch{Rows: []types.Row{{nil}, {int64(3)}}, Weights: []int64{1, 1}}
	if !zset.Equal(got, want) {
		t.Fatalf("desc: got %v want %v", got, want)
	}
}

func TestDistinctTable(t *testing.T) {
	in := zset.Batch{Rows: []types.Row{{int64(1)}, {int64(2)}, {int64(3)}}, Weights: []int64{3, -1, 1}}
	want := zset.Batch{Rows: []types.Row{{int64(1)}, {int64(3)}}, Weights: []int64{1, 1}}
	if got := StreamDistinct(intSchema(1), in); !zset.Equal(got, want) {
		t.Fatalf("got %v", got)
	}
}
