package slate

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/cespare/xxhash/v2"
)

// GetSorted looks up keys, which must be in strictly ascending order, as
// one ordered pass and calls fn(i, value, ok) for keys[i] in order, with
// the same answers as Get. The pass reuses positions between keys: each
// SST keeps its metadata and last data block, so a batch of keys costs
// less than the same Gets one at a time (a memtable answers each key
// through its point index either way). value is valid only during
// the call; an error from fn ends the pass and is returned.
func (d *DB) GetSorted(ctx context.Context, keys [][]byte, opts ReadOptions, fn func(i int, value []byte, ok bool) error) error {
	if err := d.check(); err != nil {
		return err
	}
	var mts [4]*memtable
	v := view{memtables: d.memtablesNewestFirst(mts[:0]), l0: d.manifest.L0, runs: d.manifest.SortedRuns,
		tables: d.tables, op: d.opts.MergeOperator, readSeq: d.readSeq(opts)}
	return v.getSorted(ctx, keys, fn)
}

// sstCursor is what an ordered pass remembers about one SST: its metadata
// and the data block it read last.
type sstCursor struct {
	meta     *sstMeta
	blockIdx int
	rows     []row
}

// runCursor is what an ordered pass remembers about one sorted run: the
// position of the first SST that may hold the next key, and the cursor of
// that SST (sst is its position; -1: none yet). NB: keys ascend, so a run
// never goes back to an SST it left, and one cursor per run is enough.
type runCursor struct {
	pos, sst int
	cursor   sstCursor
}

// getSorted is get for ascending keys (see DB.GetSorted).
func (v *view) getSorted(ctx context.Context, keys [][]byte, fn func(i int, value []byte, ok bool) error) error {
	// NB: cursors are kept in slices beside v.l0 and v.runs, not in a map
	// by SST: a map lookup per SST per key was a tenth of the pass.
	l0 := make([]sstCursor, len(v.l0))
	for x := range l0 {
		l0[x].blockIdx = -1
	}
	runs := make([]runCursor, len(v.runs))
	for r := range runs {
		runs[r].sst = -1
	}
	// hashes[x] are the point hashes of the current chunk of keys in
	// v.memtables[x], whose index slots were touched together (touchPoints).
	hashes := make([][pointTouchRows]uint64, len(v.memtables))
	// keyHashes are the chunk's keys' filter hashes (touchFilters).
	var keyHashes [pointTouchRows]uint64
	for i, key := range keys {
		if i > 0 && bytes.Compare(keys[i-1], key) >= 0 {
			return fmt.Errorf("slate: GetSorted: keys not strictly ascending at %d", i)
		}
		if i%pointTouchRows == 0 {
			chunk := keys[i:min(i+pointTouchRows, len(keys))]
			for x, mt := range v.memtables {
				v.touched += touchPoints(mt, chunk, sameKey, &hashes[x])
			}
			v.touchFilters(chunk, &keyHashes, l0, runs)
		}
		value, ok, err := v.getAt(ctx, key, hashes, keyHashes[i%pointTouchRows], i%pointTouchRows, l0, runs)
		if err != nil {
			return err
		}
		if err := fn(i, value, ok); err != nil {
			return err
		}
	}
	return nil
}

// getAt is get through an ordered pass's cursors (l0[x] is v.l0[x]'s,
// runs[r] v.runs[r]'s; a memtable answers through its point index:
// hashes[x][at] is key's point hash in v.memtables[x]; h is its filter
// hash, xxhash.Sum64).
func (v *view) getAt(ctx context.Context, key []byte, hashes [][pointTouchRows]uint64, h uint64, at int, l0 []sstCursor, runs []runCursor) ([]byte, bool, error) {
	pv := pointVersions{readSeq: v.readSeq}
	for x, mt := range v.memtables {
		for n := mt.findPointHashed(key, hashes[x][at], v.readSeq); n != 0; n = mt.next(n, 0) {
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
	for x, sst := range v.l0 {
		rows, err := v.tables.versionsAt(ctx, sst, key, h, &l0[x])
		if err != nil {
			return nil, false, err
		}
		pv.addAll(rows)
		if pv.done() {
			return resolveVersions(v.op, key, pv.versions)
		}
	}
	for r, run := range v.runs {
		rc := &runs[r]
		from := rc.pos
		i := from + sort.Search(len(run.SSTs)-from, func(i int) bool { return bytes.Compare(run.SSTs[from+i].LastKey, key) >= 0 })
		rc.pos = i
		if i == len(run.SSTs) {
			continue
		}
		if rc.sst != i {
			rc.sst, rc.cursor = i, sstCursor{blockIdx: -1}
		}
		rows, err := v.tables.versionsAt(ctx, run.SSTs[i], key, h, &rc.cursor)
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

// touchFilters computes the filter hashes of keys into hashes and loads
// the byte each one's first bloom probe reads in the filters of the SSTs
// whose cursors already hold metadata and whose range holds the key, in
// one pass of independent loads (as touchPoints does for memtables): a
// large SST's filter is far larger than the CPU's caches. A run's SST is
// the one its cursor is on; a key past it is not touched (getAt finds its
// SST).
func (v *view) touchFilters(keys [][]byte, hashes *[pointTouchRows]uint64, l0 []sstCursor, runs []runCursor) {
	var sink uint64
	for at, key := range keys {
		h := xxhash.Sum64(key)
		hashes[at] = h
		for x, sst := range v.l0 {
			if m := l0[x].meta; m != nil && inSST(sst, key) {
				sink += uint64(bloomFirstByte(m.filter, h))
			}
		}
		for r, run := range v.runs {
			rc := &runs[r]
			if m := rc.cursor.meta; m != nil && inSST(run.SSTs[rc.sst], key) {
				sink += uint64(bloomFirstByte(m.filter, h))
			}
		}
	}
	v.touched += sink
}

// inSST reports whether key is within info's key range.
func inSST(info SSTInfo, key []byte) bool {
	return bytes.Compare(key, info.FirstKey) >= 0 && bytes.Compare(key, info.LastKey) <= 0
}

// bloomFirstByte is the filter byte bloomMayContain(filter, h) reads first.
func bloomFirstByte(filter []byte, h uint64) byte {
	if len(filter) <= 4 {
		return 0
	}
	bits := filter[4:]
	return bits[(h%uint64(len(bits)*8))/8]
}

// versionsAt is versions through an ordered pass's cursor on the SST: the
// metadata is looked up once, and a key in the block read last is served
// without another block cache lookup.
func (t *tableReader) versionsAt(ctx context.Context, info SSTInfo, key []byte, keyHash uint64, c *sstCursor) ([]row, error) {
	if !inSST(info, key) {
		return nil, nil
	}
	if c.meta == nil {
		m, err := t.sstMeta(ctx, info)
		if err != nil {
			return nil, err
		}
		c.meta = m
	}
	m := c.meta
	if !bloomMayContain(m.filter, keyHash) {
		return nil, nil
	}
	from := max(c.blockIdx, 0)
	i := from + sort.Search(len(m.index)-from, func(i int) bool { return bytes.Compare(m.index[from+i].lastKey, key) >= 0 })
	var out []row
	for ; i < len(m.index); i++ {
		rows := c.rows
		if i != c.blockIdx {
			var err error
			if rows, err = t.block(ctx, info, m, i, true); err != nil {
				return nil, err
			}
			c.blockIdx, c.rows = i, rows
		}
		j := sort.Search(len(rows), func(j int) bool { return bytes.Compare(rows[j].key, key) >= 0 })
		for ; j < len(rows) && bytes.Equal(rows[j].key, key); j++ {
			out = append(out, rows[j])
		}
		if j < len(rows) {
			break
		}
	}
	return out, nil
}
