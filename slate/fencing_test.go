package slate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// hookStore runs hook just before its at-th call: it pauses the caller at
// that protocol step while another party acts.
type hookStore struct {
	objstore.Store
	calls int
	at    int
	hook  func()
}

func (h *hookStore) tick() {
	h.calls++
	if h.calls == h.at && h.hook != nil {
		h.hook()
	}
}
func (h *hookStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	h.tick()
	return h.Store.Get(ctx, key)
}
func (h *hookStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	h.tick()
	return h.Store.GetRange(ctx, key, off, n)
}
func (h *hookStore) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	h.tick()
	return h.Store.Put(ctx, key, data)
}
func (h *hookStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	h.tick()
	return h.Store.PutIfAbsent(ctx, key, data)
}
func (h *hookStore) PutIfMatch(ctx context.Context, key string, data []byte, v objstore.Version) (objstore.Version, error) {
	h.tick()
	return h.Store.PutIfMatch(ctx, key, data, v)
}
func (h *hookStore) Delete(ctx context.Context, key string) error {
	h.tick()
	return h.Store.Delete(ctx, key)
}
func (h *hookStore) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	h.tick()
	return h.Store.List(ctx, prefix)
}

// TestTwoWritersRace pauses a new writer B at every store call of its open
// (epoch claim, fence, replay, final refresh) and, while it is paused, lets
// the old writer A write durably, flush L0 and run GC with min_age 0. Then A
// keeps writing. Acknowledged writes must form one history: everything A
// acknowledged is visible to B, A acknowledges nothing once B is open, and
// WAL epochs never decrease along WAL ids.
func TestTwoWritersRace(t *testing.T) {
	ctx := context.Background()
	probe := &hookStore{Store: objstore.NewMemory()}
	clock := newTestClock()
	if _, err := Open(ctx, probe, "db", testOptions(clock)); err != nil {
		t.Fatal(err)
	}
	// Prime the probe with history, then count B's open calls.
	probe.calls = 0
	if _, err := Open(ctx, probe, "db", testOptions(clock)); err != nil {
		t.Fatal(err)
	}
	openCalls := probe.calls
	for at := 1; at <= openCalls+1; at++ {
		for _, aFlushes := range []bool{false, true} {
			inner := objstore.NewMemory()
			clock := newTestClock()
			a, err := Open(ctx, inner, "db", testOptions(clock))
			if err != nil {
				t.Fatal(err)
			}
			acked := map[string]bool{}
			aWrites := 0
			writeA := func() error {
				aWrites++
				k := fmt.Sprintf("a%03d", aWrites)
				_, err := a.Put(ctx, []byte(k), []byte("v"), WriteOptions{AwaitDurable: true})
				if err == nil {
					acked[k] = true
				}
				return err
			}
			for i := 0; i < 3; i++ {
				if err := writeA(); err != nil {
					t.Fatal(err)
				}
			}
			a.FlushMemtable(ctx)
			writeA()
			hs := &hookStore{Store: inner, at: at, hook: func() {
				writeA()
				if aFlushes {
					clock.advance(time.Hour)
					a.FlushMemtable(ctx)
					writeA()
					GC(ctx, inner, "db", clock.now(), GCOptions{InstanceID: "gc"})
				}
				writeA()
			}}
			b, err := Open(ctx, hs, "db", testOptions(clock))
			if err != nil {
				t.Fatalf("at=%d: B open: %v", at, err)
			}
			// A is fenced from now on, whatever it tries.
			if err := writeA(); !errors.Is(err, ErrFenced) {
				t.Fatalf("at=%d flush=%v: A wrote after B opened: %v", at, aFlushes, err)
			}
			if err := a.FlushMemtable(ctx); !errors.Is(err, ErrFenced) {
				t.Fatalf("at=%d: A flushed after B opened: %v", at, err)
			}
			//lint:maprange each key is checked independently.
			for k := range acked {
				if _, ok, err := b.Get(ctx, []byte(k), ReadOptions{}); err != nil || !ok {
					t.Fatalf("at=%d flush=%v: B lost A's acknowledged %s (err %v)", at, aFlushes, k, err)
				}
			}
			if _, err := b.Put(ctx, []byte("b"), []byte("v"), WriteOptions{AwaitDurable: true}); err != nil {
				t.Fatalf("at=%d: B write: %v", at, err)
			}
			// Epochs never decrease along WAL ids.
			infos, _ := inner.List(ctx, "db/wal/")
			var lastEpoch uint64
			for _, o := range infos {
				obj, _ := inner.Get(ctx, o.Key)
				id, _ := parseWALKey(o.Key[len("db/"):])
				w, err := decodeWAL(&decompressor{}, o.Key, id, obj.Data)
				if err != nil {
					t.Fatal(err)
				}
				if w.epoch < lastEpoch {
					t.Fatalf("at=%d: WAL %s has epoch %d after epoch %d", at, o.Key, w.epoch, lastEpoch)
				}
				lastEpoch = w.epoch
			}
		}
	}
}

// TestConcurrentManifestUpdaters: N parties each add a checkpoint through
// racing manifest commits; all land and manifest ids stay dense.
func TestConcurrentManifestUpdaters(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	clock := newTestClock()
	d, err := Open(ctx, store, "db", testOptions(clock))
	if err != nil {
		t.Fatal(err)
	}
	_ = d
	ps := objstore.Prefixed(store, "db")
	const parties = 8
	// Every party reads the same stale manifest, then commits in turn: each
	// loses to all earlier ones and must merge.
	stale, _ := latestManifest(ctx, ps)
	for p := 0; p < parties; p++ {
		p := p
		_, err := commitManifest(ctx, ps, stale, manifestUpdate{
			putID: fmt.Sprintf("party%d", p), nowMillis: 1,
			mutate: func(m *Manifest) error {
				m.Checkpoints = append(m.Checkpoints, Checkpoint{ID: fmt.Sprintf("cp%d", p), ManifestID: m.ID})
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	latest, _ := latestManifest(ctx, ps)
	if len(latest.Checkpoints) != parties {
		t.Fatalf("%d checkpoints, want %d", len(latest.Checkpoints), parties)
	}
	infos, _ := ps.List(ctx, "manifest/")
	for i, o := range infos {
		if id, _ := parseManifestKey(o.Key); id != uint64(i+1) {
			t.Fatalf("manifest ids not dense: %v", infos)
		}
	}
}

// TestCompactorFencing: a second compactor fences the first; the first's
// compaction in flight fails with ErrFenced at commit, and data is intact.
func TestCompactorFencing(t *testing.T) {
	ctx := context.Background()
	mem := objstore.NewMemory()
	clock := newTestClock()
	opts := testOptions(clock)
	opts.L0CompactionTrigger = 2
	d, _ := Open(ctx, mem, "db", opts)
	for i := 0; i < 60; i++ {
		d.Put(ctx, []byte(fmt.Sprintf("k%02d", i)), i64(int64(i)), WriteOptions{})
		if i%20 == 19 {
			clock.advance(time.Second)
			d.FlushMemtable(ctx)
		}
	}
	hs := &hookStore{Store: mem}
	old, err := OpenCompactor(ctx, hs, "db", opts)
	if err != nil {
		t.Fatal(err)
	}
	var newer *Compactor
	hs.calls, hs.at = 0, 6 // after the job commit, while merging
	hs.hook = func() {
		newer, err = OpenCompactor(ctx, mem, "db", opts)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.Compact(ctx, clock.now()); !errors.Is(err, ErrFenced) {
		t.Fatalf("fenced compactor committed: %v", err)
	}
	if newer == nil {
		t.Fatal("hook did not run")
	}
	if _, err := old.Compact(ctx, clock.now()); !errors.Is(err, ErrFenced) {
		t.Fatalf("fenced is terminal for compactors: %v", err)
	}
	if did, err := newer.Compact(ctx, clock.now()); err != nil || !did {
		t.Fatalf("new compactor: %v %v", did, err)
	}
	d.RefreshManifest(ctx)
	if n := len(scanAll(t, d.Scan(ctx, nil, nil, ReadOptions{}))); n != 60 {
		t.Fatalf("%d keys after compaction", n)
	}
	if len(d.Manifest().L0) != 0 || len(d.Manifest().SortedRuns) != 1 {
		t.Fatalf("manifest after compaction: %d L0, %d runs", len(d.Manifest().L0), len(d.Manifest().SortedRuns))
	}
}
