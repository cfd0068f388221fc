package slate

import (
	"bytes"
	"context"
	"sort"

	"github.com/cespare/xxhash/v2"
)

// view is a consistent set of read sources at one sequence number: the
// memtables (newest first), L0 (newest first) and sorted runs (newest first).
// Every source holds strictly newer rows than the ones after it, so a point
// lookup can stop at the first source with a value or tombstone.
type view struct {
	memtables []*memtable
	l0        []SSTInfo
	runs      []SortedRun
	tables    *tableReader
	op        MergeOperator
	readSeq   uint64
	// touched keeps GetSorted's touching loads (touchPoints,
	// touchFilters) from being optimized away; a view is one reader's.
	touched uint64
}

// get returns key's value as of v.readSeq.
//
// NB: the hot path of every commit (one lookup per written row): no
// closures, no iterator and no copy of the key on the way.
func (v *view) get(ctx context.Context, key []byte) ([]byte, bool, error) {
	pv := pointVersions{readSeq: v.readSeq}
	for _, mt := range v.memtables {
		// (key asc, seq desc): the first node at or after (key, readSeq)
		// is the newest visible version.
		for n := mt.findPoint(key, v.readSeq); n != 0; n = mt.next(n, 0) {
			r := mt.row(n)
			if !bytes.Equal(r.key, key) {
				break
			}
			pv.add(r)
		}
		if pv.done() {
			return resolveVersions(v.op, key, pv.versions)
		}
	}
	h := xxhash.Sum64(key)
	for _, sst := range v.l0 {
		rows, err := v.tables.versions(ctx, sst, key, h)
		if err != nil {
			return nil, false, err
		}
		pv.addAll(rows)
		if pv.done() {
			return resolveVersions(v.op, key, pv.versions)
		}
	}
	for _, run := range v.runs {
		i := sort.Search(len(run.SSTs), func(i int) bool { return bytes.Compare(run.SSTs[i].LastKey, key) >= 0 })
		if i == len(run.SSTs) {
			continue
		}
		rows, err := v.tables.versions(ctx, run.SSTs[i], key, h)
		if err != nil {
			return nil, false, err
		}
		pv.addAll(rows)
		if pv.done() {
			break
		}
	}
	return resolveVersions(v.op, key, pv.versions)
}

// pointVersions collects one key's versions, newest first, down to the
// first value or tombstone.
type pointVersions struct {
	readSeq  uint64
	versions []row
}

// done reports whether versions already end in a value or tombstone.
func (p *pointVersions) done() bool {
	return len(p.versions) > 0 && p.versions[len(p.versions)-1].kind != KindMerge
}

func (p *pointVersions) add(r row) {
	// INVARIANT: versions strictly decrease in seq; a row seen in two
	// sources (same key and seq) is the same row, kept once.
	if r.seq <= p.readSeq && !p.done() && (len(p.versions) == 0 || r.seq < p.versions[len(p.versions)-1].seq) {
		p.versions = append(p.versions, r)
	}
}

func (p *pointVersions) addAll(rows []row) {
	for _, r := range rows {
		p.add(r)
	}
}

// sources builds row iterators over [start, end) for every source.
func (v *view) sources(ctx context.Context, start, end []byte, fillCache bool) []rowIterator {
	var out []rowIterator
	for _, mt := range v.memtables {
		out = append(out, mt.iter(start, end))
	}
	for _, sst := range v.l0 {
		out = append(out, v.tables.iter(ctx, sst, start, end, fillCache))
	}
	for _, run := range v.runs {
		out = append(out, &runIter{ctx: ctx, t: v.tables, ssts: run.SSTs, start: start, end: end, fill: fillCache})
	}
	return out
}

// runIter concatenates the SSTs of one sorted run that overlap [start, end).
type runIter struct {
	ctx   context.Context
	t     *tableReader
	ssts  []SSTInfo
	start []byte
	end   []byte
	fill  bool
	i     int
	cur   *sstIter
	init  bool
}

func (r *runIter) next() (row, bool, error) {
	if !r.init {
		r.init = true
		r.i = sort.Search(len(r.ssts), func(i int) bool { return bytes.Compare(r.ssts[i].LastKey, r.start) >= 0 })
	}
	for {
		if r.cur == nil {
			if r.i >= len(r.ssts) || (r.end != nil && bytes.Compare(r.ssts[r.i].FirstKey, r.end) >= 0) {
				return row{}, false, nil
			}
			r.cur = r.t.iter(r.ctx, r.ssts[r.i], r.start, r.end, r.fill)
			r.i++
		}
		row, ok, err := r.cur.next()
		if err != nil || ok {
			return row, ok, err
		}
		r.cur = nil
	}
}

// Iterator walks keys in ascending order over a range, yielding each live
// key's resolved value as of the read sequence number.
//
//	it := db.Scan(ctx, start, end, slate.ReadOptions{})
//	for it.Next() { use(it.Key(), it.Value()) }
//	if err := it.Err(); err != nil { ... }
//
// NB: an iterator reads the SSTs of the manifest current when it was made.
// Drain it before running Compact or GC in the same owner, or read from a
// checkpoint, so GC cannot delete an SST under it.
type Iterator struct {
	groups groupIter
	op     MergeOperator
	seq    uint64
	key    []byte
	value  []byte
	err    error
}

func (v *view) scan(ctx context.Context, start, end []byte, fillCache bool) *Iterator {
	if start == nil {
		start = []byte{}
	}
	return &Iterator{
		groups: groupIter{src: newMergingIter(v.sources(ctx, start, end, fillCache))},
		op:     v.op,
		seq:    v.readSeq,
	}
}

// Next advances to the next live key. It returns false at the end or on error.
func (it *Iterator) Next() bool {
	if it.err != nil {
		return false
	}
	for {
		key, versions, ok, err := it.groups.nextGroup()
		if err != nil {
			it.err = err
			return false
		}
		if !ok {
			return false
		}
		// NB: filtered in place: versions are the group iterator's,
		// overwritten by its next group anyway.
		visible := versions[:0]
		for _, r := range versions {
			if r.seq <= it.seq {
				visible = append(visible, r)
			}
		}
		value, live, err := resolveVersions(it.op, key, visible)
		if err != nil {
			it.err = err
			return false
		}
		if live {
			it.key, it.value = key, value
			return true
		}
	}
}

// Key is the current key (valid until the next call to Next).
func (it *Iterator) Key() []byte { return it.key }

// Value is the current value (valid until the next call to Next).
func (it *Iterator) Value() []byte { return it.value }

// Err is the error that stopped iteration, if any.
func (it *Iterator) Err() error { return it.err }

// PrefixEnd returns the smallest key greater than every key with prefix, or
// nil if there is none (prefix is all 0xff): Scan(prefix, PrefixEnd(prefix)).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
