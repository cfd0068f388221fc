package op

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Join is the incremental join of two Z-sets (spec §6.4, §6.4.1). The inner
// part is bilinear:
//
//	Δ(L ⋈ R) = ΔL ⋈ R + L' ⋈ ΔR        (L' = L + ΔL)
//
// computed as phase 1 (ΔL probes the right arrangement before it changes)
// and phase 2 (ΔR probes the left arrangement after ΔL was added). Outer,
// semi and anti joins additionally keep, per arranged row, its match count
// m = Σ weights of matching rows on the other side; a row's NULL-padded
// (outer), kept (semi) or kept (anti) output flips exactly when m crosses
// zero. A NOT IN anti join (NullAware) also tracks the right side's total
// and NULL-key weights; when "right is empty" or "right has a NULL" flips,
// every left row's output is recomputed.
//
//	LEFT JOIN on k      time | left      | right     | output
//	                    -----|-----------|-----------|--------------------------
//	                    0    | {(1,a):+1}| {}        | {(1,a,∅,∅):+1}
//	                    1    | {}        | {(1,x):+1}| {(1,a,∅,∅):-1, (1,a,1,x):+1}
//	                    2    | {}        | {(1,x):-1}| {(1,a,1,x):-1, (1,a,∅,∅):+1}
//
// State:
//
//	0x01 KindJoinLeft  op_id join_key row → words[weight, weight·match_count]
//
// (join_key is the ivm/keyenc key of the join columns, row the lossless row
// encoding that identifies the row).
//
//	0x01 KindJoinRight op_id join_key row → words[weight, weight·match_count]
//	0x01 KindJoinMeta  op_id              → right total, right NULL-key total
//
// An entry's value is a two-word kv.TagAddWords value, mergeable by the
// store, so a new row is added with a blind merge write of [dw, dw·m]
// (arrange.MergeEntry) instead of a read of its entry first, which for a
// new row is a store miss. Storing weight·m rather than m is what makes
// the add a merge: every copy of an arranged row has the same match count
// m (the one its probe just computed), so [w, w·m] + [dw, dw·m] =
// [w+dw, (w+dw)·m]. A side whose match counts nothing reads (both sides of
// an inner join, the right side of a left join, ...) stores m = 0. A
// positive merge onto a negative stored weight can leave an entry of
// weight zero (a correct input never has negative integrated weights);
// probes skip such entries.
type Join struct {
	spec                  JoinSpec
	leftTypes, rightTypes []types.Type
	schema                types.Schema
	leftWidth, rightWidth int
	left, right, meta     *arrange.Arrangement
	// rows backs the joined rows the join emits.
	rows rowArena
	// prefetchKey and prefetchHashes are prefetch's scratch.
	prefetchKey    []byte
	prefetchHashes []uint64
	// entryPrefetch is prefetchEntries' scratch.
	entryPrefetch entryPrefetch
	// close is a windowed join's close index (join_watermark.go; nil
	// without a watermark).
	close *joinClose
}

// prefetch hashes the join keys of rows and has the arrangements touch
// the groups they will read (arrange.Arrangement.Prefetch), so the CPU
// cache misses of large cached state overlap.
func (j *Join) prefetch(rows []types.Row, ts []types.Type, cols []int, probed, own *arrange.Arrangement) {
	j.prefetchHashes = j.prefetchHashes[:0]
	for _, row := range rows {
		j.prefetchKey = appendKey(j.prefetchKey[:0], ts, row, cols)
		j.prefetchHashes = append(j.prefetchHashes, kv.Hash(j.prefetchKey))
	}
	probed.Prefetch(j.prefetchHashes)
	own.Prefetch(j.prefetchHashes)
}

// rowArena hands out rows carved from shared backing arrays, so emitting
// joined rows costs one allocation per rowArenaDatums datums instead of one
// per row. Rows never overlap (each is capped at its length) and are never
// written after they are handed out.
type rowArena struct {
	free []types.Datum
}

// rowArenaDatums is the size of one backing array: large enough to
// amortize the allocation over hundreds of rows, small enough that a few
// live rows pin little memory.
const rowArenaDatums = 4096

// row returns n NULL datums.
func (a *rowArena) row(n int) types.Row {
	if len(a.free) < n {
		a.free = make([]types.Datum, max(n, rowArenaDatums))
	}
	row := a.free[:n:n]
	a.free = a.free[n:]
	return row
}

// concat returns left ++ right.
func (a *rowArena) concat(left, right types.Row) types.Row {
	row := a.row(len(left) + len(right))
	copy(row[copy(row, left):], right)
	return row
}

// padRight returns left ++ n NULLs.
func (a *rowArena) padRight(left types.Row, n int) types.Row {
	row := a.row(len(left) + n)
	copy(row, left)
	return row
}

// padLeft returns n NULLs ++ right.
func (a *rowArena) padLeft(n int, right types.Row) types.Row {
	row := a.row(n + len(right))
	copy(row[n:], right)
	return row
}

// NewJoin returns an incremental join of rows of schemas left and right.
func NewJoin(state State, left, right types.Schema, spec JoinSpec) (*Join, error) {
	if len(spec.LeftKeys) != len(spec.RightKeys) {
		return nil, fmt.Errorf("join has %d left keys and %d right keys", len(spec.LeftKeys), len(spec.RightKeys))
	}
	if spec.RightConstant && (spec.Kind != JoinInner || spec.NullAware) {
		return nil, fmt.Errorf("a %s join cannot skip its left arrangement", spec.Kind)
	}
	for i := range spec.LeftKeys {
		if spec.LeftKeys[i] < 0 || spec.LeftKeys[i] >= len(left) || spec.RightKeys[i] < 0 || spec.RightKeys[i] >= len(right) {
			return nil, fmt.Errorf("join key column out of range")
		}
	}
	if spec.LeftKeys == nil {
		// NB: appendKey needs a non-nil column list.
		spec.LeftKeys, spec.RightKeys = []int{}, []int{}
	}
	leftTypes, rightTypes := keyTypes(left, spec.LeftKeys), keyTypes(right, spec.RightKeys)
	for i := range leftTypes {
		if !leftTypes[i].Equal(rightTypes[i]) {
			return nil, fmt.Errorf("join key %d compares %s with %s: cast one side first", i, left[spec.LeftKeys[i]].Type.SQLName(), right[spec.RightKeys[i]].Type.SQLName())
		}
	}
	if spec.NullSafeKeys == nil {
		spec.NullSafeKeys = make([]bool, len(spec.LeftKeys))
		for i := range spec.NullSafeKeys {
			spec.NullSafeKeys[i] = spec.NullSafe
		}
	}
	if len(spec.NullSafeKeys) != len(spec.LeftKeys) {
		return nil, fmt.Errorf("join has %d keys but %d null-safe flags", len(spec.LeftKeys), len(spec.NullSafeKeys))
	}
	if spec.NullAware && (spec.Kind != JoinAnti || len(spec.LeftKeys) != 1 || spec.Residual != nil || spec.NullSafeKeys[0]) {
		return nil, fmt.Errorf("a null-aware (NOT IN) join must be an anti join on one key column without residual")
	}
	j := &Join{
		spec: spec, leftWidth: len(left), rightWidth: len(right),
		leftTypes: leftTypes, rightTypes: rightTypes,
		left:  state.groupedArrangement(arrange.KindJoinLeft),
		right: state.groupedArrangement(arrange.KindJoinRight),
		meta:  state.arrangement(arrange.KindJoinMeta),
	}
	switch spec.Kind {
	case JoinInner, JoinLeft, JoinRight, JoinFull:
		for _, c := range left {
			c.Nullable = c.Nullable || spec.Kind == JoinRight || spec.Kind == JoinFull
			j.schema = append(j.schema, c)
		}
		for _, c := range right {
			c.Nullable = c.Nullable || spec.Kind == JoinLeft || spec.Kind == JoinFull
			j.schema = append(j.schema, c)
		}
	case JoinSemi, JoinAnti:
		j.schema = left
	default:
		return nil, fmt.Errorf("unknown join kind %d", spec.Kind)
	}
	if err := j.initWatermark(state); err != nil {
		return nil, err
	}
	return j, nil
}

// Schema implements Operator.
func (j *Join) Schema() types.Schema { return j.schema }

// Arrangements implements Stateful.
func (j *Join) Arrangements() []*arrange.Arrangement {
	if j.close != nil {
		return []*arrange.Arrangement{j.left, j.right, j.meta, j.close.index}
	}
	return []*arrange.Arrangement{j.left, j.right, j.meta}
}

// groupedArrangement is an arrangement read a group (leading key part) at
// a time, with whole groups cached (arrange.Config.Grouped).
func (s State) groupedArrangement(kind byte) *arrange.Arrangement {
	return arrange.New(arrange.Config{Namespace: kv.PrefixOpState, Kind: kind, ID: s.ID, CacheEntriesMax: s.CacheEntriesMax, Grouped: true})
}

func (j *Join) leftPadded() bool  { return j.spec.Kind == JoinLeft || j.spec.Kind == JoinFull }
func (j *Join) rightPadded() bool { return j.spec.Kind == JoinRight || j.spec.Kind == JoinFull }
func (j *Join) pairs() bool       { return j.spec.Kind != JoinSemi && j.spec.Kind != JoinAnti }

// keyNull reports whether row's key columns make it unable to match.
func (j *Join) keyNull(row types.Row, keys []int) bool {
	for i, c := range keys {
		if row[c] == nil && !j.spec.NullSafeKeys[i] {
			return true
		}
	}
	return false
}

// matches evaluates the residual on l++r (true when there is none); an
// evaluation error is recorded with weight w and counts as no match.
func (j *Join) matches(ctx *Context, l, r types.Row, w int64) (bool, types.Row, error) {
	if j.spec.Residual == nil {
		if !j.pairs() {
			// A semi/anti join without residual needs no joined row.
			return true, nil, nil
		}
		return true, j.rows.concat(l, r), nil
	}
	joined := j.rows.concat(l, r)
	ok, err := evalBool(ctx.Env, j.spec.Residual, joined)
	if err != nil {
		return false, joined, ctx.Fail(err, joined, w)
	}
	return ok, joined, nil
}

type joinEntry struct {
	weight, matches int64
}

// decodeJoinEntry decodes a stored entry (joinEntry.appendTo, or the merge
// of several).
func decodeJoinEntry(v []byte) (joinEntry, error) {
	if len(v) < 4 || v[0] != kv.TagAddWords || v[1] != 2 {
		return joinEntry{}, errcode.New(errcode.ArrangementCorrupt, "corrupt join entry %x", v)
	}
	w, n := binary.Varint(v[2:])
	if n <= 0 {
		return joinEntry{}, errcode.New(errcode.ArrangementCorrupt, "corrupt join entry %x", v)
	}
	product, k := binary.Varint(v[2+n:])
	if k <= 0 || 2+n+k != len(v) {
		return joinEntry{}, errcode.New(errcode.ArrangementCorrupt, "corrupt join entry %x", v)
	}
	if w == 0 {
		// A zero-weight merge result: the entry is absent.
		if product != 0 {
			return joinEntry{}, errcode.New(errcode.ArrangementCorrupt, "join entry of weight 0 with weight·matches %d", product)
		}
		return joinEntry{}, nil
	}
	// INVARIANT: every copy of an arranged row has the same match count.
	if product%w != 0 {
		return joinEntry{}, errcode.New(errcode.ArrangementCorrupt, "join entry weight·matches %d is not a multiple of its weight %d", product, w)
	}
	return joinEntry{weight: w, matches: product / w}, nil
}

// leftCounted and rightCounted report whether a side's match counts are
// read: the left's by left, full, semi and anti joins (their left rows' own
// outputs), the right's by right and full joins (the right rows' padding).
// Only a counted side's match counts are kept up to date as the other side
// changes, so the other sides store 0 (the invariant a merge relies on).
func (j *Join) leftCounted() bool {
	return j.spec.Kind != JoinInner && j.spec.Kind != JoinRight
}

func (j *Join) rightCounted() bool { return j.rightPadded() }

// counted is leftCounted or rightCounted for side a (j.left or j.right).
func (j *Join) counted(a *arrange.Arrangement) bool {
	if a == j.left {
		return j.leftCounted()
	}
	return j.rightCounted()
}

// joinEntryBytesMax bounds an encoded entry: tag, count and two varints.
const joinEntryBytesMax = 2 + 2*binary.MaxVarintLen64

// appendTo appends e as a stored value: words[weight, weight·matches].
func (e joinEntry) appendTo(buf []byte) []byte {
	buf = binary.AppendVarint(append(buf, kv.TagAddWords, 2), e.weight)
	return binary.AppendVarint(buf, e.weight*e.matches)
}

// indicator is [b] as a weight.
func indicator(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// hasMatch is the semi/anti/padding predicate on a match count: "has a
// match" is m > 0.
func hasMatch(m int64) bool { return m > 0 }

// crossJoinPresizeRowsMax bounds the output rows a join without keys makes
// room for at its first probe (32 bytes a row, so 32 MiB): beyond it the
// output grows as it fills, metered (memory.go).
const crossJoinPresizeRowsMax = 1 << 20

// pendingWrite is a probed entry's new match count, stored after the probe.
type pendingWrite struct {
	suffix []byte
	entry  joinEntry
	oldLen int
}

// Step implements Operator.
func (j *Join) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	// NB: the inputs need not be consolidated: every row is applied to the
	// state on its own, so equal rows and cancelling weights add up as they
	// would consolidated (zero weights are skipped).
	dl, dr := inputs[0], inputs[1]
	if j.spec.NullAware {
		return j.stepNullAware(ctx, dl, dr)
	}
	out := zset.Batch{Rows: make([]types.Row, 0, dl.Len()+dr.Len()), Weights: make([]int64, 0, dl.Len()+dr.Len())}
	if j.spec.RightConstant {
		// NB: ΔR first (against the left rows, of which none are
		// arranged), then ΔL against the whole right side: ΔL ⋈ ΔR comes
		// from the second phase, which needs no left arrangement.
		if err := j.phaseRight(ctx, dr, &out); err != nil {
			return zset.Batch{}, err
		}
		return out, j.phaseLeft(ctx, dl, &out)
	}
	if err := j.phaseLeft(ctx, dl, &out); err != nil {
		return zset.Batch{}, err
	}
	if err := j.phaseRight(ctx, dr, &out); err != nil {
		return zset.Batch{}, err
	}
	return out, j.stepWatermark(ctx, dl, dr)
}

// leftOutput is a left row's own output (padding, semi or anti row) for
// match count m: its weight factor and the row.
func (j *Join) leftOutput(l types.Row, m int64, nullAwareMode int) (int64, types.Row) {
	switch j.spec.Kind {
	case JoinLeft, JoinFull:
		return indicator(!hasMatch(m)), j.rows.padRight(l, j.rightWidth)
	case JoinSemi:
		return indicator(hasMatch(m)), l
	case JoinAnti:
		switch nullAwareMode {
		case modeAllPass:
			return 1, l
		case modeNonePass:
			return 0, l
		case modeAnti:
			return indicator(l[j.spec.LeftKeys[0]] != nil && !hasMatch(m)), l
		}
		return indicator(!hasMatch(m)), l
	}
	return 0, nil
}

// phaseLeft processes ΔL against the right arrangement before ΔR.
func (j *Join) phaseLeft(ctx *Context, dl zset.Batch, out *zset.Batch) error {
	return j.phaseLeftMode(ctx, dl, out, modeNotNullAware)
}

func (j *Join) phaseLeftMode(ctx *Context, dl zset.Batch, out *zset.Batch, mode int) error {
	var keyBuf, rowBuf []byte
	var writes []pendingWrite
	// NB: one left row can meet every right row of its key, so the output
	// is metered as it grows (memory.go), not only after the step.
	meter := NewOutputMeter(out)
	entryBatch := j.left.EntryPrefetchBatch()
	presized := false
	// NB: without keys every left row probes the one same group, which
	// this phase does not write unless it pads right rows: its entries
	// are decoded once.
	cross := decodedGroup{reuse: len(j.spec.LeftKeys) == 0 && !j.rightPadded()}
	for i, l := range dl.Rows {
		if i%entryBatch == 0 {
			end := min(i+entryBatch, len(dl.Rows))
			if err := j.prefetchEntries(ctx, j.left, dl.Rows[i:end], dl.Weights[i:end], j.leftTypes, j.spec.LeftKeys); err != nil {
				return err
			}
		}
		if i%arrange.PrefetchChunk == 0 {
			j.prefetch(dl.Rows[i:min(i+arrange.PrefetchChunk, len(dl.Rows))], j.leftTypes, j.spec.LeftKeys, j.right, j.left)
		}
		dw := dl.Weights[i]
		if dw == 0 {
			continue
		}
		if j.keyNull(l, j.spec.LeftKeys) && mode == modeNotNullAware {
			// Never matches: its only output is its own padding/anti row.
			if w, row := j.leftOutput(l, 0, mode); w != 0 {
				out.Add(row, w*dw)
			}
			continue
		}
		keyBuf = appendKey(keyBuf[:0], j.leftTypes, l, j.spec.LeftKeys)
		joinKey := keyBuf
		var m int64
		writes = writes[:0]
		if !j.keyNull(l, j.spec.LeftKeys) {
			group, err := j.right.Group(ctx.Txn, joinKey)
			if err != nil {
				return err
			}
			entries := group.Entries()
			if !presized && len(j.spec.LeftKeys) == 0 && j.pairs() {
				// A join without keys meets this same group with every
				// left row: room for the output at once, not by doubling.
				presized = true
				if n := (len(dl.Rows) - i) * len(entries); n <= crossJoinPresizeRowsMax {
					out.Rows, out.Weights = slices.Grow(out.Rows, n), slices.Grow(out.Weights, n)
				}
			}
			for x := range entries {
				r, e, err := cross.entry(j, entries, x)
				if err != nil {
					return err
				}
				if e.weight == 0 {
					continue // a zero-weight merge result: absent
				}
				ok, joined, err := j.matches(ctx, l, r, dw*e.weight)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				m += e.weight
				if j.pairs() {
					out.Add(joined, dw*e.weight)
					if err := meter.Check(ctx, out); err != nil {
						return err
					}
				}
				if j.rightCounted() {
					before := indicator(!hasMatch(e.matches))
					e.matches += dw
					if d := indicator(!hasMatch(e.matches)) - before; d != 0 {
						out.Add(j.rows.padLeft(j.leftWidth, r), d*e.weight)
					}
					writes = append(writes, pendingWrite{suffix: entries[x].Suffix, entry: e, oldLen: len(entries[x].Value)})
				}
			}
		}
		if err := j.applyWrites(ctx, j.right, joinKey, writes); err != nil {
			return err
		}
		if w, row := j.leftOutput(l, m, mode); w != 0 {
			out.Add(row, w*dw)
		}
		if j.spec.RightConstant {
			continue // never probed: see JoinSpec.RightConstant
		}
		rowBuf = zset.EncodeRow(rowBuf[:0], l)
		if err := j.addEntry(ctx, j.left, joinKey, rowBuf, dw, m); err != nil {
			return err
		}
	}
	return nil
}

// decodedGroup is a probed group's entries, decoded (each only once when
// reuse is set: the caller probes the same unchanged group again).
type decodedGroup struct {
	reuse   bool
	rows    []types.Row
	entries []joinEntry
}

// entry decodes entries[x] of the group j probes.
func (d *decodedGroup) entry(j *Join, entries []arrange.GroupEntry, x int) (types.Row, joinEntry, error) {
	if d.reuse && x < len(d.rows) {
		return d.rows[x], d.entries[x], nil
	}
	r, err := j.rows.decodeArranged(entries[x].Suffix)
	if err != nil {
		return nil, joinEntry{}, err
	}
	e, err := decodeJoinEntry(entries[x].Value)
	if err != nil {
		return nil, joinEntry{}, err
	}
	if d.reuse {
		d.rows, d.entries = append(d.rows, r), append(d.entries, e)
	}
	return r, e, nil
}

// decodeArranged decodes an arranged row (an entry's key suffix, a
// zset.EncodeRow encoding) into the arena. NB: decoding each probe from
// the cached bytes is cheaper than keeping decoded rows in the cache:
// those would be several more objects per arranged row for the garbage
// collector to trace.
func (a *rowArena) decodeArranged(suffix []byte) (types.Row, error) {
	n, k := binary.Uvarint(suffix)
	if k <= 0 || n > uint64(len(suffix)) {
		return nil, errcode.New(errcode.ArrangementCorrupt, "corrupt join row %x", suffix)
	}
	row := a.row(int(n))
	rest := suffix[k:]
	for i := range row {
		var err error
		if row[i], rest, err = zset.DecodeDatum(rest); err != nil {
			return nil, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt join row")
		}
	}
	return row, nil
}

// applyWrites stores the new match counts of a probed group's entries.
func (j *Join) applyWrites(ctx *Context, a *arrange.Arrangement, joinKey []byte, writes []pendingWrite) error {
	var value []byte
	for _, w := range writes {
		value = w.entry.appendTo(value[:0])
		if err := a.SetEntry(ctx.Txn, joinKey, w.suffix, value, w.oldLen); err != nil {
			return err
		}
	}
	return nil
}

// addEntry adds dw to an arranged row's weight, setting its match count:
// a positive dw as a blind merge of [dw, dw·matches] when the entry is not
// in memory (arrange.MergeEntry; the join's doc comment says why that is
// the same change), a negative one read, added and written back, or
// deleted at zero, so a retracted row leaves no key behind.
func (j *Join) addEntry(ctx *Context, a *arrange.Arrangement, joinKey, row []byte, dw, matches int64) error {
	if !j.counted(a) {
		matches = 0
	}
	var buf [joinEntryBytesMax]byte
	update := func(old []byte, ok bool) ([]byte, error) {
		var e joinEntry
		if ok {
			var err error
			if e, err = decodeJoinEntry(old); err != nil {
				return nil, err
			}
		}
		e.weight += dw
		e.matches = matches
		if e.weight == 0 {
			return nil, nil
		}
		return e.appendTo(buf[:0]), nil
	}
	if dw < 0 {
		return a.UpdateEntry(ctx.Txn, joinKey, row, update)
	}
	var operand [joinEntryBytesMax]byte
	return a.MergeEntry(ctx.Txn, joinKey, row, joinEntry{weight: dw, matches: matches}.appendTo(operand[:0]), update)
}

// phaseRight processes ΔR against the left arrangement after ΔL.
func (j *Join) phaseRight(ctx *Context, dr zset.Batch, out *zset.Batch) error {
	return j.phaseRightMode(ctx, dr, out, modeNotNullAware)
}

func (j *Join) phaseRightMode(ctx *Context, dr zset.Batch, out *zset.Batch, mode int) error {
	var keyBuf, rowBuf []byte
	var writes []pendingWrite
	meter := NewOutputMeter(out)
	entryBatch := j.right.EntryPrefetchBatch()
	for i, r := range dr.Rows {
		if i%entryBatch == 0 {
			end := min(i+entryBatch, len(dr.Rows))
			if err := j.prefetchEntries(ctx, j.right, dr.Rows[i:end], dr.Weights[i:end], j.rightTypes, j.spec.RightKeys); err != nil {
				return err
			}
		}
		if i%arrange.PrefetchChunk == 0 {
			j.prefetch(dr.Rows[i:min(i+arrange.PrefetchChunk, len(dr.Rows))], j.rightTypes, j.spec.RightKeys, j.left, j.right)
		}
		dw := dr.Weights[i]
		if dw == 0 {
			continue
		}
		if j.keyNull(r, j.spec.RightKeys) {
			if j.rightPadded() {
				out.Add(j.rows.padLeft(j.leftWidth, r), dw)
			}
			continue
		}
		keyBuf = appendKey(keyBuf[:0], j.rightTypes, r, j.spec.RightKeys)
		joinKey := keyBuf
		var m int64
		writes = writes[:0]
		group, err := j.left.Group(ctx.Txn, joinKey)
		if err != nil {
			return err
		}
		entries := group.Entries()
		for x := range entries {
			arranged := &entries[x]
			l, err := j.rows.decodeArranged(arranged.Suffix)
			if err != nil {
				return err
			}
			e, err := decodeJoinEntry(arranged.Value)
			if err != nil {
				return err
			}
			if e.weight == 0 {
				continue // a zero-weight merge result: absent
			}
			ok, joined, err := j.matches(ctx, l, r, e.weight*dw)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			m += e.weight
			if j.pairs() {
				out.Add(joined, e.weight*dw)
				if err := meter.Check(ctx, out); err != nil {
					return err
				}
			}
			if j.leftCounted() {
				before, row := j.leftOutput(l, e.matches, mode)
				e.matches += dw
				after, _ := j.leftOutput(l, e.matches, mode)
				if after != before {
					out.Add(row, (after-before)*e.weight)
				}
				writes = append(writes, pendingWrite{suffix: arranged.Suffix, entry: e, oldLen: len(arranged.Value)})
			}
		}
		if err := j.applyWrites(ctx, j.left, joinKey, writes); err != nil {
			return err
		}
		if j.rightPadded() {
			if !hasMatch(m) {
				out.Add(j.rows.padLeft(j.leftWidth, r), dw)
			}
		}
		rowBuf = zset.EncodeRow(rowBuf[:0], r)
		if err := j.addEntry(ctx, j.right, joinKey, rowBuf, dw, m); err != nil {
			return err
		}
	}
	return nil
}

// Null-aware (NOT IN) modes: how the right side's global state decides the
// output.
const (
	modeNotNullAware = iota
	modeAllPass      // right side empty: every left row passes
	modeNonePass     // right side has a NULL key: no left row passes
	modeAnti         // otherwise: non-NULL left rows without a match pass
)

func nullAwareMode(total, nulls int64) int {
	switch {
	case total <= 0:
		return modeAllPass
	case nulls > 0:
		return modeNonePass
	}
	return modeAnti
}

// nullAwareMetaKey is where a NOT IN join keeps its right-side totals:
// the suffix of a global entry (empty partition key), since the totals
// are over every right row.
func nullAwareMetaKey() []byte { return []byte("n") }

func (j *Join) stepNullAware(ctx *Context, dl, dr zset.Batch) (zset.Batch, error) {
	old, ok, err := j.meta.GetEntry(ctx.Txn, nil, nullAwareMetaKey())
	if err != nil {
		return zset.Batch{}, err
	}
	oldLen := -1
	var total, nulls int64
	if ok {
		oldLen = len(old)
		if total, nulls, err = decodeTwoWeights(old); err != nil {
			return zset.Batch{}, err
		}
	}
	newTotal, newNulls := total, nulls
	for i, r := range dr.Rows {
		newTotal += dr.Weights[i]
		if r[j.spec.RightKeys[0]] == nil {
			newNulls += dr.Weights[i]
		}
	}
	before, after := nullAwareMode(total, nulls), nullAwareMode(newTotal, newNulls)
	var out zset.Batch
	if before != after {
		// The global condition flipped: retract every left row's old
		// output, update state silently, then emit every new output.
		if err := j.emitAllLeft(ctx, before, -1, &out); err != nil {
			return zset.Batch{}, err
		}
		var discard zset.Batch
		if err := j.phaseLeftMode(ctx, dl, &discard, before); err != nil {
			return zset.Batch{}, err
		}
		if err := j.phaseRightMode(ctx, dr, &discard, before); err != nil {
			return zset.Batch{}, err
		}
		if err := j.emitAllLeft(ctx, after, +1, &out); err != nil {
			return zset.Batch{}, err
		}
	} else {
		if err := j.phaseLeftMode(ctx, dl, &out, before); err != nil {
			return zset.Batch{}, err
		}
		if err := j.phaseRightMode(ctx, dr, &out, before); err != nil {
			return zset.Batch{}, err
		}
	}
	if newTotal != total || newNulls != nulls {
		if newTotal == 0 && newNulls == 0 {
			err = j.meta.DeleteEntry(ctx.Txn, nil, nullAwareMetaKey(), oldLen)
		} else {
			err = j.meta.SetEntry(ctx.Txn, nil, nullAwareMetaKey(), binary.AppendVarint(binary.AppendVarint(nil, newTotal), newNulls), oldLen)
		}
	}
	return out, err
}

func (j *Join) emitAllLeft(ctx *Context, mode int, sign int64, out *zset.Batch) error {
	return j.left.Scan(ctx.Txn, func(k, v []byte) error {
		// The key is join_key ++ row; both are self-delimiting.
		_, rest, err := keyenc.DecodeKey(k, j.leftTypes, nil, nil)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt join key")
		}
		l, _, err := zset.DecodeRow(rest)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt join row")
		}
		e, err := decodeJoinEntry(v)
		if err != nil {
			return err
		}
		if w, row := j.leftOutput(l, e.matches, mode); w != 0 {
			out.Add(row, sign*w*e.weight)
		}
		return nil
	})
}

// StreamJoin is the non-incremental join of whole Z-sets by nested loops.
func StreamJoin(ctx *Context, spec JoinSpec, leftSchema, rightSchema types.Schema, left, right zset.Batch) (zset.Batch, error) {
	leftWidth, rightWidth := len(leftSchema), len(rightSchema)
	left, right = zset.Consolidate(left), zset.Consolidate(right)
	keyEqual := func(l, r types.Row) bool {
		for i := range spec.LeftKeys {
			a, b := l[spec.LeftKeys[i]], r[spec.RightKeys[i]]
			if a == nil || b == nil {
				nullSafe := spec.NullSafe
				if spec.NullSafeKeys != nil {
					nullSafe = spec.NullSafeKeys[i]
				}
				if !nullSafe || a != nil || b != nil {
					return false
				}
				continue
			}
			if !types.Equal(leftSchema[spec.LeftKeys[i]].Type, a, b) {
				return false
			}
		}
		return true
	}
	var out zset.Batch
	rightMatches := make([]int64, len(right.Rows))
	var rightTotal, rightNulls int64
	for i, r := range right.Rows {
		rightTotal += right.Weights[i]
		if spec.NullAware && r[spec.RightKeys[0]] == nil {
			rightNulls += right.Weights[i]
		}
	}
	for i, l := range left.Rows {
		wl := left.Weights[i]
		var m int64
		for k, r := range right.Rows {
			if !keyEqual(l, r) {
				continue
			}
			joined := concatRows(l, r)
			if spec.Residual != nil {
				ok, err := evalBool(ctx.Env, spec.Residual, joined)
				if err != nil {
					if err := ctx.Fail(err, joined, wl*right.Weights[k]); err != nil {
						return zset.Batch{}, err
					}
					continue
				}
				if !ok {
					continue
				}
			}
			m += right.Weights[k]
			rightMatches[k] += wl
			if spec.Kind != JoinSemi && spec.Kind != JoinAnti {
				out.Add(joined, wl*right.Weights[k])
			}
		}
		switch spec.Kind {
		case JoinLeft, JoinFull:
			if m <= 0 {
				out.Add(concatRows(l, nullRow(rightWidth)), wl)
			}
		case JoinSemi:
			if m > 0 {
				out.Add(l, wl)
			}
		case JoinAnti:
			if spec.NullAware {
				// l.k NOT IN (right): true iff right is empty, or l.k is
				// not NULL, right has no NULL and no match.
				if rightTotal <= 0 || (l[spec.LeftKeys[0]] != nil && rightNulls <= 0 && m <= 0) {
					out.Add(l, wl)
				}
			} else if m <= 0 {
				out.Add(l, wl)
			}
		}
	}
	if spec.Kind == JoinRight || spec.Kind == JoinFull {
		for k, r := range right.Rows {
			if rightMatches[k] <= 0 {
				out.Add(concatRows(nullRow(leftWidth), r), right.Weights[k])
			}
		}
	}
	return out, nil
}
