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
	bounds := eventBounds(in)
	for i, c := range groupBy {
		if b, ok := bounds[c]; ok {
			return &op.AggregateWatermark{Source: b.source, Key: i, CloseAfterMicros: b.closeAfter}
		}
	}
	return nil
}

// eventBounds lists the bounded columns of n's output. Only scans of a
// table with a watermark and the row-wise Filter and Project over them
// keep the bound: a join, an aggregate or a temporal filter can emit a
// row with an old event time long after it was committed.
func eventBounds(n plan.Node) map[int]eventBound {
	switch x := n.(type) {
	case *plan.Scan:
		w := x.Relation.Watermark
		if w == nil || w.Column >= len(x.Cols) {
			return nil
		}
		// NB: a row is accepted only if its event time t >= W, so t
		// can no longer arrive once W > t, i.e. W >= t + 1µs.
		return map[int]eventBound{w.Column: {source: op.WatermarkSource(x.Relation.ID.Object), closeAfter: 1}}
	case *plan.Filter:
		return eventBounds(x.Input)
	case *plan.Project:
		in := eventBounds(x.Input)
		if len(in) == 0 {
			return nil
		}
		out := map[int]eventBound{}
		for i, e := range x.Exprs {
			if b, ok := scalarBound(e, in); ok {
				out[i] = b
			}
		}
		return out
	}
	return nil
}

// scalarBound derives the bound of an expression over bounded columns:
// the column itself, date_bin(stride, e, origin) (a bin holds the values
// [v, v + stride)), and e ± a fixed interval.
func scalarBound(e plan.Scalar, in map[int]eventBound) (eventBound, bool) {
	switch x := e.(type) {
	case *plan.ColRef:
		b, ok := in[x.Index]
		return b, ok
	case *plan.Func:
		switch {
		case x.Name == "date_bin" && len(x.Args) == 3:
			stride, ok := fixedInterval(x.Args[0])
			if !ok || stride <= 0 {
				return eventBound{}, false
			}
			if !isConstant(x.Args[2]) {
				return eventBound{}, false
			}
			b, ok := scalarBound(x.Args[1], in)
			b.closeAfter += stride - 1
			return b, ok
		case x.Op && (x.Name == "-" || x.Name == "+") && len(x.Args) == 2:
			shift, ok := fixedInterval(x.Args[1])
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

// fixedInterval is the length of a constant interval without months or
// days (whose length in timestamptz arithmetic depends on the date).
func fixedInterval(e plan.Scalar) (int64, bool) {
	var v types.Datum
	switch x := e.(type) {
	case *plan.Const:
		v = x.Value
	case *plan.Cast:
		c, ok := x.Arg.(*plan.Const)
		text, isText := c.Value.(string)
		if !ok || !isText || x.Typ.Kind != types.KindInterval {
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
