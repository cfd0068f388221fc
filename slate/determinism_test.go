package slate

import (
	"bytes"
	"context"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestDeterministicObjects: the same operations at the same times produce a
// byte-identical bucket (every key and every object), which the simulator's
// seed replay relies on.
func TestDeterministicObjects(t *testing.T) {
	ctx := context.Background()
	run := func() *objstore.Memory {
		store := objstore.NewMemory()
		clock := newTestClock()
		m := &model{states: []modelState{{}}}
		for round := 0; round < 2; round++ {
			if _, err := crashWorkload(ctx, store, clock, m); err != nil {
				t.Fatal(err)
			}
		}
		r, err := OpenReader(ctx, store, "db", clock.now(), ReaderOptions{MergeOperator: sumOperator})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Poll(ctx, clock.now()); err != nil {
			t.Fatal(err)
		}
		return store
	}
	a, b := run(), run()
	la, _ := a.List(ctx, "")
	lb, _ := b.List(ctx, "")
	if len(la) != len(lb) {
		t.Fatalf("%d objects vs %d", len(la), len(lb))
	}
	for i := range la {
		if la[i].Key != lb[i].Key {
			t.Fatalf("object %d: %s vs %s", i, la[i].Key, lb[i].Key)
		}
		oa, _ := a.Get(ctx, la[i].Key)
		ob, _ := b.Get(ctx, lb[i].Key)
		if !bytes.Equal(oa.Data, ob.Data) {
			t.Fatalf("object %s differs between identical runs", la[i].Key)
		}
	}
	if len(la) < 20 {
		t.Fatalf("only %d objects", len(la))
	}
}
