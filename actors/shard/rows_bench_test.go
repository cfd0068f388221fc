package shard

import (
	"context"
	"syscall"
	"testing"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/runtime"
	"github.com/rockstream/rockstream/slate/objstore"
)

// Base-table benchmarks: what a bucket in every row key costs writes
// (hashing the key), point reads (the same) and full table scans (which
// read bucket after bucket rather than in primary-key order).
//
//	go test ./actors/shard -run '^$' -bench 'Table' -benchtime 20x

const benchTableRows = 100_000

type benchShard struct {
	b     *testing.B
	ctx   *testCtx
	actor *Actor
	snap  *control.Snapshot
	keyed *catalog.Relation
	bare  *catalog.Relation
}

// benchStores are the stores the benchmarks run on: the in-memory test
// store, and slate (the real one) over an in-memory object store.
func benchStores(b *testing.B, fn func(b *testing.B, open func() kv.Store)) {
	b.Run("memory", func(b *testing.B) { fn(b, func() kv.Store { return kv.NewMemory() }) })
	b.Run("slate", func(b *testing.B) {
		fn(b, func() kv.Store {
			db, err := storage.Open(context.Background(), objstore.NewMemory(), "shards/0", storage.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Close() })
			return db
		})
	})
}

func newBenchShard(b *testing.B, open func() kv.Store) *benchShard {
	keyed := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4}, {Name: "s", Type: types.TText},
	}}
	bare := &catalog.Relation{Kind: catalog.KindTable, Name: "u", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt4}, {Name: "s", Type: types.TText},
	}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, keyed, bare)
	store := open()
	s := &benchShard{b: b, ctx: &testCtx{store: objstore.NewMemory()}, snap: snap, keyed: keyed, bare: bare}
	s.actor = New(Config{OpenStore: func(runtime.Context) (kv.Store, error) { return store, nil }, Planner: sumPlanner{table: keyed}})().(*Actor)
	s.actor.Receive(s.ctx, runtime.Started{})
	s.ask(SyncCatalog{Catalog: snap.Value()})
	return s
}

func (s *benchShard) ask(m runtime.Message) runtime.Message {
	s.ctx.reply = nil
	s.actor.Receive(s.ctx, m)
	for s.ctx.reply == nil && len(s.ctx.self) > 0 {
		// A deferred (group-commit) reply: deliver the queued flush.
		next := s.ctx.self[0]
		s.ctx.self = s.ctx.self[1:]
		s.actor.Receive(s.ctx, next)
	}
	if err, ok := s.ctx.reply.(error); ok {
		s.b.Fatal(err)
	}
	s.ctx.self = nil // no views: the epoch steps have nothing to do
	return s.ctx.reply
}

// fill commits rows [from, to) of table rel in commits of 10,000.
func (s *benchShard) fill(rel *catalog.Relation, from, to int64) {
	for lo := from; lo < to; lo += 10_000 {
		var writes []RowWrite
		for k := lo; k < min(lo+10_000, to); k++ {
			writes = append(writes, RowWrite{Table: rel.ID, Row: types.Row{k, k % 1000, "some text value"}, MustNotExist: len(rel.PrimaryKey) > 0})
		}
		s.ask(Commit{CatalogVersion: s.snap.Version, Writes: writes})
	}
}

func BenchmarkTableScan(b *testing.B) {
	benchStores(b, func(b *testing.B, open func() kv.Store) {
		s := newBenchShard(b, open)
		s.fill(s.keyed, 0, benchTableRows)
		b.ResetTimer()
		cpu := cpuNanos()
		for b.Loop() {
			res := s.ask(Read{CatalogVersion: s.snap.Version, Relations: []catalog.ID{s.keyed.ID}}).(ReadResult)
			if len(res.Batches[0].Rows) != benchTableRows {
				b.Fatalf("%d rows", len(res.Batches[0].Rows))
			}
		}
		report(b, cpu, b.N*benchTableRows, "row")
	})
}

func BenchmarkTableLookup(b *testing.B) {
	benchStores(b, func(b *testing.B, open func() kv.Store) {
		s := newBenchShard(b, open)
		s.fill(s.keyed, 0, benchTableRows)
		keys := make([]types.Row, 1000)
		for i := range keys {
			keys[i] = types.Row{int64(i * 97 % benchTableRows)}
		}
		b.ResetTimer()
		cpu := cpuNanos()
		for b.Loop() {
			res := s.ask(Lookup{CatalogVersion: s.snap.Version, Table: s.keyed.ID, Keys: keys}).(LookupResult)
			if res.Rows[1] == nil {
				b.Fatal("key not found")
			}
		}
		report(b, cpu, b.N*len(keys), "key")
	})
}

func BenchmarkTableInsertKeyed(b *testing.B) {
	benchInsert(b, func(s *benchShard) *catalog.Relation { return s.keyed })
}

func BenchmarkTableInsertKeyless(b *testing.B) {
	benchInsert(b, func(s *benchShard) *catalog.Relation { return s.bare })
}

// benchInsert commits 10,000 rows into table(s) per iteration.
func benchInsert(b *testing.B, table func(s *benchShard) *catalog.Relation) {
	benchStores(b, func(b *testing.B, open func() kv.Store) {
		s := newBenchShard(b, open)
		next := int64(0)
		cpu := cpuNanos()
		for b.Loop() {
			s.fill(table(s), next, next+10_000)
			next += 10_000
		}
		report(b, cpu, int(next), "row")
	})
}

// cpuNanos is the process's CPU time (user and system): on a shared
// machine it varies far less than wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// report adds the wall and CPU time per unit since cpuStart.
func report(b *testing.B, cpuStart int64, units int, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(units), "ns/"+unit)
	b.ReportMetric(float64(cpuNanos()-cpuStart)/float64(units), "cpu-ns/"+unit)
}

// BenchmarkCommitBulk: one commit of 200,000 keyed rows in key order, each
// write carrying its key, as a COPY's commit writes them, on slate: into
// an empty table; into a table holding as many rows; and into that table
// naming the state its lookups found the keys absent in (Commit.Absent,
// absent.go), so the commit does not read them again. CPU per row of the
// commit alone (the commit is single-threaded).
//
//	go test ./actors/shard -run '^$' -bench CommitBulk -benchtime 3x
func BenchmarkCommitBulk(b *testing.B) {
	const rows = 200_000
	for _, into := range []string{"empty", "full", "full+absent"} {
		b.Run(into, func(b *testing.B) {
			var cpu int64
			for range b.N {
				b.StopTimer()
				db, err := storage.Open(context.Background(), objstore.NewMemory(), "shards/0", storage.Options{})
				if err != nil {
					b.Fatal(err)
				}
				s := newBenchShard(b, func() kv.Store { return db })
				from := int64(0)
				if into != "empty" {
					s.fill(s.keyed, 0, rows)
					from = rows
				}
				writes := make([]RowWrite, rows)
				for i := range writes {
					k := from + int64(i)
					writes[i] = RowWrite{Table: s.keyed.ID, Key: types.Row{k}, Row: types.Row{k, k % 1000, "some text value"}, MustNotExist: true}
				}
				m := Commit{CatalogVersion: s.snap.Version, Writes: writes}
				if into == "full+absent" {
					m.Absent = []TableAbsent{{Table: s.keyed.ID, Seen: LookupSeen{Epoch: s.actor.lastEpoch, Catalog: s.snap.Version}}}
				}
				b.StartTimer()
				start := cpuNanos()
				s.ask(m)
				cpu += cpuNanos() - start
				b.StopTimer()
				_ = db.Close()
			}
			b.ReportMetric(float64(cpu)/float64(b.N*rows), "cpu-ns/row")
		})
	}
}
