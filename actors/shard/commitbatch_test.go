package shard

import (
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TestCommitSameKeyTwice: a commit that writes one key twice is applied
// as if its writes ran in order (the second sees the first: last write
// wins), which the direct build cannot do; it must fall back to the exact
// build. Also: an update to an equal row leaves the view alone, and a
// delete-then-insert of a key inside one commit nets out, and so does
// an insert-then-delete of a key the table did not hold.
func TestCommitSameKeyTwice(t *testing.T) {
	h, view := newHarness(t)
	h.start()
	row := func(k, v int64) types.Row { return types.Row{k, v} }
	commit := func(writes ...RowWrite) {
		t.Helper()
		h.ask(Commit{CatalogVersion: h.snap.Version, Writes: writes})
		h.drain()
	}
	commit(RowWrite{Table: h.table.ID, Row: row(1, 10), MustNotExist: true},
		RowWrite{Table: h.table.ID, Key: types.Row{int64(1)}, Row: row(1, 20)},
		RowWrite{Table: h.table.ID, Row: row(2, 5), MustNotExist: true})
	if got := h.view(view); got[1] != 20 || got[2] != 5 || len(got) != 2 {
		t.Fatalf("view after a key written twice: %v", got)
	}
	commit(RowWrite{Table: h.table.ID, Key: types.Row{int64(2)}, Row: row(2, 5)})
	if got := h.view(view); got[1] != 20 || got[2] != 5 || len(got) != 2 {
		t.Fatalf("view after an unchanged update: %v", got)
	}
	commit(RowWrite{Table: h.table.ID, Key: types.Row{int64(2)}},
		RowWrite{Table: h.table.ID, Key: types.Row{int64(2)}, Row: row(2, 6)},
		RowWrite{Table: h.table.ID, Key: types.Row{int64(1)}})
	if got := h.view(view); got[2] != 6 || len(got) != 1 {
		t.Fatalf("view after delete+insert of one key and a delete: %v", got)
	}
	// An insert of a new key and its delete in one commit: the delete
	// must see the insert (the store does not have the key yet).
	commit(RowWrite{Table: h.table.ID, Key: types.Row{int64(3)}, Row: row(3, 7)},
		RowWrite{Table: h.table.ID, Key: types.Row{int64(3)}},
		RowWrite{Table: h.table.ID, Key: types.Row{int64(4)}})
	if got := h.view(view); got[2] != 6 || len(got) != 1 {
		t.Fatalf("view after insert+delete of a new key: %v", got)
	}
	h.start() // the table rows read back agree with the view
	if got := h.view(view); got[2] != 6 || len(got) != 1 {
		t.Fatalf("view after restart: %v", got)
	}
}

// TestByteArena: slices handed out never overlap, also when an encoding
// outgrows the room it was given.
func TestByteArena(t *testing.T) {
	var a byteArena
	var got [][]byte
	for i := 0; i < 2000; i++ {
		from := a.alloc(4)
		n := i % 50
		enc := from
		for j := 0; j < n; j++ {
			enc = append(enc, byte(i))
		}
		a.used(from, enc)
		got = append(got, enc)
	}
	for i, g := range got {
		if len(g) != i%50 {
			t.Fatalf("slice %d has %d bytes", i, len(g))
		}
		for _, b := range g {
			if b != byte(i) {
				t.Fatalf("slice %d overwritten: %v", i, g)
			}
		}
	}
}

// TestCommitInterleavedTables: a commit whose writes alternate between two
// tables (one keyed, one without a key) stores each table's rows and logs
// each write in its own table's section of the delta-log entry: the view
// over the keyed table sees exactly its rows. The commit keeps what it
// looks up per table for the writes that follow; this checks a change of
// table in between is not missed.
func TestCommitInterleavedTables(t *testing.T) {
	table := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	other := &catalog.Relation{Kind: catalog.KindTable, Name: "u", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt4},
	}}
	view := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, table, other, view)
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table}
	h.start()
	row := func(k, v int64) types.Row { return types.Row{k, v} }
	var writes []RowWrite
	for k := range int64(4) {
		writes = append(writes,
			RowWrite{Table: table.ID, Key: types.Row{k}, Row: row(k, 10+k), MustNotExist: true},
			RowWrite{Table: other.ID, Row: row(100+k, 1)})
	}
	if _, ok := h.ask(Commit{CatalogVersion: snap.Version, Writes: writes}).(Committed); !ok {
		t.Fatal("commit failed")
	}
	h.drain()
	if got := h.view(view.ID); len(got) != 4 || got[0] != 10 || got[3] != 13 {
		t.Fatalf("view over t: %v", got)
	}
	res := h.ask(Read{CatalogVersion: snap.Version, Relations: []catalog.ID{other.ID}}).(ReadResult)
	if n := len(zset.Consolidate(res.Batches[0]).Rows); n != 4 {
		t.Fatalf("u holds %d rows, want 4", n)
	}
}
