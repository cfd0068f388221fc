package shard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// storedState returns every stored key of the view's circuit (operator
// state, view outputs, statistics) with its value.
func storedState(t *testing.T, store kv.Store, view uint64) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, ns := range []byte{kv.PrefixOpState, kv.PrefixOpIndex, kv.PrefixViewOutput, kv.PrefixShardMeta} {
		err := kv.ScanPrefix(store, []byte{ns}, func(k, v []byte) error {
			if ownedBy(k, view) {
				out[string(k)] = append([]byte(nil), v...)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestForeignViewStateIsRebuilt: state written by a "build" whose format
// record differs (the test rewrites the stored record, as an earlier
// build's aggregate encoding would have written it, and garbles the state
// into bytes this build cannot decode) is not read: at restart the view is
// rebuilt from the base table and keeps being maintained. A restart with
// the same build rebuilds nothing (the state round-trips), and a fresh
// view (no state yet) installs without a rebuild.
func TestForeignViewStateIsRebuilt(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 0 {
		t.Fatalf("a fresh view was rebuilt (%d)", n)
	}
	commit := func(k, v int64) {
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
		h.drain()
	}
	commit(1, 10)
	commit(2, 20)
	if got := h.view(view); len(got) != 2 || got[1] != 10 || got[2] != 20 {
		t.Fatalf("view: %v", got)
	}
	// Same build, restart: the stored record matches, nothing is rebuilt.
	h.start()
	commit(1, 11)
	if got := h.view(view); len(got) != 2 || got[1] != 11 || got[2] != 20 {
		t.Fatalf("view after a restart: %v", got)
	}
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 0 {
		t.Fatalf("a restart of the same build rebuilt %d views", n)
	}
	marker, ok, err := h.store.Get(viewMarkerKey(view))
	if err != nil || !ok || !bytes.Contains(marker, []byte("aggregate.words/3")) {
		t.Fatalf("view marker %q (%v, %v) holds no format record", marker, ok, err)
	}
	// An "earlier build" wrote the state: its record names another
	// aggregate encoding, and the state itself does not decode here.
	circuitID := objectNumber(view)
	var b kv.WriteBatch
	b.Ops = append(b.Ops, kv.Op{Key: viewMarkerKey(view), Value: bytes.ReplaceAll(marker, []byte("aggregate.words/3"), []byte("aggregate.words/1"))})
	garbled := 0
	for k := range storedState(t, h.store, circuitID) { //lint:maprange ops are sorted below
		if k[0] == kv.PrefixOpState || k[0] == kv.PrefixViewOutput {
			b.Ops = append(b.Ops, kv.Op{Key: []byte(k), Value: []byte{0xEE, 0xEE}})
			garbled++
		}
	}
	sort.Slice(b.Ops, func(i, j int) bool { return bytes.Compare(b.Ops[i].Key, b.Ops[j].Key) < 0 })
	if err := h.store.Apply(&b); err != nil {
		t.Fatal(err)
	}
	if garbled < 3 {
		t.Fatalf("only %d state keys garbled", garbled)
	}
	h.start()
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 1 {
		t.Fatalf("%d views rebuilt, want 1", n)
	}
	if got := h.view(view); len(got) != 2 || got[1] != 11 || got[2] != 20 {
		t.Fatalf("rebuilt view: %v", got)
	}
	commit(3, 30)
	commit(2, 21)
	if got := h.view(view); len(got) != 3 || got[1] != 11 || got[2] != 21 || got[3] != 30 {
		t.Fatalf("rebuilt view after commits: %v", got)
	}
	if marker2, _, _ := h.store.Get(viewMarkerKey(view)); !bytes.Equal(marker2, marker) {
		t.Fatalf("rebuilt view's record %q, want %q", marker2, marker)
	}
	// And the rebuilt state round-trips through another restart.
	h.start()
	commit(4, 40)
	if got := h.view(view); len(got) != 4 || got[4] != 40 || got[2] != 21 {
		t.Fatalf("view after a restart of the rebuilt view: %v", got)
	}
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 0 {
		t.Fatalf("the rebuilt view was rebuilt again (%d)", n)
	}
}

// TestLegacyViewMarkerIsRebuilt: a marker written before format records
// (the byte 1) is foreign too.
func TestLegacyViewMarkerIsRebuilt(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(5)}}}})
	h.drain()
	if err := h.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: viewMarkerKey(view), Value: []byte{1}}}}); err != nil {
		t.Fatal(err)
	}
	h.start()
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 1 {
		t.Fatalf("%d views rebuilt, want 1", n)
	}
	if got := h.view(view); len(got) != 1 || got[1] != 5 {
		t.Fatalf("rebuilt view: %v", got)
	}
}

// TestForeignShardFormatRefused: a shard whose format record this build
// does not read is refused with RS-5001 naming the format and what to do;
// a store without a record gets this build's.
func TestForeignShardFormatRefused(t *testing.T) {
	h, _ := newHarness(t)
	h.start()
	v, ok, err := h.store.Get(formatKey())
	if err != nil || !ok || !bytes.Equal(v, []byte{shardFormat}) {
		t.Fatalf("shard format record %x (%v, %v)", v, ok, err)
	}
	if err := h.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: formatKey(), Value: []byte{shardFormat + 1}}}}); err != nil {
		t.Fatal(err)
	}
	h.ctx.reply = nil
	h.actor = New(Config{
		OpenStore: func(runtime.Context) (kv.Store, error) { return h.store, nil },
		Planner:   sumPlanner{table: h.table},
	})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: h.snap.Value()})
	rerr, _ := h.ctx.reply.(error)
	e, ok := errcode.As(rerr)
	if !ok {
		t.Fatalf("sync on a foreign shard format: %v", h.ctx.reply)
	}
	var cause *errcode.Error
	for c := error(e); c != nil; {
		if ce, ok := c.(*errcode.Error); ok && ce.Code == errcode.StorageFormatVersionIncompatible {
			cause = ce
			break
		}
		u, ok := c.(interface{ Unwrap() error })
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	if cause == nil || cause.State() != "XX002" || !strings.Contains(cause.Message, fmt.Sprintf("format %02x", shardFormat+1)) || !strings.Contains(cause.Message, "run the RockStream version that wrote it") {
		t.Fatalf("error on a foreign shard format: %v", rerr)
	}
}

// chainPlanner plans view v1 as sumPlanner does and every other view as
// SELECT k, s FROM v1 (a view on a view).
type chainPlanner struct {
	sumPlanner
	v1 *catalog.Relation
}

func (p chainPlanner) PlanView(b *circuit.Builder, cat catalog.Catalog, view *catalog.Relation) (PlannedView, error) {
	if view.ID == p.v1.ID {
		return p.sumPlanner.PlanView(b, cat, view)
	}
	src := b.Source(SourceID(p.v1.ID), Schema(p.v1))
	b.Sink(ViewID(view.ID), b.Project(src, []int{0, 1}))
	return PlannedView{Sources: []catalog.ID{p.v1.ID}}, nil
}

// TestViewOnRebuiltViewIsRebuilt: when a view's state is rebuilt, the
// views reading it are rebuilt too — otherwise they would miss its deltas
// for the epochs replayed at restart (here, a commit whose epoch step had
// not run before the "crash").
func TestViewOnRebuiltViewIsRebuilt(t *testing.T) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	cols := []catalog.Column{{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
	v1 := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v1", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: cols}
	v2 := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v2", SQL: "SELECT k, s FROM v1", Columns: cols[:2]}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, v1, v2)
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table, planner: chainPlanner{sumPlanner: sumPlanner{table: table}, v1: v1}}
	commit := func(k, v int64) {
		h.ask(Commit{CatalogVersion: snap.Version, Writes: []RowWrite{{Table: table.ID, Key: types.Row{k}, Row: types.Row{k, v}}}})
	}
	h.start()
	commit(1, 10)
	h.drain()
	if got := h.view(v2.ID); len(got) != 1 || got[1] != 10 {
		t.Fatalf("v2: %v", got)
	}
	// v1's state is foreign; a commit is durable but not yet maintained
	// when the process stops.
	if err := h.store.Apply(&kv.WriteBatch{Ops: []kv.Op{{Key: viewMarkerKey(v1.ID), Value: []byte{1}}}}); err != nil {
		t.Fatal(err)
	}
	commit(1, 11)
	commit(2, 20)
	h.ctx.self = nil // the epoch step is lost with the process
	h.start()
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 2 {
		t.Fatalf("%d views rebuilt, want 2 (v1 and v2 reading it)", n)
	}
	for _, id := range []catalog.ID{v1.ID, v2.ID} {
		if got := h.view(id); len(got) != 2 || got[1] != 11 || got[2] != 20 {
			t.Fatalf("view %s after the rebuild: %v", id, got)
		}
	}
	commit(3, 30)
	h.drain()
	if got := h.view(v2.ID); len(got) != 3 || got[3] != 30 || got[1] != 11 {
		t.Fatalf("v2 after the rebuild and a commit: %v", got)
	}
}

// TestFormat2StoreBecomesCurrent: a store of the builds before timed log
// entries (format 2), holding an untimed entry not yet stepped, opens with
// this build: its record becomes this build's (so those builds refuse it
// from now on, instead of misreading the timed entries as corrupt) and
// the entry is still maintained.
func TestFormat2StoreBecomesCurrent(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	h.ask(Commit{CatalogVersion: h.snap.Version, Writes: []RowWrite{{Table: h.table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(5)}}}})
	h.drain()
	// An entry as format 2 wrote it: no trailing time.
	last, _, err := h.store.Get(lastEpochKey())
	if err != nil {
		t.Fatal(err)
	}
	epoch := binary.BigEndian.Uint64(last) + 1
	cb := newCommitBatch(h.store, 1, false)
	enc := cb.encodeRow(columnTypes(h.table), types.Row{int64(2), int64(7)})
	cb.table(h.table.ID).add(enc, 1)
	entry := cb.encodeLog(0)
	entry = entry[:len(entry)-logTimeBytes]
	key := appendKey(nil, h.table, columnTypes(h.table), types.Row{int64(2)})
	if err := h.store.Apply(&kv.WriteBatch{Ops: []kv.Op{
		{Key: formatKey(), Value: []byte{2}},
		{Key: logKey(epoch), Value: entry},
		{Key: key, Value: enc},
		{Key: lastEpochKey(), Value: binary.BigEndian.AppendUint64(nil, epoch)},
	}}); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.drain()
	if v, _, _ := h.store.Get(formatKey()); !bytes.Equal(v, []byte{shardFormat}) {
		t.Fatalf("format record %x after opening a format-2 store, want %02x", v, shardFormat)
	}
	if got := h.view(view); len(got) != 2 || got[1] != 5 || got[2] != 7 {
		t.Fatalf("view after the format-2 entry: %v", got)
	}
}
