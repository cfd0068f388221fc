package slate

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// requestCounter counts every object-store request.
type requestCounter struct {
	objstore.Store
	n int
}

func (c *requestCounter) Get(ctx context.Context, key string) (objstore.Object, error) {
	c.n++
	return c.Store.Get(ctx, key)
}
func (c *requestCounter) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	c.n++
	return c.Store.GetRange(ctx, key, off, n)
}
func (c *requestCounter) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	c.n++
	return c.Store.Put(ctx, key, data)
}
func (c *requestCounter) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	c.n++
	return c.Store.PutIfAbsent(ctx, key, data)
}
func (c *requestCounter) PutIfMatch(ctx context.Context, key string, data []byte, m objstore.Version) (objstore.Version, error) {
	c.n++
	return c.Store.PutIfMatch(ctx, key, data, m)
}
func (c *requestCounter) Delete(ctx context.Context, key string) error {
	c.n++
	return c.Store.Delete(ctx, key)
}
func (c *requestCounter) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	c.n++
	return c.Store.List(ctx, prefix)
}

// TestTickIdleAndCommitRequests: the sole writer's Tick with nothing to do
// makes no object-store request (no manifest polling), and a durable write
// costs exactly one (its WAL object), also with the embedded compactor on.
func TestTickIdleAndCommitRequests(t *testing.T) {
	ctx := context.Background()
	store := &requestCounter{Store: objstore.NewMemory()}
	now := time.Unix(1_700_000_000, 0)
	db, err := Open(ctx, store, "db", Options{InstanceID: "w", AutoCompact: true, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := db.Put(ctx, []byte{byte(i)}, []byte("v"), WriteOptions{AwaitDurable: true}); err != nil {
			t.Fatal(err)
		}
		// The first Tick may open the embedded compactor; later ones are idle.
		now = now.Add(100 * time.Millisecond)
		if err := db.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	before := store.n
	for i := 0; i < 10; i++ {
		now = now.Add(100 * time.Millisecond)
		if err := db.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	if got := store.n - before; got != 0 {
		t.Fatalf("10 idle Ticks made %d object-store requests, want 0", got)
	}
	before = store.n
	if _, err := db.Put(ctx, []byte("k"), []byte("v"), WriteOptions{AwaitDurable: true}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(100 * time.Millisecond)
	if err := db.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	if got := store.n - before; got != 1 {
		t.Fatalf("a durable write plus a Tick made %d requests, want 1 (the WAL object)", got)
	}
	// Compaction still happens when due: flush enough L0s to trigger it.
	for i := 0; i < 2*defaultL0Trigger(db); i++ {
		if _, err := db.Put(ctx, []byte{byte(i)}, []byte("w"), WriteOptions{AwaitDurable: true}); err != nil {
			t.Fatal(err)
		}
		if err := db.FlushMemtable(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(100 * time.Millisecond)
		if err := db.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
	}
	if len(db.Manifest().SortedRuns) == 0 {
		t.Fatal("no compaction ran although L0 passed the trigger")
	}
}

func defaultL0Trigger(db *DB) int { return db.opts.L0CompactionTrigger }
