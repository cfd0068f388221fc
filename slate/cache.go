package slate

import "container/list"

// blockCache is a byte-bounded LRU of decoded SST blocks and SST metadata.
// Capacity is Options.BlockCacheBytes; an entry larger than the capacity is
// not cached. Not safe for concurrent use (slate is single-threaded per DB).
type blockCache struct {
	capacityBytes int64
	usedBytes     int64
	order         *list.List // front = most recent
	entries       map[blockKey]*list.Element
	hits, misses  uint64
}

// blockKey names a cached item: data block `block` of an SST, or its
// metadata (block -1).
type blockKey struct {
	sst   string
	block int
}

type cacheEntry struct {
	key   blockKey
	value any
	bytes int64
}

func newBlockCache(capacityBytes int64) *blockCache {
	return &blockCache{capacityBytes: capacityBytes, order: list.New(), entries: map[blockKey]*list.Element{}}
}

func (c *blockCache) get(key blockKey) (any, bool) {
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		c.hits++
		return e.Value.(*cacheEntry).value, true
	}
	c.misses++
	return nil, false
}

func (c *blockCache) put(key blockKey, value any, bytes int64) {
	if bytes > c.capacityBytes {
		return
	}
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*cacheEntry)
		c.usedBytes += bytes - old.bytes
		old.value, old.bytes = value, bytes
		c.order.MoveToFront(e)
	} else {
		c.entries[key] = c.order.PushFront(&cacheEntry{key: key, value: value, bytes: bytes})
		c.usedBytes += bytes
	}
	for c.usedBytes > c.capacityBytes {
		back := c.order.Back()
		ent := back.Value.(*cacheEntry)
		c.order.Remove(back)
		delete(c.entries, ent.key)
		c.usedBytes -= ent.bytes
	}
}

// clear drops everything (tests use it to measure cold reads).
func (c *blockCache) clear() {
	c.order.Init()
	c.entries = map[blockKey]*list.Element{}
	c.usedBytes = 0
}
