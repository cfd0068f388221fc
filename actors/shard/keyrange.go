package shard

import (
	"bytes"
	"slices"

	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// KeyRange bounds a read of a table (Read.Ranges) to the rows whose first
// len(Eq) primary-key columns equal Eq and whose next primary-key column
// lies between Lo and Hi (nil: unbounded; LoOpen, HiOpen: exclusive). The
// values are of the columns' types. A range may hold more rows than the
// statement keeps (its filter still runs); it never leaves one out, so
// only types whose key encoding (ivm/keyenc) sorts as their comparison
// operators do may be bounded (ivm/sql/access chooses).
//
// With Index set the range bounds the columns of that index of the table
// (a maintained one: index.go) instead, read through its entries.
type KeyRange struct {
	Index          catalog.ID `json:",omitempty"`
	Eq             types.Row
	Lo, Hi         types.Datum
	LoOpen, HiOpen bool
}

// span is a KeyRange as encoded primary keys: [start, end) after a row
// key's head (end nil: to the end of the bucket).
type span struct{ start, end []byte }

// snapshotIn is snapshotOf reading only the rows of a table in ranges
// (nil: the whole relation). Rows of a table lie in primary-key order
// within each bucket, so a range is one scan per bucket; ranges that
// name whole keys are point reads.
func (a *Actor) snapshotIn(r kv.Reader, id catalog.ID, ranges []KeyRange) (zset.Batch, error) {
	rel, ok := a.snap.RelationByID(id)
	if len(ranges) == 0 || !ok || rel.Kind != catalog.KindTable || len(rel.PrimaryKey) == 0 {
		b, err := a.snapshotOf(r, id)
		if ok && rel.Kind != catalog.KindMaterializedView {
			a.stats.ReadRows += uint64(len(b.Rows))
		}
		return b, err
	}
	codec, err := a.codecOf(rel)
	if err != nil {
		return zset.Batch{}, err
	}
	ts := codec.ts
	var out zset.Batch
	add := func(v []byte) error {
		row, err := codec.decode(v)
		if err != nil {
			return err
		}
		out.Add(row, 1)
		a.stats.ReadRows++
		return nil
	}
	if ranges[0].Index != (catalog.ID{}) {
		idx, ok := a.indexByID(rel, ranges[0].Index)
		if !ok {
			// Not maintained (dropped meanwhile): read the table whole.
			b, err := a.snapshotOf(r, id)
			a.stats.ReadRows += uint64(len(b.Rows))
			return b, err
		}
		err := a.readByIndex(r, rel, idx, codec, ranges, add)
		return out, err
	}
	points := true
	for _, kr := range ranges {
		points = points && len(kr.Eq) == len(rel.PrimaryKey)
	}
	if points {
		seen := map[string]bool{}
		var key []byte
		for _, kr := range ranges {
			key = appendKey(key[:0], rel, ts, kr.Eq)
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			v, ok, err := r.Get(key)
			if err != nil {
				return zset.Batch{}, err
			}
			if ok {
				if err := add(v); err != nil {
					return zset.Batch{}, err
				}
			}
		}
		return out, nil
	}
	spans := mergeSpans(encodeSpans(rel, ts, ranges))
	if len(spans) == 0 {
		return out, nil
	}
	prefix := tablePrefix(id)
	at := len(prefix)
	head := append(slices.Clip(prefix), 0, 0)
	keep := func(k, v []byte) error {
		if inSpans(k[tableKeyHeadBytes:], spans) {
			return add(v)
		}
		return nil
	}
	// Bucket 0, read whole, tells about how many rows a bucket holds: a
	// scan per bucket and range costs a seek each, so a table with few
	// rows per bucket is cheaper to scan once, decoding only the rows in
	// the ranges.
	held := 0
	if err := r.Scan(head, kv.PrefixEnd(head), func(k, v []byte) error { held++; return keep(k, v) }); err != nil {
		return zset.Batch{}, err
	}
	if held < len(spans)*rangeSeekRowsMin && !a.cfg.RangeSeeksAlways {
		partition.PutBucket(head[at:], 1)
		if err := r.Scan(head, kv.PrefixEnd(prefix), keep); err != nil {
			return zset.Batch{}, err
		}
		return out, nil
	}
	var start, end []byte
	for b := partition.Bucket(1); b < partition.Buckets; b++ {
		partition.PutBucket(head[at:], b)
		for _, s := range spans {
			start = append(append(start[:0], head...), s.start...)
			if s.end != nil {
				end = append(append(end[:0], head...), s.end...)
			} else {
				end = append(end[:0], kv.PrefixEnd(head)...)
			}
			if err := r.Scan(start, end, func(_, v []byte) error { return add(v) }); err != nil {
				return zset.Batch{}, err
			}
		}
	}
	return out, nil
}

// rangeSeekRowsMin is how many rows per bucket and range a table must
// hold for a range read to seek to the range in each bucket rather than
// scan the table once (Config.RangeSeeksAlways: always seek).
const rangeSeekRowsMin = 16

// inSpans reports whether encoded primary key pk lies in one of spans
// (sorted, disjoint).
func inSpans(pk []byte, spans []span) bool {
	for _, s := range spans {
		if bytes.Compare(pk, s.start) < 0 {
			return false
		}
		if s.end == nil || bytes.Compare(pk, s.end) < 0 {
			return true
		}
	}
	return false
}

// encodeSpans encodes ranges as spans of encoded primary keys, dropping
// empty ones.
func encodeSpans(rel *catalog.Relation, ts []types.Type, ranges []KeyRange) []span {
	return encodeColumnSpans(rel.PrimaryKey, ts, ranges)
}

// encodeColumnSpans is encodeSpans over the key columns keyCols.
func encodeColumnSpans(keyCols []int, ts []types.Type, ranges []KeyRange) []span {
	var out []span
	for _, kr := range ranges {
		var eq []byte
		for j, d := range kr.Eq {
			eq = encodePKColumn(eq, ts[keyCols[j]], d)
		}
		s := span{start: eq, end: prefixEnd(eq)}
		if len(kr.Eq) < len(keyCols) {
			t := ts[keyCols[len(kr.Eq)]]
			if kr.Lo != nil {
				lo := encodePKColumn(slices.Clip(eq), t, kr.Lo)
				if kr.LoOpen {
					if lo = prefixEnd(lo); lo == nil {
						continue // nothing sorts after it
					}
				}
				s.start = lo
			}
			if kr.Hi != nil {
				hi := encodePKColumn(slices.Clip(eq), t, kr.Hi)
				if !kr.HiOpen {
					hi = prefixEnd(hi)
				}
				s.end = hi
			}
		}
		if s.end != nil && bytes.Compare(s.start, s.end) >= 0 {
			continue
		}
		out = append(out, s)
	}
	return out
}

// prefixEnd is the first encoded key after every key starting with p (nil:
// none, the bucket's end). Every column encoding is self-delimiting, so
// the keys starting with an encoded prefix of columns are exactly those
// with these column values.
func prefixEnd(p []byte) []byte {
	if len(p) == 0 {
		return nil
	}
	return kv.PrefixEnd(p)
}

// mergeSpans sorts spans by start and joins overlapping ones, so no row
// is read twice.
func mergeSpans(spans []span) []span {
	slices.SortFunc(spans, func(x, y span) int { return bytes.Compare(x.start, y.start) })
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && (out[n-1].end == nil || bytes.Compare(s.start, out[n-1].end) <= 0) {
			if out[n-1].end != nil && (s.end == nil || bytes.Compare(s.end, out[n-1].end) > 0) {
				out[n-1].end = s.end
			}
			continue
		}
		out = append(out, s)
	}
	return out
}
