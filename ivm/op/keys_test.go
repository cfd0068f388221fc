package op

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func stepOnce(t *testing.T, o Operator, inputs ...zset.Batch) zset.Batch {
	t.Helper()
	ctx := &Context{Txn: kv.NewTxn(kv.NewMemory()), Env: &expr.Env{}}
	out, err := o.Step(ctx, inputs)
	if err != nil {
		t.Fatal(err)
	}
	return zset.Consolidate(out)
}

// TestKeysUseSQLEquality: distinct, grouping and join keys follow
// PostgreSQL equality, not Go representation (1.0 = 1.00, int4 = int8,
// char(n) ignores trailing spaces).
func TestKeysUseSQLEquality(t *testing.T) {
	num := types.Schema{{Name: "n", Type: types.TNumeric}}
	d := NewDistinct(State{ID: arrange.MakeID(1, 1)}, num)
	out := stepOnce(t, d, zset.Batch{Rows: []types.Row{{dec("1.0")}, {dec("1.00")}}, Weights: []int64{1, 1}})
	if out.Len() != 1 || out.Weights[0] != 1 {
		t.Fatalf("DISTINCT 1.0, 1.00 = %v", out)
	}

	char := types.Schema{{Name: "c", Type: types.Type{Kind: types.KindChar, Typmod: 7}}}
	a, err := NewAggregate(State{ID: arrange.MakeID(1, 2)}, char, AggregateSpec{GroupBy: []int{0}, Calls: []AggregateCall{{Func: AggCountStar, Name: "n"}}})
	if err != nil {
		t.Fatal(err)
	}
	out = stepOnce(t, a, zset.Batch{Rows: []types.Row{{"ab"}, {"ab  "}}, Weights: []int64{1, 1}})
	if out.Len() != 1 || out.Rows[0][1] != int64(2) {
		t.Fatalf("GROUP BY char: %v", out)
	}

	i4 := types.Schema{{Name: "a", Type: types.TInt4}}
	i8 := types.Schema{{Name: "b", Type: types.TInt8}}
	j, err := NewJoin(State{ID: arrange.MakeID(1, 3)}, i4, i8, JoinSpec{Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}})
	if err != nil {
		t.Fatal(err)
	}
	out = stepOnce(t, j, zset.Batch{Rows: []types.Row{{int64(5)}}, Weights: []int64{1}}, zset.Batch{Rows: []types.Row{{int64(5)}}, Weights: []int64{1}})
	if out.Len() != 1 {
		t.Fatalf("int4 = int8 join: %v", out)
	}
	if _, err := NewJoin(State{}, i4, types.Schema{{Name: "t", Type: types.TText}}, JoinSpec{Kind: JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}}); err == nil {
		t.Fatal("int4 = text join key accepted")
	}
}
