package op

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"github.com/rockstream/rockstream/ivm/arrange"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// WindowFunc is a window function.
type WindowFunc uint8

// Window functions. WinAggregate is an ordinary aggregate (AggregateCall)
// computed over each row's frame.
const (
	WinRowNumber WindowFunc = iota + 1
	WinRank
	WinDenseRank
	WinPercentRank
	WinCumeDist
	WinNtile
	WinLag
	WinLead
	WinFirstValue
	WinLastValue
	WinNthValue
	WinAggregate
)

func (f WindowFunc) String() string {
	switch f {
	case WinRowNumber:
		return "row_number"
	case WinRank:
		return "rank"
	case WinDenseRank:
		return "dense_rank"
	case WinPercentRank:
		return "percent_rank"
	case WinCumeDist:
		return "cume_dist"
	case WinNtile:
		return "ntile"
	case WinLag:
		return "lag"
	case WinLead:
		return "lead"
	case WinFirstValue:
		return "first_value"
	case WinLastValue:
		return "last_value"
	case WinNthValue:
		return "nth_value"
	case WinAggregate:
		return "aggregate"
	}
	return "?"
}

// FrameMode is ROWS, RANGE or GROUPS.
type FrameMode uint8

// Frame modes.
const (
	FrameRange FrameMode = iota // the default
	FrameRows
	FrameGroups
)

// BoundKind is one end of a frame.
type BoundKind uint8

// Frame bounds. PRECEDING/FOLLOWING carry an Offset (ROWS and GROUPS) or a
// Value (RANGE).
const (
	BoundUnboundedPreceding BoundKind = iota + 1
	BoundPreceding
	BoundCurrentRow
	BoundFollowing
	BoundUnboundedFollowing
)

// FrameBound is a frame start or end.
type FrameBound struct {
	Kind   BoundKind
	Offset int64
	// Value is a RANGE frame's offset, of expr.RangeOffsetType of the
	// single ORDER BY column's type: the frame holds the rows whose value
	// lies within Value of the current row's (PostgreSQL's in_range).
	Value types.Datum
}

// rangeOffset reports whether b is a RANGE offset bound of f.
func (f Frame) rangeOffset(b FrameBound) bool {
	return f.Mode == FrameRange && (b.Kind == BoundPreceding || b.Kind == BoundFollowing)
}

// Frame is a window frame; the zero value is PostgreSQL's default RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (all rows when there is no
// ORDER BY, since every row is then a peer).
type Frame struct {
	Mode       FrameMode
	Start, End FrameBound
}

func (f Frame) bounds() (FrameBound, FrameBound) {
	s, e := f.Start, f.End
	if s.Kind == 0 {
		s.Kind = BoundUnboundedPreceding
	}
	if e.Kind == 0 {
		e.Kind = BoundCurrentRow
	}
	return s, e
}

// WindowCall is one window function of a WindowSpec.
type WindowCall struct {
	Func WindowFunc
	// Args: lag/lead (value [, offset [, default]]), first/last_value
	// (value), nth_value (value, n), ntile (n); evaluated per input row.
	Args []expr.Expr
	// Agg is the aggregate of WinAggregate (Distinct is not allowed).
	Agg   AggregateCall
	Frame Frame
	Name  string
}

// WindowSpec is one OVER (PARTITION BY … ORDER BY …) clause with the
// functions computed over it. The output row is the input row followed by
// one column per call.
type WindowSpec struct {
	PartitionBy []int
	OrderBy     []SortKey
	Calls       []WindowCall
}

// WindowResultType is the SQL result type of a window call.
func WindowResultType(c WindowCall) (types.Type, error) {
	switch c.Func {
	case WinRowNumber, WinRank, WinDenseRank:
		return types.TInt8, nil
	case WinNtile:
		return types.TInt4, nil
	case WinPercentRank, WinCumeDist:
		return types.TFloat8, nil
	case WinLag, WinLead, WinFirstValue, WinLastValue, WinNthValue:
		if len(c.Args) == 0 {
			return types.Type{}, fmt.Errorf("%s needs an argument", c.Func)
		}
		return c.Args[0].Type(), nil
	case WinAggregate:
		if c.Agg.Distinct {
			return types.Type{}, fmt.Errorf("DISTINCT is not implemented for window functions")
		}
		return aggResultType(c.Agg)
	}
	return types.Type{}, fmt.Errorf("unknown window function %d", c.Func)
}

// Window maintains window functions (spec §6.10's per-partition recompute,
// as in DBSP): input rows are arranged by partition key, and for every
// partition a delta touches it emits
//
//	Window(Δ)_p = eval(P_p + Δ_p) − eval(P_p)
//
// where eval sorts the partition by ORDER BY (ties by row encoding, so
// ROW_NUMBER among peers is deterministic) and computes every call for
// every row copy. A step costs O(|P_p| log |P_p|) per touched partition, plus the
// frame width per row for aggregates over sliding frames; a query that
// keeps only the first k rows per partition (ROW_NUMBER() ≤ k) is planned
// with a TopK below the Window so partitions stay k rows long.
//
// State:
//
//	0x01 KindWindow op_id partition_key row → weight
//
// A Window fed directly by a TopK with the same partition columns stores
// nothing (ReadInputFrom): its integrated input is the TopK's current
// window of each partition, which the TopK's state holds already.
type Window struct {
	spec      WindowSpec
	in        types.Schema
	schema    types.Schema
	partTypes []types.Type
	eval      windowEval
	state     *arrange.Arrangement
	// input, when set, is the TopK feeding this Window, whose state it
	// reads instead of keeping its own (ReadInputFrom).
	input *TopK
}

// ReadInputFrom makes o read its integrated input from t, the operator
// whose output is o's only input, instead of storing a copy of it (Nexmark
// q19 stored each auction's top ten bids twice, a fifth of its writes).
// It reports whether t qualifies: it must partition by the same columns
// of the same rows, so a partition's rows in o are t's window of that
// partition. Call it before the first Step; the state format changes with
// it (StateFormat), so state stored without it is not misread.
func (o *Window) ReadInputFrom(t *TopK) bool {
	if !slices.Equal(o.spec.PartitionBy, t.spec.PartitionBy) || !slices.Equal(o.in, t.schema) {
		return false
	}
	o.input = t
	return true
}

// NewWindow returns an incremental Window over rows of schema in.
func NewWindow(state State, in types.Schema, spec WindowSpec) (*Window, error) {
	ev, schema, err := newWindowEval(in, spec)
	if err != nil {
		return nil, err
	}
	return &Window{spec: spec, in: in, schema: schema, partTypes: keyTypes(in, spec.PartitionBy), eval: ev, state: state.groupedArrangement(arrange.KindWindow)}, nil
}

// Schema implements Operator.
func (o *Window) Schema() types.Schema { return o.schema }

// Arrangements implements Stateful.
func (o *Window) Arrangements() []*arrange.Arrangement {
	if o.input != nil {
		return nil // the input's state is the TopK's
	}
	return []*arrange.Arrangement{o.state}
}

// Step implements Operator.
func (o *Window) Step(ctx *Context, inputs []zset.Batch) (zset.Batch, error) {
	prefixes, deltas := byPartition(inputs[0], o.partTypes, o.spec.PartitionBy)
	var out zset.Batch
	for j, delta := range deltas {
		delta = zset.Consolidate(delta)
		if len(delta.Rows) == 0 {
			continue
		}
		prefix := []byte(prefixes[j])
		var before, after zset.Batch
		if o.input != nil {
			// NB: the TopK stepped first in this Txn, so its window is
			// the input after this step's delta.
			now, err := o.input.partitionWindow(ctx.Txn, prefix)
			if err != nil {
				return zset.Batch{}, err
			}
			after = zset.Consolidate(now)
			before.AddBatch(after, 1)
			before.AddBatch(delta, -1)
			before = zset.Consolidate(before)
		} else {
			var err error
			if before, err = readGroupRows(ctx.Txn, o.state, prefix); err != nil {
				return zset.Batch{}, err
			}
			after = zset.Consolidate(zset.Sum(before, delta))
		}
		if err := o.eval.partition(ctx, before, -1, &out); err != nil {
			return zset.Batch{}, err
		}
		if err := o.eval.partition(ctx, after, +1, &out); err != nil {
			return zset.Batch{}, err
		}
		if o.input == nil {
			if err := addGroupRows(ctx.Txn, o.state, prefix, delta); err != nil {
				return zset.Batch{}, err
			}
		}
	}
	return out, nil
}

// byPartition splits a delta by partition key (the ascending key of
// columns cols), in first-seen order.
func byPartition(delta zset.Batch, partTypes []types.Type, cols []int) ([]string, []zset.Batch) {
	index := map[string]int{}
	var prefixes []string
	var deltas []zset.Batch
	var buf []byte
	for i, row := range delta.Rows {
		buf = appendKey(buf[:0], partTypes, row, cols)
		j, ok := index[string(buf)]
		if !ok {
			j = len(deltas)
			index[string(buf)] = j
			prefixes = append(prefixes, string(buf))
			deltas = append(deltas, zset.Batch{})
		}
		deltas[j].Add(row, delta.Weights[i])
	}
	return prefixes, deltas
}

// StreamWindow is the non-incremental Window over a whole Z-set.
func StreamWindow(ctx *Context, in types.Schema, spec WindowSpec, batch zset.Batch) (zset.Batch, error) {
	ev, _, err := newWindowEval(in, spec)
	if err != nil {
		return zset.Batch{}, err
	}
	_, parts := byPartition(zset.Consolidate(batch), keyTypes(in, spec.PartitionBy), spec.PartitionBy)
	var out zset.Batch
	for _, p := range parts {
		if err := ev.partition(ctx, p, +1, &out); err != nil {
			return zset.Batch{}, err
		}
	}
	return out, nil
}

// windowEval computes a WindowSpec over one partition.
type windowEval struct {
	spec     WindowSpec
	in       types.Schema
	resTypes []types.Type
	sumKinds []sumKind
}

func newWindowEval(in types.Schema, spec WindowSpec) (windowEval, types.Schema, error) {
	for _, c := range spec.PartitionBy {
		if c < 0 || c >= len(in) {
			return windowEval{}, nil, fmt.Errorf("partition column %d out of range", c)
		}
	}
	for _, k := range spec.OrderBy {
		if k.Column < 0 || k.Column >= len(in) {
			return windowEval{}, nil, fmt.Errorf("order-by column %d out of range", k.Column)
		}
	}
	ev := windowEval{spec: spec, in: in}
	schema := append(types.Schema(nil), in...)
	for _, c := range spec.Calls {
		t, err := WindowResultType(c)
		if err != nil {
			return windowEval{}, nil, err
		}
		var k sumKind
		if c.Func == WinAggregate && (c.Agg.Func == AggSum || c.Agg.Func == AggAvg) {
			if k, err = sumKindOf(c.Agg.Arg.Type()); err != nil {
				return windowEval{}, nil, err
			}
		}
		s, e := c.Frame.bounds()
		if s.Kind == BoundUnboundedFollowing || e.Kind == BoundUnboundedPreceding || s.Offset < 0 || e.Offset < 0 {
			return windowEval{}, nil, fmt.Errorf("invalid window frame")
		}
		for _, b := range []FrameBound{s, e} {
			if !c.Frame.rangeOffset(b) {
				continue
			}
			if len(spec.OrderBy) != 1 {
				return windowEval{}, nil, fmt.Errorf("RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
			}
			t := in[spec.OrderBy[0].Column].Type
			if _, ok := expr.RangeOffsetType(t); !ok || b.Value == nil {
				return windowEval{}, nil, fmt.Errorf("RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", t)
			}
			if err := expr.CheckRangeOffset(t, b.Value); err != nil {
				return windowEval{}, nil, err
			}
		}
		ev.resTypes = append(ev.resTypes, t)
		ev.sumKinds = append(ev.sumKinds, k)
		schema = append(schema, types.Column{Name: c.Name, Type: t, Nullable: true})
	}
	return ev, schema, nil
}

type windowRow struct {
	key []byte // row encoding: the tiebreak among peers
	row types.Row
}

// partition appends sign × the window output of the rows of part (a
// consolidated Z-set; rows with non-positive weight are absent) to out.
// An evaluation error drops the partition's output and records one error
// per row copy that raised it, with the same sign, so the errors integrate
// like rows.
func (ev *windowEval) partition(ctx *Context, part zset.Batch, sign int64, out *zset.Batch) error {
	var rows []windowRow
	for i, r := range part.Rows {
		for w := part.Weights[i]; w > 0; w-- {
			rows = append(rows, windowRow{row: r})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	for i := range rows {
		rows[i].key = zset.EncodeRow(nil, rows[i].row)
	}
	sort.SliceStable(rows, func(a, b int) bool {
		if c := compareSortKeys(ev.in, ev.spec.OrderBy, rows[a].row, rows[b].row); c != 0 {
			return c < 0
		}
		return bytes.Compare(rows[a].key, rows[b].key) < 0
	})
	n := len(rows)
	// Peer groups: group[i] is row i's group; starts[g] its first row.
	group := make([]int, n)
	starts := []int{0}
	for i := 1; i < n; i++ {
		group[i] = group[i-1]
		if compareSortKeys(ev.in, ev.spec.OrderBy, rows[i-1].row, rows[i].row) != 0 {
			group[i]++
			starts = append(starts, i)
		}
	}
	starts = append(starts, n)
	results := make([][]types.Datum, len(ev.spec.Calls))
	failed := false
	for ci, c := range ev.spec.Calls {
		res, err := ev.call(ctx, sign, ci, c, rows, group, starts)
		if err != nil {
			return err
		}
		if res == nil {
			failed = true
		}
		results[ci] = res
	}
	if failed {
		return nil
	}
	for i, r := range rows {
		o := make(types.Row, 0, len(r.row)+len(results))
		o = append(o, r.row...)
		for ci := range results {
			o = append(o, results[ci][i])
		}
		out.Add(o, sign)
	}
	return nil
}

// evalArgs evaluates e on every row; nil with the errors recorded in ctx
// (with weight sign) when a row fails.
func (ev *windowEval) evalArgs(ctx *Context, e expr.Expr, rows []windowRow, sign int64) ([]types.Datum, error) {
	vals := make([]types.Datum, len(rows))
	failed := false
	for i, r := range rows {
		v, err := e.Eval(ctx.Env, r.row)
		if err != nil {
			if err := ctx.Fail(err, r.row, sign); err != nil {
				return nil, err
			}
			failed = true
			continue
		}
		vals[i] = v
	}
	if failed {
		return nil, nil
	}
	return vals, nil
}

// frames returns every row's frame: row i's is [lo[i], hi[i]). nil (no
// error) when a RANGE offset could not be applied to a row (recorded in
// ctx).
func (ev *windowEval) frames(ctx *Context, sign int64, f Frame, rows []windowRow, group, starts []int) ([]int, []int, error) {
	n := len(rows)
	lo, hi := make([]int, n), make([]int, n)
	for i := range rows {
		lo[i], hi[i] = frameOf(f, i, group, starts)
	}
	s, e := f.bounds()
	if !f.rangeOffset(s) && !f.rangeOffset(e) {
		return lo, hi, nil
	}
	key := ev.spec.OrderBy[0]
	t := ev.in[key.Column].Type
	val := func(j int) types.Datum { return rows[j].row[key.Column] }
	// firstFalse is the first row j where pred(j) is false (pred holds for
	// a prefix of the sorted rows), or n.
	var failed error
	firstFalse := func(pred func(j int) (bool, error)) int {
		return sort.Search(n, func(j int) bool {
			ok, err := pred(j)
			if err != nil && failed == nil {
				failed = err
			}
			return !ok
		})
	}
	for i := range rows {
		cur := val(i)
		if f.rangeOffset(s) {
			// The frame starts at the first row in range: at or after
			// cur ∓ offset in the sort order (PostgreSQL's frame head).
			sub, less := s.Kind == BoundPreceding, false
			if key.Descending {
				sub, less = !sub, true
			}
			lo[i] = firstFalse(func(j int) (bool, error) {
				v := val(j)
				if v == nil || cur == nil {
					if key.NullsFirst {
						return !(v != nil || cur == nil), nil
					}
					return !(v == nil || cur != nil), nil
				}
				ok, err := expr.InRange(ctx.Env, t, v, cur, s.Value, sub, less)
				return !ok, err
			})
		}
		if f.rangeOffset(e) {
			// The frame ends before the first row past cur ± offset.
			sub, less := e.Kind == BoundPreceding, true
			if key.Descending {
				sub, less = !sub, false
			}
			hi[i] = firstFalse(func(j int) (bool, error) {
				v := val(j)
				if v == nil || cur == nil {
					if key.NullsFirst {
						return v == nil, nil
					}
					return cur == nil, nil
				}
				return expr.InRange(ctx.Env, t, v, cur, e.Value, sub, less)
			})
		}
		if hi[i] < lo[i] {
			hi[i] = lo[i]
		}
		if failed != nil {
			if err := ctx.Fail(failed, rows[i].row, sign); err != nil {
				return nil, nil, err
			}
			return nil, nil, nil
		}
	}
	return lo, hi, nil
}

// frameOf returns row i's frame [lo, hi) (a RANGE offset bound is left
// unbounded: frames applies it).
func frameOf(f Frame, i int, group []int, starts []int) (int, int) {
	n := starts[len(starts)-1]
	ngroups := len(starts) - 1
	s, e := f.bounds()
	lo, hi := 0, n
	switch s.Kind {
	case BoundUnboundedPreceding:
		lo = 0
	case BoundCurrentRow:
		lo = i
		if f.Mode != FrameRows {
			lo = starts[group[i]]
		}
	case BoundPreceding, BoundFollowing:
		d := s.Offset
		if s.Kind == BoundPreceding {
			d = -d
		}
		if f.Mode == FrameRows {
			lo = clampInt(int64(i)+d, 0, int64(n))
		} else {
			lo = starts[clampInt(int64(group[i])+d, 0, int64(ngroups))]
		}
	}
	switch e.Kind {
	case BoundUnboundedFollowing:
		hi = n
	case BoundCurrentRow:
		hi = i + 1
		if f.Mode != FrameRows {
			hi = starts[group[i]+1]
		}
	case BoundPreceding, BoundFollowing:
		d := e.Offset
		if e.Kind == BoundPreceding {
			d = -d
		}
		if f.Mode == FrameRows {
			hi = clampInt(int64(i)+d+1, 0, int64(n))
		} else {
			hi = starts[clampInt(int64(group[i])+d+1, 0, int64(ngroups))]
		}
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func clampInt(v, lo, hi int64) int {
	return int(max(lo, min(v, hi)))
}

// call computes one window call for every row; nil (no error) when an
// argument failed to evaluate (recorded in ctx).
func (ev *windowEval) call(ctx *Context, sign int64, ci int, c WindowCall, rows []windowRow, group, starts []int) ([]types.Datum, error) {
	n := len(rows)
	res := make([]types.Datum, n)
	args := make([][]types.Datum, len(c.Args))
	for a, e := range c.Args {
		vals, err := ev.evalArgs(ctx, e, rows, sign)
		if err != nil || vals == nil {
			return nil, err
		}
		args[a] = vals
	}
	switch c.Func {
	case WinRowNumber:
		for i := range rows {
			res[i] = int64(i + 1)
		}
	case WinRank:
		for i := range rows {
			res[i] = int64(starts[group[i]] + 1)
		}
	case WinDenseRank:
		for i := range rows {
			res[i] = int64(group[i] + 1)
		}
	case WinPercentRank:
		for i := range rows {
			if n == 1 {
				res[i] = float64(0)
			} else {
				res[i] = float64(starts[group[i]]) / float64(n-1)
			}
		}
	case WinCumeDist:
		for i := range rows {
			res[i] = float64(starts[group[i]+1]) / float64(n)
		}
	case WinNtile:
		// The bucket count is read from the partition's first row.
		if args[0][0] == nil {
			break
		}
		buckets := args[0][0].(int64)
		if buckets <= 0 {
			return ev.fail(ctx, sign, rows[0].row, expr.EvalError("22014", "argument of ntile must be greater than zero"))
		}
		per, extra := int64(n)/buckets, int64(n)%buckets
		for i := range rows {
			// The first `extra` buckets hold per+1 rows.
			j := int64(i)
			var b int64
			if per == 0 || j < extra*(per+1) {
				b = j/(per+1) + 1
			} else {
				b = extra + (j-extra*(per+1))/per + 1
			}
			res[i] = b
		}
	case WinLag, WinLead:
		for i := range rows {
			off := int64(1)
			if len(args) > 1 {
				if args[1][i] == nil {
					continue
				}
				off = args[1][i].(int64)
			}
			j := int64(i) - off
			if c.Func == WinLead {
				j = int64(i) + off
			}
			switch {
			case j >= 0 && j < int64(n):
				res[i] = args[0][j]
			case len(args) > 2:
				res[i] = args[2][i]
			}
		}
	case WinFirstValue, WinLastValue, WinNthValue:
		los, his, err := ev.frames(ctx, sign, c.Frame, rows, group, starts)
		if err != nil || los == nil {
			return nil, err
		}
		for i := range rows {
			lo, hi := los[i], his[i]
			switch c.Func {
			case WinFirstValue:
				if lo < hi {
					res[i] = args[0][lo]
				}
			case WinLastValue:
				if lo < hi {
					res[i] = args[0][hi-1]
				}
			default:
				if args[1][i] == nil {
					continue
				}
				k := args[1][i].(int64)
				if k <= 0 {
					return ev.fail(ctx, sign, rows[i].row, expr.EvalError("22016", "argument of nth_value must be greater than zero"))
				}
				if int64(lo)+k-1 < int64(hi) {
					res[i] = args[0][int64(lo)+k-1]
				}
			}
		}
	case WinAggregate:
		return ev.aggregate(ctx, sign, ci, c, rows, group, starts)
	default:
		return nil, fmt.Errorf("unknown window function %d", c.Func)
	}
	return res, nil
}

func (ev *windowEval) fail(ctx *Context, sign int64, row types.Row, err error) ([]types.Datum, error) {
	if err := ctx.Fail(err, row, sign); err != nil {
		return nil, err
	}
	return nil, nil
}

// aggregate computes an aggregate over each row's frame; rows whose frame
// equals the previous row's reuse its result (peers under RANGE, or the
// whole partition).
func (ev *windowEval) aggregate(ctx *Context, sign int64, ci int, c WindowCall, rows []windowRow, group, starts []int) ([]types.Datum, error) {
	n := len(rows)
	vals := make([]types.Datum, n)
	use := make([]bool, n)
	for i, r := range rows {
		if c.Agg.Filter != nil {
			ok, err := evalBool(ctx.Env, c.Agg.Filter, r.row)
			if err != nil {
				return ev.fail(ctx, sign, r.row, err)
			}
			if !ok {
				continue
			}
		}
		if c.Agg.Func == AggCountStar {
			use[i] = true
			continue
		}
		v, err := c.Agg.Arg.Eval(ctx.Env, r.row)
		if err != nil {
			return ev.fail(ctx, sign, r.row, err)
		}
		vals[i], use[i] = v, v != nil
	}
	los, his, err := ev.frames(ctx, sign, c.Frame, rows, group, starts)
	if err != nil || los == nil {
		return nil, err
	}
	res := make([]types.Datum, n)
	prevLo, prevHi := -1, -1
	var prev types.Datum
	var fv []types.Datum
	var fw []int64
	for i := range rows {
		lo, hi := los[i], his[i]
		if lo == prevLo && hi == prevHi {
			res[i] = prev
			continue
		}
		fv, fw = fv[:0], fw[:0]
		for j := lo; j < hi; j++ {
			if use[j] {
				fv = append(fv, vals[j])
				fw = append(fw, 1)
			}
		}
		v, err := streamAggregateCall(ctx.Env, c.Agg, ev.sumKinds[ci], ev.resTypes[ci], fv, fw)
		if err != nil {
			return ev.fail(ctx, sign, rows[i].row, err)
		}
		res[i], prev, prevLo, prevHi = v, v, lo, hi
	}
	return res, nil
}
