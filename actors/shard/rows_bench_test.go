package shard

import (
	"testing"

	"github.com/rockstream/rockstream/actors/control"
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

func newBenchShard(b *testing.B) *benchShard {
	keyed := &catalog.Relation{Kind: catalog.KindTable, Name: "t", PrimaryKey: []int{0}, Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8, NotNull: true}, {Name: "v", Type: types.TInt4}, {Name: "s", Type: types.TText},
	}}
	bare := &catalog.Relation{Kind: catalog.KindTable, Name: "u", Columns: []catalog.Column{
		{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt4}, {Name: "s", Type: types.TText},
	}}
	snap := control.NewSnapshot(catalog.NamespaceID{}, 1, keyed, bare)
	store := kv.NewMemory()
	s := &benchShard{b: b, ctx: &testCtx{store: objstore.NewMemory()}, snap: snap, keyed: keyed, bare: bare}
	s.actor = New(Config{OpenStore: func(runtime.Context) (kv.Store, error) { return store, nil }, Planner: sumPlanner{table: keyed}})().(*Actor)
	s.actor.Receive(s.ctx, runtime.Started{})
	s.ask(SyncCatalog{Snapshot: snap})
	return s
}

func (s *benchShard) ask(m runtime.Message) runtime.Message {
	s.ctx.reply = nil
	s.actor.Receive(s.ctx, m)
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
		s.ask(Commit{Snapshot: s.snap, Writes: writes})
	}
}

func BenchmarkTableScan(b *testing.B) {
	s := newBenchShard(b)
	s.fill(s.keyed, 0, benchTableRows)
	b.ResetTimer()
	for b.Loop() {
		res := s.ask(Read{Snapshot: s.snap, Relations: []catalog.ID{s.keyed.ID}}).(ReadResult)
		if len(res.Batches[0].Rows) != benchTableRows {
			b.Fatalf("%d rows", len(res.Batches[0].Rows))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchTableRows), "ns/row")
}

func BenchmarkTableLookup(b *testing.B) {
	s := newBenchShard(b)
	s.fill(s.keyed, 0, benchTableRows)
	keys := make([]types.Row, 1000)
	for i := range keys {
		keys[i] = types.Row{int64(i * 97 % benchTableRows)}
	}
	b.ResetTimer()
	for b.Loop() {
		res := s.ask(Lookup{Snapshot: s.snap, Table: s.keyed.ID, Keys: keys}).(LookupResult)
		if res.Rows[1] == nil {
			b.Fatal("key not found")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}

func BenchmarkTableInsertKeyed(b *testing.B) {
	s := newBenchShard(b)
	next := int64(0)
	for b.Loop() {
		s.fill(s.keyed, next, next+10_000)
		next += 10_000
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(next), "ns/row")
}

func BenchmarkTableInsertKeyless(b *testing.B) {
	s := newBenchShard(b)
	next := int64(0)
	for b.Loop() {
		s.fill(s.bare, next, next+10_000)
		next += 10_000
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(next), "ns/row")
}
