package real

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// timedStore is an actor's object store that adds the time each call
// takes to the actor's storeNanos: of the time an actor is busy, how much
// it waited on storage (a WAL put and its sync, an SST read) rather than
// computed (ActorBusy.Store).
type timedStore struct {
	objstore.Store
	nanos *atomic.Int64
}

func (s timedStore) since(start time.Time) { s.nanos.Add(int64(time.Since(start))) }

func (s timedStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	defer s.since(time.Now())
	return s.Store.Get(ctx, key)
}

func (s timedStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	defer s.since(time.Now())
	return s.Store.GetRange(ctx, key, offset, length)
}

func (s timedStore) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	defer s.since(time.Now())
	return s.Store.Put(ctx, key, data)
}

func (s timedStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	defer s.since(time.Now())
	return s.Store.PutIfAbsent(ctx, key, data)
}

func (s timedStore) PutIfMatch(ctx context.Context, key string, data []byte, match objstore.Version) (objstore.Version, error) {
	defer s.since(time.Now())
	return s.Store.PutIfMatch(ctx, key, data, match)
}

func (s timedStore) Delete(ctx context.Context, key string) error {
	defer s.since(time.Now())
	return s.Store.Delete(ctx, key)
}

func (s timedStore) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	defer s.since(time.Now())
	return s.Store.List(ctx, prefix)
}
