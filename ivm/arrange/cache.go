package arrange

// cache is a bounded map from full keys to values (or known absence) with
// CLOCK-style eviction: a ring of keys; when full, the oldest key is evicted.
// Eviction order depends only on the access sequence, so it is
// deterministic.
//
// Like the group cache (group.go) it may be complete: when the arrangement
// was empty at the cache's first miss, every key written since is cached,
// so a miss means absent and costs no store read, until a present entry is
// evicted (or dropped) or the cache is cleared.
type cache struct {
	limit   int
	entries map[string]cacheEntry
	ring    []string
	hand    int
	state   completeness
}

type cacheEntry struct {
	value   []byte
	present bool
}

func newCache(limit int) *cache {
	if limit < 0 {
		limit = 0
	}
	return &cache{limit: limit, entries: make(map[string]cacheEntry)}
}

func (c *cache) get(key []byte) ([]byte, bool, bool) {
	if c.limit == 0 {
		return nil, false, false
	}
	e, ok := c.entries[string(key)]
	return e.value, e.present, ok
}

func (c *cache) put(key []byte, value []byte, present bool) {
	if c.limit == 0 {
		return
	}
	if _, ok := c.entries[string(key)]; ok {
		c.entries[string(key)] = cacheEntry{value: value, present: present}
		return
	}
	k := string(key)
	if len(c.ring) < c.limit {
		c.ring = append(c.ring, k)
	} else {
		if old, ok := c.entries[c.ring[c.hand]]; ok && old.present {
			c.state = completenessPartial
		}
		delete(c.entries, c.ring[c.hand])
		c.ring[c.hand] = k
		c.hand = (c.hand + 1) % c.limit
	}
	c.entries[k] = cacheEntry{value: value, present: present}
}

// update changes the entry for key if it is cached (write-through). Other
// keys are added only while the cache has room (write-allocate without
// eviction): state that fits in the cache is then served from it from its
// first write on, while a stream of new keys — a join's arrangement
// growing — never evicts what is cached. A complete cache adds every
// written key (evicting, which ends completeness), so it stays complete
// while the state fits.
func (c *cache) update(key []byte, value []byte, present bool) {
	if c.limit == 0 {
		return
	}
	if _, ok := c.entries[string(key)]; ok {
		c.entries[string(key)] = cacheEntry{value: append([]byte(nil), value...), present: present}
		return
	}
	if present && (len(c.ring) < c.limit || c.state == completenessFull) {
		c.put(key, append([]byte(nil), value...), true)
	}
}

func (c *cache) clear() {
	c.entries = make(map[string]cacheEntry)
	c.ring = c.ring[:0]
	c.hand = 0
	c.state = completenessUnknown
}

// drop forgets key (its ring slot stays until it comes round).
func (c *cache) drop(key []byte) {
	if c.limit == 0 {
		return
	}
	delete(c.entries, string(key))
	if c.state == completenessFull {
		// NB: key's value is no longer known, so a miss no longer means
		// absent.
		c.state = completenessPartial
	}
}
