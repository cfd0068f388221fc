package shard

import (
	"bytes"
	"sort"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// bucketSnapshot is testSnapshot plus a table u without a primary key and
// a table gone that the returned catalog no longer has (it was dropped:
// its id is below the catalog's id counter).
func bucketSnapshot() (snap *control.Snapshot, table, keyless, gone *catalog.Relation, view catalog.ID) {
	table = &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4},
	}}
	v := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: "v", SQL: "SELECT k, sum(v), count(*) FROM t GROUP BY k", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}
	keyless = &catalog.Relation{Kind: catalog.KindTable, Name: "u", Columns: []catalog.Column{{Name: "a", Type: types.TInt8}, {Name: "b", Type: types.TText}}}
	gone = &catalog.Relation{Kind: catalog.KindTable, Name: "gone", PrimaryKey: []int{0}, Columns: []catalog.Column{{Name: "a", Type: types.TInt8, NotNull: true}}}
	all := control.NewSnapshot(catalog.NamespaceID{}, 1, table, v, keyless, gone)
	snap = control.NewSnapshot(catalog.NamespaceID{}, 2, table, v, keyless)
	snap.NextObject = all.NextObject
	return snap, table, keyless, gone, v.ID
}

// tableKeys lists the stored row keys of a table.
func tableKeys(t *testing.T, store kv.Reader, table catalog.ID) [][]byte {
	t.Helper()
	var keys [][]byte
	if err := kv.ScanPrefix(store, tablePrefix(table), func(k, _ []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestRowKeysCarryBucket: every base-table row key carries the bucket of
// its primary key (or, without one, of its row), one bucket's rows scan
// in primary-key order, and the whole table scans bucket by bucket.
func TestRowKeysCarryBucket(t *testing.T) {
	snap, table, keyless, _, _ := bucketSnapshot()
	h := &harness{t: t, store: kv.NewMemory(), snap: snap, table: table}
	h.start()
	var writes []RowWrite
	for k := range int64(200) {
		writes = append(writes, RowWrite{Table: table.ID, Row: types.Row{k, k % 7}, MustNotExist: true})
		writes = append(writes, RowWrite{Table: keyless.ID, Row: types.Row{k % 10, "x"}})
	}
	h.ask(Commit{CatalogVersion: snap.Version, Writes: writes})
	keys := tableKeys(t, h.store, table.ID)
	if len(keys) != 200 {
		t.Fatalf("%d rows stored, want 200", len(keys))
	}
	buckets := map[partition.Bucket][]int64{}
	var order []partition.Bucket
	for _, k := range keys {
		b := keyBucket(k)
		pk, rest, err := keyenc.DecodeKey(k[tableKeyHeadBytes:], []types.Type{types.TInt8}, []keyenc.Direction{keyenc.Asc}, nil)
		if err != nil || len(rest) != 0 {
			t.Fatalf("key %x: %v", k, err)
		}
		if want := BucketOfKey(table, pk); b != want {
			t.Fatalf("key %x carries bucket %d, its primary key's is %d", k, b, want)
		}
		if want := partition.BucketOf(k[tableKeyHeadBytes:]); b != want {
			t.Fatalf("key %x carries bucket %d, the hash of its key bytes gives %d", k, b, want)
		}
		if len(buckets[b]) == 0 {
			order = append(order, b)
		}
		buckets[b] = append(buckets[b], pk[0].(int64))
	}
	if !sort.SliceIsSorted(order, func(i, j int) bool { return order[i] < order[j] }) {
		t.Fatalf("a table scan does not visit buckets in order: %v", order)
	}
	if len(buckets) < 150 {
		t.Fatalf("200 keys fell into only %d buckets", len(buckets))
	}
	for _, b := range order {
		var inBucket []int64
		if err := kv.ScanPrefix(h.store, tableBucketPrefix(table.ID, b), func(k, _ []byte) error {
			pk, _, err := keyenc.DecodeKey(k[tableKeyHeadBytes:], []types.Type{types.TInt8}, []keyenc.Direction{keyenc.Asc}, nil)
			inBucket = append(inBucket, pk[0].(int64))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if !sort.SliceIsSorted(inBucket, func(i, j int) bool { return inBucket[i] < inBucket[j] }) || len(inBucket) != len(buckets[b]) {
			t.Fatalf("bucket %d scans %v, want %v in primary-key order", b, inBucket, buckets[b])
		}
	}
	ts := columnTypes(keyless)
	for _, k := range tableKeys(t, h.store, keyless.ID) {
		v, _, _ := h.store.Get(k)
		row, err := decodeStoredRow(v, ts)
		if err != nil {
			t.Fatal(err)
		}
		if b, want := keyBucket(k), BucketOfRow(ts, row); b != want {
			t.Fatalf("keyless row %v stored in bucket %d, its value's is %d", row, b, want)
		}
	}
	// A point read finds rows by their bucketed key.
	res := h.ask(Lookup{CatalogVersion: snap.Version, Table: table.ID, Keys: []types.Row{{int64(5)}, {int64(500)}}}).(LookupResult)
	if res.Rows[0] == nil || res.Rows[0][1] != int64(5) || res.Rows[1] != nil {
		t.Fatalf("lookup: %v", res.Rows)
	}
}

// downgradeToFormat1 rewrites a store's row keys as format 1 wrote them
// (no bucket) and records format 1.
func downgradeToFormat1(t *testing.T, store kv.Store) {
	t.Helper()
	txn := kv.NewTxn(store)
	type row struct{ k, v []byte }
	var rows []row
	if err := kv.ScanPrefix(store, []byte{kv.PrefixOpState, kindTableRows}, func(k, v []byte) error {
		rows = append(rows, row{append([]byte(nil), k...), append([]byte(nil), v...)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := txn.Delete(r.k); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rows {
		old := append(append([]byte(nil), r.k[:2+16]...), r.k[tableKeyHeadBytes:]...)
		if err := txn.Put(old, r.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Put(formatKey(), []byte{1}); err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(txn.Batch()); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeFormat1Rows: a store written in shard format 1 (row keys
// without buckets) is re-keyed in place when the shard adopts its first
// catalog: the same rows, now under bucketed keys, the view untouched and
// still maintained, format 2 recorded, and the rows of a dropped table
// deleted. A format-1 store holding rows of a table newer than the catalog
// waits (RS-3100) instead of guessing, and upgrades with a catalog that
// has the table.
func TestUpgradeFormat1Rows(t *testing.T) {
	snap, table, keyless, gone, view := bucketSnapshot()
	withGone := control.NewSnapshot(catalog.NamespaceID{}, 1, table, &catalog.Relation{Kind: catalog.KindMaterializedView, ID: view, Name: "v", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "s", Type: types.TInt8}, {Name: "n", Type: types.TInt8},
	}}, keyless, gone)
	withGone.NextObject = snap.NextObject
	h := &harness{t: t, store: kv.NewMemory(), snap: withGone, table: table}
	h.start()
	h.ask(Commit{CatalogVersion: withGone.Version, Writes: []RowWrite{
		{Table: table.ID, Row: types.Row{int64(1), int64(10)}, MustNotExist: true},
		{Table: table.ID, Row: types.Row{int64(2), int64(20)}, MustNotExist: true},
		{Table: keyless.ID, Row: types.Row{int64(7), "a"}},
		{Table: keyless.ID, Row: types.Row{int64(7), "a"}},
		{Table: keyless.ID, Row: types.Row{nil, "b"}},
		{Table: gone.ID, Row: types.Row{int64(3)}, MustNotExist: true},
	}})
	h.drain()
	wantKeyless := tableKeys(t, h.store, keyless.ID)
	downgradeToFormat1(t, h.store)

	// A catalog older than table gone (its counter below gone's id): wait.
	older := control.NewSnapshot(catalog.NamespaceID{}, 2, table, &catalog.Relation{Kind: catalog.KindMaterializedView, ID: view, Name: "v", Columns: withGone.Relations()[1].Columns}, keyless)
	older.NextObject = objectNumber(gone.ID)
	h.snap = older
	h.ctx = &testCtx{}
	h.actor = New(Config{OpenStore: func(runtime.Context) (kv.Store, error) { return h.store, nil }, Planner: sumPlanner{table: table}})().(*Actor)
	h.actor.Receive(h.ctx, runtime.Started{})
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: older.Value()})
	if err, ok := h.ctx.reply.(error); !ok || !containsState(err, "57P03") {
		t.Fatalf("upgrade under a catalog older than a stored table: %v", h.ctx.reply)
	}
	if v, _, _ := h.store.Get(formatKey()); !bytes.Equal(v, []byte{1}) {
		t.Fatalf("format record %x after a refused upgrade, want 01", v)
	}

	// The current catalog (gone dropped): upgrade.
	h.snap = snap
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: snap.Value()})
	if _, ok := h.ctx.reply.(Synced); !ok {
		t.Fatalf("upgrade: %v", h.ctx.reply)
	}
	if v, _, _ := h.store.Get(formatKey()); !bytes.Equal(v, []byte{shardFormat}) {
		t.Fatalf("format record %x after the upgrade, want %x", v, shardFormat)
	}
	if keys := tableKeys(t, h.store, gone.ID); len(keys) != 0 {
		t.Fatalf("rows of the dropped table survive the upgrade: %x", keys)
	}
	if got := tableKeys(t, h.store, keyless.ID); len(got) != len(wantKeyless) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(wantKeyless, nil)) {
		t.Fatalf("keyless row keys after the upgrade %x, want %x", got, wantKeyless)
	}
	for _, k := range tableKeys(t, h.store, table.ID) {
		if keyBucket(k) != partition.BucketOf(k[tableKeyHeadBytes:]) {
			t.Fatalf("upgraded key %x carries the wrong bucket", k)
		}
	}
	if n := h.ask(GetStatus{}).(Status).ViewRebuilds; n != 0 {
		t.Fatalf("the upgrade rebuilt %d views", n)
	}
	res := h.ask(Lookup{CatalogVersion: snap.Version, Table: table.ID, Keys: []types.Row{{int64(1)}, {int64(2)}}}).(LookupResult)
	if res.Rows[0] == nil || res.Rows[1] == nil || res.Rows[1][1] != int64(20) {
		t.Fatalf("lookup after the upgrade: %v", res.Rows)
	}
	// Keyed updates and deletes by value find the upgraded rows.
	h.ask(Commit{CatalogVersion: snap.Version, Writes: []RowWrite{
		{Table: table.ID, Key: types.Row{int64(2)}, Row: types.Row{int64(2), int64(21)}},
		{Table: keyless.ID, Base: types.Row{int64(7), "a"}},
	}})
	h.drain()
	if got := h.view(view); len(got) != 2 || got[1] != 10 || got[2] != 21 {
		t.Fatalf("view after the upgrade and an update: %v", got)
	}
	u := zset.Consolidate(h.ask(Read{CatalogVersion: snap.Version, Relations: []catalog.ID{keyless.ID}}).(ReadResult).Batches[0])
	if len(u.Rows) != 2 {
		t.Fatalf("keyless table after the upgrade and a delete: %v %v", u.Rows, u.Weights)
	}
	// A restart finds format 2 and upgrades nothing.
	h.start()
	if h.actor.upgradePending {
		t.Fatalf("a format-2 store is upgraded again")
	}
}

// TestCommitRefusesForeignBucket: a shard writes only rows of buckets the
// bucket map gives it; a write routed to it by another map is refused.
func TestCommitRefusesForeignBucket(t *testing.T) {
	snap, table, _, _, _ := bucketSnapshot()
	ctx := &testCtx{}
	a := New(Config{ID: 1, OpenStore: func(runtime.Context) (kv.Store, error) { return kv.NewMemory(), nil }, Planner: sumPlanner{table: table}})().(*Actor)
	a.Receive(ctx, runtime.Started{})
	a.Receive(ctx, SyncCatalog{Catalog: snap.Value()})
	a.Receive(ctx, Commit{CatalogVersion: snap.Version, Writes: []RowWrite{{Table: table.ID, Row: types.Row{int64(1), int64(1)}, MustNotExist: true}}})
	if err, ok := ctx.reply.(error); !ok || !containsState(err, "XX000") {
		t.Fatalf("shard 1 committing a row of shard 0's bucket: %v", ctx.reply)
	}
}
