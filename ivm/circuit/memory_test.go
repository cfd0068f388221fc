package circuit

import (
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestStepMemoryBoundsJoinOutput: a self-join on one key (n² pairs) under a
// step bound its output exceeds fails with RS-5502; with a bound that fits
// the output the same circuit answers, and without one it answers as
// before.
func TestStepMemoryBoundsJoinOutput(t *testing.T) {
	const rows = 300 // 90K pairs
	var batch zset.Batch
	for i := range rows {
		batch.Add(types.Row{int64(0), int64(i)}, 1)
	}
	run := func(limit int64) (map[ViewID]zset.Batch, *Circuit, error) {
		b := NewBuilder()
		src := b.Source(tableT, kvSchema)
		b.Sink(viewJoin, b.Join(src, src, op.JoinSpec{Kind: op.JoinInner, LeftKeys: []int{0}, RightKeys: []int{0}}))
		c, err := b.Build(Config{Env: &expr.Env{StepBytesMax: limit}})
		if err != nil {
			t.Fatal(err)
		}
		outs, err := c.RunOnce(map[SourceID]zset.Batch{tableT: batch})
		return outs, c, err
	}
	const limit = 256 << 10
	_, c, err := run(limit)
	if !errcode.Has(err, errcode.StepMemoryExceeded) {
		t.Fatalf("bounded join: %v, want RS-5502", err)
	}
	if out := c.Stats()[1].RowsOut; out != 0 {
		t.Fatalf("the refused join reported %d rows out", out)
	}
	pairRow := op.RowBytes(types.Row{int64(0), int64(1), int64(0), int64(1)})
	if pairs := int64(limit) / pairRow; pairs > rows*rows/10 {
		t.Fatalf("the bound admits %d of %d pairs: the test does not exercise it", pairs, rows*rows)
	}
	for _, limit := range []int64{0, 4 << 30} {
		outs, _, err := run(limit)
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if n := outs[viewJoin].Len(); n != rows*rows {
			t.Fatalf("limit %d: %d joined rows, want %d", limit, n, rows*rows)
		}
	}
}
