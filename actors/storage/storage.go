// Package storage adapts a slate database to the kv.Store interface the IVM
// engine, the shard and the control plane persist through, and owns the
// settings both actors open their databases with.
//
// Every Apply is one slate write batch with AwaitDurable, so a caller that
// got nil back knows the batch survives a crash (the COMMIT contract).
package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/slate"
	"github.com/rockstream/rockstream/slate/objstore"
)

// Options are the slate settings of one database.
type Options struct {
	// MemtableBytesMax: see slate.Options. Simulation range 4 KiB – 64 MiB.
	MemtableBytesMax int64
	// UnflushedBytesMax: see slate.Options.
	UnflushedBytesMax int64
	// BlockCacheBytes: see slate.Options.
	BlockCacheBytes int64
	// Pool and PoolSlot: see slate.Options (the shards of one process
	// share their memtable budget).
	Pool     *slate.MemoryPool
	PoolSlot int
	// InstanceID: see slate.Options.
	InstanceID string
}

// backpressureRetriesMax bounds how often Apply flushes memtables and
// retries a write refused for memory; past it the error reaches the caller.
const backpressureRetriesMax = 4

// flushRetriesMax bounds the WAL flush retries after a durable write failed
// half-way (applied in memory, not yet durable).
const flushRetriesMax = 3

// ErrUncertain: a write was applied in memory but could not be made
// durable. The owner must stop using the database (its memory is ahead of
// its durable state) and reopen it.
var ErrUncertain = errors.New("storage: write applied in memory but not made durable")

// KV is a slate database as a kv.Store.
type KV struct {
	db *slate.DB
	// now is the time last passed to Tick (slate never reads the clock).
	now time.Time
}

// Open opens (or creates) the slate database at path in store.
func Open(ctx context.Context, store objstore.Store, path string, opts Options) (*KV, error) {
	k := &KV{}
	db, err := slate.Open(ctx, store, path, slate.Options{
		InstanceID:        opts.InstanceID,
		MemtableBytesMax:  opts.MemtableBytesMax,
		UnflushedBytesMax: opts.UnflushedBytesMax,
		BlockCacheBytes:   opts.BlockCacheBytes,
		Pool:              opts.Pool,
		PoolSlot:          opts.PoolSlot,
		AutoCompact:       true,
		GCInterval:        time.Minute,
		GCMinAge:          10 * time.Minute,
		Clock:             func() time.Time { return k.now },
		MergeOperator:     mergeOperator(),
	})
	if err != nil {
		return nil, err
	}
	k.db = db
	return k, nil
}

// DB is the underlying slate database (for diagnostics).
func (k *KV) DB() *slate.DB { return k.db }

// Get implements kv.Reader.
func (k *KV) Get(key []byte) ([]byte, bool, error) {
	return k.db.Get(context.Background(), key, slate.ReadOptions{})
}

// Scan implements kv.Reader.
func (k *KV) Scan(start, end []byte, fn func(key, value []byte) error) error {
	it := k.db.Scan(context.Background(), start, end, slate.ReadOptions{})
	for it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			if errors.Is(err, kv.ErrStop) {
				return nil
			}
			return err
		}
	}
	return it.Err()
}

// Apply implements kv.Store: one atomic, durable slate batch.
func (k *KV) Apply(b *kv.WriteBatch) error { return k.apply(b, true) }

// ApplyNoWait applies one atomic batch without waiting for durability: it
// becomes durable with the next durable write or WAL flush (slate flushes
// WAL objects in order, so it is never durable after a later batch).
func (k *KV) ApplyNoWait(b *kv.WriteBatch) error { return k.apply(b, false) }

// Ingest applies one atomic batch straight into slate's L0 files
// (slate.DB.Ingest: no WAL, no memtable), durable when it returns: the
// bulk path for a large batch of keys spread over the key space (a
// backfilled view's state). A store whose L0 is full (compaction behind)
// takes it through Apply instead.
func (k *KV) Ingest(b *kv.WriteBatch) error {
	sb := slateBatch(b)
	_, err := k.db.Ingest(context.Background(), sb)
	if errors.Is(err, slate.ErrBackpressure) {
		return k.apply(b, true)
	}
	return err
}

func (k *KV) apply(b *kv.WriteBatch, durable bool) error {
	sb := slateBatch(b)
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		seq, err := k.db.Write(ctx, sb, slate.WriteOptions{AwaitDurable: durable})
		if err != nil && seq != 0 {
			// NB: the batch is applied in memory but its WAL object did not
			// land. Retrying the flush writes the same WAL object again;
			// re-writing the batch would apply it twice.
			for retry := 0; retry < flushRetriesMax; retry++ {
				if err = k.db.FlushWAL(ctx); err == nil {
					return nil
				}
			}
			return fmt.Errorf("%w: %w", ErrUncertain, err)
		}
		if err == nil || !errors.Is(err, slate.ErrBackpressure) || attempt >= backpressureRetriesMax {
			return err
		}
		if err := k.db.FlushMemtable(ctx); err != nil {
			return err
		}
	}
}

// slateBatch is b as a slate batch.
func slateBatch(b *kv.WriteBatch) *slate.Batch {
	var sb slate.Batch
	size := 0
	for _, op := range b.Ops {
		if !b.Immutable || op.Merge {
			size += len(op.Key) + len(op.Value)
		}
	}
	sb.Grow(len(b.Ops), size)
	for _, op := range b.Ops {
		switch {
		case op.Merge:
			sb.Merge(op.Key, op.Value)
		case b.Immutable && op.Delete:
			sb.DeleteShared(op.Key)
		case b.Immutable:
			sb.PutShared(op.Key, op.Value)
		case op.Delete:
			sb.Delete(op.Key)
		default:
			sb.Put(op.Key, op.Value)
		}
	}
	return &sb
}

// Tick runs slate's due background work (WAL/memtable flush, compaction,
// GC). The owning actor calls it from a timer.
func (k *KV) Tick(now time.Time) error {
	k.now = now
	return k.db.Tick(context.Background(), now)
}

// DeferCompaction defers Tick's compactions (on) until L0 fills to half
// its bound, or resumes them (slate.DB.DeferCompaction).
func (k *KV) DeferCompaction(on bool) { k.db.DeferCompaction(on) }

// Sync makes every write so far durable (flushes the WAL).
func (k *KV) Sync() error { return k.db.FlushWAL(context.Background()) }

// Close flushes and closes the database.
func (k *KV) Close() error { return k.db.Close(context.Background()) }

var _ kv.Store = (*KV)(nil)
