package slate

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// memtable is a skiplist of rows in (key asc, seq desc) order, laid out in
// an arena: every node (header, tower of next links, key, value) is carved
// from a few large []byte chunks and addressed by a uint32 nodeRef instead
// of a pointer. The GC sees a handful of pointer-free slices instead of
// several objects per row (the old node, its tower and the batch arena it
// pointed into), and an insert allocates nothing but the occasional chunk.
// A node's header, tower and key are contiguous, so a search step touches
// one cache line where the pointer layout touched three.
//
// It is append-only (rows are never removed or changed, chunks never move
// or are reused), so an iterator stays valid while later rows are inserted,
// and the key and value slices it returns stay valid and unchanged for as
// long as the caller holds them; readers filter by seq.
//
// NB: the skiplist's level choice uses a private xorshift state seeded with a
// constant, so its shape is a deterministic function of the insert sequence.
type memtable struct {
	chunks [][]byte // the arena; chunks[ref>>nodeRefOffsetBits] holds node ref
	cur    int      // the chunk small nodes are carved from
	used   int      // bytes of chunks[cur] in use
	// nextSize is the next regular chunk's size: chunks double from
	// arenaChunkBytesMin to arenaChunkBytesMax, so a small (test or
	// simulation) memtable stays small.
	nextSize int
	// chunksMax bounds len(chunks) (what a nodeRef can address); fits says
	// when a batch would pass it, and the owner rotates the memtable.
	chunksMax  int
	arenaBytes int64 // bytes of all chunks (the memtable's real footprint)

	// points indexes each key's newest version by the key's hash, so a
	// point lookup costs a hash and a probe or two of one array instead of
	// a descent through every level of the list, a cache miss per step in
	// a memtable of a million rows.
	points pointIndex
	// pointHash hashes keys for points (xxhash; tests use a weak one to
	// make keys share hashes).
	pointHash func([]byte) uint64
	// unindexed are the nodes added since points was last brought up to
	// date, in insertion order. A memtable that is only written and
	// scanned (a pass-through view's table rows and output) never pays
	// for the index: its cache misses, one or two random slots of an
	// array far larger than the CPU's caches per row, were a third of
	// the cost of an insert. Point lookups search the list instead while
	// that is cheaper than indexing (pointLookup); every reader of points
	// goes through indexPending first.
	unindexed []nodeRef
	// listLookups counts the point lookups answered by a list search since
	// the index was last brought up to date.
	listLookups int

	levels int
	rng    uint64
	bytes  int64 // logical size (row.encodedSize per row): flush decisions
	rows   int
	maxSeq uint64
	minSeq uint64
}

// nodeRef addresses a node: the chunk index in the high bits, the node's
// offset in that chunk in nodeAlign units in the low nodeRefOffsetBits.
// 0 is nil (the first 8 bytes of chunk 0 are never used).
type nodeRef uint32

const (
	memtableLevelsMax = 16

	nodeAlign          = 8
	nodeRefOffsetBits  = 17
	nodeRefOffsetMask  = 1<<nodeRefOffsetBits - 1
	arenaChunkBytesMax = nodeAlign << nodeRefOffsetBits // 1 MiB: every 8-aligned offset is addressable
	arenaChunkBytesMin = 4 << 10
	arenaChunksMax     = 1 << (32 - nodeRefOffsetBits) // 32768 chunks: ≥ 32 GiB per memtable
	// arenaLargeBytes: a node bigger than this gets a chunk of its own (at
	// offset 0, so its size is not bounded by the offset bits) and the
	// current chunk stays open for small nodes.
	arenaLargeBytes = arenaChunkBytesMax / 4

	headRef nodeRef = 1 // the head node: chunk 0, offset 8

)

// Node layout (little-endian), nodeAlign-aligned:
//
//	[0:8)   seq
//	[8:12)  key length
//	[12:16) value length
//	[16]    kind
//	[17]    height h (tower entries)
//	[18]    flags (nodeFlagNilValue)
//	[19]    unused
//	[20:20+4h)  tower: next nodeRef per level
//	key, then value
const (
	nodeSeqOff      = 0
	nodeKeyLenOff   = 8
	nodeValueLenOff = 12
	nodeKindOff     = 16
	nodeHeightOff   = 17
	nodeFlagsOff    = 18
	nodeTowerOff    = 20

	// nodeFlagNilValue: the row's value was nil (tombstones, Put(k, nil)),
	// returned as nil rather than as an empty slice.
	nodeFlagNilValue = 1
)

func newMemtable() *memtable { return newMemtableChunks(arenaChunksMax) }

// newMemtableChunks makes a memtable of at most chunksMax arena chunks
// (tests use small limits to exercise rotation).
func newMemtableChunks(chunksMax int) *memtable {
	if chunksMax <= 0 || chunksMax > arenaChunksMax {
		chunksMax = arenaChunksMax
	}
	m := &memtable{levels: 1, rng: 0x9E3779B97F4A7C15, chunksMax: chunksMax,
		pointHash: xxhash.Sum64}
	m.chunks = append(m.chunks, make([]byte, arenaChunkBytesMin))
	m.arenaBytes = arenaChunkBytesMin
	m.nextSize = min(2*arenaChunkBytesMin, arenaChunkBytesMax)
	m.used = nodeAlign // ref 0 stays nil
	head := m.alloc(nodeTowerOff + 4*memtableLevelsMax)
	m.node(head)[nodeHeightOff] = memtableLevelsMax
	return m
}

func (m *memtable) randomLevel() int { return drawLevel(&m.rng) }

// drawLevel draws a node height from the xorshift state rng.
func drawLevel(rng *uint64) int {
	level := 1
	for level < memtableLevelsMax {
		*rng ^= *rng << 13
		*rng ^= *rng >> 7
		*rng ^= *rng << 17
		if *rng&3 != 0 { // p = 1/4
			break
		}
		level++
	}
	return level
}

func alignNode(size int) int { return (size + nodeAlign - 1) &^ (nodeAlign - 1) }

// alloc carves size bytes (rounded up to nodeAlign) from the arena.
func (m *memtable) alloc(size int) nodeRef {
	size = alignNode(size)
	if len(m.chunks) >= arenaChunksMax {
		// INVARIANT: owners check fits before adding, and fits never
		// allows more than arenaChunksMax chunks.
		panic("slate: memtable arena exhausted")
	}
	if size > arenaLargeBytes {
		m.chunks = append(m.chunks, make([]byte, size))
		m.arenaBytes += int64(size)
		return nodeRef((len(m.chunks) - 1) << nodeRefOffsetBits)
	}
	if m.used+size > len(m.chunks[m.cur]) {
		n := max(m.nextSize, size)
		m.nextSize = min(2*n, arenaChunkBytesMax)
		m.chunks = append(m.chunks, make([]byte, n))
		m.arenaBytes += int64(n)
		m.cur, m.used = len(m.chunks)-1, 0
	}
	ref := nodeRef(m.cur<<nodeRefOffsetBits | m.used/nodeAlign)
	m.used += size
	return ref
}

// fits reports whether adding rows (in this order) keeps the arena within
// chunksMax chunks. It replays alloc's decisions exactly, drawing the same
// node heights from a copy of the level generator. A batch must not span
// memtables (flush records a memtable's highest seq as flushed), so the
// owner checks before adding and rotates first.
func (m *memtable) fits(rows []row) bool {
	chunks, cur, used, nextSize, rng := len(m.chunks), len(m.chunks[m.cur]), m.used, m.nextSize, m.rng
	for _, r := range rows {
		if uint64(len(r.key)) > math.MaxUint32 || uint64(len(r.value)) > math.MaxUint32 {
			return false
		}
		size := alignNode(nodeTowerOff + 4*drawLevel(&rng) + len(r.key) + len(r.value))
		switch {
		case size > arenaLargeBytes:
			chunks++
		case used+size > cur:
			cur = max(nextSize, size)
			nextSize = min(2*cur, arenaChunkBytesMax)
			chunks, used = chunks+1, size
		default:
			used += size
		}
		if chunks > m.chunksMax {
			return false
		}
	}
	return true
}

// node is the arena from ref's node on.
func (m *memtable) node(ref nodeRef) []byte {
	return m.chunks[ref>>nodeRefOffsetBits][int(ref&nodeRefOffsetMask)*nodeAlign:]
}

// next is ref's successor on level l (0: none).
func (m *memtable) next(ref nodeRef, l int) nodeRef {
	return nodeRef(binary.LittleEndian.Uint32(m.node(ref)[nodeTowerOff+4*l:]))
}

func (m *memtable) setNext(ref nodeRef, l int, to nodeRef) {
	binary.LittleEndian.PutUint32(m.node(ref)[nodeTowerOff+4*l:], uint32(to))
}

// nodeKey is the key of the node n starts.
func nodeKey(n []byte) []byte {
	k := nodeTowerOff + 4*int(n[nodeHeightOff])
	end := k + int(binary.LittleEndian.Uint32(n[nodeKeyLenOff:]))
	return n[k:end:end]
}

// compareNode orders ref's row against (key, seq) like compareRows.
func (m *memtable) compareNode(ref nodeRef, key []byte, seq uint64) int {
	n := m.node(ref)
	if c := bytes.Compare(nodeKey(n), key); c != 0 {
		return c
	}
	switch nseq := binary.LittleEndian.Uint64(n[nodeSeqOff:]); {
	case nseq > seq:
		return -1
	case nseq < seq:
		return 1
	}
	return 0
}

// row returns ref's row; key and value alias the arena (capped, so an
// append to them cannot write into the next node).
func (m *memtable) row(ref nodeRef) row {
	n := m.node(ref)
	k := nodeTowerOff + 4*int(n[nodeHeightOff])
	v := k + int(binary.LittleEndian.Uint32(n[nodeKeyLenOff:]))
	end := v + int(binary.LittleEndian.Uint32(n[nodeValueLenOff:]))
	r := row{key: n[k:v:v], seq: binary.LittleEndian.Uint64(n[nodeSeqOff:]), kind: Kind(n[nodeKindOff])}
	if n[nodeFlagsOff]&nodeFlagNilValue == 0 {
		r.value = n[v:end:end]
	}
	return r
}

// findGE returns the first node at or after (key, seq) (0: none) and, when
// prev is not nil, fills it with each level's predecessor.
func (m *memtable) findGE(key []byte, seq uint64, prev *[memtableLevelsMax]nodeRef) nodeRef {
	x := headRef
	for l := m.levels - 1; l >= 0; l-- {
		for {
			nx := m.next(x, l)
			if nx == 0 || m.compareNode(nx, key, seq) >= 0 {
				break
			}
			x = nx
		}
		if prev != nil {
			prev[l] = x
		}
	}
	return m.next(x, 0)
}

// add inserts r. The caller owns uniqueness of (key, seq): a batch carries at
// most one row per key.
func (m *memtable) add(r row) {
	rows := [1]row{r}
	m.addSorted(rows[:])
}

// addSorted inserts rows in strictly ascending (key, seq) order (one
// resolved batch), copying keys and values into the arena. Each search
// starts from the previous row's predecessors (a finger) instead of the
// head, since every row goes after the one before it; the result is the
// skiplist adding the rows one by one builds.
//
// The search climbs from the finger's bottom level until a level's next
// node is at or past the row: that level and every one above it already
// hold the row's predecessor (a higher level's next node after the
// previous row is no nearer than a lower level's), so only the levels
// below are walked, top down. A row a few nodes after the previous one
// costs a few comparisons instead of two per level of the whole list.
func (m *memtable) addSorted(rows []row) {
	var prev [memtableLevelsMax]nodeRef
	for l := range prev {
		prev[l] = headRef
	}
	m.unindexed = slices.Grow(m.unindexed, len(rows))
	for i, r := range rows {
		// NB: levels are drawn one per row in row order, so the shape is
		// a deterministic function of the inserts.
		level := m.randomLevel()
		if level > m.levels {
			m.levels = level
		}
		// top: the lowest level whose next node after prev is at or past
		// r (the first row searches every level from the head).
		top := m.levels
		if i > 0 {
			top = 0
			for top < m.levels {
				nx := m.next(prev[top], top)
				if nx == 0 || m.compareNode(nx, r.key, r.seq) >= 0 {
					break
				}
				top++
			}
		}
		// Walk the levels below top. Where the level above moved forward
		// its node is past this level's finger (it is at or after the
		// previous row); where it did not, this level's finger is at or
		// after it.
		x, moved := nodeRef(0), false
		for l := top - 1; l >= 0; l-- {
			if !moved {
				x = prev[l]
			}
			start := x
			for {
				nx := m.next(x, l)
				if nx == 0 || m.compareNode(nx, r.key, r.seq) >= 0 {
					break
				}
				x = nx
			}
			moved = x != start || moved
			prev[l] = x
		}
		n := m.newNode(r, level)
		for l := 0; l < level; l++ {
			m.setNext(n, l, m.next(prev[l], l))
			m.setNext(prev[l], l, n)
			prev[l] = n
		}
		m.unindexed = append(m.unindexed, n)
		m.count(r)
	}
}

// indexPending brings points up to date: it indexes the nodes added since
// the last call, in insertion order (so of two versions of a key the
// newer wins, as indexPoint keeps the higher seq either way), hashing and
// touching their slots pointTouchRows at a time to overlap the misses.
//
// NB: a read calls it, so a read may change the index (never the rows);
// only the memtable's owner reads or writes it (no concurrent readers).
func (m *memtable) indexPending() {
	if len(m.unindexed) == 0 {
		return
	}
	pending := m.unindexed
	m.unindexed = nil // touchPoints below must not recurse
	m.reservePoints(len(pending))
	var hashes [pointTouchRows]uint64
	for i, n := range pending {
		if i%pointTouchRows == 0 {
			m.points.sink += touchPoints(m, pending[i:min(i+pointTouchRows, len(pending))], m.refKey, &hashes)
		}
		nd := m.node(n)
		m.indexPoint(n, nodeKey(nd), binary.LittleEndian.Uint64(nd[nodeSeqOff:]), hashes[i%pointTouchRows])
	}
	// The slice is reused for the next rows (its nodes are indexed).
	m.unindexed, m.listLookups = pending[:0], 0
}

// refKey is the key of node n.
func (m *memtable) refKey(n nodeRef) []byte { return nodeKey(m.node(n)) }

// pointTouchRows is how many keys one touchPoints call covers: enough independent
// loads to overlap their cache misses, few enough that the slots they
// bring in stay in the CPU's cache until used.
const pointTouchRows = 32

// touchPoints computes the point hashes of the keys of items into hashes
// and loads the index slot each one starts probing at, in one pass of
// independent loads: the index of a large memtable is far larger than the
// CPU's caches, and paying its misses one after another was most of the
// cost of an insert (and of a lookup) of clustered keys.
// The sum of the loaded slots is returned for the caller to keep, so the
// loads are not optimized away.
func touchPoints[T any](m *memtable, items []T, key func(T) []byte, hashes *[pointTouchRows]uint64) uint64 {
	// NB: an index about to grow is touched anyway: the growth rewrites
	// every slot, and the hashes stay valid.
	m.indexPending()
	slots := m.points.slots
	mask := uint32(len(slots) - 1)
	var sink uint64
	for i, it := range items {
		h := m.pointHash(key(it))
		hashes[i] = h
		if len(slots) == 0 {
			continue
		}
		// NB: the node of a slot whose tag matches is loaded too (its
		// key is compared next).
		if s := slots[uint32(h>>32)&mask]; s != 0 && uint32(s>>32) == uint32(h>>32) {
			sink += uint64(m.node(nodeRef(s))[0])
		}
	}
	return sink
}

func sameKey(k []byte) []byte { return k }

// pointIndex is an open-addressing hash table (linear probing) from a
// key's hash to the node of the key's newest version. A slot holds the
// hash's high 32 bits (its tag, which also picks the first slot) above
// the nodeRef; 0 is empty (no node is at ref 0). Keys whose tags match
// are told apart by their nodes' keys, so a key absent from the memtable
// is answered without touching a node unless another key shares its
// tag. Slots are pointer-free: the GC does not scan them.
type pointIndex struct {
	slots []uint64
	used  int
	// sink keeps addSorted's touchPoints loads from being optimized away.
	sink uint64
}

const pointIndexMinSlots = 64

// indexPoint records node n, holding key at seq, whose key's pointHash is
// hash, in m.points.
func (m *memtable) indexPoint(n nodeRef, key []byte, seq uint64, hash uint64) {
	p := &m.points
	if 2*(p.used+1) > len(p.slots) {
		m.growPoints()
	}
	tag := uint32(hash >> 32)
	mask := uint32(len(p.slots) - 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		s := p.slots[i]
		if s == 0 {
			p.slots[i] = uint64(tag)<<32 | uint64(n)
			p.used++
			return
		}
		if uint32(s>>32) != tag {
			continue
		}
		old := m.node(nodeRef(s))
		if !bytes.Equal(nodeKey(old), key) {
			continue
		}
		if binary.LittleEndian.Uint64(old[nodeSeqOff:]) < seq {
			p.slots[i] = uint64(tag)<<32 | uint64(n) // the newest version first
		}
		return
	}
}

// growPoints doubles the index (each slot's tag places it again).
func (m *memtable) growPoints() {
	m.resizePoints(max(pointIndexMinSlots, 2*len(m.points.slots)))
}

// reservePoints sizes the index for n more keys at once: a large batch
// (a COPY's commit of a million rows) otherwise doubled it a dozen times
// as it went, placing every slot again each time.
func (m *memtable) reservePoints(n int) {
	size := max(pointIndexMinSlots, len(m.points.slots))
	for 2*(m.points.used+n) > size {
		size *= 2
	}
	if size > len(m.points.slots) {
		m.resizePoints(size)
	}
}

// resizePoints moves the index into size slots (a power of two, room for
// every key).
func (m *memtable) resizePoints(size int) {
	old := m.points.slots
	slots := make([]uint64, size)
	mask := uint32(len(slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := uint32(s>>32) & mask
		for slots[i] != 0 {
			i = (i + 1) & mask
		}
		slots[i] = s
	}
	m.points.slots = slots
}

// findPoint is findGE(key, seq) for a point lookup: the first node of key
// at or below seq, but 0 (not the next key's node) when there is none.
func (m *memtable) findPoint(key []byte, seq uint64) nodeRef {
	return m.findPointHashed(key, m.pointHash(key), seq)
}

// listLookupNodes is what one point lookup by a search of the list costs,
// in nodes indexed: a descent from the head misses the cache a few times
// per lower level (about a microsecond in a memtable of a million rows),
// indexing a node misses once or twice (about a quarter of that).
const listLookupNodes = 4

// findPointHashed is findPoint given key's pointHash.
//
// While few lookups come for many unindexed rows, it searches the list
// (as a rent) instead of indexing them (the purchase): once the lookups'
// searches have cost as much as indexing the rows would, it indexes them,
// so the lookups never cost more than twice the cheaper choice in
// hindsight. A pass-through view's shard reads a key or two per step
// while it adds thousands of rows, and never buys.
func (m *memtable) findPointHashed(key []byte, hash, seq uint64) nodeRef {
	if len(m.unindexed) > 0 {
		if (m.listLookups+1)*listLookupNodes < len(m.unindexed) {
			m.listLookups++
			return m.findPointInList(key, seq)
		}
		m.indexPending()
	}
	p := &m.points
	if len(p.slots) == 0 {
		return 0
	}
	tag := uint32(hash >> 32)
	mask := uint32(len(p.slots) - 1)
	var n nodeRef
	for i := tag & mask; ; i = (i + 1) & mask {
		s := p.slots[i]
		if s == 0 {
			return 0
		}
		if uint32(s>>32) == tag && bytes.Equal(nodeKey(m.node(nodeRef(s))), key) {
			n = nodeRef(s)
			break
		}
	}
	// INVARIANT: versions of a key follow one another in descending seq.
	for ; n != 0; n = m.next(n, 0) {
		nd := m.node(n)
		if !bytes.Equal(nodeKey(nd), key) {
			return 0
		}
		if binary.LittleEndian.Uint64(nd[nodeSeqOff:]) <= seq {
			return n
		}
	}
	return 0
}

// findPointInList is findPoint by a search of the list (without the index).
func (m *memtable) findPointInList(key []byte, seq uint64) nodeRef {
	n := m.findGE(key, seq, nil)
	if n == 0 || !bytes.Equal(nodeKey(m.node(n)), key) {
		return 0
	}
	return n
}

// compareNodes orders two nodes' rows.
func (m *memtable) compareNodes(a, b nodeRef) int {
	n := m.node(b)
	return m.compareNode(a, nodeKey(n), binary.LittleEndian.Uint64(n[nodeSeqOff:]))
}

// newNode writes r's node with an empty tower of level entries.
func (m *memtable) newNode(r row, level int) nodeRef {
	k := nodeTowerOff + 4*level
	size := k + len(r.key) + len(r.value)
	ref := m.alloc(size)
	n := m.node(ref)[:size]
	binary.LittleEndian.PutUint64(n[nodeSeqOff:], r.seq)
	binary.LittleEndian.PutUint32(n[nodeKeyLenOff:], uint32(len(r.key)))
	binary.LittleEndian.PutUint32(n[nodeValueLenOff:], uint32(len(r.value)))
	n[nodeKindOff] = byte(r.kind)
	n[nodeHeightOff] = byte(level)
	if r.value == nil {
		n[nodeFlagsOff] = nodeFlagNilValue
	}
	copy(n[k:], r.key)
	copy(n[k+len(r.key):], r.value)
	return ref
}

// count adds r to the size and seq accounting.
func (m *memtable) count(r row) {
	m.bytes += int64(r.encodedSize())
	if m.rows == 0 || r.seq < m.minSeq {
		m.minSeq = r.seq
	}
	m.rows++
	if r.seq > m.maxSeq {
		m.maxSeq = r.seq
	}
}

// memtableIter iterates rows with key in [start, end) (end nil = unbounded).
type memtableIter struct {
	m    *memtable
	node nodeRef
	end  []byte
}

func (m *memtable) iter(start, end []byte) *memtableIter {
	return &memtableIter{m: m, node: m.findGE(start, ^uint64(0), nil), end: end}
}

func (it *memtableIter) next() (row, bool, error) {
	if it.node == 0 {
		return row{}, false, nil
	}
	r := it.m.row(it.node)
	if it.end != nil && bytes.Compare(r.key, it.end) >= 0 {
		it.node = 0
		return row{}, false, nil
	}
	it.node = it.m.next(it.node, 0)
	return r, true, nil
}
