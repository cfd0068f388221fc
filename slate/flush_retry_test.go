package slate

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// boundaryFailStore fails the next read of the manifest GC boundary once
// armed: the read a manifest commit makes right after its create
// succeeded, so the commit is reported failed although it landed.
type boundaryFailStore struct {
	objstore.Store
	armed bool
}

func (s *boundaryFailStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	if s.armed && strings.HasSuffix(key, "manifest.boundary") {
		s.armed = false
		return objstore.Object{}, errors.New("injected transient failure")
	}
	return s.Store.Get(ctx, key)
}

func sumOf(t *testing.T, ctx context.Context, d *DB, key string) int64 {
	t.Helper()
	v, ok, err := d.Get(ctx, []byte(key), ReadOptions{})
	if err != nil || !ok {
		t.Fatalf("get %q: %v %v", key, ok, err)
	}
	return int64(binary.LittleEndian.Uint64(v))
}

// TestFlushReportedFailedCountsMergesOnce: a memtable flush whose manifest
// commit landed but was reported failed (the read after the create
// failed) leaves the memtable held while the manifest lists its L0 SST.
// Merge operands must still be counted once: when the writer's manifest
// is refreshed (it lists the SST), and when the flush is tried again (a
// snapshot released in between folds the operands differently the
// second time, so the two SSTs would not shadow each other).
func TestFlushReportedFailedCountsMergesOnce(t *testing.T) {
	ctx := context.Background()
	for _, retry := range []bool{false, true} {
		store := &boundaryFailStore{Store: objstore.NewMemory()}
		d, err := Open(ctx, store, "db", testOptions(newTestClock()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Merge(ctx, []byte("m"), i64(1), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		var snap *Snapshot
		if retry {
			snap = d.Snapshot() // the first flush keeps the operands apart
		}
		if _, err := d.Merge(ctx, []byte("m"), i64(2), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		store.armed = true
		if err := d.FlushMemtable(ctx); err == nil {
			t.Fatal("the flush whose commit read failed reported success")
		}
		if retry {
			snap.Release()
			if err := d.FlushMemtable(ctx); err != nil {
				t.Fatalf("flush again: %v", err)
			}
		} else if err := d.RefreshManifest(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sumOf(t, ctx, d, "m"); got != 3 {
			t.Fatalf("retry=%v: merge operands 1 and 2 read as %d, want 3", retry, got)
		}
		if err := d.FlushMemtable(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := d.CompactAll(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sumOf(t, ctx, d, "m"); got != 3 {
			t.Fatalf("retry=%v: after compaction %d, want 3", retry, got)
		}
	}
}
