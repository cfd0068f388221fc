package slate

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
	"pgregory.net/rapid"
)

// modelState is the reference: the full key→value map after each seq.
type modelState map[string]int64

// model is an in-memory versioned map: states[seq] is the database after
// batch seq. Values are int64 so merges (sums) apply to puts too.
type model struct {
	states []modelState // states[0] is empty
}

func (m *model) last() modelState { return m.states[len(m.states)-1] }

type modelOp struct {
	kind Kind
	key  string
	n    int64
}

func (m *model) apply(ops []modelOp) {
	next := modelState{}
	//lint:maprange copying a map; order is irrelevant.
	for k, v := range m.last() {
		next[k] = v
	}
	for _, op := range ops {
		switch op.kind {
		case KindValue:
			next[op.key] = op.n
		case KindTombstone:
			delete(next, op.key)
		case KindMerge:
			next[op.key] += op.n // missing key: no base, the operand itself
		}
	}
	m.states = append(m.states, next)
}

func (m *model) truncate(seq uint64) { m.states = m.states[:seq+1] }

func render(s modelState) string {
	keys := make([]string, 0, len(s))
	//lint:maprange keys are sorted below.
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		out += fmt.Sprintf("%s=%d ", k, s[k])
	}
	return out
}

func renderScan(t interface{ Fatalf(string, ...any) }, it *Iterator) string {
	out := ""
	var prev []byte
	for it.Next() {
		if prev != nil && string(it.Key()) <= string(prev) {
			t.Fatalf("scan out of order: %q after %q", it.Key(), prev)
		}
		prev = append(prev[:0], it.Key()...)
		out += fmt.Sprintf("%s=%d ", it.Key(), int64(binary.LittleEndian.Uint64(it.Value())))
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func renderRange(s modelState, start, end string) string {
	sub := modelState{}
	//lint:maprange filtering into a map that render sorts.
	for k, v := range s {
		if k >= start && (end == "" || k < end) {
			sub[k] = v
		}
	}
	return render(sub)
}

// TestModel runs random operations against slate and the versioned-map model:
// puts, deletes, merges, batches, snapshots, WAL and memtable flushes,
// compactions, GC and reopens (which keep exactly the durable prefix).
func TestModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		store := objstore.NewMemory()
		clock := newTestClock()
		opts := Options{
			MergeOperator:       sumOperator,
			Clock:               clock.now,
			MemtableBytesMax:    int64(rapid.IntRange(64, 2048).Draw(rt, "memtableBytes")),
			BlockBytes:          rapid.IntRange(16, 512).Draw(rt, "blockBytes"),
			SSTBytesTarget:      int64(rapid.IntRange(64, 4096).Draw(rt, "sstBytes")),
			L0CompactionTrigger: rapid.IntRange(1, 4).Draw(rt, "l0Trigger"),
			SizeTierMinRuns:     rapid.IntRange(2, 4).Draw(rt, "minRuns"),
			BlockCacheBytes:     int64(rapid.IntRange(-1, 8192).Draw(rt, "cacheBytes")),
			Compression:         rapid.SampledFrom(allCompressions).Draw(rt, "compression"),
			UnflushedBytesMax:   1 << 30,
			L0MaxSSTs:           1 << 20,
		}
		d, err := Open(ctx, store, "db", opts)
		if err != nil {
			rt.Fatal(err)
		}
		m := &model{states: []modelState{{}}}
		type snap struct {
			s   *Snapshot
			seq uint64
		}
		var snaps []snap
		keyGen := rapid.SampledFrom([]string{"a", "b", "c", "d", "e", "ab", "ba"})
		check := func(label string) {
			for _, s := range snaps {
				got := renderScan(rt, d.Scan(ctx, nil, nil, ReadOptions{Snapshot: s.s}))
				if want := render(m.states[s.seq]); got != want {
					rt.Fatalf("%s: snapshot@%d scan = %q, want %q", label, s.seq, got, want)
				}
			}
		}
		drawBatch := func(rt *rapid.T) (*Batch, []modelOp) {
			var b Batch
			var ops []modelOp
			n := rapid.IntRange(1, 4).Draw(rt, "ops")
			for i := 0; i < n; i++ {
				k := keyGen.Draw(rt, "key")
				v := int64(rapid.IntRange(-3, 9).Draw(rt, "v"))
				switch rapid.IntRange(0, 2).Draw(rt, "kind") {
				case 0:
					b.Put([]byte(k), i64(v))
					ops = append(ops, modelOp{KindValue, k, v})
				case 1:
					b.Delete([]byte(k))
					ops = append(ops, modelOp{KindTombstone, k, 0})
				case 2:
					b.Merge([]byte(k), i64(v))
					ops = append(ops, modelOp{KindMerge, k, v})
				}
			}
			return &b, ops
		}
		rt.Repeat(map[string]func(*rapid.T){
			"write": func(rt *rapid.T) {
				b, ops := drawBatch(rt)
				durable := rapid.Bool().Draw(rt, "durable")
				seq, err := d.Write(ctx, b, WriteOptions{AwaitDurable: durable})
				if err != nil {
					rt.Fatal(err)
				}
				m.apply(ops)
				if seq != uint64(len(m.states)-1) {
					rt.Fatalf("seq %d, model %d", seq, len(m.states)-1)
				}
				if durable && d.DurableSeq() < seq {
					rt.Fatalf("AwaitDurable returned with durable seq %d < %d", d.DurableSeq(), seq)
				}
			},
			"ingest": func(rt *rapid.T) {
				// A batch straight to L0: durable at once, and read,
				// flushed, compacted and snapshotted like a written one.
				b, ops := drawBatch(rt)
				clock.advance(time.Second)
				seq, err := d.Ingest(ctx, b)
				if err != nil {
					rt.Fatal(err)
				}
				m.apply(ops)
				if seq != uint64(len(m.states)-1) {
					rt.Fatalf("ingest seq %d, model %d", seq, len(m.states)-1)
				}
				if d.DurableSeq() < seq {
					rt.Fatalf("ingest returned with durable seq %d < %d", d.DurableSeq(), seq)
				}
				check("after ingest")
			},
			"get": func(rt *rapid.T) {
				k := keyGen.Draw(rt, "key")
				v, ok, err := d.Get(ctx, []byte(k), ReadOptions{})
				if err != nil {
					rt.Fatal(err)
				}
				want, wantOK := m.last()[k]
				if ok != wantOK || (ok && int64(binary.LittleEndian.Uint64(v)) != want) {
					rt.Fatalf("get %q = %v %v, want %d %v", k, v, ok, want, wantOK)
				}
			},
			"scan": func(rt *rapid.T) {
				start := rapid.SampledFrom([]string{"", "a", "ab", "b", "c"}).Draw(rt, "start")
				end := rapid.SampledFrom([]string{"", "b", "bb", "d", "z"}).Draw(rt, "end")
				var endKey []byte
				if end != "" {
					endKey = []byte(end)
				}
				got := renderScan(rt, d.Scan(ctx, []byte(start), endKey, ReadOptions{}))
				if want := renderRange(m.last(), start, end); got != want {
					rt.Fatalf("scan [%q,%q) = %q, want %q", start, end, got, want)
				}
			},
			"prefix": func(rt *rapid.T) {
				p := rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "prefix")
				got := renderScan(rt, d.Scan(ctx, []byte(p), PrefixEnd([]byte(p)), ReadOptions{}))
				if want := renderRange(m.last(), p, string(PrefixEnd([]byte(p)))); got != want {
					rt.Fatalf("prefix %q = %q, want %q", p, got, want)
				}
			},
			"snapshot": func(rt *rapid.T) {
				if len(snaps) < 3 {
					s := d.Snapshot()
					snaps = append(snaps, snap{s, s.Seq()})
				}
			},
			"release": func(rt *rapid.T) {
				if len(snaps) > 0 {
					i := rapid.IntRange(0, len(snaps)-1).Draw(rt, "i")
					snaps[i].s.Release()
					snaps = append(snaps[:i], snaps[i+1:]...)
				}
			},
			"flushWAL": func(rt *rapid.T) {
				if err := d.FlushWAL(ctx); err != nil {
					rt.Fatal(err)
				}
			},
			"flushMemtable": func(rt *rapid.T) {
				clock.advance(time.Second)
				if err := d.FlushMemtable(ctx); err != nil {
					rt.Fatal(err)
				}
				check("after flush")
			},
			"compact": func(rt *rapid.T) {
				clock.advance(time.Second)
				var err error
				if rapid.Bool().Draw(rt, "all") {
					_, err = d.CompactAll(ctx)
				} else {
					_, err = d.Compact(ctx)
				}
				if err != nil {
					rt.Fatal(err)
				}
				check("after compaction")
			},
			"gc": func(rt *rapid.T) {
				clock.advance(time.Hour) // past the compaction checkpoints
				if _, err := d.GC(ctx, clock.now()); err != nil {
					rt.Fatal(err)
				}
				check("after gc")
			},
			"reopen": func(rt *rapid.T) {
				// A crash: memory is lost, the durable prefix survives.
				durable := d.DurableSeq()
				for _, s := range snaps {
					s.s.Release()
				}
				snaps = nil
				// Objects keep the codec they were written with: another
				// one may read and write beside them.
				opts.Compression = rapid.SampledFrom(allCompressions).Draw(rt, "compression")
				d, err = Open(ctx, store, "db", opts)
				if err != nil {
					rt.Fatal(err)
				}
				m.truncate(durable)
				if d.LastSeq() != durable {
					rt.Fatalf("reopen: last seq %d, durable was %d", d.LastSeq(), durable)
				}
			},
			"": func(rt *rapid.T) {
				got := renderScan(rt, d.Scan(ctx, nil, nil, ReadOptions{}))
				if want := render(m.last()); got != want {
					rt.Fatalf("full scan = %q, want %q", got, want)
				}
				check("invariant")
			},
		})
	})
}
