package slate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/cespare/xxhash/v2"
	"github.com/rockstream/rockstream/slate/objstore"
)

// SST layout (format version 2):
//
//	data block 0 | crc32c   ...   data block n | crc32c
//	filter block (bloom over distinct keys) | crc32c
//	index block (per data block: lastKey, offset, length) | crc32c
//	footer (sstFooterBytes): filterOff u64 | filterLen u64 | indexOff u64 |
//	        indexLen u64 | rows u64 | format u16 | magic u32 | crc32c u32
//
// Format 2 stores each data block as a compressed body (compress.go: the
// rows, compressed or not, then the codec); format 1 (still read) stored
// the rows as they are. The footer is the same in both. Lengths include
// each block's trailing checksum, which covers the stored (compressed)
// bytes. Every block is verified before it is decompressed and decoded,
// and the error names the object.

const (
	sstMagic         = 0x52535354 // "RSST"
	sstFormatVersion = 2
	// sstFormatRawBlocks: format 1, whose data blocks are uncompressed.
	sstFormatRawBlocks = 1
	sstFooterBytes     = 8*5 + 2 + 4 + 4
)

func appendBlock(dst, payload []byte) []byte {
	dst = append(dst, payload...)
	return binary.BigEndian.AppendUint32(dst, checksum(payload))
}

// verifyBlock checks and strips a block's checksum.
func verifyBlock(objectKey string, what string, b []byte) ([]byte, error) {
	if len(b) < 4 {
		return nil, corruptErr(objectKey, "%s block truncated (%d bytes)", what, len(b))
	}
	payload := b[:len(b)-4]
	if checksum(payload) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return nil, corruptErr(objectKey, "%s block checksum mismatch", what)
	}
	return payload, nil
}

// sstBuilder accumulates rows (in key asc, seq desc order) into an SST.
type sstBuilder struct {
	compressor       *compressor
	blockBytesTarget int
	bloomBitsPerKey  int
	// buf is the SST so far; the open block is buf[blockStart:] (rows are
	// appended in place, never copied from a separate block buffer).
	buf          []byte
	blockStart   int
	blockLastKey []byte
	index        []byte
	keyHashes    []uint64
	lastKey      []byte
	info         SSTInfo
}

func newSSTBuilder(c *compressor, blockBytes, bloomBitsPerKey int, sizeHint int64) *sstBuilder {
	// NB: headroom for the filter, index and footer appended at the end
	// (about 1.3 bytes per key and a few dozen per block): without it,
	// finish reallocated and copied the whole SST.
	return &sstBuilder{compressor: c, blockBytesTarget: blockBytes, bloomBitsPerKey: bloomBitsPerKey,
		buf: make([]byte, 0, sizeHint+sizeHint/16+int64(2*blockBytes)+4096)}
}

func (b *sstBuilder) add(r row) {
	if b.info.Rows == 0 {
		b.info.FirstKey = append([]byte(nil), r.key...)
		b.info.MinSeq, b.info.MaxSeq = r.seq, r.seq
	}
	if b.info.Rows == 0 || !bytes.Equal(r.key, b.lastKey) {
		b.keyHashes = append(b.keyHashes, xxhash.Sum64(r.key))
		b.lastKey = append(b.lastKey[:0], r.key...)
	}
	b.info.Rows++
	b.info.MinSeq = min(b.info.MinSeq, r.seq)
	b.info.MaxSeq = max(b.info.MaxSeq, r.seq)
	switch r.kind {
	case KindTombstone:
		b.info.Tombstones++
	case KindMerge:
		b.info.Merges++
	}
	b.buf = appendRow(b.buf, r)
	b.blockLastKey = append(b.blockLastKey[:0], r.key...)
	if len(b.buf)-b.blockStart >= b.blockBytesTarget {
		b.finishBlock()
	}
}

func (b *sstBuilder) estimatedBytes() int { return len(b.buf) }

func (b *sstBuilder) finishBlock() {
	off := b.blockStart
	if len(b.buf) == off {
		return
	}
	// The same bytes appendBlock writes of the compressed body: payload,
	// then its checksum.
	b.buf = b.compressor.compressInPlace(b.buf, off)
	b.buf = binary.BigEndian.AppendUint32(b.buf, checksum(b.buf[off:]))
	b.index = binary.AppendUvarint(b.index, uint64(len(b.blockLastKey)))
	b.index = append(b.index, b.blockLastKey...)
	b.index = binary.AppendUvarint(b.index, uint64(off))
	b.index = binary.AppendUvarint(b.index, uint64(len(b.buf)-off))
	b.blockStart = len(b.buf)
}

// finish returns the SST bytes; info.Key and info.Size are set by the caller.
func (b *sstBuilder) finish() ([]byte, SSTInfo) {
	b.finishBlock()
	b.info.LastKey = append([]byte(nil), b.lastKey...)
	filterOff := len(b.buf)
	b.buf = appendBlock(b.buf, buildBloom(b.keyHashes, b.bloomBitsPerKey))
	indexOff := len(b.buf)
	b.buf = appendBlock(b.buf, b.index)
	var footer []byte
	footer = binary.BigEndian.AppendUint64(footer, uint64(filterOff))
	footer = binary.BigEndian.AppendUint64(footer, uint64(indexOff-filterOff))
	footer = binary.BigEndian.AppendUint64(footer, uint64(indexOff))
	footer = binary.BigEndian.AppendUint64(footer, uint64(len(b.buf)-indexOff))
	footer = binary.BigEndian.AppendUint64(footer, uint64(b.info.Rows))
	footer = binary.BigEndian.AppendUint16(footer, sstFormatVersion)
	footer = binary.BigEndian.AppendUint32(footer, sstMagic)
	footer = binary.BigEndian.AppendUint32(footer, checksum(footer))
	b.buf = append(b.buf, footer...)
	b.info.Size = int64(len(b.buf))
	return b.buf, b.info
}

// Bloom filter: k probes by double hashing over an m-bit array.
// Layout: u32 k | bits.
func buildBloom(hashes []uint64, bitsPerKey int) []byte {
	if bitsPerKey <= 0 || len(hashes) == 0 {
		return []byte{0, 0, 0, 0}
	}
	k := max(1, min(30, int(float64(bitsPerKey)*0.69)))
	nbits := max(64, len(hashes)*bitsPerKey)
	nbytes := (nbits + 7) / 8
	nbits = nbytes * 8
	out := make([]byte, 4+nbytes)
	binary.BigEndian.PutUint32(out, uint32(k))
	bits := out[4:]
	for _, h := range hashes {
		delta := h>>33 | h<<31
		for i := 0; i < k; i++ {
			pos := h % uint64(nbits)
			bits[pos/8] |= 1 << (pos % 8)
			h += delta
		}
	}
	return out
}

// bloomMayContain reports whether key may be in the filter.
func bloomMayContain(filter []byte, h uint64) bool {
	if len(filter) < 4 {
		return true
	}
	k := int(binary.BigEndian.Uint32(filter))
	bits := filter[4:]
	if k == 0 || len(bits) == 0 {
		return true
	}
	nbits := uint64(len(bits) * 8)
	delta := h>>33 | h<<31
	for i := 0; i < k; i++ {
		pos := h % nbits
		if bits[pos/8]&(1<<(pos%8)) == 0 {
			return false
		}
		h += delta
	}
	return true
}

// sstIndexEntry locates one data block.
type sstIndexEntry struct {
	lastKey []byte
	offset  int64
	length  int64
}

// sstMeta is an SST's decoded footer, filter and index: what a lookup needs
// before it reads a data block. Cached in the block cache.
type sstMeta struct {
	filter []byte
	index  []sstIndexEntry
	rows   uint64
	// format is the SST's format version (data blocks compressed from 2 on).
	format uint16
	// dataEnd is where the data blocks end (the filter block's offset).
	dataEnd int64
}

func (m *sstMeta) cacheBytes() int64 {
	n := int64(len(m.filter)) + 64
	for _, e := range m.index {
		n += int64(len(e.lastKey)) + 32
	}
	return n
}

// tableReader reads SSTs from the store through two caches: data blocks in
// cache (Options.BlockCacheBytes) and SST metadata (index and bloom filter)
// in meta (Options.MetaCacheBytes), so scans cannot evict the metadata every
// point lookup needs.
type tableReader struct {
	store  objstore.Store
	cache  *blockCache
	meta   *blockCache
	decomp decompressor
}

func newTableReader(store objstore.Store, blockBytes, metaBytes int64) *tableReader {
	return &tableReader{store: store, cache: newBlockCache(blockBytes), meta: newBlockCache(metaBytes)}
}

func (t *tableReader) sstMeta(ctx context.Context, info SSTInfo) (*sstMeta, error) {
	cacheKey := blockKey{sst: info.Key, block: -1}
	if v, ok := t.meta.get(cacheKey); ok {
		return v.(*sstMeta), nil
	}
	if info.Size < sstFooterBytes {
		return nil, corruptErr(info.Key, "object of %d bytes is smaller than an SST footer", info.Size)
	}
	footer, err := t.store.GetRange(ctx, info.Key, info.Size-sstFooterBytes, sstFooterBytes)
	if err != nil {
		return nil, storeErr(err, "read SST footer of %s", info.Key)
	}
	if len(footer) != sstFooterBytes {
		return nil, corruptErr(info.Key, "SST footer truncated (object shorter than the manifest's size %d)", info.Size)
	}
	if checksum(footer[:sstFooterBytes-4]) != binary.BigEndian.Uint32(footer[sstFooterBytes-4:]) {
		return nil, corruptErr(info.Key, "SST footer checksum mismatch")
	}
	if binary.BigEndian.Uint32(footer[42:46]) != sstMagic {
		return nil, corruptErr(info.Key, "not an SST (bad magic)")
	}
	format := binary.BigEndian.Uint16(footer[40:42])
	if format != sstFormatVersion && format != sstFormatRawBlocks {
		return nil, formatErr(info.Key, "SST format version %d, this build reads %d to %d", format, sstFormatRawBlocks, sstFormatVersion)
	}
	filterOff := int64(binary.BigEndian.Uint64(footer[0:]))
	filterLen := int64(binary.BigEndian.Uint64(footer[8:]))
	indexOff := int64(binary.BigEndian.Uint64(footer[16:]))
	indexLen := int64(binary.BigEndian.Uint64(footer[24:]))
	rows := binary.BigEndian.Uint64(footer[32:])
	end := info.Size - sstFooterBytes
	if filterOff < 0 || filterOff+filterLen != indexOff || indexOff+indexLen != end {
		return nil, corruptErr(info.Key, "SST footer offsets out of range")
	}
	tail, err := t.store.GetRange(ctx, info.Key, filterOff, end-filterOff)
	if err != nil {
		return nil, storeErr(err, "read SST index of %s", info.Key)
	}
	if int64(len(tail)) != end-filterOff {
		return nil, corruptErr(info.Key, "SST index truncated")
	}
	filter, err := verifyBlock(info.Key, "filter", tail[:filterLen])
	if err != nil {
		return nil, err
	}
	indexPayload, err := verifyBlock(info.Key, "index", tail[filterLen:])
	if err != nil {
		return nil, err
	}
	m := &sstMeta{filter: append([]byte(nil), filter...), rows: rows, format: format, dataEnd: filterOff}
	for p := indexPayload; len(p) > 0; {
		n, w := binary.Uvarint(p)
		if w <= 0 || uint64(len(p)-w) < n {
			return nil, corruptErr(info.Key, "bad index entry")
		}
		var e sstIndexEntry
		e.lastKey = append([]byte(nil), p[w:w+int(n)]...)
		p = p[w+int(n):]
		off, w1 := binary.Uvarint(p)
		if w1 <= 0 {
			return nil, corruptErr(info.Key, "bad index entry")
		}
		p = p[w1:]
		length, w2 := binary.Uvarint(p)
		if w2 <= 0 {
			return nil, corruptErr(info.Key, "bad index entry")
		}
		p = p[w2:]
		e.offset, e.length = int64(off), int64(length)
		if e.offset < 0 || e.offset+e.length > filterOff {
			return nil, corruptErr(info.Key, "index entry out of range")
		}
		m.index = append(m.index, e)
	}
	t.meta.put(cacheKey, m, m.cacheBytes())
	return m, nil
}

// block reads, verifies and decodes data block i of an SST.
func (t *tableReader) block(ctx context.Context, info SSTInfo, m *sstMeta, i int, fill bool) ([]row, error) {
	cacheKey := blockKey{sst: info.Key, block: i}
	if v, ok := t.cache.get(cacheKey); ok {
		return v.([]row), nil
	}
	e := m.index[i]
	raw, err := t.store.GetRange(ctx, info.Key, e.offset, e.length)
	if err != nil {
		return nil, storeErr(err, "read block %d of %s", i, info.Key)
	}
	if int64(len(raw)) != e.length {
		return nil, corruptErr(info.Key, "block %d truncated", i)
	}
	rows, payloadBytes, err := t.decodeBlock(nil, info.Key, m.format, i, raw)
	if err != nil {
		return nil, err
	}
	if fill {
		t.cache.put(cacheKey, rows, int64(payloadBytes)+int64(len(rows))*64)
	}
	return rows, nil
}

// sstIter iterates an SST's rows with key in [start, end).
type sstIter struct {
	ctx   context.Context
	t     *tableReader
	info  SSTInfo
	start []byte
	end   []byte
	fill  bool

	meta     *sstMeta
	blockIdx int
	rows     []row
	pos      int
	done     bool
	// ownRows: rows is this iterator's (not the cache's) to reuse.
	ownRows bool

	// Read-ahead for sequential iteration: one GetRange fetches several
	// consecutive blocks (up to sstReadAheadBytes) instead of one call per
	// block. ahead holds raw bytes starting at aheadOff.
	ahead    []byte
	aheadOff int64
	// aheadMax bounds the next read-ahead (0: the first,
	// sstReadAheadFirstBytes); it doubles with each read-ahead up to
	// sstReadAheadBytes.
	aheadMax int64
}

// sstReadAheadBytes bounds one read-ahead (scans and compaction). It trades
// a little memory per open iterator for far fewer store calls.
const sstReadAheadBytes = 1 << 20

// sstReadAheadFirstBytes bounds an iterator's first read-ahead: a scan
// that stops after a few rows (a backfill chunk, a LIMIT, a key range)
// then copies tens of kilobytes, not a megabyte per SST it touches, and
// one that goes on reaches sstReadAheadBytes within a few reads.
const sstReadAheadFirstBytes = 64 << 10

func (t *tableReader) iter(ctx context.Context, info SSTInfo, start, end []byte, fillCache bool) *sstIter {
	it := &sstIter{ctx: ctx, t: t, info: info, start: start, end: end, fill: fillCache}
	if (end != nil && bytes.Compare(info.FirstKey, end) >= 0) || bytes.Compare(info.LastKey, start) < 0 {
		it.done = true
	}
	return it
}

func (it *sstIter) next() (row, bool, error) {
	for !it.done {
		if it.meta == nil {
			m, err := it.t.sstMeta(it.ctx, it.info)
			if err != nil {
				return row{}, false, err
			}
			it.meta = m
			it.blockIdx = sort.Search(len(m.index), func(i int) bool { return bytes.Compare(m.index[i].lastKey, it.start) >= 0 })
			it.blockIdx--
		}
		if it.pos >= len(it.rows) {
			it.blockIdx++
			if it.blockIdx >= len(it.meta.index) {
				it.done = true
				break
			}
			rows, err := it.loadBlock()
			if err != nil {
				return row{}, false, err
			}
			it.rows, it.pos = rows, 0
			continue
		}
		r := it.rows[it.pos]
		it.pos++
		if bytes.Compare(r.key, it.start) < 0 {
			continue
		}
		if it.end != nil && bytes.Compare(r.key, it.end) >= 0 {
			it.done = true
			break
		}
		return r, true, nil
	}
	return row{}, false, nil
}

// loadBlock returns block blockIdx, from the cache, the read-ahead buffer,
// or a new read-ahead.
func (it *sstIter) loadBlock() ([]row, error) {
	i := it.blockIdx
	cacheKey := blockKey{sst: it.info.Key, block: i}
	if v, ok := it.t.cache.get(cacheKey); ok {
		it.ownRows = false
		return v.([]row), nil
	}
	e := it.meta.index[i]
	if e.offset < it.aheadOff || e.offset+e.length > it.aheadOff+int64(len(it.ahead)) {
		end := e.offset + e.length
		if it.aheadMax == 0 {
			it.aheadMax = sstReadAheadFirstBytes
		}
		limit := it.aheadMax
		it.aheadMax = min(2*it.aheadMax, sstReadAheadBytes)
		for j := i + 1; j < len(it.meta.index); j++ {
			next := it.meta.index[j]
			if next.offset+next.length-e.offset > limit {
				break
			}
			end = next.offset + next.length
			if it.end != nil && bytes.Compare(next.lastKey, it.end) >= 0 {
				break // this block reaches the scan's end
			}
		}
		raw, err := it.t.store.GetRange(it.ctx, it.info.Key, e.offset, end-e.offset)
		if err != nil {
			return nil, storeErr(err, "read blocks of %s", it.info.Key)
		}
		if int64(len(raw)) != end-e.offset {
			return nil, corruptErr(it.info.Key, "block %d truncated", i)
		}
		it.ahead, it.aheadOff = raw, e.offset
	}
	raw := it.ahead[e.offset-it.aheadOff : e.offset-it.aheadOff+e.length]
	// NB: a block not cached is decoded into the previous one's rows
	// (only copies of them were handed out; their keys and values point
	// into the raw bytes), so a long scan allocates them once; a cached
	// block gets its own, sized like the previous block.
	var dst []row
	switch {
	case !it.fill && it.ownRows:
		dst = it.rows[:0]
	case len(it.rows) > 0:
		dst = make([]row, 0, len(it.rows))
	}
	rows, payloadBytes, err := it.t.decodeBlock(dst, it.info.Key, it.meta.format, i, raw)
	if err != nil {
		return nil, err
	}
	it.ownRows = !it.fill
	if it.fill {
		it.t.cache.put(cacheKey, rows, int64(payloadBytes)+int64(len(rows))*64)
	}
	return rows, nil
}

// decodeBlock appends the rows of data block i of SST key (raw, as
// stored, in the SST's format) to rows and returns them and the block's
// decompressed payload size.
func (t *tableReader) decodeBlock(rows []row, key string, format uint16, i int, raw []byte) ([]row, int, error) {
	what := fmt.Sprintf("data %d", i)
	payload, err := verifyBlock(key, what, raw)
	if err != nil {
		return nil, 0, err
	}
	if format != sstFormatRawBlocks {
		if payload, err = t.decomp.decodeBody(key, "block "+what, payload); err != nil {
			return nil, 0, err
		}
	}
	for p := payload; len(p) > 0; {
		r, rest, err := decodeRow(p)
		if err != nil {
			return nil, 0, corruptErr(key, "block %d: %v", i, err)
		}
		rows = append(rows, r)
		p = rest
	}
	return rows, len(payload), nil
}

// versions returns the rows for key (newest first) in one SST, using the
// bloom filter to skip SSTs that cannot hold it.
func (t *tableReader) versions(ctx context.Context, info SSTInfo, key []byte, keyHash uint64) ([]row, error) {
	if bytes.Compare(key, info.FirstKey) < 0 || bytes.Compare(key, info.LastKey) > 0 {
		return nil, nil
	}
	m, err := t.sstMeta(ctx, info)
	if err != nil {
		return nil, err
	}
	if !bloomMayContain(m.filter, keyHash) {
		return nil, nil
	}
	i := sort.Search(len(m.index), func(i int) bool { return bytes.Compare(m.index[i].lastKey, key) >= 0 })
	var out []row
	for ; i < len(m.index); i++ {
		rows, err := t.block(ctx, info, m, i, true)
		if err != nil {
			return nil, err
		}
		j := sort.Search(len(rows), func(j int) bool { return bytes.Compare(rows[j].key, key) >= 0 })
		for ; j < len(rows) && bytes.Equal(rows[j].key, key); j++ {
			out = append(out, rows[j])
		}
		if j < len(rows) {
			break // the key's versions ended inside this block
		}
	}
	return out, nil
}
