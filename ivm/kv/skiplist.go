package kv

import "bytes"

// skiplistLevelsMax bounds the tower height; 2^24 keys per level-1 node
// spacing of 4 keeps searches logarithmic for far more keys than a shard holds
// in memory.
const skiplistLevelsMax = 24

// skiplist is an ordered map from byte keys to entries. Tower heights come
// from a private xorshift generator seeded with a constant, so the structure
// (and therefore performance) is deterministic; behaviour never depends on it.
type skiplist struct {
	head   *slNode
	levels int
	length int
	rng    uint64
	// update is scratch space for insertion, kept to avoid allocation.
	update [skiplistLevelsMax]*slNode
}

type slNode struct {
	key     []byte
	value   []byte
	deleted bool // a tombstone (only used by the Txn overlay)
	next    []*slNode
}

func newSkiplist() *skiplist {
	return &skiplist{
		head:   &slNode{next: make([]*slNode, skiplistLevelsMax)},
		levels: 1,
		rng:    0x9E3779B97F4A7C15,
	}
}

func (s *skiplist) randomLevel() int {
	level := 1
	for level < skiplistLevelsMax {
		s.rng ^= s.rng << 13
		s.rng ^= s.rng >> 7
		s.rng ^= s.rng << 17
		if s.rng&3 != 0 {
			break
		}
		level++
	}
	return level
}

// seek returns the first node with key >= key, filling s.update with the
// predecessors at each level.
func (s *skiplist) seek(key []byte) *slNode {
	x := s.head
	for i := s.levels - 1; i >= 0; i-- {
		for x.next[i] != nil && bytes.Compare(x.next[i].key, key) < 0 {
			x = x.next[i]
		}
		s.update[i] = x
	}
	return x.next[0]
}

func (s *skiplist) get(key []byte) *slNode {
	x := s.head
	for i := s.levels - 1; i >= 0; i-- {
		for x.next[i] != nil && bytes.Compare(x.next[i].key, key) < 0 {
			x = x.next[i]
		}
	}
	n := x.next[0]
	if n != nil && bytes.Equal(n.key, key) {
		return n
	}
	return nil
}

// set inserts or replaces key. The key and value are copied.
func (s *skiplist) set(key, value []byte, deleted bool) {
	n := s.seek(key)
	if n != nil && bytes.Equal(n.key, key) {
		n.value = append(n.value[:0:0], value...)
		n.deleted = deleted
		return
	}
	level := s.randomLevel()
	if level > s.levels {
		for i := s.levels; i < level; i++ {
			s.update[i] = s.head
		}
		s.levels = level
	}
	node := &slNode{
		key:     append([]byte(nil), key...),
		value:   append([]byte(nil), value...),
		deleted: deleted,
		next:    make([]*slNode, level),
	}
	for i := 0; i < level; i++ {
		node.next[i] = s.update[i].next[i]
		s.update[i].next[i] = node
	}
	s.length++
}

// remove unlinks key if present.
func (s *skiplist) remove(key []byte) {
	n := s.seek(key)
	if n == nil || !bytes.Equal(n.key, key) {
		return
	}
	for i := 0; i < len(n.next); i++ {
		if s.update[i].next[i] == n {
			s.update[i].next[i] = n.next[i]
		}
	}
	for s.levels > 1 && s.head.next[s.levels-1] == nil {
		s.levels--
	}
	s.length--
}

// first returns the first node with key >= start (no update bookkeeping).
func (s *skiplist) first(start []byte) *slNode {
	x := s.head
	for i := s.levels - 1; i >= 0; i-- {
		for x.next[i] != nil && bytes.Compare(x.next[i].key, start) < 0 {
			x = x.next[i]
		}
	}
	return x.next[0]
}
