package op

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func TestTopKIncremental(t *testing.T) {
	cases := []TopKSpec{
		{OrderBy: []SortKey{{Column: 0}}, Limit: 2},
		{OrderBy: []SortKey{{Column: 0, Descending: true, NullsFirst: true}, {Column: 1}}, Limit: 3, Offset: 1},
		{PartitionBy: []int{1}, OrderBy: []SortKey{{Column: 0}}, Limit: 1},
		{OrderBy: []SortKey{{Column: 1}}, Limit: -1, Offset: 2},
	}
	for i, spec := range cases {
		spec := spec
		t.Run(string(rune('a'+i)), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkIncremental(t, incrementalCase{
					widths: []int{2}, nulls: true, positive: true,
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
