package op

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// TemporalOp is the comparison of a temporal bound: Expr Op now + Offset.
type TemporalOp uint8

// Temporal bound comparisons.
const (
	TemporalLt TemporalOp = iota + 1 // Expr <  now + Offset: the row becomes visible
	TemporalLe                       // Expr <= now + Offset: the row becomes visible
	TemporalGt                       // Expr >  now + Offset: the row expires
	TemporalGe                       // Expr >= now + Offset: the row expires
)

func (o TemporalOp) String() string {
	switch o {
	case TemporalLt:
		return "<"
	case TemporalLe:
		return "<="
	case TemporalGt:
		return ">"
	case TemporalGe:
		return ">="
	}
	return fmt.Sprintf("TemporalOp(%d)", uint8(o))
}

// TemporalBound is one conjunct of a temporal filter: Expr Op now() +
// OffsetMicros, Expr a timestamptz expression of the row alone.
type TemporalBound struct {
	Expr         expr.Expr
	Op           TemporalOp
	OffsetMicros int64
}

// TemporalFilterSpec is a temporal filter: the conjunction of its bounds.
type TemporalFilterSpec struct {
	Bounds []TemporalBound
}

// TemporalFilter keeps the rows whose bounds hold at the step's time
// (Context.Now): WHERE ts > now() - interval '1 hour' AND ts <= now().
// Each row is visible over one interval of time, [activation, expiry):
// a bound Expr > now + c holds while now < Expr − c, a bound
// Expr <= now + c from now >= Expr − c on. Time only moves forward (a
// step whose Now is earlier than the last applied one filters at the last
// one), so a row is inserted at most once and retracted at most once.
//
//	TF(Δ, now) = σ_{A(r) ≤ now < D(r)}(Δ)                 (rows arriving)
//	           + Σ{+r : prev < A(r) ≤ now} − Σ{+r : prev < D(r) ≤ now}
//	                                                      (rows whose time came)
//
// where prev is the last applied time and the second line ranges over the
// rows stored in its indexes (rows arrived earlier and not expired).
//
//	time | now | input            | output
//	-----|-----|------------------|---------------
//	0    | 10  | {r(ts=12):+1}    | {r:+1}         (ts > now - 5: expires at 17)
//	1    | 15  | {}               | {}
//	2    | 17  | {}               | {r:-1}
//	3    | 18  | {r:-1}           | {}             (already expired)
//
// State (global: the empty partition key, so the indexes are one range in
// deadline order and a step reads only the entries that are due):
//
//	0x01 KindTemporal op_id bucket 'a' deadline(8) row → weight (activation index)
//	0x01 KindTemporal op_id bucket 'e' deadline(8) row → weight (expiry index)
//	0x01 KindTemporal op_id bucket 'n'                 → last applied time
//
// A row is stored while it can still change the output: in the expiry
// index until its expiry (never for a row without an upper bound), and in
// the activation index until it becomes visible. Rows already expired are
// not stored, so the state holds only the rows of the view's window.
type TemporalFilter struct {
	schema types.Schema
	spec   TemporalFilterSpec
	state  *arrange.Arrangement
}

// Index tags of the temporal filter's state keys.
const (
	temporalActivation byte = 'a'
	temporalExpiry     byte = 'e'
	temporalNow        byte = 'n'
)

// Time bounds: no activation (visible from the start of time) and no
// expiry (visible to the end of time).
const (
	temporalAlways int64 = math.MinInt64
	temporalNever  int64 = math.MaxInt64
)

// NewTemporalFilter returns a TemporalFilter over rows of schema in.
func NewTemporalFilter(state State, in types.Schema, spec TemporalFilterSpec) *TemporalFilter {
	return &TemporalFilter{schema: in, spec: spec, state: state.arrangement(arrange.KindTemporal)}
}

// Schema implements Operator.
func (f *TemporalFilter) Schema() types.Schema { return f.schema }

// Arrangements implements Stateful.
func (f *TemporalFilter) Arrangements() []*arrange.Arrangement {
	return []*arrange.Arrangement{f.state}
}

// window returns the row's visibility interval [from, until); ok is false
// when an expression failed (recorded in ctx with weight).
func (f *TemporalFilter) window(ctx *Context, row types.Row, weight int64) (from, until int64, ok bool, err error) {
	from, until = temporalAlways, temporalNever
	for _, b := range f.spec.Bounds {
		v, err := b.Expr.Eval(ctx.Env, row)
		if err != nil {
			return 0, 0, false, ctx.Fail(err, row, weight)
		}
		a, d := boundWindow(v, b.Op, b.OffsetMicros)
		from, until = max(from, a), min(until, d)
	}
	return from, until, true, nil
}

// boundWindow is the interval of now over which v op now + offset holds:
// [from, until). NULL never holds; ±infinity holds always or never.
func boundWindow(v types.Datum, o TemporalOp, offset int64) (from, until int64) {
	never := func() (int64, int64) { return temporalNever, temporalAlways }
	ts, ok := v.(types.TimestampTZ)
	if !ok {
		return never()
	}
	upper := o == TemporalGt || o == TemporalGe
	switch ts {
	case types.TimestampTZPosInfinity:
		if upper {
			return temporalAlways, temporalNever
		}
		return never()
	case types.TimestampTZNegInfinity:
		if upper {
			return never()
		}
		return temporalAlways, temporalNever
	}
	edge := subSaturating(int64(ts), offset)
	switch o {
	case TemporalGt: // now + c < v ⟺ now < v − c
		return temporalAlways, edge
	case TemporalGe: // now + c <= v ⟺ now < v − c + 1
		return temporalAlways, addSaturating(edge, 1)
	case TemporalLt: // v < now + c ⟺ now >= v − c + 1
		return addSaturating(edge, 1), temporalNever
	default: // v <= now + c ⟺ now >= v − c
		return edge, temporalNever
	}
}

func addSaturating(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

func subSaturating(a, b int64) int64 {
	if b == math.MinInt64 {
		return addSaturating(addSaturating(a, math.MaxInt64), 1)
	}
	return addSaturating(a, -b)
}

// temporalKey is an index key: tag, the deadline in an order-preserving
// encoding, then the row.
func temporalKey(dst []byte, tag byte, deadline int64, enc []byte) []byte {
	dst = append(dst, tag)
	dst = binary.BigEndian.AppendUint64(dst, uint64(deadline)^(1<<63))
	return append(dst, enc...)
}

// lastNow reads the last applied time (ok false before the first step).
func (f *TemporalFilter) lastNow(txn kv.Reader) (int64, bool, error) {
	v, ok, err := f.state.GetEntry(txn, nil, []byte{temporalNow})
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) != 8 {
		return 0, false, errcode.New(errcode.ArrangementCorrupt, "corrupt temporal filter time %x", v)
	}
	return int64(binary.BigEndian.Uint64(v)), true, nil
}

// addWeight adds dw to the index entry key.
func (f *TemporalFilter) addWeight(txn kv.Txn, key []byte, dw int64) error {
	old, ok, err := f.state.GetEntry(txn, nil, key)
	if err != nil {
		return err
	}
	var w int64
	oldLen := -1
	if ok {
		oldLen = len(old)
		if w, err = arrange.DecodeWeight(old); err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt temporal filter weight")
		}
	}
	w += dw
	if w == 0 {
		return f.state.DeleteEntry(txn, nil, key, oldLen)
	}
	return f.state.SetEntry(txn, nil, key, binary.AppendVarint(nil, w), oldLen)
}

// due emits the entries of index tag whose deadline is at most now, with
// their weight times sign, and deletes them.
func (f *TemporalFilter) due(txn kv.Txn, tag byte, now int64, sign int64, out *zset.Batch) error {
	type entry struct {
		key    []byte
		weight int64
		oldLen int
	}
	var done []entry
	err := f.state.ScanGroup(txn, nil, []byte{tag}, func(suffix, value []byte) error {
		if len(suffix) < 9 {
			return errcode.New(errcode.ArrangementCorrupt, "corrupt temporal filter key %x", suffix)
		}
		if int64(binary.BigEndian.Uint64(suffix[1:9])^(1<<63)) > now {
			return kv.ErrStop
		}
		w, err := arrange.DecodeWeight(value)
		if err != nil {
			return errcode.Wrap(errcode.ArrangementCorrupt, err, "corrupt temporal filter weight")
		}
		done = append(done, entry{key: append([]byte(nil), suffix...), weight: w, oldLen: len(value)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range done {
		row, rest, err := zset.DecodeRow(e.key[9:])
		if err != nil || len(rest) != 0 {
			return errcode.New(errcode.ArrangementCorrupt, "corrupt temporal filter row %x", e.key)
		}
		out.Add(row, sign*e.weight)
		if err := f.state.DeleteEntry(txn, nil, e.key, e.oldLen); err != nil {
			return err
		}
	}
	return nil
}

// Step implements Operator.
func (f *TemporalFilter) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	now := int64(ctx.Now)
	last, started, err := f.lastNow(ctx.Txn)
	if err != nil {
		return zset.Batch{}, err
	}
	if started && last > now {
		// NB: time never goes back for a view (a clock stepped back, a
		// restarted process with another skew): a row that expired stays
		// expired.
		now = last
	}
	var out zset.Batch
	if !started || now > last {
		// The rows whose time came since the last step. Activations first:
		// a row that became visible and expired in between cancels out.
		if err := f.due(ctx.Txn, temporalActivation, now, 1, &out); err != nil {
			return zset.Batch{}, err
		}
		if err := f.due(ctx.Txn, temporalExpiry, now, -1, &out); err != nil {
			return zset.Batch{}, err
		}
		old, ok, err := f.state.GetEntry(ctx.Txn, nil, []byte{temporalNow})
		if err != nil {
			return zset.Batch{}, err
		}
		oldLen := -1
		if ok {
			oldLen = len(old)
		}
		if err := f.state.SetEntry(ctx.Txn, nil, []byte{temporalNow}, binary.BigEndian.AppendUint64(nil, uint64(now)), oldLen); err != nil {
			return zset.Batch{}, err
		}
	}
	in := inputs[0]
	var enc, key []byte
	for i, row := range in.Rows {
		w := in.Weights[i]
		from, until, ok, err := f.window(ctx, row, w)
		if err != nil {
			return zset.Batch{}, err
		}
		if !ok || from >= until || now >= until {
			continue // never visible, or already expired: nothing to keep
		}
		enc = zset.EncodeRow(enc[:0], row)
		if now >= from {
			out.Add(row, w)
		} else {
			key = temporalKey(key[:0], temporalActivation, from, enc)
			if err := f.addWeight(ctx.Txn, key, w); err != nil {
				return zset.Batch{}, err
			}
		}
		if until != temporalNever {
			key = temporalKey(key[:0], temporalExpiry, until, enc)
			if err := f.addWeight(ctx.Txn, key, w); err != nil {
				return zset.Batch{}, err
			}
		}
	}
	return out, nil
}

// StreamTemporalFilter is the non-incremental TemporalFilter: the rows of
// in whose every bound holds at now, compared as SQL compares them.
func StreamTemporalFilter(ctx *Context, spec TemporalFilterSpec, now types.TimestampTZ, in zset.Batch) (zset.Batch, error) {
	var out zset.Batch
	for i, row := range in.Rows {
		keep := true
		for _, b := range spec.Bounds {
			v, err := b.Expr.Eval(ctx.Env, row)
			if err != nil {
				if err := ctx.Fail(err, row, in.Weights[i]); err != nil {
					return zset.Batch{}, err
				}
				keep = false
				break
			}
			ts, ok := v.(types.TimestampTZ)
			if !ok {
				keep = false
				continue
			}
			bound := types.TimestampTZ(int64(now) + b.OffsetMicros)
			var holds bool
			switch b.Op {
			case TemporalLt:
				holds = ts < bound
			case TemporalLe:
				holds = ts <= bound
			case TemporalGt:
				holds = ts > bound
			case TemporalGe:
				holds = ts >= bound
			}
			keep = keep && holds
		}
		if keep {
			out.Add(row, in.Weights[i])
		}
	}
	return out, nil
}
