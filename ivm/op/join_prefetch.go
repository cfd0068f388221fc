package op

import (
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// entryPrefetch is prefetchEntries' scratch.
type entryPrefetch struct {
	buf              []byte
	ends             []int
	groups, suffixes [][]byte
}

// prefetchEntries names the arranged entries (join key, row) that the
// rows of a delta will read when adding to their own side's arrangement
// own, so own reads those not in its caches in one ordered pass
// (arrange.Arrangement.PrefetchEntries) instead of one store read per
// row in addEntry.
func (j *Join) prefetchEntries(ctx *Context, own *arrange.Arrangement, rows []types.Row, weights []int64, ts []types.Type, cols []int) error {
	if !own.NeedsEntryPrefetch() {
		return nil
	}
	p := &j.entryPrefetch
	p.buf, p.ends = p.buf[:0], p.ends[:0]
	for i, row := range rows {
		if weights[i] >= 0 {
			// NB: a positive weight is added without reading the entry
			// (Join.addEntry): only retractions are read.
			continue
		}
		p.buf = appendKey(p.buf, ts, row, cols)
		p.ends = append(p.ends, len(p.buf))
		p.buf = zset.EncodeRow(p.buf, row)
		p.ends = append(p.ends, len(p.buf))
	}
	p.groups, p.suffixes = p.groups[:0], p.suffixes[:0]
	at := 0
	for x := 0; x < len(p.ends); x += 2 {
		mid, end := p.ends[x], p.ends[x+1]
		p.groups = append(p.groups, p.buf[at:mid:mid])
		p.suffixes = append(p.suffixes, p.buf[mid:end:end])
		at = end
	}
	return own.PrefetchEntries(ctx.Txn, p.groups, p.suffixes)
}
