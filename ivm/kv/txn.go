package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/RaduBerinde/btreemap"
)

// pendingKind is what a buffered write does to its key.
type pendingKind uint8

const (
	pendingPut pendingKind = iota
	pendingDelete
	// pendingMerge is a (folded) merge operand whose base is the base
	// Reader's value.
	pendingMerge
)

// pendingWrite is one buffered write.
type pendingWrite struct {
	key   []byte
	value []byte
	hash  uint64
	kind  pendingKind
}

// overlayArenaChunk is the allocation unit of a Txn's key/value arena: one
// allocation per chunk instead of one per write. An unsized Txn's first
// chunks start at overlayArenaFirstChunk and double up to it, so a Txn
// with a few writes (an ad-hoc point query's one-shot circuit) does not
// allocate and clear 64 KiB.
const (
	overlayArenaChunk      = 64 << 10
	overlayArenaFirstChunk = 512
)

// overlayTxn is a Txn over a base Reader. Pending writes are a slice
// indexed by a hash map (point reads and writes cost one map access); the
// ordered index Scan needs is a B-tree built lazily — only keys written
// since the last Scan are inserted when a Scan comes — and Batch sorts
// once (or walks the index, when Scans ordered most writes already). Keys and values are copied into a chunked arena.
type overlayTxn struct {
	base    Reader
	pending []pendingWrite
	// index is an open-addressing hash table (linear probing) of
	// pending-write numbers + 1; 0 is empty. Entries are never removed.
	index []int32
	// ordered indexes pending[:orderedN] by key.
	ordered  *btreemap.BTreeMap[treeKey, int32]
	orderedN int
	arena    []byte
}

// NewTxn returns an epoch Txn reading base and buffering writes. The base
// must not change while the Txn is in use.
func NewTxn(base Reader) Txn {
	return &overlayTxn{base: base}
}

// NewTxnSized is NewTxn with room reserved for about writes distinct keys
// (an owner passes the previous epoch's batch length): the pending writes,
// their index and the arena are allocated once at their final size instead
// of growing by doubling — each doubling copied the pending writes and
// rehashed the index, and the large fresh arrays cost page faults.
func NewTxnSized(base Reader, writes int) Txn {
	t := &overlayTxn{base: base}
	if writes = min(writes, txnReserveWritesMax); writes > 0 {
		t.pending = make([]pendingWrite, 0, writes)
		size := 256
		for size < 2*writes+2 {
			size *= 2
		}
		t.index = make([]int32, size)
		t.arena = make([]byte, 0, max(overlayArenaChunk, writes*txnReserveBytesPerWrite))
	}
	return t
}

const (
	// txnReserveWritesMax caps what NewTxnSized reserves, so one huge
	// epoch does not make every later one allocate as much.
	txnReserveWritesMax = 1 << 20
	// txnReserveBytesPerWrite is the arena room reserved per write: an
	// operator key (18-byte prefix and a short user key) and a small
	// value.
	txnReserveBytesPerWrite = 48
)

// lookup returns the pending write for key (with hash h), or the index
// position where it would go.
func (t *overlayTxn) lookup(key []byte, h uint64) (int32, uint64, bool) {
	if len(t.index) == 0 {
		return 0, 0, false
	}
	mask := uint64(len(t.index) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.index[i]
		if e == 0 {
			return 0, i, false
		}
		if p := &t.pending[e-1]; p.hash == h && bytes.Equal(p.key, key) {
			return e - 1, i, true
		}
	}
}

// growIndex doubles the index and reinserts every pending write.
func (t *overlayTxn) growIndex() {
	t.index = make([]int32, max(256, 2*len(t.index)))
	mask := uint64(len(t.index) - 1)
	for n := range t.pending {
		i := t.pending[n].hash & mask
		for t.index[i] != 0 {
			i = (i + 1) & mask
		}
		t.index[i] = int32(n + 1)
	}
}

// resolve returns a pending write's effect: its value and whether the key
// exists.
func (t *overlayTxn) resolve(p *pendingWrite) ([]byte, bool, error) {
	switch p.kind {
	case pendingPut:
		return p.value, true, nil
	case pendingDelete:
		return nil, false, nil
	}
	base, ok, err := t.base.Get(p.key)
	if err != nil {
		return nil, false, err
	}
	v, err := mergeOne(p.key, base, ok, p.value)
	return v, err == nil, err
}

func (t *overlayTxn) Get(key []byte) ([]byte, bool, error) {
	if i, _, ok := t.lookup(key, Hash(key)); ok {
		return t.resolve(&t.pending[i])
	}
	return t.base.Get(key)
}

// copyIn copies b into the arena (capacity-capped so appends cannot
// overwrite a neighbour).
func (t *overlayTxn) copyIn(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	if cap(t.arena)-len(t.arena) < len(b) {
		chunk := min(overlayArenaChunk, max(overlayArenaFirstChunk, 2*cap(t.arena)))
		t.arena = make([]byte, 0, max(chunk, len(b)))
	}
	n := len(t.arena)
	t.arena = append(t.arena, b...)
	return t.arena[n:len(t.arena):len(t.arena)]
}

func (t *overlayTxn) set(key, value []byte, kind pendingKind) error {
	h := Hash(key)
	i, pos, ok := t.lookup(key, h)
	return t.setAt(key, value, kind, h, i, pos, ok)
}

// ApplyOp implements OpApplier.
func (t *overlayTxn) ApplyOp(op Op) (bool, error) {
	h := Hash(op.Key)
	i, pos, ok := t.lookup(op.Key, h)
	existed := ok && t.pending[i].kind != pendingDelete
	if !ok {
		var err error
		if _, existed, err = t.base.Get(op.Key); err != nil {
			return false, err
		}
	}
	kind := pendingPut
	switch {
	case op.Delete:
		kind = pendingDelete
	case op.Merge:
		kind = pendingMerge
	}
	return existed, t.setAt(op.Key, op.Value, kind, h, i, pos, ok)
}

// setAt is set of key (hash h), whose lookup gave i, pos and ok.
func (t *overlayTxn) setAt(key, value []byte, kind pendingKind, h uint64, i int32, pos uint64, ok bool) error {
	if !ok {
		t.pending = append(t.pending, pendingWrite{key: t.copyIn(key), value: t.copyIn(value), hash: h, kind: kind})
		if 2*len(t.pending) > len(t.index) {
			t.growIndex()
		} else {
			t.index[pos] = int32(len(t.pending))
		}
		return nil
	}
	p := &t.pending[i]
	if kind == pendingMerge {
		// Fold the operand into what is pending: onto a put or delete it
		// gives a value, onto an operand a combined operand (the law is
		// associative).
		var err error
		switch p.kind {
		case pendingPut:
			value, err = mergeOne(key, p.value, true, value)
			kind = pendingPut
		case pendingDelete:
			value, err = mergeOne(key, nil, false, value)
			kind = pendingPut
		case pendingMerge:
			value, err = MergeValues(key, nil, false, [][]byte{p.value, value})
		}
		if err != nil {
			return err
		}
	}
	p.value, p.kind = t.copyIn(value), kind
	return nil
}

func (t *overlayTxn) Put(key, value []byte) error { return t.set(key, value, pendingPut) }

func (t *overlayTxn) Delete(key []byte) error { return t.set(key, nil, pendingDelete) }

// Merge implements Merger.
func (t *overlayTxn) Merge(key, operand []byte) error { return t.set(key, operand, pendingMerge) }

// order brings the ordered index up to date.
func (t *overlayTxn) order() {
	if t.ordered == nil {
		t.ordered = newTree[int32]()
	}
	for ; t.orderedN < len(t.pending); t.orderedN++ {
		t.ordered.ReplaceOrInsert(makeTreeKey(t.pending[t.orderedN].key), int32(t.orderedN))
	}
}

// Scan merges the base scan with the overlay in key order. The overlay's
// entries in range are collected first (they are this epoch's writes, so
// few compared with the base), then merged as the base is scanned; pending
// merge operands are resolved against the base value they meet.
func (t *overlayTxn) Scan(start, end []byte, fn func(k, v []byte) error) error {
	var over []int32
	if len(t.pending) > 0 {
		t.order()
		_ = scanTree(t.ordered, start, end, func(_ []byte, i int32) error {
			over = append(over, i)
			return nil
		})
	}
	next := 0
	// emit emits pending write p over base value (v, ok).
	emit := func(p *pendingWrite, v []byte, ok bool) error {
		switch p.kind {
		case pendingDelete:
			return nil
		case pendingMerge:
			m, err := mergeOne(p.key, v, ok, p.value)
			if err != nil {
				return err
			}
			return fn(p.key, m)
		}
		return fn(p.key, p.value)
	}
	// emitOverlayBefore emits overlay entries strictly before key (all of
	// them when all is set).
	emitOverlayBefore := func(key []byte, all bool) error {
		for next < len(over) && (all || bytes.Compare(t.pending[over[next]].key, key) < 0) {
			p := &t.pending[over[next]]
			next++
			if err := emit(p, nil, false); err != nil {
				return err
			}
		}
		return nil
	}
	stopped := false
	err := t.base.Scan(start, end, func(k, v []byte) error {
		if err := emitOverlayBefore(k, false); err != nil {
			stopped = err == ErrStop
			return err
		}
		var err error
		if next < len(over) && bytes.Equal(t.pending[over[next]].key, k) {
			p := &t.pending[over[next]]
			next++
			err = emit(p, v, true)
		} else {
			err = fn(k, v)
		}
		stopped = err == ErrStop
		return err
	})
	if err == nil && !stopped {
		err = emitOverlayBefore(nil, true)
	}
	if err == ErrStop {
		return nil
	}
	return err
}

func (t *overlayTxn) Batch() *WriteBatch {
	b := &WriteBatch{Ops: make([]Op, 0, len(t.pending))}
	add := func(p *pendingWrite) {
		b.Ops = append(b.Ops, Op{Key: p.key, Value: p.value, Delete: p.kind == pendingDelete, Merge: p.kind == pendingMerge})
	}
	// NB: the ordered index is used only when it holds most writes
	// already: inserting many writes into the B-tree (a Scan early in the
	// epoch, then many writes) costs several times the radix sort of all.
	if t.orderedN > 0 && 2*t.orderedN >= len(t.pending) {
		t.order()
		t.ordered.AscendFunc(btreemap.Min[treeKey](), btreemap.Max[treeKey](), func(_ treeKey, i int32) bool {
			add(&t.pending[i])
			return true
		})
		return b
	}
	for _, i := range t.sortedPending() {
		add(&t.pending[i])
	}
	return b
}

// UnsortedBatch implements UnsortedBatcher.
func (t *overlayTxn) UnsortedBatch() *WriteBatch {
	b := &WriteBatch{Ops: make([]Op, len(t.pending))}
	for i := range t.pending {
		p := &t.pending[i]
		b.Ops[i] = Op{Key: p.key, Value: p.value, Delete: p.kind == pendingDelete, Merge: p.kind == pendingMerge}
	}
	return b
}

// sortedPending returns the pending writes' numbers in key order. Keys
// of one epoch mostly share a long prefix (namespace, kind, op id), so
// each is represented by the eight bytes after the prefix common to all
// of them (its head), the heads are radix sorted, and a run of keys that
// agree on their heads is sorted the same way by the bytes after the
// prefix common to the run (sortKeysFrom): an epoch writing several
// arrangements has heads that tell the arrangements apart and little
// else, and comparing whole keys within each was most of the sort.
func (t *overlayTxn) sortedPending() []int32 {
	return sortOrder(len(t.pending), func(n int32) []byte { return t.pending[n].key })
}

// SortOrder returns the positions of keys, which must be distinct, in
// ascending key order: radix sorted eight bytes at a time after the
// prefix common to each run of keys (see sortedPending).
func SortOrder(keys [][]byte) []int32 {
	return sortOrder(len(keys), func(n int32) []byte { return keys[n] })
}

// sortOrder returns 0..n-1 ordered by key.
func sortOrder(n int, key func(n int32) []byte) []int32 {
	items := make([]sortItem, n)
	for i := range items {
		items[i].n = int32(i)
	}
	items = sortKeysFrom(items, make([]sortItem, len(items)), 0, key)
	order := make([]int32, len(items))
	for i, it := range items {
		order[i] = it.n
	}
	return order
}

// sortKeysFrom sorts items by their (distinct) keys, which agree on their
// first from bytes, using scratch of the same length, and returns the
// sorted slice (items or scratch): a run too short to radix sort, or of
// keys that end within the bytes compared so far, is comparison sorted.
func sortKeysFrom(items, scratch []sortItem, from int, key func(n int32) []byte) []sortItem {
	longest := 0
	for _, it := range items {
		longest = max(longest, len(key(it.n)))
	}
	if len(items) < radixSortMin || from >= longest {
		slices.SortFunc(items, func(x, y sortItem) int { return bytes.Compare(key(x.n), key(y.n)) })
		return items
	}
	first := key(items[0].n)
	common := len(first)
	for _, it := range items[1:] {
		k := key(it.n)
		n := min(common, len(k))
		j := from
		for j < n && k[j] == first[j] {
			j++
		}
		common = j
		if common == from {
			break
		}
	}
	for i := range items {
		var head [8]byte
		if k := key(items[i].n); len(k) > common {
			copy(head[:], k[common:])
		}
		items[i].head = binary.BigEndian.Uint64(head[:])
	}
	sorted := radixSortHeads(items, scratch)
	if &sorted[0] != &items[0] {
		scratch = items
	}
	// Equal heads (keys that agree on those eight bytes) are ordered by
	// the bytes after them.
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j].head == sorted[i].head {
			j++
		}
		if j-i > 1 {
			if run := sortKeysFrom(sorted[i:j], scratch[i:j], common+8, key); &run[0] != &sorted[i] {
				copy(sorted[i:j], run)
			}
		}
		i = j
	}
	return sorted
}

// sortItem is a pending write's number and the head it is sorted by.
type sortItem struct {
	head uint64
	n    int32
}

// radixSortHeads sorts items by head (stably; LSD radix sort a byte at a
// time, skipping bytes in which all heads agree) using scratch of the same
// length, and returns the sorted slice (items or scratch).
func radixSortHeads(items, scratch []sortItem) []sortItem {
	if len(items) < radixSortMin {
		slices.SortStableFunc(items, func(x, y sortItem) int { return cmp.Compare(x.head, y.head) })
		return items
	}
	var or, and uint64 = 0, ^uint64(0)
	for _, it := range items {
		or |= it.head
		and &= it.head
	}
	varying := or ^ and
	for shift := uint(0); shift < 64; shift += 8 {
		if (varying>>shift)&0xff == 0 {
			continue
		}
		var counts [256]int
		for _, it := range items {
			counts[(it.head>>shift)&0xff]++
		}
		at := 0
		for b, c := range counts {
			counts[b] = at
			at += c
		}
		for _, it := range items {
			b := (it.head >> shift) & 0xff
			scratch[counts[b]] = it
			counts[b]++
		}
		items, scratch = scratch, items
	}
	return items
}

// radixSortMin is the batch size from which radix sorting the heads beats
// a comparison sort.
const radixSortMin = 256
