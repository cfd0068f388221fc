package circuit

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// plainTxn hides the overlay Txn's Merge, so the sink takes its
// read-modify-write path for every weight.
type plainTxn struct{ kv.Txn }

// TestSinkWritesMatchIntegral: a view's stored output (ReadView) equals
// the integral of its input deltas at every step, with random signed
// weights over a tiny domain, whether the Txn takes merge writes or not,
// across restarts (a new circuit over the same store) and epochs whose
// batch is thrown away (DiscardCaches). Retracted rows leave no key, and a
// stored weight of zero (a positive merge onto a negative weight) reads as
// absent, and ViewRowCount agrees with the rows read.
func TestSinkWritesMatchIntegral(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		build := func() *Circuit {
			b := NewBuilder()
			b.Sink(viewSums, b.Source(tableT, kvSchema))
			c, err := b.Build(Config{ID: 3})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := build()
		store := kv.NewMemory()
		var integral zset.Batch
		for step := range rapid.IntRange(1, 15).Draw(t, "steps") {
			var delta zset.Batch
			for range rapid.IntRange(0, 10).Draw(t, "rows") {
				delta.Add(types.Row{rapid.Int64Range(0, 3).Draw(t, "k"), int64(step % 2)}, rapid.Int64Range(-2, 2).Draw(t, "w"))
			}
			var txn kv.Txn = kv.NewTxn(store)
			if rapid.Bool().Draw(t, "plain") {
				txn = plainTxn{txn}
			}
			out, err := c.Step(txn, map[SourceID]zset.Batch{tableT: delta})
			if err != nil {
				t.Fatal(err)
			}
			if !zset.Equal(out[viewSums], delta) {
				t.Fatalf("step %d: output %v, want %v", step, out, delta)
			}
			if rapid.Bool().Draw(t, "discard") {
				c.DiscardCaches()
			} else {
				if err := store.Apply(txn.Batch()); err != nil {
					t.Fatal(err)
				}
				integral.AddBatch(delta, 1)
			}
			if rapid.Bool().Draw(t, "restart") {
				c = build()
			}
			got, err := ReadView(store, viewSums)
			if err != nil {
				t.Fatal(err)
			}
			want := zset.Consolidate(integral)
			if !zset.Equal(got, want) || got.Len() != want.Len() {
				t.Fatalf("step %d: view %v, want %v", step, got, want)
			}
			var rows int64
			for _, w := range want.Weights {
				rows += w
			}
			if n, err := ViewRowCount(store, viewSums); err != nil || n != rows {
				t.Fatalf("step %d: ViewRowCount = %d, %v; want %d", step, n, err, rows)
			}
			keys := 0
			err = kv.ScanPrefix(store, viewArrangement(viewSums, arrange.KindViewRows).Prefix(), func(_, v []byte) error {
				w, err := decodeViewWeight(v)
				if err == nil && w != 0 {
					keys++
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if keys != want.Len() {
				t.Fatalf("step %d: %d stored rows with a weight, want %d", step, keys, want.Len())
			}
		}
	})
}

// TestSinkRetractionLeavesNoKey: inserting and then retracting a row
// deletes its key (the retraction is read-modify-write, not a merge that
// would leave a weight of zero behind).
func TestSinkRetractionLeavesNoKey(t *testing.T) {
	b := NewBuilder()
	b.Sink(viewSums, b.Source(tableT, kvSchema))
	c, err := b.Build(Config{ID: 3})
	if err != nil {
		t.Fatal(err)
	}
	store := kv.NewMemory()
	row := types.Row{int64(1), int64(2)}
	for _, w := range []int64{2, -1, -1} {
		txn := kv.NewTxn(store)
		var d zset.Batch
		d.Add(row, w)
		if _, err := c.Step(txn, map[SourceID]zset.Batch{tableT: d}); err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	err = kv.ScanPrefix(store, []byte{kv.PrefixViewOutput}, func(k, v []byte) error {
		t.Errorf("key %x (value %x) left after the row was retracted", k, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// countingTxn counts a Txn's point reads and ordered passes.
type countingTxn struct {
	kv.Txn
	gets, passes int
}

func (c *countingTxn) Get(key []byte) ([]byte, bool, error) {
	c.gets++
	return c.Txn.Get(key)
}

func (c *countingTxn) GetSorted(keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	c.passes++
	return kv.GetSorted(c.Txn, keys, fn)
}

func (c *countingTxn) Merge(key, operand []byte) error { return c.Txn.(kv.Merger).Merge(key, operand) }

// TestSinkReadsRetractionsInOnePass: a step retracting many stored rows
// reads their weights in one ordered pass, not with a Get per row (a
// view of groups retracts a row for every group a step changes), and the
// rows are gone after it.
func TestSinkReadsRetractionsInOnePass(t *testing.T) {
	b := NewBuilder()
	b.Sink(viewSums, b.Source(tableT, kvSchema))
	c, err := b.Build(Config{ID: 3})
	if err != nil {
		t.Fatal(err)
	}
	store := kv.NewMemory()
	for _, w := range []int64{2, -1, -1} {
		txn := &countingTxn{Txn: kv.NewTxn(store)}
		var d zset.Batch
		for k := int64(0); k < 50; k++ {
			d.Add(types.Row{k, 10 * k}, w)
		}
		if _, err := c.Step(txn, map[SourceID]zset.Batch{tableT: d}); err != nil {
			t.Fatal(err)
		}
		if w < 0 && (txn.gets != 0 || txn.passes != 1) {
			t.Fatalf("50 retractions read with %d Gets and %d ordered passes, want 0 and 1", txn.gets, txn.passes)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadView(store, viewSums)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 0 {
		t.Fatalf("view after retracting every row: %v", got)
	}
}

// TestSortedKeyOrder: the word-first comparison orders keys as comparing
// the strings does (shared prefixes, keys shorter than the word, zero
// bytes, equal words).
func TestSortedKeyOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		prefix := rapid.StringOfN(rapid.RuneFrom([]rune{'a', 0}), 0, 10, -1).Draw(t, "prefix")
		tails := rapid.SliceOfNDistinct(rapid.StringOfN(rapid.RuneFrom([]rune{0, 1, 'x', 0xff}), 0, 12, -1), 0, 30, rapid.ID[string]).Draw(t, "tails")
		keys := make([]string, len(tails))
		for i, tl := range tails {
			keys[i] = prefix + tl
		}
		order := sortedKeyOrder(keys)
		if len(order) != len(keys) {
			t.Fatalf("%d indexes for %d keys", len(order), len(keys))
		}
		for i := 1; i < len(order); i++ {
			if keys[order[i-1]] >= keys[order[i]] {
				t.Fatalf("%q before %q", keys[order[i-1]], keys[order[i]])
			}
		}
	})
}

// TestConsolidateKeysMatchesModel: consolidateKeys gives, in key order,
// each distinct encoding with a non-zero weight sum, the sum and the first
// entry that has it, over entries with many duplicates and signed weights.
func TestConsolidateKeysMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		encs := rapid.SliceOfN(rapid.StringOfN(rapid.RuneFrom([]rune{0, 'a', 'b'}), 0, 3, -1), 0, 60).Draw(t, "encodings")
		weights := make([]int64, len(encs))
		for i := range weights {
			weights[i] = int64(rapid.IntRange(-2, 2).Draw(t, "w"))
		}
		keys, firsts, sums := consolidateKeys(len(encs), weights, func(buf []byte, i int) []byte { return append(buf, encs[i]...) })
		sum, first := map[string]int64{}, map[string]int32{}
		var distinct []string
		for i, e := range encs {
			if _, ok := first[e]; !ok {
				first[e] = int32(i)
				distinct = append(distinct, e)
			}
			sum[e] += weights[i]
		}
		slices.Sort(distinct)
		var want []string
		for _, e := range distinct {
			if sum[e] != 0 {
				want = append(want, e)
			}
		}
		if len(keys) != len(want) || len(firsts) != len(want) || len(sums) != len(want) {
			t.Fatalf("got %d keys, %d firsts, %d sums; want %d (%q)", len(keys), len(firsts), len(sums), len(want), want)
		}
		for k, e := range want {
			if keys[k] != e || sums[k] != sum[e] || firsts[k] != first[e] {
				t.Fatalf("entry %d: %q sum %d first %d; want %q sum %d first %d", k, keys[k], sums[k], firsts[k], e, sum[e], first[e])
			}
		}
	})
}
