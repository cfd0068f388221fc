package op

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/cockroachdb/apd/v3"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// The linear path of Aggregate: every call is COUNT(*), COUNT, BOOL_AND/OR
// or SUM/AVG over int2/int4/int8/float4/float8 or numeric(p,s) with
// p ≤ 18 (no multiset, no unconstrained numeric sum). A group's whole
// state is then a fixed vector of int64 words
//
//	[rowCount, per call: COUNT [count] | SUM/AVG [sum, nonNull] |
//	           SUM/AVG(int8) [hi, lo, nonNull] | BOOL_AND/OR [trues, falses] |
//	           SUM/AVG(float) [m, e, nonNull, +Inf, -Inf, NaN] |
//	           SUM/AVG(numeric(p,s)) [hi, lo, nonNull, NaN]]
//
// A numeric(p,s) value with p ≤ 18 is an integer below 10^18 < 2^63 at
// scale s (its unscaled value, value·10^s), so it sums as an int8 does
// (the halves below) and the sum is that integer sum at scale s, which is
// PostgreSQL's: every value of the type has display scale s. NaN (which
// numeric(p,s) admits) is counted, not added, so deleting it removes it.
//
// A float sum is a floatSum (agg_value.go: non-finite inputs counted, the
// finite ones summed in a float whose exponent cannot overflow, m's
// float64 bits and e stored), so a sum that overflowed comes back when the
// rows are retracted, as PostgreSQL's does.
//
// An int8 value v is split into halves v = hi·2^32 + lo with lo its low 32
// bits read as a signed int32 (−2^31 ≤ lo < 2^31) and hi = (v − lo)/2^32
// (−2^31 ≤ hi ≤ 2^31); the words hold Σ w·hi and Σ w·lo, added with
// wrap-around. Wrap-around addition is exact modulo 2^64 whatever the
// order, and each true sum is bounded by N·2^31 for N live non-NULL rows,
// so the words are the exact sums while N < 2^32 (int8SumRowsMax), and the
// SUM is the exact numeric hi·2^32 + lo (PostgreSQL's sum(int8) and
// avg(int8) are numeric). A group past the bound is in error (54000)
// instead of showing a wrong number; it recovers when rows leave.
//
// (a float sum is its float64 bits), stored as a kv words value, and its
// output row is a pure function of the words — so the last-emitted row
// need not be stored: old output = finalize(old words) (spec §6.2: compare
// with the last-emitted value and emit (old, −1), (new, +1)). Without float
// sums the words are merge-able: each epoch writes the blind operand
// new − old (kv.Merger, kv.MergeValues: integer add, associative by
// construction); float sums (not associative) keep read-modify-write.
//
// Decoded words are cached per operator (linCache), pointer-free so the
// garbage collector does not scan it, bounded and deterministic, and
// dropped with the arrangement caches (arrange.OnDiscardCache) when an
// epoch's batch is thrown away.

// linKind is a linear call's accumulator form.
type linKind uint8

const (
	linCount      linKind = iota // [count]
	linSumInt                    // [sum, nonNull]
	linSumFloat                  // [float64 bits of m, e, nonNull, +Inf, -Inf, NaN] (floatSum)
	linBool                      // [trues, falses]
	linSumInt8                   // [Σ w·hi, Σ w·lo, nonNull]
	linSumNumeric                // [Σ w·hi, Σ w·lo, nonNull, NaNs] of unscaled values at scale
)

// numericWordsPrecisionMax is the largest precision p of numeric(p,s)
// whose unscaled values fit an int8 (|v| < 10^18 < 2^63), so that its
// SUM/AVG take the int8 words.
const numericWordsPrecisionMax = 18

// numericWordsScale is the scale of t's values when SUM/AVG over t can
// use int8 words: t is numeric(p,s) with p ≤ numericWordsPrecisionMax.
func numericWordsScale(t types.Type) (int32, bool) {
	if t.Kind != types.KindNumeric {
		return 0, false
	}
	p, sc, ok := types.NumericTypmod(t.Typmod)
	if !ok || p > numericWordsPrecisionMax {
		return 0, false
	}
	return int32(sc), true
}

// unscaledNumeric is d·10^scale as an int8, or false when that is no
// integer or does not fit (d is not a value of the numeric(p,s) its type
// says).
func unscaledNumeric(d *apd.Decimal, scale int32) (int64, bool) {
	if d.Form != apd.Finite {
		return 0, false
	}
	// NB: Int64 refuses a fraction (below the scale) and values past int8;
	// trailing zeros below the scale are fine (1.500 at scale 2).
	var u apd.Decimal
	u.Set(d)
	u.Exponent += scale
	v, err := u.Int64()
	return v, err == nil
}

// numericSum is the decimal hi·2^32 + lo at scale.
func numericSum(hi, lo int64, scale int32) *apd.Decimal {
	d := int8Sum(hi, lo)
	d.Exponent = -scale
	return d
}

// int8SumRowsMax bounds the live non-NULL rows of an int8 SUM/AVG group
// whose words are exact (see the layout above): |Σ w·half| ≤ N·2^31 < 2^63.
const int8SumRowsMax = 1<<32 - 1

// splitInt8 splits v into v = hi·2^32 + lo, −2^31 ≤ lo < 2^31.
func splitInt8(v int64) (hi, lo int64) {
	lo = int64(int32(uint32(v)))
	hi = v >> 32
	if lo < 0 {
		// NB: v − lo = (v>>32)·2^32 + 2^32 here; computed this way it
		// cannot overflow.
		hi++
	}
	return hi, lo
}

// int8Sum is the exact sum of int8 halves: hi·2^32 + lo.
func int8Sum(hi, lo int64) *apd.Decimal {
	var out apd.Decimal
	var big apd.BigInt
	big.SetInt64(hi)
	big.Lsh(&big, 32)
	var low apd.BigInt
	low.SetInt64(lo)
	big.Add(&big, &low)
	out.Coeff.Abs(&big)
	out.Negative = big.Sign() < 0
	return &out
}

type linCall struct {
	kind linKind
	// word is the call's first word.
	word int
	// scale is a numeric sum's scale (linSumNumeric).
	scale int32
}

// linState is the linear path's layout, cache and per-step scratch.
type linState struct {
	calls []linCall
	words int
	// merge: accumulator writes are merge operands (no float sums).
	merge bool
	// sumErrors: some call is an int8 or float SUM/AVG, whose output can
	// be an error (linErrors has work).
	sumErrors bool
	cache     linCache
	// Per step: the touched groups, their words (old then new, words each)
	// and keys (offsets into keys), and the groups the cache could not
	// hold.
	groups   []linGroup
	wordsBuf []int64
	keys     []byte
	uncached map[string]int32
	valueBuf []byte
	opBuf    []byte
	encOld   []byte
	encNew   []byte
	decodeTo []int64
	// rowKeys holds the step's row group keys back to back (row i ends at
	// rowKeyEnds[i]); rowHashes their hashes.
	rowKeys    []byte
	rowKeyEnds []int
	rowHashes  []uint64
	slots      []int32
	// rows backs the output rows.
	rows rowArena
	// read holds the stored words of the step's groups the cache does not
	// hold, read ahead in one ordered pass (readAhead); readKeys and
	// readVals are its scratch.
	read       map[string]storedWords
	readHashes map[uint64]struct{}
	readKeys   [][]byte
	readBuf    []byte
	readVals   []byte
	// readAheadMin is the fewest uncached groups a step reads ahead
	// (readAheadMinDefault; tests lower it).
	readAheadMin int
}

// storedWords is a group's stored value as read ahead: value (a copy)
// and whether the key exists.
type storedWords struct {
	value []byte
	found bool
}

// linGroup is one group touched by a step.
type linGroup struct {
	keyOff, keyLen int
	keyRow         types.Row
	// off is the group's old words in wordsBuf; new words follow them.
	off    int
	found  bool
	oldLen int
	slot   int32
	inputs int
}

// linearLayout returns the linear layout of calls, or nil when some call
// needs a multiset or a numeric sum.
func linearLayout(calls []AggregateCall, kinds []sumKind) *linState {
	st := &linState{words: 1, merge: true}
	for i, call := range calls {
		if usesMultiset(call) {
			return nil
		}
		c := linCall{word: st.words}
		switch call.Func {
		case AggCountStar, AggCount:
			c.kind = linCount
			st.words++
		case AggSum, AggAvg:
			switch {
			case kinds[i] == sumInt:
				c.kind = linSumInt
			case kinds[i] == sumDecimal && call.Arg.Type().Kind == types.KindInt8:
				c.kind = linSumInt8
				st.words++
				st.sumErrors = true
			case kinds[i] == sumDecimal && call.Arg.Type().Kind == types.KindNumeric:
				sc, ok := numericWordsScale(call.Arg.Type())
				if !ok {
					return nil
				}
				c.kind, c.scale = linSumNumeric, sc
				st.words += 2
				st.sumErrors = true
			case kinds[i] == sumFloat:
				c.kind = linSumFloat
				st.merge = false
				st.words += 4
				st.sumErrors = true
			default:
				return nil
			}
			st.words += 2
		case AggBoolAnd, AggBoolOr:
			c.kind = linBool
			st.words += 2
		default:
			return nil
		}
		st.calls = append(st.calls, c)
	}
	return st
}

// initLinear switches a to the linear path when its calls allow it.
func (a *Aggregate) initLinear(state State) {
	lin := linearLayout(a.spec.Calls, a.sumKinds)
	if lin == nil {
		return
	}
	limit := state.CacheEntriesMax
	if limit == 0 {
		limit = aggCacheGroupsDefault
	}
	lin.cache.init(max(limit, 0), lin.words)
	lin.readAheadMin = readAheadMinDefault
	// NB: the decoded cache replaces the arrangement's byte cache.
	a.acc = arrange.New(arrange.Config{Namespace: kv.PrefixOpState, Kind: arrange.KindAggregate, ID: state.ID, CacheEntriesMax: -1})
	a.acc.OnDiscardCache(lin.cache.clear)
	a.lin = lin
}

// aggCacheGroupsDefault bounds the decoded group cache (as
// arrange's default bounds a byte cache). Simulation range: 0..1<<16.
const aggCacheGroupsDefault = 1 << 16

func (l *linState) key(g *linGroup) []byte { return l.keys[g.keyOff : g.keyOff+g.keyLen] }

func (l *linState) oldWords(g *linGroup) []int64 { return l.wordsBuf[g.off : g.off+l.words] }

func (l *linState) newWords(g *linGroup) []int64 {
	return l.wordsBuf[g.off+l.words : g.off+2*l.words]
}

// stepLinear is Step on the linear path.
func (a *Aggregate) stepLinear(ctx *Context, delta zset.Batch) (zset.Batch, error) {
	l := a.lin
	l.cache.nextStep()
	l.groups, l.wordsBuf, l.keys = l.groups[:0], l.wordsBuf[:0], l.keys[:0]
	clear(l.uncached)
	global := len(a.spec.GroupBy) == 0
	if global {
		// The global group is visited every step so that its row exists
		// from the first step on, even before any input.
		if _, err := a.linGroupOf(ctx, []byte{}, nil); err != nil {
			return zset.Batch{}, err
		}
	}
	// Every row's group key and hash first, so the cache can touch all
	// their entries at once (overlapping the memory misses of a large
	// cache) before the rows are applied one by one.
	l.rowKeys, l.rowKeyEnds, l.rowHashes = l.rowKeys[:0], l.rowKeyEnds[:0], l.rowHashes[:0]
	for _, row := range delta.Rows {
		start := len(l.rowKeys)
		l.rowKeys = appendKey(l.rowKeys, a.keyTypes, row, a.spec.GroupBy)
		l.rowKeyEnds = append(l.rowKeyEnds, len(l.rowKeys))
		l.rowHashes = append(l.rowHashes, hashKey(l.rowKeys[start:]))
	}
	if err := a.readAhead(ctx); err != nil {
		return zset.Batch{}, err
	}
	prefetched := 0
	err := a.eachInput(ctx, delta, func(i int, row types.Row, in *aggInput) error {
		if i >= prefetched {
			prefetched = min(i+prefetchChunk, len(l.rowHashes))
			l.cache.prefetch(l.rowHashes[i:prefetched])
		}
		start := 0
		if i > 0 {
			start = l.rowKeyEnds[i-1]
		}
		gi, err := a.linGroupOfHashed(ctx, l.rowKeys[start:l.rowKeyEnds[i]], l.rowHashes[i], row)
		if err != nil {
			return err
		}
		return a.linApply(ctx, &l.groups[gi], in)
	})
	if err != nil {
		return zset.Batch{}, err
	}
	out := zset.Batch{Rows: make([]types.Row, 0, 2*len(l.groups)), Weights: make([]int64, 0, 2*len(l.groups))}
	for i := range l.groups {
		if i%prefetchChunk == 0 {
			l.prefetchGroups(l.groups[i:min(i+prefetchChunk, len(l.groups))])
		}
		if err := a.linFinish(ctx, &l.groups[i], global, &out); err != nil {
			return zset.Batch{}, err
		}
	}
	return out, nil
}

// readAheadMinDefault is the fewest uncached groups a step reads in one
// ordered pass (kv.GetSorted) instead of one Get each: below it, sorting
// costs more than the store's searches from the top.
const readAheadMinDefault = 64

// readAhead reads the stored words of the step's groups that the cache
// does not hold in one ordered pass over the store (sorted keys let a
// slate store seek forward from the last key instead of searching from
// the top, which for groups new to a large store, as windows are, was
// most of the aggregate's time), for linGroupOfHashed to take instead of
// a Get each.
func (a *Aggregate) readAhead(ctx *Context) error {
	l := a.lin
	clear(l.read)
	l.readKeys, l.readBuf, l.readVals = l.readKeys[:0], l.readBuf[:0], l.readVals[:0]
	var spans []int
	// NB: rows repeat groups (a window's rows): each hash is read once.
	// Another key with a hash already taken is not read ahead, and gets
	// its Get.
	if l.readHashes == nil {
		l.readHashes = make(map[uint64]struct{})
	}
	clear(l.readHashes)
	start := 0
	for i, end := range l.rowKeyEnds {
		key := l.rowKeys[start:end]
		start = end
		h := l.rowHashes[i]
		if _, seen := l.readHashes[h]; seen {
			continue
		}
		l.readHashes[h] = struct{}{}
		if _, hit := l.cache.lookup(key, h); hit {
			continue
		}
		l.readBuf = a.acc.AppendPointKey(l.readBuf, key)
		spans = append(spans, len(l.readBuf))
	}
	if len(spans) < l.readAheadMin {
		return nil
	}
	at := 0
	for _, end := range spans {
		l.readKeys = append(l.readKeys, l.readBuf[at:end:end])
		at = end
	}
	slices.SortFunc(l.readKeys, bytes.Compare)
	if l.read == nil {
		l.read = make(map[string]storedWords, len(l.readKeys))
	}
	// The values are copied into one buffer, sliced once it stops growing.
	type span struct{ from, to int }
	vals := make([]span, len(l.readKeys))
	found := make([]bool, len(l.readKeys))
	err := kv.GetSorted(ctx.Txn, l.readKeys, func(i int, v []byte, ok bool) error {
		if ok {
			vals[i] = span{len(l.readVals), len(l.readVals) + len(v)}
			l.readVals = append(l.readVals, v...)
			found[i] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("aggregate: read ahead: %w", err)
	}
	head := a.acc.PointKeyHead()
	for i, full := range l.readKeys {
		w := storedWords{found: found[i]}
		if found[i] {
			w.value = l.readVals[vals[i].from:vals[i].to:vals[i].to]
		}
		l.read[string(full[head:])] = w
	}
	return nil
}

// prefetchGroups touches the cache records of groups before linFinish
// writes their new words back.
func (l *linState) prefetchGroups(groups []linGroup) {
	l.slots = l.slots[:0]
	for i := range groups {
		l.slots = append(l.slots, groups[i].slot)
	}
	l.cache.prefetchSlots(l.slots)
}

// linGroupOf returns the index of key's group in this step, loading its
// words from the cache or the store on first touch. row (nil for the
// global group) gives the group's key columns.
func (a *Aggregate) linGroupOf(ctx *Context, key []byte, row types.Row) (int32, error) {
	return a.linGroupOfHashed(ctx, key, hashKey(key), row)
}

// linGroupOfHashed is linGroupOf with the key's hash known.
func (a *Aggregate) linGroupOfHashed(ctx *Context, key []byte, h uint64, row types.Row) (int32, error) {
	l := a.lin
	slot, hit := l.cache.lookup(key, h)
	if hit {
		if gi, ok := l.cache.pinned(slot); ok {
			return gi, nil
		}
	} else if gi, ok := l.uncached[string(key)]; ok {
		return gi, nil
	}
	gi := int32(len(l.groups))
	g := linGroup{keyOff: len(l.keys), keyLen: len(key), off: len(l.wordsBuf), slot: -1, oldLen: -1, keyRow: types.Row{}}
	if row != nil {
		g.keyRow = project(row, a.spec.GroupBy)
	}
	l.keys = append(l.keys, key...)
	l.wordsBuf = append(l.wordsBuf, make([]int64, 2*l.words)...)
	old := l.wordsBuf[g.off : g.off+l.words]
	if hit {
		copy(old, l.cache.wordsOf(slot))
		g.slot = slot
		if g.found, g.oldLen = l.cache.foundOf(slot); !g.found {
			g.oldLen = -1
		}
		l.cache.pin(slot, gi)
	} else {
		var stored []byte
		var found bool
		if w, ok := l.read[string(key)]; ok {
			stored, found = w.value, w.found
		} else {
			var err error
			if stored, found, err = a.acc.Get(ctx.Txn, key); err != nil {
				return 0, err
			}
		}
		if found {
			words, _, err := kv.DecodeWords(l.decodeTo[:0], stored)
			if err != nil || len(words) != l.words {
				return 0, errcode.New(errcode.ArrangementCorrupt, "corrupt aggregate state")
			}
			l.decodeTo = words
			copy(old, words)
			g.found, g.oldLen = true, len(stored)
		}
		// Groups read from the store may evict older ones; new groups
		// are cached only while there is room, so a stream of new keys
		// does not churn the cache.
		g.slot = l.cache.insert(key, h, old, g.found, g.oldLen, found, gi)
		if g.slot < 0 {
			if l.uncached == nil {
				l.uncached = make(map[string]int32)
			}
			l.uncached[string(key)] = gi
		}
	}
	copy(l.wordsBuf[g.off+l.words:g.off+2*l.words], old)
	l.groups = append(l.groups, g)
	return gi, nil
}

// linApply adds one input row's contribution to its group's new words.
func (a *Aggregate) linApply(ctx *Context, g *linGroup, in *aggInput) error {
	l := a.lin
	w := l.newWords(g)
	g.inputs++
	w[0] += in.weight
	for i, c := range l.calls {
		if !in.seen[i] {
			continue
		}
		s := c.word
		switch c.kind {
		case linCount:
			w[s] += in.weight
		case linSumInt:
			sum, err := addInt(w[s], in.values[i].(int64), sumWeight(in.weight))
			if err != nil {
				// NB: a state-level overflow is recorded against the
				// group's key with the input's weight, so it is
				// retracted with the input.
				if err := ctx.Fail(err, g.keyRow, in.weight); err != nil {
					return err
				}
				continue
			}
			w[s] = sum
			w[s+1] += in.weight
			if w[s+1] == 0 {
				w[s] = 0
			}
		case linSumFloat:
			fs := linFloatSum(w, c)
			fs.add(in.values[i].(float64), sumWeight(in.weight))
			w[s+2] += in.weight
			if w[s+2] == 0 {
				// No non-NULL input left: forget any rounding residue.
				fs.reset()
			}
			w[s], w[s+1] = int64(math.Float64bits(fs.m)), fs.e
			w[s+3], w[s+4], w[s+5] = fs.posInf, fs.negInf, fs.nan
		case linBool:
			if in.values[i].(bool) {
				w[s] += in.weight
			} else {
				w[s+1] += in.weight
			}
		case linSumInt8:
			// NB: wrap-around products and sums are intended: the words
			// are exact modulo 2^64 (see int8SumRowsMax).
			hi, lo := splitInt8(in.values[i].(int64))
			sw := sumWeight(in.weight)
			w[s] += hi * sw
			w[s+1] += lo * sw
			w[s+2] += in.weight
		case linSumNumeric:
			d := in.values[i].(*apd.Decimal)
			if d.Form == apd.NaN {
				w[s+2] += in.weight
				w[s+3] += in.weight
				continue
			}
			v, ok := unscaledNumeric(d, c.scale)
			if !ok {
				// INVARIANT: a numeric(p,s) expression yields values of
				// numeric(p,s); a value that is none is refused with the
				// group's key and retracted with the input.
				err := errcode.New(errcode.ViewEvaluationError, "sum or avg input %s is not a value of %s", d, a.spec.Calls[i].Arg.Type().SQLName()).WithSQLState("XX000")
				if err := ctx.Fail(err, g.keyRow, in.weight); err != nil {
					return err
				}
				continue
			}
			hi, lo := splitInt8(v)
			sw := sumWeight(in.weight)
			w[s] += hi * sw
			w[s+1] += lo * sw
			w[s+2] += in.weight
		}
	}
	return nil
}

// linInt8Overflow reports whether an int8 SUM/AVG call's words are past
// int8SumRowsMax.
func linInt8Overflow(words []int64, c linCall) bool {
	n := words[c.word+2]
	return n > int8SumRowsMax || n < -int8SumRowsMax
}

// errInt8SumRows is the error of a group past int8SumRowsMax.
func errInt8SumRows() error {
	return errcode.New(errcode.ViewEvaluationError, "sum or avg of bigint over more than %d rows in one group is not supported", int64(int8SumRowsMax)).WithSQLState("54000")
}

// linFloatSum is a float SUM/AVG call's accumulator in words.
func linFloatSum(words []int64, c linCall) floatSum {
	s := c.word
	return floatSum{m: math.Float64frombits(uint64(words[s])), e: words[s+1], posInf: words[s+3], negInf: words[s+4], nan: words[s+5]}
}

// linSumError is linSum's error alone (cheap: no decimal arithmetic).
func (a *Aggregate) linSumError(words []int64, i int, c linCall) error {
	if c.kind == linSumInt8 || c.kind == linSumNumeric {
		if words[c.word+2] != 0 && linInt8Overflow(words, c) {
			return errInt8SumRows()
		}
		return nil
	}
	_, err := a.linSum(words, i, c)
	return err
}

// linSum is an int8 or float SUM/AVG call's result for words, or its
// error.
func (a *Aggregate) linSum(words []int64, i int, c linCall) (types.Datum, error) {
	s := c.word
	avg := a.spec.Calls[i].Func == AggAvg
	switch c.kind {
	case linSumInt8:
		n := words[s+2]
		if n == 0 {
			return nil, nil
		}
		if linInt8Overflow(words, c) {
			return nil, errInt8SumRows()
		}
		sum := int8Sum(words[s], words[s+1])
		if avg {
			return finalizeAvg(sumDecimal, sum, n), nil
		}
		return finalizeSum(sumDecimal, a.types[i], sum, n), nil
	case linSumNumeric:
		n := words[s+2]
		if n == 0 {
			return nil, nil
		}
		if linInt8Overflow(words, c) {
			return nil, errInt8SumRows()
		}
		if words[s+3] != 0 {
			return &apd.Decimal{Form: apd.NaN}, nil
		}
		sum := numericSum(words[s], words[s+1], c.scale)
		if avg {
			return finalizeAvg(sumDecimal, sum, n), nil
		}
		return finalizeSum(sumDecimal, a.types[i], sum, n), nil
	case linSumFloat:
		n := words[s+2]
		if n == 0 {
			return nil, nil
		}
		fs := linFloatSum(words, c)
		var v float64
		var err error
		if avg {
			v, err = fs.avg(n)
		} else {
			v, err = fs.sum(a.types[i].Kind == types.KindFloat4)
		}
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	panic("op: linSum of a call that is no int8 or float sum")
}

// linErrors adds, with weight w, the errors of a group's output for words
// (a pure function of the words, so the errors of the old words retract
// exactly): one per failing call, as StreamAggregate reports them.
func (a *Aggregate) linErrors(ctx *Context, keyRow types.Row, words []int64, w int64) error {
	for i, c := range a.lin.calls {
		if c.kind != linSumInt8 && c.kind != linSumFloat && c.kind != linSumNumeric {
			continue
		}
		if err := a.linSumError(words, i, c); err != nil {
			if err := ctx.Fail(err, keyRow, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// linFinalize is a group's output row for words.
func (a *Aggregate) linFinalize(keyRow types.Row, words []int64) types.Row {
	// NB: rows are carved from a shared arena (one allocation per many
	// rows); each is capped at its length, so the appends below stay in
	// its own part.
	row := a.lin.rows.row(len(keyRow) + len(a.lin.calls))[:len(keyRow)]
	copy(row, keyRow)
	for i, c := range a.lin.calls {
		s := c.word
		var v types.Datum
		switch c.kind {
		case linCount:
			v = words[s]
		case linSumInt:
			var sum types.Datum = words[s]
			if a.spec.Calls[i].Func == AggAvg {
				v = finalizeAvg(a.sumKinds[i], sum, words[s+1])
			} else {
				v = finalizeSum(a.sumKinds[i], a.types[i], sum, words[s+1])
			}
		case linBool:
			v = finalizeBool(a.spec.Calls[i].Func == AggBoolAnd, words[s], words[s+1])
		case linSumInt8, linSumFloat, linSumNumeric:
			// NB: an error's value is NULL; the error is emitted by
			// linErrors.
			v, _ = a.linSum(words, i, c)
		}
		row = append(row, v)
	}
	return row
}

// linFinish emits a touched group's output change and writes its words.
func (a *Aggregate) linFinish(ctx *Context, g *linGroup, global bool, out *zset.Batch) error {
	l := a.lin
	old, nw := l.oldWords(g), l.newWords(g)
	if g.found && (g.inputs == 0 || wordsEqual(old, nw)) {
		return nil
	}
	if l.sumErrors {
		// NB: errors belong to output rows: a group without one (no rows
		// left) has none.
		if g.found && (global || old[0] != 0) {
			if err := a.linErrors(ctx, g.keyRow, old, -1); err != nil {
				return err
			}
		}
		if global || nw[0] != 0 {
			if err := a.linErrors(ctx, g.keyRow, nw, +1); err != nil {
				return err
			}
		}
	}
	var oldOut, newOut types.Row
	if g.found && (global || old[0] != 0) {
		oldOut = a.linFinalize(g.keyRow, old)
	}
	if global || nw[0] != 0 {
		newOut = a.linFinalize(g.keyRow, nw)
	}
	switch {
	case oldOut == nil && newOut == nil:
	case oldOut == nil:
		out.Add(newOut, +1)
	case newOut == nil:
		out.Add(oldOut, -1)
	default:
		// NB: the key columns are the same values in both rows.
		if k := len(g.keyRow); !l.sameRows(oldOut[k:], newOut[k:]) {
			out.Add(oldOut, -1)
			out.Add(newOut, +1)
		}
	}
	key := l.key(g)
	if !global && allZeroWords(nw) {
		if !g.found {
			return nil
		}
		l.cache.store(g.slot, nw, false, 0)
		return a.acc.Delete(ctx.Txn, key, g.oldLen)
	}
	if !g.found {
		if err := a.indexGroup(ctx, key, g.keyRow); err != nil {
			return err
		}
	}
	tag := kv.TagWords
	if l.merge {
		tag = kv.TagAddWords
	}
	l.valueBuf = kv.AppendWords(l.valueBuf[:0], tag, nw)
	l.cache.store(g.slot, nw, true, len(l.valueBuf))
	if m, ok := ctx.Txn.(kv.Merger); ok && l.merge {
		operand := l.valueBuf
		if g.found {
			// The blind operand new − old: the store adds it to the value
			// it holds (which equals old).
			for i := range old {
				old[i] = nw[i] - old[i]
			}
			l.opBuf = kv.AppendWords(l.opBuf[:0], kv.TagAddWords, old)
			operand = l.opBuf
		}
		return a.acc.Merge(m, key, operand, g.oldLen, len(l.valueBuf))
	}
	return a.acc.Set(ctx.Txn, key, l.valueBuf, g.oldLen)
}

// sameRows reports whether two output rows of a group encode identically
// (the generic path's test), comparing simple datums directly.
func (l *linState) sameRows(a, b types.Row) bool {
	for i, x := range a {
		switch x := x.(type) {
		case nil:
			if b[i] != nil {
				return false
			}
		case int64:
			if y, ok := b[i].(int64); !ok || x != y {
				return false
			}
		case bool:
			if y, ok := b[i].(bool); !ok || x != y {
				return false
			}
		case float64:
			if y, ok := b[i].(float64); !ok || math.Float64bits(x) != math.Float64bits(y) {
				return false
			}
		default:
			l.encOld = zset.AppendDatum(l.encOld[:0], x)
			l.encNew = zset.AppendDatum(l.encNew[:0], b[i])
			if !bytes.Equal(l.encOld, l.encNew) {
				return false
			}
		}
	}
	return true
}

func wordsEqual(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func allZeroWords(w []int64) bool {
	for _, x := range w {
		if x != 0 {
			return false
		}
	}
	return true
}
