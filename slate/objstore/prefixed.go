package objstore

import (
	"context"
	"strings"
)

// Prefixed returns a Store that puts every key under prefix+"/". It lets many
// databases (shards) share one store.
func Prefixed(s Store, prefix string) Store {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return s
	}
	return &prefixed{inner: s, prefix: prefix + "/"}
}

type prefixed struct {
	inner  Store
	prefix string
}

func (p *prefixed) Get(ctx context.Context, key string) (Object, error) {
	return p.inner.Get(ctx, p.prefix+key)
}
func (p *prefixed) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return p.inner.GetRange(ctx, p.prefix+key, off, n)
}
func (p *prefixed) Put(ctx context.Context, key string, data []byte) (Version, error) {
	return p.inner.Put(ctx, p.prefix+key, data)
}
func (p *prefixed) PutIfAbsent(ctx context.Context, key string, data []byte) (Version, error) {
	return p.inner.PutIfAbsent(ctx, p.prefix+key, data)
}
func (p *prefixed) PutIfMatch(ctx context.Context, key string, data []byte, v Version) (Version, error) {
	return p.inner.PutIfMatch(ctx, p.prefix+key, data, v)
}
func (p *prefixed) Delete(ctx context.Context, key string) error {
	return p.inner.Delete(ctx, p.prefix+key)
}
func (p *prefixed) List(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	infos, err := p.inner.List(ctx, p.prefix+prefix)
	for i := range infos {
		infos[i].Key = strings.TrimPrefix(infos[i].Key, p.prefix)
	}
	return infos, err
}
