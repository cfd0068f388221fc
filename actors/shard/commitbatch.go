package shard

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// commitBatch builds the one write batch of a commit (table rows, delta-log
// entry, last epoch) with as little per-row work as possible: each row is
// encoded ONCE, and that encoding is both the stored table row and the row
// in the delta-log entry.
//
// Two modes:
//   - direct (the common case): reads go straight to the store and writes
//     are appended to a slice, sorted once at the end. Correct only if no
//     key is written twice in the commit (a second write would not see the
//     first); batch() reports a duplicate, and the commit is rebuilt in
//     exact mode;
//   - exact: reads and writes go through an overlay transaction, so a key
//     written twice sees its first write (last write wins).
//
// The delta-log entry is not consolidated: the epoch step unions several
// entries unconsolidated anyway, and every operator accepts unconsolidated
// input (the circuit consolidates outputs). A row replaced by an equal one
// is dropped from it (its retraction and insertion cancel).
type commitBatch struct {
	store kv.Reader
	exact kv.Txn // nil in direct mode
	ops   []kv.Op
	arena byteArena
	// tables are the per-table sections of the log entry, in first-write
	// order.
	tables []*tableLog
}

// tableLog is one table's rows in the delta-log entry, encoded as the
// entry holds them (weight, length, encodeStoredRow encoding): one array
// of bytes instead of one of slices the collector traces.
type tableLog struct {
	table catalog.ID
	rows  int
	// buf holds room bytes of room for the entry's head (logHeadRoom,
	// the first table's), then the rows.
	buf  []byte
	room int
}

// logHeadRoom is the room the first table's section keeps in front of its
// rows for the log entry's head (the count of tables, the table's id and
// its count of rows): a commit of one table's rows, most of them, hands
// its section over as the entry instead of copying it (a COPY's entry is
// tens of megabytes).
const logHeadRoom = 2*binary.MaxVarintLen64 + 16

func (t *tableLog) add(enc []byte, w int64) {
	t.buf = binary.AppendVarint(t.buf, w)
	t.buf = binary.AppendUvarint(t.buf, uint64(len(enc)))
	t.buf = append(t.buf, enc...)
	t.rows++
}

func newCommitBatch(store kv.Reader, writes int, exact bool) *commitBatch {
	cb := &commitBatch{store: store, ops: make([]kv.Op, 0, writes+3)}
	if exact {
		cb.exact = kv.NewTxn(store)
	}
	return cb
}

func (cb *commitBatch) table(id catalog.ID) *tableLog {
	// NB: commits touch one or two tables; a linear search beats a map.
	for _, t := range cb.tables {
		if t.table == id {
			return t
		}
	}
	t := &tableLog{table: id}
	if len(cb.tables) == 0 {
		// Most commits write one table: size its section for every write
		// (a guess at the size of a row; it grows).
		t.room = logHeadRoom
		t.buf = make([]byte, logHeadRoom, logHeadRoom+cap(cb.ops)*logRowBytesGuess+logTimeBytes)
	}
	cb.tables = append(cb.tables, t)
	return t
}

func (cb *commitBatch) get(key []byte) ([]byte, bool, error) {
	if cb.exact != nil {
		return cb.exact.Get(key)
	}
	return cb.store.Get(key)
}

// Put implements kv.Writer.
func (cb *commitBatch) Put(key, value []byte) error {
	if cb.exact != nil {
		return cb.exact.Put(key, value)
	}
	cb.ops = append(cb.ops, kv.Op{Key: key, Value: value})
	return nil
}

// Delete implements kv.Writer.
func (cb *commitBatch) Delete(key []byte) error {
	if cb.exact != nil {
		return cb.exact.Delete(key)
	}
	cb.ops = append(cb.ops, kv.Op{Key: key, Delete: true})
	return nil
}

// reader reads what the commit sees (in direct mode: the store, which is
// right for every key the commit has not written).
func (cb *commitBatch) reader() kv.Reader {
	if cb.exact != nil {
		return cb.exact
	}
	return cb.store
}

// encodeRow encodes a row for storage into the commit's arena.
func (cb *commitBatch) encodeRow(ts []types.Type, row types.Row) []byte {
	// A guess at the size (most values are short); the arena grows.
	dst := cb.arena.alloc(8 + 12*len(row))
	enc := encodeStoredRow(dst, ts, row)
	cb.arena.used(dst, enc)
	return enc
}

// canonical returns a stored row in the current encoding of its table:
// the stored bytes themselves when they are of the table's width (the
// encoding is canonical), else the row decoded (padded) and re-encoded.
func (cb *commitBatch) canonical(codec tableCodec, stored []byte) ([]byte, error) {
	if n, used := binary.Uvarint(stored); used > 0 && n == uint64(len(codec.ts)) {
		return stored, nil
	}
	row, err := codec.decode(stored)
	if err != nil {
		return nil, err
	}
	return cb.encodeRow(codec.ts, row), nil
}

// encodeLog encodes the delta-log entry (the format decodeLog reads).
func (cb *commitBatch) encodeLog(at types.TimestampTZ) []byte {
	size := binary.MaxVarintLen64 + logTimeBytes
	n := 0
	for _, t := range cb.tables {
		size += 16 + binary.MaxVarintLen64 + len(t.buf) - t.room
		if t.rows > 0 {
			n++
		}
	}
	if n == 1 && cb.tables[0].rows > 0 && cb.tables[0].room > 0 {
		// The one table with rows is the first: its head goes into the
		// room in front of its rows.
		t := cb.tables[0]
		var head [logHeadRoom]byte
		h := binary.AppendUvarint(head[:0], 1)
		h = append(h, t.table.Object[:]...)
		h = binary.AppendUvarint(h, uint64(t.rows))
		b := t.buf[t.room-len(h):]
		copy(b, h)
		return appendLogTime(b, at)
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, uint64(n))
	for _, t := range cb.tables {
		if t.rows == 0 {
			continue
		}
		b = append(b, t.table.Object[:]...)
		b = binary.AppendUvarint(b, uint64(t.rows))
		b = append(b, t.buf[t.room:]...)
	}
	return appendLogTime(b, at)
}

// batch returns the commit's write batch, sorted by key; ok is false in
// direct mode if a key was written twice (rebuild in exact mode).
func (cb *commitBatch) batch() (b *kv.WriteBatch, ok bool) {
	if cb.exact != nil {
		return cb.exact.Batch(), true
	}
	if len(cb.ops) >= repackOpsMin {
		cb.ops = sortRepackOps(cb.ops)
	} else {
		sortOps(cb.ops)
	}
	for i := 1; i < len(cb.ops); i++ {
		if bytes.Equal(cb.ops[i-1].Key, cb.ops[i].Key) {
			return nil, false
		}
	}
	// NB: every key and value is the commit's own (its arena, its log
	// entry, fresh allocations) and nothing changes them after the
	// commit: the store may keep them.
	return &kv.WriteBatch{Ops: cb.ops, Immutable: true}, true
}

// logRowBytesGuess is the room a commit's log section starts with per
// write: a short row's encoding with its weight and length.
const logRowBytesGuess = 32

// repackOpsMin is the size from which a batch's ops are sorted into a
// new array with their keys and values copied together (sortRepackOps).
const repackOpsMin = 4096

// sortRepackOps returns ops sorted by key in a new array, their keys and
// values copied into one array, back to back in key order. They were
// encoded in write order, which the sort scatters; the store then reads
// them in key order several times (the order check, the memtable insert,
// the WAL encoding), each read a cache miss per op for a large commit,
// and the one pass here pays it once.
func sortRepackOps(ops []kv.Op) []kv.Op {
	order, ok := bucketOrder(ops, tableKeyHeadBytes-partition.BucketBytes)
	if !ok {
		refs := make([]opChunk, len(ops))
		for i := range refs {
			refs[i].op = int32(i)
		}
		sortKeyChunks(ops, opKey, refs, 0)
		order = make([]int32, len(refs))
		for j, r := range refs {
			order[j] = r.op
		}
	}
	size := 0
	for i := range ops {
		size += len(ops[i].Key)
		if len(ops[i].Value) <= repackValueMax {
			size += len(ops[i].Value)
		}
	}
	// NB: in place (a cycle at a time, as sortOps), not into a second
	// array of ops: a million-row commit's is 56 MB more for the
	// collector.
	permute(ops, order)
	buf := make([]byte, 0, size)
	for j := range ops {
		op := &ops[j]
		from := len(buf)
		buf = append(buf, op.Key...)
		op.Key = buf[from:len(buf):len(buf)]
		if op.Value != nil && len(op.Value) <= repackValueMax {
			from = len(buf)
			buf = append(buf, op.Value...)
			op.Value = buf[from:len(buf):len(buf)]
		}
	}
	return ops
}

// permute puts ops[order[j]] at position j for every j, in place, a cycle
// at a time; it uses up order (done positions are set to -1).
func permute(ops []kv.Op, order []int32) {
	for start := range order {
		if order[start] < 0 {
			continue
		}
		held, j := ops[start], start
		for {
			src := int(order[j])
			order[j] = -1
			if src == start {
				ops[j] = held
				break
			}
			ops[j] = ops[src]
			j = src
		}
	}
}

// repackValueMax is the largest value sortRepackOps copies: a larger one
// (the delta-log entry, tens of megabytes for a COPY) is read in one
// sequential pass where it lies, and copying it bought nothing.
const repackValueMax = 64 << 10

// bucketOrderOthersMax is how many ops of other keys (the delta-log
// entry's, the last epoch's, a source offset's) bucketOrder places
// around a commit's rows; more (an index's entries) take the general
// sort.
const bucketOrderOthersMax = 64

// bucketOrder is the sorted order of ops (their indexes) when ops are
// mostly one table's row keys (head bytes shared, then a 2-byte bucket,
// then the primary key) written in primary-key order, as a bulk load in
// key order (a COPY of a sorted file) writes them: the rows in bucket
// order are then sorted, so one counting pass over the buckets sorts the
// commit, instead of a radix sort over every byte where the keys differ.
// ok is false (sort in general) when the rows are not in ascending key
// order (nor distinct) or when there are more than a few other keys.
func bucketOrder(ops []kv.Op, head int) (order []int32, ok bool) {
	var ref []byte
	for i := range ops {
		if len(ops[i].Key) > head+partition.BucketBytes {
			ref = ops[i].Key[:head]
			break
		}
	}
	if ref == nil {
		return nil, false
	}
	var others []int32
	counts := make([]int32, 1<<16)
	var prev []byte
	for i := range ops {
		k := ops[i].Key
		if len(k) <= head+partition.BucketBytes || !bytes.Equal(k[:head], ref) {
			if bytes.HasPrefix(k, ref) || len(others) == bucketOrderOthersMax {
				return nil, false
			}
			others = append(others, int32(i))
			continue
		}
		rest := k[head+partition.BucketBytes:]
		if prev != nil && bytes.Compare(prev, rest) >= 0 {
			return nil, false
		}
		prev = rest
		counts[binary.BigEndian.Uint16(k[head:])]++
	}
	// Other keys do not start with ref: each sorts before every row or
	// after them all.
	slices.SortFunc(others, func(x, y int32) int { return bytes.Compare(ops[x].Key, ops[y].Key) })
	before := 0
	for before < len(others) && bytes.Compare(ops[others[before]].Key, ref) < 0 {
		before++
	}
	order = make([]int32, len(ops))
	copy(order, others[:before])
	at := int32(before)
	for d, n := range counts {
		counts[d] = at
		at += n
	}
	copy(order[at:], others[before:])
	for i := range ops {
		k := ops[i].Key
		if len(k) <= head+partition.BucketBytes || !bytes.Equal(k[:head], ref) {
			continue
		}
		d := binary.BigEndian.Uint16(k[head:])
		order[counts[d]] = int32(i)
		counts[d]++
	}
	return order, true
}

// byteArena hands out append-only byte slices from shared chunks: a few
// allocations per commit instead of one per encoded row.
type byteArena struct {
	buf []byte
}

const (
	arenaChunkMin = 16 << 10
	arenaChunkMax = 1 << 20
)

// alloc returns an empty slice with at least n bytes of capacity, at the
// free end of the current chunk; pass what was appended to used.
func (a *byteArena) alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		size := min(max(arenaChunkMin, 2*cap(a.buf)), arenaChunkMax)
		a.buf = make([]byte, 0, max(size, n))
	}
	return a.buf[len(a.buf):len(a.buf)]
}

// used records that enc (an append to a slice from alloc) is taken. If the
// append outgrew the slice it was reallocated elsewhere and the chunk is
// left as it was.
func (a *byteArena) used(from, enc []byte) {
	if len(enc) > 0 && len(from) == 0 && cap(from) >= len(enc) && &from[:1][0] == &enc[0] {
		a.buf = a.buf[:len(a.buf)+len(enc)]
	}
}

// sortOps sorts ops by key. A commit's keys share long prefixes (the
// table's, then its bucket's) and lie scattered in memory, so comparing
// them with bytes.Compare is most of a large commit's sort; this sorts by
// 8-byte chunks of the keys held beside their index instead (an MSD sort:
// a level where every key has the same chunk is skipped without sorting,
// and only runs of keys that tie go on to the next chunk).
func sortOps(ops []kv.Op) {
	if len(ops) < 2 {
		return
	}
	refs := make([]opChunk, len(ops))
	for i := range refs {
		refs[i].op = int32(i)
	}
	sortKeyChunks(ops, opKey, refs, 0)
	order := make([]int32, len(refs))
	for j, r := range refs {
		order[j] = r.op
	}
	permute(ops, order)
}

func opKey(op *kv.Op) []byte { return op.Key }

func bytesKey(b *[]byte) []byte { return *b }

// opChunk is an op's index and the 16-byte chunk of its key being sorted
// on, as two big-endian numbers.
type opChunk struct {
	hi, lo uint64
	// ends is how many key bytes the chunk holds when the key ends in
	// it (0-16), or 17 when the key goes on: with equal chunks (zero
	// padded) a key ending sooner sorts first.
	ends uint8
	op   int32
}

// chunkBytes is how many key bytes an opChunk holds. A table row's key is
// its table's prefix, a bucket and the primary key: 16 bytes from where
// the keys first differ hold all of a short key, so a large commit sorts
// with one pass over its keys in the order they were written (which is
// the order they lie in memory) and needs no second pass over its ties
// in sorted order, a cache miss each.
const chunkBytes = 16

func (c *opChunk) sameChunk(d *opChunk) bool {
	return c.hi == d.hi && c.lo == d.lo && c.ends == d.ends
}

// sortKeyChunks sorts refs by the keys of their items (key(&items[ref.op]))
// from byte depth on (the keys agree before it).
func sortKeyChunks[T any](items []T, key func(*T) []byte, refs []opChunk, depth int) {
	if len(refs) > 8 && depth == 0 {
		// Skip the prefix every key shares (a table's) in one pass.
		depth = commonPrefix(items, key, refs)
	}
	for len(refs) > 1 {
		if len(refs) <= 8 {
			slices.SortFunc(refs, func(x, y opChunk) int { return bytes.Compare(key(&items[x.op])[depth:], key(&items[y.op])[depth:]) })
			return
		}
		same := true
		for i := range refs {
			r := &refs[i]
			r.hi, r.lo, r.ends = keyChunk(key(&items[r.op]), depth)
			same = same && r.sameChunk(&refs[0])
		}
		if same {
			if refs[0].ends <= chunkBytes {
				return // all the same key
			}
			depth += chunkBytes
			continue
		}
		if len(refs) >= radixMin {
			radixSort(refs)
		} else {
			slices.SortFunc(refs, func(x, y opChunk) int {
				switch {
				case x.hi != y.hi:
					return cmpUint64(x.hi, y.hi)
				case x.lo != y.lo:
					return cmpUint64(x.lo, y.lo)
				}
				return int(x.ends) - int(y.ends)
			})
		}
		for i := 0; i < len(refs); {
			j := i + 1
			for j < len(refs) && refs[j].sameChunk(&refs[i]) {
				j++
			}
			if refs[i].ends > chunkBytes && j-i > 1 {
				sortKeyChunks(items, key, refs[i:j], depth+chunkBytes)
			}
			i = j
		}
		return
	}
}

func cmpUint64(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// commonPrefix is the length of the prefix the keys of refs share.
func commonPrefix[T any](items []T, key func(*T) []byte, refs []opChunk) int {
	first := key(&items[refs[0].op])
	n := len(first)
	for _, r := range refs[1:] {
		k := key(&items[r.op])
		n = min(n, len(k))
		if !bytes.Equal(k[:n], first[:n]) {
			i := 0
			for k[i] == first[i] {
				i++
			}
			n = i
		}
		if n == 0 {
			break
		}
	}
	return n
}

// radixMin is the size from which radixSort beats a comparison sort.
const radixMin = 512

// radixSort sorts refs by (hi, lo, ends): a stable LSD radix sort, a byte
// per pass, least significant first, skipping the bytes all refs share.
// One pass counts every byte position's digits; only the positions where
// the refs differ are then moved.
func radixSort(refs []opChunk) {
	const digits = 1 + 2*8
	digit := func(r *opChunk, pass int) uint8 {
		switch {
		case pass == 0:
			return r.ends
		case pass <= 8:
			return uint8(r.lo >> (8 * (pass - 1)))
		}
		return uint8(r.hi >> (8 * (pass - 9)))
	}
	var counts [digits][256]int
	for i := range refs {
		r := &refs[i]
		counts[0][r.ends]++
		for b := range 8 {
			counts[1+b][uint8(r.lo>>(8*b))]++
			counts[9+b][uint8(r.hi>>(8*b))]++
		}
	}
	src, dst := refs, []opChunk(nil)
	for pass := range digits {
		start := &counts[pass]
		if start[digit(&src[0], pass)] == len(src) {
			continue
		}
		if dst == nil {
			dst = make([]opChunk, len(refs))
		}
		at := 0
		for d, n := range start {
			start[d] = at
			at += n
		}
		for i := range src {
			d := digit(&src[i], pass)
			dst[start[d]] = src[i]
			start[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &refs[0] {
		copy(refs, src)
	}
}

// keyChunk returns the 16 bytes of key from depth on (zero padded) as two
// big-endian numbers, and how many of them the key holds (17: more
// follow).
func keyChunk(key []byte, depth int) (hi, lo uint64, ends uint8) {
	rest := key[depth:]
	if len(rest) > chunkBytes {
		return binary.BigEndian.Uint64(rest), binary.BigEndian.Uint64(rest[8:]), chunkBytes + 1
	}
	var b [chunkBytes]byte
	copy(b[:], rest)
	return binary.BigEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[8:]), uint8(len(rest))
}

// getMany reads keys (in any order, repeats allowed) through r in one
// ordered pass (kv.GetSorted) and calls fn(i, value, ok) for every keys[i],
// in key order. A batch of keys costs a sort instead of a search of the
// store from the top for each (a commit's or a lookup's keys are spread
// over the buckets, so they never arrive in order). value is valid only
// during the call.
//
// prefix, when not nil, is a prefix of every key (their table's): if r
// holds no row under it (a table being loaded for the first time), every
// key is absent, which one seek tells.
func getMany(r kv.Reader, prefix []byte, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	if prefix != nil && len(keys) > 1 {
		empty, err := holdsNone(r, prefix)
		if err != nil {
			return err
		}
		if empty {
			for i := range keys {
				if err := fn(i, nil, false); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if len(keys) < 2 {
		for i, k := range keys {
			v, ok, err := r.Get(k)
			if err != nil {
				return err
			}
			if err := fn(i, v, ok); err != nil {
				return err
			}
		}
		return nil
	}
	refs := make([]opChunk, len(keys))
	for i := range refs {
		refs[i].op = int32(i)
	}
	sortKeyChunks(keys, bytesKey, refs, 0)
	// The distinct keys in order, and where each one's refs start.
	sorted := make([][]byte, 0, len(keys))
	starts := make([]int32, 0, len(keys)+1)
	for j, ref := range refs {
		if j > 0 && bytes.Equal(keys[ref.op], keys[refs[j-1].op]) {
			continue
		}
		sorted = append(sorted, keys[ref.op])
		starts = append(starts, int32(j))
	}
	starts = append(starts, int32(len(refs)))
	return kv.GetSorted(r, sorted, func(u int, v []byte, ok bool) error {
		for j := starts[u]; j < starts[u+1]; j++ {
			if err := fn(int(refs[j].op), v, ok); err != nil {
				return err
			}
		}
		return nil
	})
}

// holdsNone reports whether r holds no key under prefix (one seek).
func holdsNone(r kv.Reader, prefix []byte) (bool, error) {
	empty := true
	err := r.Scan(prefix, kv.PrefixEnd(prefix), func(k, v []byte) error {
		empty = false
		return kv.ErrStop
	})
	return empty, err
}
