package shard

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
)

// indexedSnapshots returns catalog versions of table t (k PK, a, b): v1
// without indexes, v2 with a unique index on a and one on (b, a), v3
// with the indexes dropped.
func indexedSnapshots() (v1, v2, v3 *control.Snapshot, table, uniq, multi *catalog.Relation) {
	table = &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TText},
	}}
	v1 = control.NewSnapshot(catalog.NamespaceID{}, 1, table)
	// NB: ids apart from the table's (a new snapshot numbers from 1).
	uniq = &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{0: 0x7f, 15: 1}}, Kind: catalog.KindIndex, Name: "t_a_key", Index: &catalog.Index{Table: table.ID, Unique: true, Columns: []catalog.IndexColumn{{Column: "a"}}}}
	multi = &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{0: 0x7f, 15: 2}}, Kind: catalog.KindIndex, Name: "t_b_a_idx", Index: &catalog.Index{Table: table.ID, Columns: []catalog.IndexColumn{{Column: "b"}, {Column: "a"}}}}
	tv2 := *table
	v2 = control.NewSnapshot(catalog.NamespaceID{}, 2, &tv2, uniq, multi)
	tv3 := *table
	v3 = control.NewSnapshot(catalog.NamespaceID{}, 3, &tv3)
	return v1, v2, v3, table, uniq, multi
}

// checkIndexEntries fails unless the entries of each index are exactly
// one per stored row, naming it under its current values.
func checkIndexEntries(t *testing.T, a *Actor, table *catalog.Relation, idxs ...*catalog.Relation) {
	t.Helper()
	codec, err := a.codecOf(table)
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range idxs {
		cols, _ := MaintainedIndex(table, idx)
		var want, got [][]byte
		err := kv.ScanPrefix(a.store, tablePrefix(table.ID), func(k, v []byte) error {
			row, err := codec.decode(v)
			if err != nil {
				return err
			}
			key, _, _ := appendIndexKey(nil, tableIndex{rel: idx, cols: cols}, codec.ts, row, k)
			want = append(want, key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := kv.ScanPrefix(a.store, indexPrefix(idx.ID), func(k, _ []byte) error {
			got = append(got, append([]byte(nil), k...))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(want, bytes.Compare)
		if !slices.EqualFunc(want, got, bytes.Equal) {
			t.Fatalf("index %s holds %d entries, want %d (one per row)", idx.Name, len(got), len(want))
		}
	}
}

// TestIndexEntriesFollowCommits: a unique index built over stored rows
// (refusing none here), then kept equal to the rows by random commits —
// several writes per commit, a key written twice, values moved between
// rows in one commit — while commits leaving a duplicated non-NULL value
// fail with 23505 and write nothing; reads by the index return the rows a
// scan would, reading only them; a restart keeps the entries without
// rebuilding them; dropping the indexes deletes them.
func TestIndexEntriesFollowCommits(t *testing.T) {
	v1, v2, v3, table, uniq, multi := indexedSnapshots()
	h := &harness{t: t, store: kv.NewMemory(), snap: v1, table: table}
	h.start()
	row := func(k int64, a any, b string) types.Row { return types.Row{k, a, b} }
	h.ask(Commit{CatalogVersion: v1.Version, Writes: []RowWrite{
		{Table: table.ID, Key: types.Row{int64(1)}, Row: row(1, int64(10), "x")},
		{Table: table.ID, Key: types.Row{int64(2)}, Row: row(2, int64(20), "y")},
		{Table: table.ID, Key: types.Row{int64(3)}, Row: row(3, nil, "x")},
		{Table: table.ID, Key: types.Row{int64(4)}, Row: row(4, nil, "x")},
	}})
	h.snap, h.control = v2, v2
	h.ask(SyncCatalog{Catalog: v2.Value()})
	checkIndexEntries(t, h.actor, table, uniq, multi)
	// The model: k → (a, b), a nil for NULL.
	type val struct {
		a *int32
		b string
	}
	i32 := func(n int32) *int32 { return &n }
	model := map[int64]val{1: {i32(10), "x"}, 2: {i32(20), "y"}, 3: {nil, "x"}, 4: {nil, "x"}}
	rng := rand.New(rand.NewPCG(3, 9))
	rejected := 0
	for i := 0; i < 400; i++ {
		next := map[int64]val{}
		for k, v := range model { //lint:maprange copying a map
			next[k] = v
		}
		var writes []RowWrite
		for n := 1 + rng.IntN(3); n > 0; n-- {
			k := int64(rng.IntN(12))
			if rng.IntN(4) == 0 {
				writes = append(writes, RowWrite{Table: table.ID, Key: types.Row{k}})
				delete(next, k)
				continue
			}
			v := val{b: string(rune('x' + rng.IntN(3)))}
			var a any
			if rng.IntN(5) > 0 {
				v.a = i32(int32(rng.IntN(8)))
				a = int64(*v.a)
			}
			writes = append(writes, RowWrite{Table: table.ID, Key: types.Row{k}, Row: row(k, a, v.b)})
			next[k] = v
		}
		seen := map[int32]bool{}
		dup := false
		for _, v := range next { //lint:maprange order-free check
			if v.a != nil {
				dup = dup || seen[*v.a]
				seen[*v.a] = true
			}
		}
		h.ctx.reply = nil
		h.actor.Receive(h.ctx, Commit{CatalogVersion: v2.Version, Writes: writes})
		h.answerFetches()
		if h.ctx.reply == nil {
			h.deliver(func(m runtime.Message) bool { _, ok := m.(flushCommits); return ok })
		}
		err, failed := h.ctx.reply.(error)
		if failed != dup || (failed && !containsState(err, "23505")) {
			t.Fatalf("commit %d %v: %v, want a 23505 failure: %v", i, writes, h.ctx.reply, dup)
		}
		if failed {
			rejected++
		} else {
			model = next
		}
		checkIndexEntries(t, h.actor, table, uniq, multi)
	}
	if rejected < 50 {
		t.Fatalf("only %d commits rejected", rejected)
	}
	// A read through the unique index (a = 3, a IN (1, 5)) and the other
	// ((b = 'y' AND a > 2)) reads only the rows it names.
	check := func(ranges []KeyRange, keep func(v val) bool) {
		t.Helper()
		before := h.actor.stats.ReadRows
		res := h.ask(Read{CatalogVersion: v2.Version, Relations: []catalog.ID{table.ID}, Ranges: [][]KeyRange{ranges}}).(ReadResult)
		var got, want []string
		for _, r := range res.Batches[0].Rows {
			got = append(got, fmt.Sprint(r[0]))
		}
		for k, v := range model { //lint:maprange sorted below
			if keep(v) {
				want = append(want, fmt.Sprint(k))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("read by %v: %v, want %v", ranges, got, want)
		}
		if n := h.actor.stats.ReadRows - before; n != uint64(len(want)) {
			t.Fatalf("read by %v read %d rows, want %d", ranges, n, len(want))
		}
	}
	check([]KeyRange{{Index: uniq.ID, Eq: types.Row{int64(3)}}}, func(v val) bool { return v.a != nil && *v.a == 3 })
	check([]KeyRange{{Index: uniq.ID, Eq: types.Row{int64(1)}}, {Index: uniq.ID, Eq: types.Row{int64(5)}}}, func(v val) bool { return v.a != nil && (*v.a == 1 || *v.a == 5) })
	check([]KeyRange{{Index: multi.ID, Eq: types.Row{"y"}, Lo: int64(2), LoOpen: true}}, func(v val) bool { return v.b == "y" && (v.a == nil || *v.a > 2) })
	// A restart keeps the entries (the marker says they are built).
	h.start()
	checkIndexEntries(t, h.actor, table, uniq, multi)
	// Dropping the indexes deletes their entries and markers.
	h.snap, h.control = v3, v3
	h.ask(SyncCatalog{Catalog: v3.Value()})
	for _, p := range [][]byte{indexPrefix(uniq.ID), indexPrefix(multi.ID), indexBuiltKey(uniq.ID)} {
		if err := kv.ScanPrefix(h.store, p, func(k, _ []byte) error { return fmt.Errorf("key %x left after DROP INDEX", k) }); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUniqueIndexBuildRefusesDuplicates: a shard building a unique index
// over duplicated non-NULL values refuses the catalog (23505, could not
// create unique index) and writes no entry.
func TestUniqueIndexBuildRefusesDuplicates(t *testing.T) {
	v1, v2, _, table, uniq, _ := indexedSnapshots()
	h := &harness{t: t, store: kv.NewMemory(), snap: v1, table: table}
	h.start()
	h.ask(Commit{CatalogVersion: v1.Version, Writes: []RowWrite{
		{Table: table.ID, Key: types.Row{int64(1)}, Row: types.Row{int64(1), int64(7), "x"}},
		{Table: table.ID, Key: types.Row{int64(2)}, Row: types.Row{int64(2), int64(7), "y"}},
	}})
	h.ctx.reply = nil
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: v2.Value()})
	err, ok := h.ctx.reply.(error)
	if !ok || !containsState(err, "23505") || !bytes.Contains([]byte(err.Error()), []byte(`could not create unique index "t_a_key"`)) {
		t.Fatalf("building a unique index over duplicates: %v", h.ctx.reply)
	}
	if err := kv.ScanPrefix(h.store, []byte{kv.PrefixShardMeta, metaIndexEntry}, func(k, _ []byte) error { return fmt.Errorf("entry %x written", k) }); err != nil {
		t.Fatal(err)
	}
	_ = uniq
}

// BenchmarkTableInsertIndexed is BenchmarkTableInsertKeyed into a table
// with an index on a second column (each row's value distinct), unique or
// not: the cost of writing (and checking) the entries.
//
//	go test ./actors/shard -run '^$' -bench 'TableInsert(Keyed|Indexed)' -benchtime 20x
func BenchmarkTableInsertIndexed(b *testing.B) {
	b.Run("unique", func(b *testing.B) { benchInsertIndexed(b, true) })
	b.Run("plain", func(b *testing.B) { benchInsertIndexed(b, false) })
}

func benchInsertIndexed(b *testing.B, unique bool) {
	benchStores(b, func(b *testing.B, open func() kv.Store) {
		s := newBenchShard(b, open)
		idx := &catalog.Relation{ID: catalog.ID{Object: catalog.ObjectID{0: 0x7f, 15: 1}}, Kind: catalog.KindIndex, Name: "t_v_key",
			Index: &catalog.Index{Table: s.keyed.ID, Unique: unique, Columns: []catalog.IndexColumn{{Column: "v"}}}}
		keyed, bare := *s.keyed, *s.bare
		s.snap = control.NewSnapshot(catalog.NamespaceID{}, 2, &keyed, &bare, idx)
		s.ask(SyncCatalog{Catalog: s.snap.Value()})
		next := int64(0)
		cpu := cpuNanos()
		for b.Loop() {
			var writes []RowWrite
			for k := next; k < next+10_000; k++ {
				writes = append(writes, RowWrite{Table: keyed.ID, Row: types.Row{k, k, "some text value"}, MustNotExist: true})
			}
			s.ask(Commit{CatalogVersion: s.snap.Version, Writes: writes})
			next += 10_000
		}
		report(b, cpu, int(next), "row")
	})
}

// TestPlainIndexEntriesFollowCommits: an index that is not unique is
// written in direct mode (no overlay); random commits, some writing a row
// twice, keep its entries one per row.
func TestPlainIndexEntriesFollowCommits(t *testing.T) {
	v1, _, _, table, _, multi := indexedSnapshots()
	tv := *table
	v2 := control.NewSnapshot(catalog.NamespaceID{}, 2, &tv, multi)
	h := &harness{t: t, store: kv.NewMemory(), snap: v1, table: table}
	h.start()
	h.snap, h.control = v2, v2
	h.ask(SyncCatalog{Catalog: v2.Value()})
	if h.actor.writesUnique(Commit{Writes: []RowWrite{{Table: table.ID}}}) {
		t.Fatal("a table with only a plain index commits in exact mode")
	}
	rng := rand.New(rand.NewPCG(5, 1))
	for i := 0; i < 300; i++ {
		var writes []RowWrite
		for n := 1 + rng.IntN(4); n > 0; n-- {
			k := int64(rng.IntN(10))
			if rng.IntN(4) == 0 {
				writes = append(writes, RowWrite{Table: table.ID, Key: types.Row{k}})
				continue
			}
			var a any
			if rng.IntN(5) > 0 {
				a = int64(rng.IntN(4))
			}
			writes = append(writes, RowWrite{Table: table.ID, Key: types.Row{k}, Row: types.Row{k, a, string(rune('x' + rng.IntN(2)))}})
		}
		h.ask(Commit{CatalogVersion: v2.Version, Writes: writes})
		checkIndexEntries(t, h.actor, table, multi)
	}
}
