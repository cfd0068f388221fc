package op

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Aggregate is GROUP BY with aggregate functions (spec §6.2, §6.3). For each
// group g touched by the delta it updates g's accumulator and emits
//
//	Aggregate(Δ) = {(old_g, −1), (new_g, +1)}   for every changed group g
//
// where old_g is the row last emitted for g (stored with the accumulator)
// and new_g is finalized from the updated state. Linear aggregates (COUNT,
// SUM, AVG = SUM/COUNT, BOOL_AND/OR as true/false counts) keep weighted
// accumulators; MIN, MAX and DISTINCT aggregates keep an ordered multiset
// of argument values per group so retractions are exact. A global aggregate
// (no GROUP BY) always has one row, as in PostgreSQL: count 0 and sum NULL
// over empty input, replaced (−1/+1) as input arrives and leaves.
//
//	time | input (g, x)     | output (g, count(*), sum(x), max(x))
//	-----|------------------|--------------------------------------
//	0    | {(a,1):+1,(a,5):+1} | {(a,2,6,5):+1}
//	1    | {(a,5):-1}       | {(a,2,6,5):-1, (a,1,1,1):+1}
//	2    | {(a,1):-1}       | {(a,1,1,1):-1}
//
// State:
//
//	0x01 KindAggregate op_id group_key → accumulator row ++ last output row
//	                                      [++ its errors (agg_errors.go)]
//	0x01 KindMultiset  op_id group_key call value_key → weight ++ value
//
// except on the linear path (agg_linear.go: only COUNT, SUM/AVG over
// int2/int4/int8/float, BOOL_AND/OR), where the accumulator is a kv words value
// whose output is a pure function of it (no last-output copy), written as
// a merge operand when no float sum is involved (spec §6.2):
//
//	0x01 KindAggregate op_id group_key → kv.AppendWords(words)
//
// Keys are ivm/keyenc keys: a MIN multiset is ascending and a MAX multiset
// descending, so the answer is the first live entry of a prefix scan.
type Aggregate struct {
	spec     AggregateSpec
	keyTypes []types.Type
	schema   types.Schema
	sumKinds []sumKind
	types    []types.Type
	acc      *arrange.Arrangement
	multiset *arrange.Arrangement
	// outputBuf and valueBuf are scratch space for encoding a group's
	// output row and state (kv.Txn.Put copies what it keeps).
	outputBuf, valueBuf []byte
	// lin is the linear path (agg_linear.go), nil when some call needs a
	// multiset or an exact decimal sum.
	lin *linState
	// closeIndex is a windowed aggregate's close index (agg_watermark.go;
	// nil without a watermark), closeKeyBuf scratch for its keys.
	closeIndex  *arrange.Arrangement
	closeKeyBuf []byte
	// sweep is the progress of forgetting closed windows.
	sweep closeSweep
	// pending is the step's changed multiset entries (addToMultiset).
	pending multisetPending
}

// NewAggregate returns an incremental Aggregate over rows of schema in.
func NewAggregate(state State, in types.Schema, spec AggregateSpec) (*Aggregate, error) {
	if spec.GroupBy == nil {
		// NB: appendKey needs a non-nil column list.
		spec.GroupBy = []int{}
	}
	a := &Aggregate{spec: spec, acc: state.arrangement(arrange.KindAggregate), multiset: state.arrangement(arrange.KindMultiset)}
	for _, g := range spec.GroupBy {
		if g < 0 || g >= len(in) {
			return nil, fmt.Errorf("group-by column %d out of range", g)
		}
		a.schema = append(a.schema, in[g])
	}
	a.keyTypes = keyTypes(in, spec.GroupBy)
	if len(spec.Calls) > 250 {
		return nil, fmt.Errorf("too many aggregates (%d)", len(spec.Calls))
	}
	for _, call := range spec.Calls {
		if call.Func != AggCountStar && call.Arg == nil {
			return nil, fmt.Errorf("%s needs an argument", call.Func)
		}
		t, err := aggResultType(call)
		if err != nil {
			return nil, err
		}
		var kind sumKind
		if call.Func == AggSum || call.Func == AggAvg {
			if kind, err = sumKindOf(call.Arg.Type()); err != nil {
				return nil, err
			}
		}
		a.sumKinds = append(a.sumKinds, kind)
		a.types = append(a.types, t)
		a.schema = append(a.schema, types.Column{Name: call.Name, Type: t, Nullable: call.Func != AggCountStar && call.Func != AggCount})
	}
	a.initLinear(state)
	if err := a.initWatermark(state); err != nil {
		return nil, err
	}
	return a, nil
}

// Schema implements Operator.
func (a *Aggregate) Schema() types.Schema { return a.schema }

// Arrangements implements Stateful.
func (a *Aggregate) Arrangements() []*arrange.Arrangement {
	if a.closeIndex != nil {
		return []*arrange.Arrangement{a.acc, a.multiset, a.closeIndex}
	}
	return []*arrange.Arrangement{a.acc, a.multiset}
}

// aggInput is one input row's contribution: per call, whether the call sees
// the row and its argument value.
type aggInput struct {
	weight int64
	seen   []bool
	values []types.Datum
}

// evalAggInput evaluates every call's filter and argument on row into in
// (reused across rows); ok is false when an expression failed (the error was
// recorded).
func evalAggInput(ctx *Context, calls []AggregateCall, row types.Row, weight int64, in *aggInput) (bool, error) {
	if in.seen == nil {
		in.seen = make([]bool, len(calls))
		in.values = make([]types.Datum, len(calls))
	}
	in.weight = weight
	for i, call := range calls {
		in.seen[i], in.values[i] = false, nil
		if call.Filter != nil {
			ok, err := evalBool(ctx.Env, call.Filter, row)
			if err != nil {
				return false, ctx.Fail(err, row, weight)
			}
			if !ok {
				continue
			}
		}
		if call.Func == AggCountStar {
			in.seen[i] = true
			continue
		}
		if isOrderedAgg(call.Func) {
			element, seen, err := evalOrderedInput(ctx, call, row)
			if err != nil {
				return false, ctx.Fail(err, row, weight)
			}
			in.seen[i], in.values[i] = seen, element
			continue
		}
		v, err := call.Arg.Eval(ctx.Env, row)
		if err != nil {
			return false, ctx.Fail(err, row, weight)
		}
		// Aggregates other than COUNT(*) ignore NULL arguments.
		in.seen[i] = v != nil
		in.values[i] = v
	}
	return true, nil
}

// aggGroup is one group touched by a step: its state as loaded and as
// updated by the step's rows.
type aggGroup struct {
	key        []byte
	keyRow     types.Row
	state      types.Row
	lastOutput types.Row
	// lastEncoded is lastOutput's encoding as stored (immutable: cached or
	// copied values), so the output need not be encoded again to compare.
	lastEncoded []byte
	// lastErrors and newErrors are the errors of the last and the new
	// output row (agg_errors.go).
	lastErrors, newErrors types.Row
	found                 bool
	oldLen                int
	inputs                int
}

// Step implements Operator. Rows are applied to their group's state as they
// come (no per-group buffering); each touched group is then finalized once.
func (a *Aggregate) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	delta := inputs[0]
	if a.lin != nil {
		out, err := a.stepLinear(ctx, delta)
		if err != nil {
			return zset.Batch{}, err
		}
		return out, a.closeWindows(ctx)
	}
	index := map[string]*aggGroup{}
	var groups []*aggGroup
	var keyBuf, valueBuf []byte
	global := len(a.spec.GroupBy) == 0
	// NB: a step that failed may have left changes unstored.
	a.pending.reset()
	if global {
		// The global group is visited every step so that its row exists
		// from the first step on, even before any input.
		g, err := a.loadGroup(ctx, []byte{}, types.Row{})
		if err != nil {
			return zset.Batch{}, err
		}
		index[""] = g
		groups = append(groups, g)
	}
	err := a.eachInput(ctx, delta, func(_ int, row types.Row, in *aggInput) error {
		keyBuf = appendKey(keyBuf[:0], a.keyTypes, row, a.spec.GroupBy)
		g := index[string(keyBuf)]
		if g == nil {
			var err error
			if g, err = a.loadGroup(ctx, append([]byte(nil), keyBuf...), project(row, a.spec.GroupBy)); err != nil {
				return err
			}
			index[string(g.key)] = g
			groups = append(groups, g)
		}
		return a.apply(ctx, g, in, &valueBuf)
	})
	if err != nil {
		return zset.Batch{}, err
	}
	if err := a.flushMultiset(ctx); err != nil {
		return zset.Batch{}, err
	}
	var out zset.Batch
	for _, g := range groups {
		if err := a.finishGroup(ctx, g, global, &out); err != nil {
			return zset.Batch{}, err
		}
	}
	return out, a.closeWindows(ctx)
}

// eachInput evaluates every call's inputs on each delta row and calls fn
// with the row's number, the row and its inputs (reused across rows); rows
// whose expressions failed (the error was recorded) are skipped.
func (a *Aggregate) eachInput(ctx *Context, delta zset.Batch, fn func(i int, row types.Row, in *aggInput) error) error {
	var in aggInput
	for i, row := range delta.Rows {
		ok, err := evalAggInput(ctx, a.spec.Calls, row, delta.Weights[i], &in)
		if err != nil {
			return err
		}
		if ok {
			if err := fn(i, row, &in); err != nil {
				return err
			}
		}
	}
	return nil
}

// The accumulator row is [rowCount, per call: linear state...]; linear
// state per call: COUNT: [count]; SUM/AVG: [sum, nonNull, scales] where
// scales counts the exact inputs per display scale (PostgreSQL's numeric
// sum has the largest scale among its inputs, which a retraction can
// lower);
// BOOL_AND/OR: [trues, falses]; multiset calls: [].
func (a *Aggregate) emptyState() types.Row {
	st := types.Row{int64(0)}
	for _, call := range a.spec.Calls {
		if usesMultiset(call) {
			continue
		}
		switch call.Func {
		case AggCountStar, AggCount:
			st = append(st, int64(0))
		case AggSum, AggAvg:
			st = append(st, nil, int64(0), nil)
		case AggBoolAnd, AggBoolOr:
			st = append(st, int64(0), int64(0))
		case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
			st = append(st, emptyVarianceState()...)
		case AggBitAnd, AggBitOr, AggBitXor:
			st = emptyBitState(st, call.Func, call.Arg.Type())
		}
	}
	return st
}

// loadGroup reads a group's stored state (or an empty one).
func (a *Aggregate) loadGroup(ctx *Context, key []byte, keyRow types.Row) (*aggGroup, error) {
	g := &aggGroup{key: key, keyRow: keyRow, oldLen: -1}
	stored, found, err := a.acc.Get(ctx.Txn, key)
	if err != nil {
		return nil, err
	}
	if !found {
		g.state = a.emptyState()
		return g, nil
	}
	g.found, g.oldLen = true, len(stored)
	var rest []byte
	if g.state, rest, err = zset.DecodeRow(stored); err != nil {
		return nil, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt aggregate state")
	}
	if len(rest) > 0 {
		var errs []byte
		if g.lastOutput, errs, err = zset.DecodeRow(rest); err != nil {
			return nil, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt aggregate output")
		}
		g.lastEncoded = rest[:len(rest)-len(errs)]
		if len(errs) > 0 {
			if g.lastErrors, _, err = zset.DecodeRow(errs); err != nil {
				return nil, errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt aggregate errors")
			}
		}
	}
	return g, nil
}

// apply adds one input row's contribution to its group.
func (a *Aggregate) apply(ctx *Context, g *aggGroup, in *aggInput, valueBuf *[]byte) error {
	g.inputs++
	state := g.state
	state[0] = state[0].(int64) + in.weight
	slot := 1
	for i, call := range a.spec.Calls {
		if usesMultiset(call) {
			if in.seen[i] {
				if err := a.addToMultiset(ctx, g.key, i, in.values[i], in.weight, valueBuf); err != nil {
					return err
				}
			}
			continue
		}
		switch call.Func {
		case AggCountStar, AggCount:
			if in.seen[i] {
				state[slot] = state[slot].(int64) + in.weight
			}
			slot++
		case AggSum, AggAvg:
			if in.seen[i] {
				sum, err := weightedAdd(a.sumKinds[i], state[slot], in.values[i], sumWeight(in.weight))
				if err != nil {
					// NB: a state-level overflow is recorded against the
					// group's key with the input's weight, so it is
					// retracted with the input.
					if err := ctx.Fail(err, g.keyRow, in.weight); err != nil {
						return err
					}
				} else {
					state[slot] = sum
					state[slot+1] = state[slot+1].(int64) + in.weight
					if a.sumKinds[i] == sumDecimal {
						state[slot+2] = addScaleCount(state[slot+2], in.values[i], in.weight)
					}
					if state[slot+1] == int64(0) {
						// No non-NULL input left: forget the sum (and any
						// float rounding residue).
						state[slot] = nil
						state[slot+2] = nil
					}
				}
			}
			slot += 3
		case AggBoolAnd, AggBoolOr:
			if in.seen[i] {
				if in.values[i].(bool) {
					state[slot] = state[slot].(int64) + in.weight
				} else {
					state[slot+1] = state[slot+1].(int64) + in.weight
				}
			}
			slot += 2
		case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
			if in.seen[i] {
				varianceAdd(state, slot, in.values[i], in.weight)
			}
			slot += varianceSlots
		case AggBitAnd, AggBitOr, AggBitXor:
			n := bitSlots(call.Func, call.Arg.Type())
			if in.seen[i] {
				bitAdd(state[slot:slot+n], call.Func, call.Arg.Type(), in.values[i].(int64), in.weight)
			}
			slot += n
		}
	}
	return nil
}

// finishGroup finalizes a touched group, emits the change of its output
// row and writes its state back.
func (a *Aggregate) finishGroup(ctx *Context, g *aggGroup, global bool, out *zset.Batch) error {
	if g.inputs == 0 && g.found {
		return nil
	}
	rowCount := g.state[0].(int64)
	var newOutput types.Row
	var err error
	if global || rowCount != 0 {
		if newOutput, err = a.finalize(ctx, g, g.state); err != nil {
			return err
		}
	}
	var newEnc []byte
	if newOutput != nil {
		newEnc = zset.EncodeRow(a.outputBuf[:0], newOutput)
		a.outputBuf = newEnc
	}
	if !bytes.Equal(g.lastEncoded, newEnc) || (g.lastOutput == nil) != (newOutput == nil) {
		if g.lastOutput != nil {
			out.Add(g.lastOutput, -1)
		}
		if newOutput != nil {
			out.Add(newOutput, +1)
		}
	}
	g.emitErrors(ctx)
	if !global && rowCount == 0 && allZero(g.state) {
		if !g.found {
			return nil
		}
		return a.acc.Delete(ctx.Txn, g.key, g.oldLen)
	}
	value := zset.EncodeRow(a.valueBuf[:0], g.state)
	if newOutput != nil {
		value = append(value, newEnc...)
		if len(g.newErrors) > 0 {
			value = zset.EncodeRow(value, g.newErrors)
		}
	}
	a.valueBuf = value
	if !g.found {
		if err := a.indexGroup(ctx, g.key, g.keyRow); err != nil {
			return err
		}
	}
	return a.acc.Set(ctx.Txn, g.key, value, g.oldLen)
}

// allZero reports whether a state row holds no contributions at all (so
// the group can be forgotten).
func allZero(state types.Row) bool {
	for _, v := range state {
		switch x := v.(type) {
		case nil:
		case int64:
			if x != 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// multisetDirection orders a call's multiset so that the answer of MIN and
// MAX is the first live entry.
func multisetDirection(call AggregateCall) keyenc.Direction {
	if call.Func == AggMax {
		return keyenc.Desc
	}
	return keyenc.Asc
}

func (a *Aggregate) addToMultiset(ctx *Context, groupKey []byte, call int, value types.Datum, weight int64, buf *[]byte) error {
	c := a.spec.Calls[call]
	if isOrderedAgg(c.Func) {
		return a.addOrdered(ctx, groupKey, call, value.(types.Row), weight, buf)
	}
	// NB: the multiset is partitioned by the group key, so one group's
	// values (all calls) are one range of the group's bucket.
	suffix := append((*buf)[:0], byte(call))
	suffix = keyenc.EncodeColumn(suffix, c.Arg.Type(), value, multisetDirection(c))
	*buf = suffix
	p := &a.pending
	p.key = binary.AppendUvarint(p.key[:0], uint64(len(groupKey)))
	p.key = append(append(p.key, groupKey...), suffix...)
	at, seen := p.index[string(p.key)]
	if !seen {
		old, ok, err := a.multiset.GetEntry(ctx.Txn, groupKey, suffix)
		if err != nil {
			return err
		}
		e := multisetEntry{group: groupKey, suffix: append([]byte(nil), suffix...), oldLen: -1}
		if ok {
			e.oldLen = len(old)
			var n int
			e.weight, n = binary.Varint(old)
			if n <= 0 {
				return errcode.New(errcode.ArrangementCorrupt, "corrupt multiset weight")
			}
			if e.stored, _, err = zset.DecodeDatum(old[n:]); err != nil {
				return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt multiset value")
			}
			e.storedWeight = e.weight
		}
		if p.index == nil {
			p.index = map[string]int{}
		}
		at = len(p.entries)
		p.index[string(p.key)] = at
		p.entries = append(p.entries, e)
	}
	e := &p.entries[at]
	if e.weight == 0 {
		// Absent: the entry (re)starts with this input's representation;
		// a live one keeps its first-seen one (e.g. numeric scale).
		e.stored, e.restarted = value, true
	}
	e.weight += weight
	return nil
}

// multisetEntry is one multiset entry (a group's value of one call) that
// inputs of the step changed: Step adds each input to it in memory and
// stores it once, after the last input (flushMultiset), instead of a read
// and a write per input row: a MAX over counts sees the same few values
// over and over.
type multisetEntry struct {
	group, suffix []byte
	// weight is the entry's weight now (0: absent), stored its value's
	// representation; storedWeight and oldLen (-1: none) are the stored
	// entry's before the step.
	weight, storedWeight int64
	stored               types.Datum
	oldLen               int
	// restarted is set once the entry was absent during the step (its
	// representation may have changed).
	restarted bool
}

// multisetPending is the step's changed multiset entries, in first-touch
// order, indexed by group key length, group key and suffix.
type multisetPending struct {
	index   map[string]int
	entries []multisetEntry
	key     []byte
}

func (p *multisetPending) reset() {
	clear(p.index)
	clear(p.entries)
	p.entries = p.entries[:0]
}

// flushMultiset stores the step's changed multiset entries.
func (a *Aggregate) flushMultiset(ctx *Context) error {
	p := &a.pending
	defer p.reset()
	for i := range p.entries {
		e := &p.entries[i]
		switch {
		case e.weight == e.storedWeight && e.oldLen >= 0 && !e.restarted:
			// Unchanged (its representation too: a live entry keeps it).
		case e.weight == 0:
			if e.oldLen >= 0 {
				if err := a.multiset.DeleteEntry(ctx.Txn, e.group, e.suffix, e.oldLen); err != nil {
					return err
				}
			}
		default:
			v := appendDatumLossless(binary.AppendVarint(nil, e.weight), e.stored)
			if err := a.multiset.SetEntry(ctx.Txn, e.group, e.suffix, v, e.oldLen); err != nil {
				return err
			}
		}
	}
	return nil
}

func appendDatumLossless(buf []byte, d types.Datum) []byte {
	return zset.AppendDatum(buf, d)
}

// finalize computes a group's output row from its state and multisets.
func (a *Aggregate) finalize(ctx *Context, g *aggGroup, state types.Row) (types.Row, error) {
	row := append(types.Row{}, g.keyRow...)
	slot := 1
	for i, call := range a.spec.Calls {
		if isOrderedSetAgg(call.Func) {
			v, valueErr, err := finalizeOrderedSet(ctx.Env, call, a.multisetValues(ctx, g.key, i))
			if err != nil {
				return nil, err
			}
			if err := g.addError(valueErr); err != nil {
				return nil, err
			}
			row = append(row, v)
			continue
		}
		if isOrderedAgg(call.Func) {
			v, err := a.finalizeOrdered(ctx, g.key, i)
			if err != nil {
				return nil, err
			}
			row = append(row, v)
			continue
		}
		if usesMultiset(call) {
			var values []types.Datum
			var weights []int64
			extremumOnly := call.Func == AggMin || call.Func == AggMax
			err := a.multiset.ScanGroup(ctx.Txn, g.key, []byte{byte(i)}, func(_, v []byte) error {
				w, n := binary.Varint(v)
				if n <= 0 {
					return errcode.New(errcode.ArrangementCorrupt, "corrupt multiset weight")
				}
				if w <= 0 && extremumOnly {
					return nil
				}
				d, _, err := zset.DecodeDatum(v[n:])
				if err != nil {
					return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt multiset value")
				}
				values = append(values, d)
				weights = append(weights, w)
				if extremumOnly {
					// NB: entries are in MIN (or, for MAX, reversed) order,
					// so the first live entry is the answer: a bounded scan.
					return kv.ErrStop
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			v, err := finalizeMultiset(call, call.Arg.Type(), a.sumKinds[i], a.types[i], values, weights)
			if err := g.addError(err); err != nil {
				return nil, err
			}
			row = append(row, v)
			continue
		}
		switch call.Func {
		case AggCountStar, AggCount:
			row = append(row, state[slot])
			slot++
		case AggSum, AggAvg:
			sum, n := rescale(state[slot], state[slot+2]), state[slot+1].(int64)
			if call.Func == AggSum {
				row = append(row, finalizeSum(a.sumKinds[i], a.types[i], sum, n))
			} else {
				row = append(row, finalizeAvg(a.sumKinds[i], sum, n))
			}
			if err := g.addError(sumError(a.sumKinds[i], a.types[i], call.Func == AggAvg, sum, n)); err != nil {
				return nil, err
			}
			slot += 3
		case AggBoolAnd, AggBoolOr:
			row = append(row, finalizeBool(call.Func == AggBoolAnd, state[slot].(int64), state[slot+1].(int64)))
			slot += 2
		case AggVarPop, AggVarSamp, AggStddevPop, AggStddevSamp:
			row = append(row, finalizeVariance(call.Func, state[slot:slot+varianceSlots]))
			slot += varianceSlots
		case AggBitAnd, AggBitOr, AggBitXor:
			n := bitSlots(call.Func, call.Arg.Type())
			row = append(row, finalizeBits(state[slot:slot+n], call.Func, call.Arg.Type()))
			slot += n
		}
	}
	return row, nil
}

// StreamAggregate is the non-incremental Aggregate over a whole Z-set: each
// group with non-zero total weight (every group for a global aggregate)
// gives one row.
func StreamAggregate(ctx *Context, in types.Schema, spec AggregateSpec, batch zset.Batch) (zset.Batch, error) {
	a, err := NewAggregate(State{}, in, spec)
	if err != nil {
		return zset.Batch{}, err
	}
	type group struct {
		keyRow   types.Row
		rowCount int64
		values   [][]types.Datum
		weights  [][]int64
	}
	var groups []*group
	if len(spec.GroupBy) == 0 {
		groups = append(groups, &group{keyRow: types.Row{}})
	}
	groupTypes := make([]types.Type, len(spec.GroupBy))
	for i, c := range spec.GroupBy {
		groupTypes[i] = in[c].Type
	}
	for i, row := range batch.Rows {
		var input aggInput
		ok, err := evalAggInput(ctx, spec.Calls, row, batch.Weights[i], &input)
		if err != nil {
			return zset.Batch{}, err
		}
		if !ok {
			continue
		}
		// Quadratic on purpose: a direct reading of GROUP BY, independent
		// of key encodings.
		keyRow := project(row, spec.GroupBy)
		j := -1
		for k, g := range groups {
			if types.EqualRows(groupTypes, g.keyRow, keyRow) {
				j = k
				break
			}
		}
		if j < 0 {
			j = len(groups)
			groups = append(groups, &group{keyRow: keyRow})
		}
		g := groups[j]
		if g.values == nil {
			g.values = make([][]types.Datum, len(spec.Calls))
			g.weights = make([][]int64, len(spec.Calls))
		}
		g.rowCount += input.weight
		for c := range spec.Calls {
			if input.seen[c] {
				g.values[c] = append(g.values[c], input.values[c])
				g.weights[c] = append(g.weights[c], input.weight)
			}
		}
	}
	var out zset.Batch
	for _, g := range groups {
		if len(spec.GroupBy) > 0 && g.rowCount == 0 {
			continue
		}
		row := append(types.Row{}, g.keyRow...)
		for c, call := range spec.Calls {
			var values []types.Datum
			var weights []int64
			if g.values != nil {
				values, weights = g.values[c], g.weights[c]
			}
			v, err := streamAggregateCall(ctx.Env, call, a.sumKinds[c], a.types[c], values, weights)
			if err != nil {
				if err := ctx.Fail(err, g.keyRow, 1); err != nil {
					return zset.Batch{}, err
				}
			}
			row = append(row, v)
		}
		out.Add(row, 1)
	}
	return out, nil
}

// streamAggregateCall computes one aggregate directly from the weighted
// values it sees (env evaluates an ordered-set aggregate's fraction).
func streamAggregateCall(env *expr.Env, call AggregateCall, kind sumKind, resultType types.Type, values []types.Datum, weights []int64) (types.Datum, error) {
	if isOrderedSetAgg(call.Func) {
		sorted, sortedWeights := sortOrdered(call, values, weights)
		v, valueErr, err := finalizeOrderedSet(env, call, sortedValues(sorted, sortedWeights))
		if err == nil {
			err = valueErr
		}
		return v, err
	}
	if isOrderedAgg(call.Func) {
		return streamOrdered(call, values, weights)
	}
	if kind == sumFloat && !usesMultiset(call) {
		return streamFloatSum(call.Func == AggAvg, resultType.Kind == types.KindFloat4, values, weights)
	}
	if usesMultiset(call) {
		// Consolidate SQL-equal values first.
		argType := call.Arg.Type()
		var vs []types.Datum
		var ws []int64
		for i, v := range values {
			j := -1
			for k := range vs {
				if types.Equal(argType, vs[k], v) {
					j = k
					break
				}
			}
			if j < 0 {
				j = len(vs)
				vs = append(vs, v)
				ws = append(ws, 0)
			}
			ws[j] += weights[i]
		}
		return finalizeMultiset(call, argType, kind, resultType, vs, ws)
	}
	if isVarianceAgg(call.Func) {
		return varianceOf(call.Func, values, weights), nil
	}
	if isBitAgg(call.Func) {
		return streamBits(call.Func, call.Arg.Type(), values, weights), nil
	}
	var count, trues, falses int64
	var sum types.Datum
	for i, v := range values {
		count += weights[i]
		switch call.Func {
		case AggSum, AggAvg:
			var err error
			if sum, err = weightedAdd(kind, sum, v, weights[i]); err != nil {
				return nil, err
			}
		case AggBoolAnd, AggBoolOr:
			if v.(bool) {
				trues += weights[i]
			} else {
				falses += weights[i]
			}
		}
	}
	if kind == sumDecimal {
		sum = rescale(sum, streamScaleCounts(values, weights))
	}
	switch call.Func {
	case AggCountStar, AggCount:
		return count, nil
	case AggSum:
		return finalizeSum(kind, resultType, sum, count), nil
	case AggAvg:
		return finalizeAvg(kind, sum, count), nil
	}
	return finalizeBool(call.Func == AggBoolAnd, trues, falses), nil
}
