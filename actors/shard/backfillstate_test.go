package shard

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/ivm/kv"
)

// TestBackfillStateCompactsRewrites: held state whose bytes outgrow the
// bound through rewrites (the same keys written chunk after chunk, some
// deleted) is rebuilt from its live entries instead of being flushed, and
// reads the same afterwards; state whose live entries fill the bound is
// flushed.
func TestBackfillStateCompactsRewrites(t *testing.T) {
	prefix := []byte{kv.PrefixOpState, 1}
	key := func(i int) []byte { return append(append([]byte(nil), prefix...), byte(i)) }
	empty := kv.NewMemory()
	s := &backfillState{held: kv.NewTxn(empty), base: empty, prefixes: [][]byte{prefix}, bytesMax: 1000, judgeOps: 1 << 20}
	for round := 0; round < 40; round++ {
		batch := &kv.WriteBatch{}
		for i := 0; i < 4; i++ {
			batch.Ops = append(batch.Ops, kv.Op{Key: key(i), Value: []byte(fmt.Sprintf("value-%02d", round))})
		}
		batch.Ops = append(batch.Ops, kv.Op{Key: key(9), Delete: true})
		if round%2 == 0 {
			batch.Ops[len(batch.Ops)-1] = kv.Op{Key: key(9), Value: []byte("x")}
		}
		if _, err := s.keepState(batch); err != nil {
			t.Fatal(err)
		}
		if s.flush {
			t.Fatalf("round %d: flushed %d held bytes of four live keys, want them compacted", round, s.bytes)
		}
	}
	if s.bytes > s.bytesMax {
		t.Fatalf("held bytes %d after compactions, want at most %d", s.bytes, s.bytesMax)
	}
	for i := 0; i < 4; i++ {
		if v, ok, err := s.held.Get(key(i)); err != nil || !ok || string(v) != "value-39" {
			t.Fatalf("key %d = %q %v %v after compactions, want value-39", i, v, ok, err)
		}
	}
	if _, ok, _ := s.held.Get(key(9)); ok {
		t.Fatal("deleted key 9 is held after compactions")
	}
	if s.entries != 4 {
		t.Fatalf("%d held entries, want 4", s.entries)
	}
	// Live entries past half the bound: flushed, not compacted.
	batch := &kv.WriteBatch{}
	for i := 10; i < 60; i++ {
		batch.Ops = append(batch.Ops, kv.Op{Key: key(i), Value: []byte("a-long-enough-value")})
	}
	if _, err := s.keepState(batch); err != nil {
		t.Fatal(err)
	}
	if !s.flush {
		t.Fatalf("%d live held bytes (bound %d) were not flushed", s.bytes, s.bytesMax)
	}
}

// deferRecorder is a store that records the compaction deferrals a shard
// asks of it, at each storage tick.
type deferRecorder struct {
	kv.Store
	deferred []bool
}

func (d *deferRecorder) DeferCompaction(on bool) { d.deferred = append(d.deferred, on) }

// TestBackfillDefersCompaction: storage ticks while a view's backfill runs,
// or while the shard exports tables for one, defer the store's
// compactions; the first tick after resumes them.
func TestBackfillDefersCompaction(t *testing.T) {
	h, next, _ := backfillHarness(t, false, 40)
	rec := &deferRecorder{Store: h.store}
	h.actor.store = rec
	h.actor.cfg.BackfillRowsPerChunkMax = 3
	h.actor.Receive(h.ctx, storageTick{})
	h.snap = next
	h.ctx.tag = "sync"
	h.actor.Receive(h.ctx, SyncCatalog{Catalog: next.Value()})
	h.ctx.tag = ""
	if !h.deliverOne(isChunk) {
		t.Fatal("no backfill chunk queued")
	}
	h.actor.Receive(h.ctx, storageTick{})
	for len(h.syncAnswers()) == 0 && h.deliverOne(isChunk) {
	}
	if len(h.syncAnswers()) == 0 {
		t.Fatal("the backfill did not end")
	}
	h.actor.Receive(h.ctx, storageTick{})
	// A table shard exporting tables for a view shard's backfill.
	h.actor.exports = []*export{{release: func() {}}}
	h.actor.Receive(h.ctx, storageTick{})
	h.actor.dropExports()
	h.actor.Receive(h.ctx, storageTick{})
	if want := []bool{false, true, false, true, false}; fmt.Sprint(rec.deferred) != fmt.Sprint(want) {
		t.Fatalf("compaction deferred %v at the ticks before, during and after the backfill, during and after an export, want %v", rec.deferred, want)
	}
}

// ingestRecorder is a store that ingests (SortedIngester) by applying, and
// records whether each ingested batch was marked Immutable.
type ingestRecorder struct {
	kv.Store
	immutable []bool
}

func (r *ingestRecorder) Ingest(b *kv.WriteBatch) error {
	r.immutable = append(r.immutable, b.Immutable)
	return r.Store.Apply(b)
}

// TestBackfillIngestsHeldStateWithoutCopy: the held state a backfill
// ingests is handed to the store as Immutable (it is dropped after, never
// changed), so the store does not copy a million keys and values first.
func TestBackfillIngestsHeldStateWithoutCopy(t *testing.T) {
	h, next, view := backfillHarness(t, false, backfillIngestEntriesMin+100)
	rec := &ingestRecorder{Store: h.store}
	h.actor.store = rec
	h.snap = next
	h.ask(SyncCatalog{Catalog: next.Value()})
	if len(rec.immutable) == 0 {
		t.Fatal("the backfill ingested nothing")
	}
	for i, immutable := range rec.immutable {
		if !immutable {
			t.Fatalf("ingest %d of the held state was not marked Immutable", i)
		}
	}
	if got := h.view(view); len(got) != backfillIngestEntriesMin+100 {
		t.Fatalf("view has %d groups", len(got))
	}
}
