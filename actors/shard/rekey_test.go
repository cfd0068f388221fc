package shard

import (
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// keylessSnapshots returns a catalog with table t declared without a
// primary key (and a view over it), and the next catalog version in which
// ALTER TABLE t ADD PRIMARY KEY (k) happened.
func keylessSnapshots() (before, after *control.Snapshot, table *catalog.Relation, view catalog.ID) {
	table = &catalog.Relation{Kind: catalog.KindTable, Name: "t", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt4},
	}}
	v := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}
	before = control.NewSnapshot(catalog.NamespaceID{}, 1, table, v)
	keyed := *table
	keyed.Columns = []catalog.Column{{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4}}
	keyed.PrimaryKey, keyed.PrimaryKeyAdded = []int{0}, true
	viewCopy := *v
	after = control.NewSnapshot(catalog.NamespaceID{}, 2, &keyed, &viewCopy)
	return before, after, table, v.ID
}

// TestRekeyAfterAddPrimaryKey: rows of a table without a key (repeated
// values allowed, deletes by value) move under their primary key when the
// shard adopts the catalog that added it — on a Lookup too — while the
// view over the table does not change; keyed writes then work, and the
// re-keying is durable across a restart.
func TestRekeyAfterAddPrimaryKey(t *testing.T) {
	before, after, table, view := keylessSnapshots()
	h := &harness{t: t, store: kv.NewMemory(), snap: before, table: table}
	h.start()
	row := func(k int64, v int32) types.Row { return types.Row{k, int64(v)} }
	h.ask(Commit{CatalogVersion: before.Version, Writes: []RowWrite{{Table: table.ID, Row: row(1, 10)}, {Table: table.ID, Row: row(2, 5)}, {Table: table.ID, Row: row(2, 5)}, {Table: table.ID, Row: row(3, 1)}}})
	// A delete by value removes one of the two equal rows.
	h.ask(Commit{CatalogVersion: before.Version, Writes: []RowWrite{{Table: table.ID, Base: row(2, 5)}}})
	h.drain()
	want := map[int64]int64{1: 10, 2: 5, 3: 1}
	if got := h.view(view); len(got) != 3 || got[1] != 10 || got[2] != 5 || got[3] != 1 {
		t.Fatalf("view before the key: %v, want %v", got, want)
	}
	// The first message carrying the new catalog is a Lookup by key: the
	// shard fetches the catalog from the control plane first.
	h.control = after
	res := h.ask(Lookup{CatalogVersion: after.Version, Table: table.ID, Keys: []types.Row{{int64(2)}, {int64(9)}}}).(LookupResult)
	if len(res.Rows) != 2 || res.Rows[0] == nil || res.Rows[0][1] != int64(5) || res.Rows[1] != nil {
		t.Fatalf("lookup after ADD PRIMARY KEY: %v", res.Rows)
	}
	h.snap = after
	if got := h.view(view); len(got) != 3 || got[2] != 5 {
		t.Fatalf("view after re-keying: %v, want %v", got, want)
	}
	h.ask(Commit{CatalogVersion: after.Version, Writes: []RowWrite{{Table: table.ID, Key: types.Row{int64(2)}, Row: row(2, 7)}}})
	h.drain()
	if got := h.view(view); got[2] != 7 || len(got) != 3 {
		t.Fatalf("view after a keyed update: %v", got)
	}
	// An insert made while the table had no key (no Key) must be new.
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, Commit{CatalogVersion: after.Version, Writes: []RowWrite{{Table: table.ID, Row: row(1, 99)}}})
	if err, ok := h.ctx.reply.(error); !ok || !containsState(err, "23505") {
		t.Fatalf("keyless-era insert of an existing key: %v", h.ctx.reply)
	}
	h.start()
	res = h.ask(Lookup{CatalogVersion: after.Version, Table: table.ID, Keys: []types.Row{{int64(1)}, {int64(2)}}}).(LookupResult)
	if res.Rows[0] == nil || res.Rows[1] == nil || res.Rows[1][1] != int64(7) {
		t.Fatalf("lookup after restart: %v", res.Rows)
	}
}

// TestRekeyRefusesDuplicates: a shard that finds a duplicated key while
// re-keying refuses the catalog (23505) and keeps the old one and the
// rows, so the session can revert the ALTER.
func TestRekeyRefusesDuplicates(t *testing.T) {
	before, after, table, view := keylessSnapshots()
	h := &harness{t: t, store: kv.NewMemory(), snap: before, table: table}
	h.start()
	h.ask(Commit{CatalogVersion: before.Version, Writes: []RowWrite{{Table: table.ID, Row: types.Row{int64(1), int64(10)}}, {Table: table.ID, Row: types.Row{int64(1), int64(20)}}}})
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: after.Value()})
	if err, ok := h.ctx.reply.(error); !ok || !containsState(err, "23505") {
		t.Fatalf("re-keying duplicates: %v", h.ctx.reply)
	}
	if v := h.actor.snap.Version; v != before.Version {
		t.Fatalf("shard runs catalog %d after a refused re-keying, want %d", v, before.Version)
	}
	h.drain()
	if got := h.view(view); got[1] != 30 {
		t.Fatalf("view after the refused re-keying: %v, want sum 30", got)
	}
}
