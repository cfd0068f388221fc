package storage

import (
	"context"
	"errors"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/slate"
)

// SnapshotReader reads the database as of one moment: every write applied
// before Snapshot, none after. Release it when done (slate keeps the
// versions it needs until then).
type SnapshotReader struct {
	db   *slate.DB
	snap *slate.Snapshot
}

// Snapshot pins the database's current state for reading (a REPEATABLE
// READ transaction's snapshot).
func (k *KV) Snapshot() kv.Reader {
	return &SnapshotReader{db: k.db, snap: k.db.Snapshot()}
}

// Get implements kv.Reader.
func (s *SnapshotReader) Get(key []byte) ([]byte, bool, error) {
	return s.db.Get(context.Background(), key, slate.ReadOptions{Snapshot: s.snap})
}

// Scan implements kv.Reader.
func (s *SnapshotReader) Scan(start, end []byte, fn func(key, value []byte) error) error {
	it := s.db.Scan(context.Background(), start, end, slate.ReadOptions{Snapshot: s.snap})
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

// ScanUncached is Scan for rows read once (a view backfill's pinned
// input): the blocks it reads do not fill the block cache, where a table
// larger than the cache would evict every block others read for blocks
// read once.
func (s *SnapshotReader) ScanUncached(start, end []byte, fn func(key, value []byte) error) error {
	it := s.db.Scan(context.Background(), start, end, slate.ReadOptions{Snapshot: s.snap, NoCacheFill: true})
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

// Release unpins the snapshot. Idempotent.
func (s *SnapshotReader) Release() { s.snap.Release() }
