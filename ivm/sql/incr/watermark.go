package incr

import (
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// eventBound says of a column that once a table's watermark W reaches
// v + closeAfter, no row with value v in that column can reach the
// operator any more (op.AggregateWatermark).
type eventBound struct {
	source     op.WatermarkSource
	closeAfter int64
}

// aggregateWatermark returns the watermark spec of an aggregate over in
// grouped by groupBy: the first GROUP BY column that is bounded by a
// table's watermark, or nil (the aggregate keeps all its state).
func aggregateWatermark(in plan.Node, groupBy []int) *op.AggregateWatermark {
	bounds := eventBounds(in).bounds
	for i, c := range groupBy {
		if b, ok := bounds[c]; ok {
			return &op.AggregateWatermark{Source: b.source, Key: i, CloseAfterMicros: b.closeAfter}
		}
	}
	return nil
}

// lineage is what eventBounds knows of a node's output columns: the
// bounded ones, and, for a constant relation (VALUES, fed once in the
// first step), the integer values of its integer columns.
type lineage struct {
	bounds   map[int]eventBound
	constant bool
	ints     map[int][]int64
}

// eventBounds derives the bounded columns of n's output. A column is
// bounded when rows with a value v in it stop coming once the watermark
// passes v + closeAfter:
//
//   - a scan of a table with a watermark bounds its event-time column;
//   - Filter and Project keep bounds (through scalarBound);
//   - an Aggregate keeps the bounds of its GROUP BY columns: it emits a
//     group's change only in a step whose input changed the group;
//   - a Join with a constant side keeps the other side's bounds (after
//     the first step only that side changes); an equi-join keeps the
//     bound of a key column bounded on both sides (the larger of the
//     two): its output for key v changes only when a side changes for v.
//
// Anything else (a temporal filter, window functions, set operations,
// recursion) bounds nothing: it may emit a row with an old event time
// long after that row was committed.
func eventBounds(n plan.Node) lineage {
	switch x := n.(type) {
	case *plan.Scan:
		w := x.Relation.Watermark
		if w == nil || w.Column >= len(x.Cols) {
			return lineage{}
		}
		// NB: a row is accepted only if its event time t >= W, so t
		// can no longer arrive once W > t, i.e. W >= t + 1µs.
		return lineage{bounds: map[int]eventBound{w.Column: {source: op.WatermarkSource(x.Relation.ID.Object), closeAfter: 1}}}
	case *plan.Values:
		out := lineage{constant: true, ints: map[int][]int64{}}
		for c := range x.Cols {
			var vals []int64
			for _, row := range x.Rows {
				k, ok := row[c].(*plan.Const)
				if !ok {
					vals = nil
					break
				}
				v, ok := k.Value.(int64)
				if !ok {
					vals = nil
					break
				}
				vals = append(vals, v)
			}
			if vals != nil {
				out.ints[c] = vals
			}
		}
		return out
	case *plan.Filter:
		if plan.HasSubquery(x.Pred) {
			// NB: the subquery's answer may change later, letting old
			// rows through.
			return lineage{}
		}
		return eventBounds(x.Input)
	case *plan.Project:
		in := eventBounds(x.Input)
		for _, e := range x.Exprs {
			if plan.HasSubquery(e) {
				return lineage{}
			}
		}
		out := lineage{constant: in.constant, bounds: map[int]eventBound{}, ints: map[int][]int64{}}
		for i, e := range x.Exprs {
			if b, ok := scalarBound(e, in); ok {
				out.bounds[i] = b
			}
			if c, ok := e.(*plan.ColRef); ok {
				if v, ok := in.ints[c.Index]; ok {
					out.ints[i] = v
				}
			}
		}
		return out
	case *plan.Aggregate:
		in := eventBounds(x.Input)
		out := lineage{bounds: map[int]eventBound{}}
		for i, g := range x.GroupBy {
			if b, ok := in.bounds[g]; ok {
				out.bounds[i] = b
			}
		}
		return out
	case *plan.Join:
		left, right := eventBounds(x.Left), eventBounds(x.Right)
		width := len(x.Left.Schema())
		out := lineage{bounds: map[int]eventBound{}, ints: map[int][]int64{}}
		switch {
		case x.Kind != plan.InnerJoin:
			// NB: an outer join's padded rows and a semi or anti join
			// also change when the other side does; only the equi-key
			// rule below holds for them.
		case right.constant:
			for c, b := range left.bounds { //lint:maprange copied into a map
				out.bounds[c] = b
			}
			for c, v := range right.ints { //lint:maprange copied into a map
				out.ints[width+c] = v
			}
			return out
		case left.constant:
			for c, b := range right.bounds { //lint:maprange copied into a map
				out.bounds[width+c] = b
			}
			for c, v := range left.ints { //lint:maprange copied into a map
				out.ints[c] = v
			}
			return out
		}
		for _, k := range x.EquiKeys {
			l, lok := left.bounds[k.Left]
			r, rok := right.bounds[k.Right]
			if !lok || !rok || l.source != r.source {
				continue
			}
			b := eventBound{source: l.source, closeAfter: max(l.closeAfter, r.closeAfter)}
			out.bounds[k.Left] = b
			if x.Kind != plan.SemiJoin && x.Kind != plan.AntiJoin {
				out.bounds[width+k.Right] = b
			}
		}
		return out
	}
	return lineage{}
}

// scalarBound derives the bound of an expression over bounded columns:
// the column itself, date_bin(stride, e, origin) (a bin holds the values
// [v, v + stride)), e ± a fixed interval, and e - k * a fixed interval
// with k an integer column of a constant relation (HOP windows: the
// largest k·interval counts).
func scalarBound(e plan.Scalar, in lineage) (eventBound, bool) {
	switch x := e.(type) {
	case *plan.ColRef:
		b, ok := in.bounds[x.Index]
		return b, ok
	case *plan.Func:
		switch {
		case x.Name == "date_bin" && len(x.Args) == 3:
			stride, ok := fixedInterval(x.Args[0])
			if !ok || stride <= 0 || !isConstant(x.Args[2]) {
				return eventBound{}, false
			}
			b, ok := scalarBound(x.Args[1], in)
			b.closeAfter += stride - 1
			return b, ok
		case x.Op && (x.Name == "-" || x.Name == "+") && len(x.Args) == 2:
			shift, ok := fixedInterval(x.Args[1])
			if !ok && x.Name == "-" {
				shift, ok = largestMultiple(x.Args[1], in)
			}
			if !ok {
				return eventBound{}, false
			}
			b, ok := scalarBound(x.Args[0], in)
			if x.Name == "+" {
				shift = -shift
			}
			b.closeAfter += shift
			return b, ok
		}
	}
	return eventBound{}, false
}

// largestMultiple is the largest value of k * interval (either order)
// over the integer values in.ints knows for column k.
func largestMultiple(e plan.Scalar, in lineage) (int64, bool) {
	f, ok := e.(*plan.Func)
	if !ok || !f.Op || f.Name != "*" || len(f.Args) != 2 {
		return 0, false
	}
	col, iv := f.Args[0], f.Args[1]
	if _, isInterval := fixedInterval(col); isInterval {
		col, iv = iv, col
	}
	// NB: integer * interval is float8 * interval: k is cast (exactly,
	// for the small integers a constant relation holds).
	if c, isCast := col.(*plan.Cast); isCast {
		col = c.Arg
	}
	ref, ok := col.(*plan.ColRef)
	if !ok {
		return 0, false
	}
	step, ok := fixedInterval(iv)
	vals := in.ints[ref.Index]
	if !ok || len(vals) == 0 {
		return 0, false
	}
	best := vals[0] * step
	for _, v := range vals[1:] {
		best = max(best, v*step)
	}
	return best, true
}

// fixedInterval is the length of a constant interval without months or
// days (whose length in timestamptz arithmetic depends on the date).
func fixedInterval(e plan.Scalar) (int64, bool) {
	var v types.Datum
	switch x := e.(type) {
	case *plan.Const:
		v = x.Value
	case *plan.Cast:
		c, ok := x.Arg.(*plan.Const)
		if !ok || x.Typ.Kind != types.KindInterval {
			return 0, false
		}
		text, isText := c.Value.(string)
		if !isText {
			return 0, false
		}
		var err error
		if v, err = types.ParseInterval(text); err != nil {
			return 0, false
		}
	}
	iv, ok := v.(types.Interval)
	if !ok || iv.Months != 0 || iv.Days != 0 {
		return 0, false
	}
	return iv.Micros, true
}

// isConstant reports whether e is a constant or a cast of one.
func isConstant(e plan.Scalar) bool {
	switch x := e.(type) {
	case *plan.Const:
		return true
	case *plan.Cast:
		return isConstant(x.Arg)
	}
	return false
}

// isConstantRelation reports whether n is a constant relation: VALUES
// (fed once, in the first step) under filters and projections.
func isConstantRelation(n plan.Node) bool {
	switch x := n.(type) {
	case *plan.Values:
		return true
	case *plan.Filter:
		return isConstantRelation(x.Input)
	case *plan.Project:
		return isConstantRelation(x.Input)
	}
	return false
}

// joinWatermark returns the watermark spec of a join: its first equi-key
// whose columns are bounded on both sides by the same table's watermark
// (the later of the two closes), or nil (the join keeps all its state).
func joinWatermark(x *plan.Join) *op.JoinWatermark {
	left, right := eventBounds(x.Left).bounds, eventBounds(x.Right).bounds
	for i, k := range x.EquiKeys {
		l, lok := left[k.Left]
		r, rok := right[k.Right]
		if lok && rok && l.source == r.source {
			return &op.JoinWatermark{Source: l.source, Key: i, CloseAfterMicros: max(l.closeAfter, r.closeAfter)}
		}
	}
	return nil
}

// EventTimeBounded reports whether column col of n's output is bounded
// by a table's watermark (eventBounds): windows over it close once the
// watermark passes them, in aggregates grouped by them and joins on them.
func EventTimeBounded(n plan.Node, col int) bool {
	_, ok := eventBounds(n).bounds[col]
	return ok
}
