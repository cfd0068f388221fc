package storage

import (
	"context"

	"github.com/rockstream/rockstream/slate"
)

// GetSorted implements kv.SortedGetter: one ordered pass through slate
// (slate.DB.GetSorted) for ascending keys.
func (k *KV) GetSorted(keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	return k.db.GetSorted(context.Background(), keys, slate.ReadOptions{}, fn)
}

// GetSorted implements kv.SortedGetter at the snapshot.
func (s *SnapshotReader) GetSorted(keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	return s.db.GetSorted(context.Background(), keys, slate.ReadOptions{Snapshot: s.snap}, fn)
}
