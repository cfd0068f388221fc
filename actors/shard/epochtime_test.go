package shard

import (
	"sort"
	"testing"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// temporalBase is the test's time zero.
var temporalBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) //lint:immutable test constant

// secondsAfterBase reads an int column as temporalBase plus that many
// seconds.
type secondsAfterBase struct{ index int }

func (c secondsAfterBase) Type() types.Type { return types.TTimestampTZ }
func (c secondsAfterBase) String() string   { return "base + $1 seconds" }
func (c secondsAfterBase) Eval(_ *expr.Env, row types.Row) (types.Datum, error) {
	v, ok := row[c.index].(int64)
	if !ok {
		return nil, nil
	}
	return types.TimestampTZOf(temporalBase.Add(time.Duration(v) * time.Second)), nil
}

// temporalPlanner plans every view as SELECT * FROM t WHERE base + v
// seconds > now().
type temporalPlanner struct{ table *catalog.Relation }

func (p temporalPlanner) PlanView(b *circuit.Builder, _ catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	src := b.Source(SourceID(p.table.ID), Schema(p.table))
	f := b.TemporalFilter(src, op.TemporalFilterSpec{Bounds: []op.TemporalBound{{Expr: secondsAfterBase{index: 1}, Op: op.TemporalGt}}})
	b.Sink(ViewID(view.ID), f)
	return PlannedView{Sources: []catalog.ID{p.table.ID}}, nil
}

func (temporalPlanner) ColumnDefault(catalog.Column) (types.Datum, error) { return nil, nil }

// TestTemporalStepsAtTheEpochsTime: an epoch's step filters at the time
// the table shard recorded with the epoch, so a step replayed after a
// crash, under a clock that now reads much earlier, computes what the
// lost step would have; and a tick epoch (no commit) makes rows leave.
func TestTemporalStepsAtTheEpochsTime(t *testing.T) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "w", SQL: "SELECT * FROM t WHERE base + v seconds > now()", Temporal: true,
		Columns: []catalog.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt4}}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, view)
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table, planner: temporalPlanner{table: table}}
	h.start()
	rows := func() []int64 {
		t.Helper()
		res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view.ID}}).(ReadResult)
		var ks []int64
		b := zset.Consolidate(res.Batches[0])
		for i, r := range b.Rows {
			if b.Weights[i] != 1 {
				t.Fatalf("row %v has weight %d", r, b.Weights[i])
			}
			ks = append(ks, r[0].(int64))
		}
		sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
		return ks
	}
	insert := func(k, v int64) {
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: table.ID, Row: types.Row{k, v}, MustNotExist: true}}})
	}
	h.ctx.now = temporalBase
	insert(1, 10) // visible until base + 10s
	insert(2, 60)
	h.drain()
	if got := rows(); len(got) != 2 {
		t.Fatalf("at base: %v, want rows 1 and 2", got)
	}
	// At base + 20s a commit; the shard crashes before its step, and
	// restarts with a clock reading the year 1.
	h.ctx.now = temporalBase.Add(20 * time.Second)
	insert(3, 30)
	h.ctx.self = nil
	h.start()
	if h.ctx.now.Year() != 1 {
		t.Fatalf("the restarted clock reads %v", h.ctx.now)
	}
	res := h.ask(Read{CatalogVersion: h.snap.Version, Relations: []catalog.ID{view.ID}, MinEpoch: 3}).(ReadResult)
	// (The test clock moves a millisecond per reading.)
	if at := res.FrontierTime; res.Frontier != 3 || at < types.TimestampTZOf(temporalBase.Add(20*time.Second)) || at > types.TimestampTZOf(temporalBase.Add(21*time.Second)) {
		t.Fatalf("replayed epoch 3 at frontier %d, time %s; want epoch 3 at base + 20s", res.Frontier, types.Format(types.TTimestampTZ, res.FrontierTime))
	}
	if got := rows(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("after the replay: %v, want rows 2 and 3 (row 1 expired at base + 10s)", got)
	}
	// A commit under the clock that went back is stamped with the last
	// epoch's time: nothing comes back.
	insert(4, 15)
	h.drain()
	if got := rows(); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("after a commit under an earlier clock: %v, want rows 2 and 3", got)
	}
	// Time passes with no commit: a tick epoch makes row 3 leave.
	h.ctx.now = temporalBase.Add(40 * time.Second)
	h.actor.Receive(h.ctx, temporalTick{})
	h.drain()
	if got := rows(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("after a tick at base + 40s: %v, want row 2", got)
	}
	st := h.ask(GetStatus{}).(Status)
	if st.LastEpoch != 5 {
		t.Fatalf("last epoch %d, want 5 (the tick's)", st.LastEpoch)
	}
}
