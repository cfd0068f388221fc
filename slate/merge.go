package slate

import (
	"bytes"
	"container/heap"
)

// MergeOperator combines merge operands. It is called with the operands of one
// key oldest first, on top of base (hasBase false when there is no older value
// or the older version is a tombstone):
//
//	result = op(key, base, hasBase, [o1, o2, ..., on])
//
// It must be associative: folding a prefix first and applying the result as
// one operand must equal applying the operands one by one, i.e.
// op(k, b, true, [o1, o2]) == op(k, b, true, [op(k, nil, false, [o1, o2])]),
// because flush and compaction fold operand chains whose base lives in an
// older SST. Writer, compactor and readers must all use the same operator.
// Reading or compacting a merge row without an operator is an error
// (ErrMergeOperatorMissing), never a silent skip.
type MergeOperator func(key, base []byte, hasBase bool, operands [][]byte) ([]byte, error)

// resolveVersions turns one key's versions (newest first, all visible) into
// its value. ok is false when the key does not exist.
func resolveVersions(op MergeOperator, key []byte, versions []row) (value []byte, ok bool, err error) {
	var operands [][]byte // newest first
	for _, r := range versions {
		switch r.kind {
		case KindValue:
			if len(operands) == 0 {
				return r.value, true, nil
			}
			return applyMerge(op, key, r.value, true, operands)
		case KindTombstone:
			if len(operands) == 0 {
				return nil, false, nil
			}
			return applyMerge(op, key, nil, false, operands)
		case KindMerge:
			operands = append(operands, r.value)
		}
	}
	if len(operands) == 0 {
		return nil, false, nil
	}
	return applyMerge(op, key, nil, false, operands)
}

// applyMerge applies newest-first operands oldest first.
func applyMerge(op MergeOperator, key, base []byte, hasBase bool, newestFirst [][]byte) ([]byte, bool, error) {
	if op == nil {
		return nil, false, mergeMissingErr(key)
	}
	oldestFirst := make([][]byte, len(newestFirst))
	for i, o := range newestFirst {
		oldestFirst[len(newestFirst)-1-i] = o
	}
	v, err := op(key, base, hasBase, oldestFirst)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// collapseVersions rewrites one key's versions (newest first) for flush or
// compaction. Versions above retentionSeq are kept as they are (a snapshot
// may read them); at or below it only the newest resolved version survives:
// merge chains are folded onto their base, and a tombstone is dropped when
// dropTombstones (the output is the oldest data, nothing older to hide).
func collapseVersions(op MergeOperator, key []byte, versions []row, retentionSeq uint64, dropTombstones bool) ([]row, error) {
	var out []row
	i := 0
	for ; i < len(versions) && versions[i].seq > retentionSeq; i++ {
		out = append(out, versions[i])
	}
	if i == len(versions) {
		return out, nil
	}
	rest := versions[i:]
	newest := rest[0]
	switch newest.kind {
	case KindValue:
		return append(out, newest), nil
	case KindTombstone:
		if dropTombstones && len(out) == 0 {
			return out, nil
		}
		if dropTombstones {
			// Newer rows above the barrier may be merges that need "no base";
			// a dropped tombstone with nothing older gives the same answer.
			return out, nil
		}
		return append(out, newest), nil
	}
	// A merge chain: find its base.
	var operands [][]byte
	for j, r := range rest {
		switch r.kind {
		case KindMerge:
			operands = append(operands, r.value)
			continue
		case KindValue:
			v, _, err := applyMerge(op, key, r.value, true, operands)
			if err != nil {
				return nil, err
			}
			return append(out, row{key: key, seq: newest.seq, kind: KindValue, value: v}), nil
		case KindTombstone:
			v, _, err := applyMerge(op, key, nil, false, operands)
			if err != nil {
				return nil, err
			}
			return append(out, row{key: key, seq: newest.seq, kind: KindValue, value: v}), nil
		}
		_ = j
	}
	// No base in this input: fold the operands into one.
	if len(operands) == 1 && !dropTombstones {
		return append(out, newest), nil
	}
	v, _, err := applyMerge(op, key, nil, false, operands)
	if err != nil {
		return nil, err
	}
	kind := KindMerge
	if dropTombstones {
		kind = KindValue // nothing older exists: the fold is the value
	}
	return append(out, row{key: key, seq: newest.seq, kind: kind, value: v}), nil
}

// rowIterator yields rows in (key asc, seq desc) order.
type rowIterator interface {
	next() (row, bool, error)
}

// mergingIter merges several rowIterators into one (key asc, seq desc) stream.
type mergingIter struct {
	h       iterHeap
	started bool
	sources []rowIterator
	err     error
}

type heapItem struct {
	r   row
	src int
}

type iterHeap []heapItem

func (h iterHeap) Len() int { return len(h) }
func (h iterHeap) Less(i, j int) bool {
	if c := compareRows(h[i].r.key, h[i].r.seq, h[j].r.key, h[j].r.seq); c != 0 {
		return c < 0
	}
	return h[i].src < h[j].src
}
func (h iterHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)   { *h = append(*h, x.(heapItem)) }
func (h *iterHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

func newMergingIter(sources []rowIterator) *mergingIter {
	return &mergingIter{sources: sources}
}

func (m *mergingIter) next() (row, bool, error) {
	if m.err != nil {
		return row{}, false, m.err
	}
	if !m.started {
		m.started = true
		for i, s := range m.sources {
			r, ok, err := s.next()
			if err != nil {
				m.err = err
				return row{}, false, err
			}
			if ok {
				m.h = append(m.h, heapItem{r: r, src: i})
			}
		}
		heap.Init(&m.h)
	}
	if len(m.h) == 0 {
		return row{}, false, nil
	}
	top := m.h[0]
	r, ok, err := m.sources[top.src].next()
	if err != nil {
		m.err = err
		return row{}, false, err
	}
	if ok {
		m.h[0] = heapItem{r: r, src: top.src}
		heap.Fix(&m.h, 0)
	} else {
		heap.Pop(&m.h)
	}
	return top.r, true, nil
}

// groupIter groups a (key asc, seq desc) stream into one key's versions at a
// time, dropping exact duplicates (the same row seen in two sources).
type groupIter struct {
	src rowIterator
	// pending is the first row of the next group, when hasPending.
	pending    row
	hasPending bool
	done       bool
	// versions backs the versions nextGroup returns, reused by the next
	// call: a scan allocates nothing per key for them.
	versions []row
}

// nextGroup returns the next key and its versions (newest first), valid
// until the next call.
func (g *groupIter) nextGroup() (key []byte, versions []row, ok bool, err error) {
	if g.done {
		return nil, nil, false, nil
	}
	if !g.hasPending {
		r, ok, err := g.src.next()
		if err != nil || !ok {
			g.done = true
			return nil, nil, false, err
		}
		g.pending, g.hasPending = r, true
	}
	key = g.pending.key
	versions = append(g.versions[:0], g.pending)
	g.hasPending = false
	for {
		r, ok, err := g.src.next()
		if err != nil {
			return nil, nil, false, err
		}
		if !ok {
			g.done = true
			break
		}
		if !bytes.Equal(r.key, key) {
			g.pending, g.hasPending = r, true
			break
		}
		if r.seq == versions[len(versions)-1].seq {
			continue // duplicate
		}
		versions = append(versions, r)
	}
	g.versions = versions
	return key, versions, true, nil
}
