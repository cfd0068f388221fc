package subscriber

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
	"pgregory.net/rapid"
)

// TestMergeShowsTheSumAtEveryEpoch: shards whose parts of a view change
// at random epochs, each stepping over its own random ranges (ending at
// every multiple of SpreadStepEvery, as shards running a spread view do),
// some updates replayed from history (the steps that changed nothing
// folded into the next), arriving interleaved at random. Every merged
// update must leave the merged state equal to the sum of the parts' true
// states at its epoch, epochs only grow, and once every shard has sent
// everything up to the last epoch the merge reaches it.
func TestMergeShowsTheSumAtEveryEpoch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const rowsMax = 3
		n := rapid.IntRange(1, 4).Draw(t, "shards")
		last := uint64(rapid.IntRange(1, 3*int(shard.SpreadStepEvery)).Draw(t, "last"))
		withSnapshot := rapid.Bool().Draw(t, "withSnapshot")
		// change[i][e]: shard i's part changes row r by w at epoch e.
		type rowChange struct {
			row int
			w   int64
		}
		change := make([]map[uint64][]rowChange, n)
		for i := range change {
			change[i] = map[uint64][]rowChange{}
			for e := uint64(1); e <= last; e++ {
				if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("changes%d_%d", i, e)) == 0 {
					change[i][e] = append(change[i][e], rowChange{row: rapid.IntRange(0, rowsMax).Draw(t, "row"), w: int64(rapid.IntRange(-2, 2).Draw(t, "w"))})
				}
			}
		}
		// stateAt is the true sum of the parts at epoch x.
		stateAt := func(x uint64) map[int]int64 {
			s := map[int]int64{}
			for i := range change {
				for e := uint64(1); e <= x; e++ {
					for _, c := range change[i][e] {
						s[c.row] += c.w
					}
				}
			}
			for r, w := range s {
				if w == 0 {
					delete(s, r)
				}
			}
			return s
		}
		deltaOf := func(i int, after, epoch uint64) zset.Batch {
			var b zset.Batch
			for e := after + 1; e <= epoch; e++ {
				for _, c := range change[i][e] {
					b.Add(types.Row{int64(c.row)}, c.w)
				}
			}
			return zset.Consolidate(b)
		}
		shards := make([]runtime.ActorID, n)
		from := make([]uint64, n)
		streams := make([][]shard.SubscriptionUpdate, n)
		for i := range n {
			shards[i] = runtime.ActorID(fmt.Sprintf("shard/%d", i))
			from[i] = uint64(rapid.IntRange(0, int(last)).Draw(t, fmt.Sprintf("from%d", i)))
			// Steps: random ends, and every multiple of SpreadStepEvery.
			var ends []uint64
			for e := from[i] + 1; e <= last; e++ {
				if e == last || e%shard.SpreadStepEvery == 0 || rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("end%d_%d", i, e)) == 0 {
					ends = append(ends, e)
				}
			}
			history := rapid.Bool().Draw(t, fmt.Sprintf("history%d", i))
			prev := from[i]
			for k, e := range ends {
				d := deltaOf(i, prev, e)
				if history && len(d.Rows) == 0 && k < len(ends)-1 {
					continue // a replay folds steps that changed nothing into the next
				}
				streams[i] = append(streams[i], shard.SubscriptionUpdate{Seq: uint64(len(streams[i]) + 1), After: prev, Epoch: e, Delta: d})
				prev = e
			}
		}
		for i := range n {
			for _, u := range streams[i] {
				t.Logf("shard %d: (%d, %d] %v", i, u.After, u.Epoch, u.Delta)
			}
		}
		m := newMerge(shards)
		state := map[int]int64{}
		emitted, seen := uint64(0), false
		apply := func(out []shard.SubscriptionUpdate) {
			for _, u := range out {
				t.Logf("merged: (%d, %d] %v", u.After, u.Epoch, u.Delta)
				if seen && u.Epoch <= emitted {
					t.Fatalf("merged epoch went from %d to %d", emitted, u.Epoch)
				}
				if !seen {
					maxFrom := uint64(0)
					for _, f := range from {
						maxFrom = max(maxFrom, f)
					}
					if u.Epoch < maxFrom {
						t.Fatalf("the merge starts at %d, before a shard's start %d", u.Epoch, maxFrom)
					}
					if withSnapshot {
						state = map[int]int64{}
					} else {
						// Without the snapshot the stream starts from
						// the state at its first epoch.
						state = stateAt(u.Epoch)
						if len(u.Delta.Rows) != 0 {
							t.Fatalf("a merge without snapshot starts with changes: %v", u.Delta)
						}
					}
				}
				for k, r := range u.Delta.Rows {
					state[int(r[0].(int64))] += u.Delta.Weights[k]
					if state[int(r[0].(int64))] == 0 {
						delete(state, int(r[0].(int64)))
					}
				}
				if want := stateAt(u.Epoch); fmt.Sprint(state) != fmt.Sprint(want) {
					t.Fatalf("merged state at epoch %d is %v, the parts add up to %v", u.Epoch, state, want)
				}
				emitted, seen = u.Epoch, true
			}
		}
		var snapshots []zset.Batch
		for i := range n {
			snapshots = append(snapshots, deltaOf(i, 0, from[i]))
		}
		beginAt := rapid.IntRange(0, 10).Draw(t, "beginAt")
		begun := false
		for step := 0; ; step++ {
			if step == beginAt || (!begun && step > 10) {
				m.begin(Begin{From: from, Snapshots: snapshots, WithSnapshot: withSnapshot})
				begun = true
				apply(m.emit())
			}
			var open []int
			for i := range n {
				if len(streams[i]) > 0 {
					open = append(open, i)
				}
			}
			if len(open) == 0 {
				if begun {
					break
				}
				continue
			}
			i := open[rapid.IntRange(0, len(open)-1).Draw(t, "next")]
			if err := m.receive(shards[i], streams[i][0]); err != nil {
				t.Fatal(err)
			}
			streams[i] = streams[i][1:]
			apply(m.emit())
		}
		if !seen || emitted != last {
			// Every shard ended at last: the merge must get there.
			t.Fatalf("the merge stopped at %d (emitted: %v), every shard reached %d", emitted, seen, last)
		}
	})
}

// TestMergeRefusesGaps: an update lost between a shard and the edge ends
// the merged subscription instead of merging around the gap.
func TestMergeRefusesGaps(t *testing.T) {
	m := newMerge([]runtime.ActorID{"shard/0", "shard/1"})
	if err := m.receive("shard/0", shard.SubscriptionUpdate{Seq: 1, After: 0, Epoch: 3}); err != nil {
		t.Fatal(err)
	}
	if err := m.receive("shard/0", shard.SubscriptionUpdate{Seq: 3, After: 5, Epoch: 7}); err == nil {
		t.Fatal("a gap in a shard's updates was merged")
	}
	if err := m.receive("shard/9", shard.SubscriptionUpdate{Seq: 1}); err == nil {
		t.Fatal("an update of a shard the subscription does not follow was merged")
	}
}
