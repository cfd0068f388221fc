package slate

// memtable is a skiplist of rows in (key asc, seq desc) order. It is
// append-only (rows are never removed or changed), so an iterator stays valid
// while later rows are inserted; readers filter by seq.
//
// NB: the skiplist's level choice uses a private xorshift state seeded with a
// constant, so its shape is a deterministic function of the insert sequence.
type memtable struct {
	head   *skipNode
	levels int
	rng    uint64
	bytes  int64
	rows   int
	maxSeq uint64
	minSeq uint64
}

const memtableLevelsMax = 16

type skipNode struct {
	r    row
	next []*skipNode // one per level of this node (sized to its height)
}

func newMemtable() *memtable {
	return &memtable{head: &skipNode{next: make([]*skipNode, memtableLevelsMax)}, levels: 1, rng: 0x9E3779B97F4A7C15}
}

func (m *memtable) randomLevel() int {
	level := 1
	for level < memtableLevelsMax {
		m.rng ^= m.rng << 13
		m.rng ^= m.rng >> 7
		m.rng ^= m.rng << 17
		if m.rng&3 != 0 { // p = 1/4
			break
		}
		level++
	}
	return level
}

// seekGE returns the first node at or after (key, seq) and fills prev.
func (m *memtable) findGE(key []byte, seq uint64, prev *[memtableLevelsMax]*skipNode) *skipNode {
	x := m.head
	for l := m.levels - 1; l >= 0; l-- {
		for x.next[l] != nil && compareRows(x.next[l].r.key, x.next[l].r.seq, key, seq) < 0 {
			x = x.next[l]
		}
		if prev != nil {
			prev[l] = x
		}
	}
	return x.next[0]
}

// add inserts r. The caller owns uniqueness of (key, seq): a batch carries at
// most one row per key.
func (m *memtable) add(r row) {
	var prev [memtableLevelsMax]*skipNode
	m.findGE(r.key, r.seq, &prev)
	level := m.randomLevel()
	for l := m.levels; l < level; l++ {
		prev[l] = m.head
	}
	if level > m.levels {
		m.levels = level
	}
	n := &skipNode{r: r, next: make([]*skipNode, level)}
	m.link(n, &prev)
}

// link splices n in after prev[0..len(n.next)) and counts it.
func (m *memtable) link(n *skipNode, prev *[memtableLevelsMax]*skipNode) {
	for l := range n.next {
		n.next[l] = prev[l].next[l]
		prev[l].next[l] = n
	}
	r := n.r
	m.bytes += int64(r.encodedSize())
	if m.rows == 0 || r.seq < m.minSeq {
		m.minSeq = r.seq
	}
	m.rows++
	if r.seq > m.maxSeq {
		m.maxSeq = r.seq
	}
}

// addSorted inserts rows in strictly ascending (key, seq) order (one
// resolved batch): the same skiplist add would build, with two
// allocations for the whole batch instead of two per row, and each search
// starting from the previous row's predecessors (a finger) instead of the
// head, since every row goes after the one before it.
func (m *memtable) addSorted(rows []row) {
	if len(rows) == 0 {
		return
	}
	// NB: levels are drawn one per row in row order, exactly as add draws
	// them, so the shape stays a deterministic function of the inserts.
	levels := make([]uint8, len(rows))
	total := 0
	for i := range rows {
		l := m.randomLevel()
		levels[i] = uint8(l)
		total += l
	}
	nodes := make([]skipNode, len(rows))
	ptrs := make([]*skipNode, total)
	var prev [memtableLevelsMax]*skipNode
	for l := range prev {
		prev[l] = m.head
	}
	for i, r := range rows {
		level := int(levels[i])
		if level > m.levels {
			m.levels = level
		}
		x := m.head
		for l := m.levels - 1; l >= 0; l-- {
			// Both x (reached on the level above) and prev[l] (this level's
			// predecessor of the previous row) precede r: start from the
			// further one.
			if p := prev[l]; p != m.head && (x == m.head || compareRows(p.r.key, p.r.seq, x.r.key, x.r.seq) > 0) {
				x = p
			}
			for x.next[l] != nil && compareRows(x.next[l].r.key, x.next[l].r.seq, r.key, r.seq) < 0 {
				x = x.next[l]
			}
			prev[l] = x
		}
		n := &nodes[i]
		n.r = r
		n.next, ptrs = ptrs[:level:level], ptrs[level:]
		m.link(n, &prev)
		for l := 0; l < level; l++ {
			prev[l] = n
		}
	}
}

// memtableIter iterates rows with key in [start, end) (end nil = unbounded).
type memtableIter struct {
	node *skipNode
	end  []byte
}

func (m *memtable) iter(start, end []byte) *memtableIter {
	return &memtableIter{node: m.findGE(start, ^uint64(0), nil), end: end}
}

func (it *memtableIter) next() (row, bool, error) {
	if it.node == nil {
		return row{}, false, nil
	}
	r := it.node.r
	if it.end != nil && string(r.key) >= string(it.end) {
		it.node = nil
		return row{}, false, nil
	}
	it.node = it.node.next[0]
	return r, true, nil
}
