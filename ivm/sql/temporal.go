package sql

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Temporal filters. In a materialized view, now() (and mz_now(),
// CURRENT_TIMESTAMP) may appear only in WHERE (or HAVING) conjuncts of the
// form
//
//	<expression of the row> <op> now() [± <constant interval>]
//
// with <op> one of < <= > >= (either side; BETWEEN is two of them). Each
// such conjunct bounds the time over which a row is in the view: the
// compiler moves them out of the Filter into a TemporalFilter, which the
// shard steps at each epoch's time so rows enter and leave as time passes.
// Every other use of now() is refused, naming the accepted form.

// temporalHint is the next step of a refused use of now().
const temporalHint = "In a materialized view, now() (or mz_now()) may only appear in WHERE conjuncts comparing an expression of the row with now() plus or minus a constant interval of hours, minutes or seconds, such as WHERE ts > now() - interval '1 hour' AND ts <= now() (a temporal filter: rows enter and leave the view as time passes). Ad-hoc queries accept now() anywhere."

func refuseNow(why string) error {
	e := errcode.New(errcode.UnsupportedSQLConstruct, "materialized views do not support now() %s", why).WithDetail("construct: now()")
	e.Hint = temporalHint
	return e
}

// callsNow reports whether s calls now().
func callsNow(s plan.Scalar) bool {
	found := false
	plan.Walk(s, func(x plan.Scalar) bool {
		if plan.IsNow(x) {
			found = true
		}
		return !found
	})
	return found
}

// temporalFilters turns the temporal conjuncts of every Filter into a
// TemporalFilter above it, and refuses any other use of now().
func temporalFilters(n plan.Node) (plan.Node, error) {
	var err error
	recursive := false
	plan.Transform(n, func(x plan.Node) plan.Node {
		if _, ok := x.(*plan.RecursiveUnion); ok {
			recursive = true
		}
		return x
	})
	out := plan.Transform(n, func(x plan.Node) plan.Node {
		if err != nil {
			return x
		}
		f, isFilter := x.(*plan.Filter)
		if !isFilter {
			for _, s := range plan.Scalars(x) {
				if callsNow(s) {
					err = refuseNow("outside a WHERE clause's temporal filter")
					return x
				}
			}
			return x
		}
		if !callsNow(f.Pred) {
			return x
		}
		if recursive {
			err = refuseNow("in a recursive query")
			return x
		}
		var rest []plan.Scalar
		var bounds []plan.TemporalBound
		for _, c := range plan.Conjuncts(f.Pred) {
			if !callsNow(c) {
				rest = append(rest, c)
				continue
			}
			b, e := temporalBound(c)
			if e != nil {
				err = e
				return x
			}
			bounds = append(bounds, b)
		}
		var in plan.Node = f.Input
		if len(rest) > 0 {
			in = &plan.Filter{Input: f.Input, Pred: plan.MakeAnd(rest)}
		}
		return &plan.TemporalFilter{Input: in, Bounds: bounds}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// flipped maps now() <op> e to e <op'> now() ("" for other operators).
func flipped(op string) string {
	switch op {
	case "<":
		return ">"
	case "<=":
		return ">="
	case ">":
		return "<"
	case ">=":
		return "<="
	}
	return ""
}

// temporalBound reads one conjunct calling now() as a bound.
func temporalBound(c plan.Scalar) (plan.TemporalBound, error) {
	cmp, ok := c.(*plan.Func)
	if !ok || !cmp.Op || len(cmp.Args) != 2 || flipped(cmp.Name) == "" {
		return plan.TemporalBound{}, refuseNow("in " + c.String() + ": a temporal filter compares with < <= > or >=, in conjuncts joined by AND")
	}
	row, nowSide, op := cmp.Args[0], cmp.Args[1], cmp.Name
	if callsNow(row) {
		row, nowSide, op = nowSide, row, flipped(op)
	}
	if callsNow(row) {
		return plan.TemporalBound{}, refuseNow("on both sides of " + c.String())
	}
	if plan.IsVolatile(row) || plan.HasSubquery(row) {
		return plan.TemporalBound{}, refuseNow("compared with " + row.String() + ": the other side must be an expression of the row")
	}
	offset, err := nowOffset(nowSide)
	if err != nil {
		return plan.TemporalBound{}, err
	}
	switch row.Type().Kind {
	case types.KindTimestampTZ:
	case types.KindTimestamp, types.KindDate:
		// As PostgreSQL compares them with timestamptz: in the view's
		// time zone.
		row = &plan.Cast{Arg: row, Typ: types.TTimestampTZ}
	default:
		return plan.TemporalBound{}, refuseNow("compared with " + row.String() + " of type " + row.Type().SQLName() + ": a temporal filter compares a timestamp, timestamptz or date")
	}
	return plan.TemporalBound{Expr: row, Op: op, OffsetMicros: offset}, nil
}

// nowOffset reads now() [± constant interval] as its offset in
// microseconds.
func nowOffset(s plan.Scalar) (int64, error) {
	if plan.IsNow(s) {
		return 0, nil
	}
	f, ok := s.(*plan.Func)
	if !ok || !f.Op || len(f.Args) != 2 || (f.Name != "+" && f.Name != "-") {
		return 0, refuseNow("in " + s.String() + ": a temporal filter compares with now() plus or minus a constant interval")
	}
	var k plan.Scalar
	switch {
	case plan.IsNow(f.Args[0]):
		k = f.Args[1]
	case plan.IsNow(f.Args[1]) && f.Name == "+":
		k = f.Args[0]
	default:
		return 0, refuseNow("in " + s.String() + ": a temporal filter compares with now() plus or minus a constant interval")
	}
	if len(plan.ColumnsUsed(k)) > 0 || plan.IsVolatile(k) || plan.HasSubquery(k) || k.Type().Kind != types.KindInterval {
		return 0, refuseNow("plus " + k.String() + ": a temporal filter adds a constant interval to now()")
	}
	e, err := lower.Scalar(k)
	if err != nil {
		return 0, err
	}
	v, err := e.Eval(&expr.Env{}, nil)
	if err != nil {
		return 0, err
	}
	iv, ok := v.(types.Interval)
	if !ok {
		return 0, refuseNow("plus NULL: a temporal filter adds a constant interval to now()")
	}
	if iv.Months != 0 || iv.Days != 0 {
		// NB: days and months are calendar arithmetic in the session's
		// time zone, not a fixed length, so a row's deadline is not now
		// minus a constant; write hours, or move the interval to the row
		// side (ts + interval '1 day' > now()), which is exact.
		return 0, refuseNow("plus " + k.String() + ": an interval added to now() in a temporal filter must be in hours, minutes and seconds (write interval '24 hours', or ts + interval '1 day' > now())")
	}
	if f.Name == "-" {
		if iv.Micros == -iv.Micros && iv.Micros != 0 {
			return 0, refuseNow("minus " + k.String() + ": the interval is out of range")
		}
		return -iv.Micros, nil
	}
	return iv.Micros, nil
}

// Temporal reports whether the view has a temporal filter: its rows change
// as time passes (catalog.Relation.Temporal).
func (v *View) Temporal() bool {
	found := false
	plan.Transform(v.Plan, func(n plan.Node) plan.Node {
		if _, ok := n.(*plan.TemporalFilter); ok {
			found = true
		}
		return n
	})
	return found
}
