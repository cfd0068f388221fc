package bind

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// sessionFunction binds the session-window function in FROM:
//
//	SESSION(rel, time_column [, key_column …], gap) [AS alias]
//
// rel is a table, view or WITH query; time_column a timestamp or
// timestamptz column of it; the key columns (none: one session sequence
// for the whole relation) partition the rows; gap a constant interval of
// hours, minutes and seconds. Its rows are rel's rows with window_start
// and window_end appended (plan.Session).
func (b *binder) sessionFunction(rf *pg_query.RangeFunction, fc *pg_query.FuncCall, outer *scope) (plan.Node, *scope, error) {
	const usage = "SESSION(relation, time_column, [key_column, …,] gap)"
	if fc.AggStar || fc.AggDistinct || fc.FuncVariadic || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil || len(fc.Args) < 3 {
		return nil, nil, b.semantic("42883", fc.Location, "SESSION takes a relation, a time column, key columns and a gap: %s", usage)
	}
	if rf.Ordinality {
		return nil, nil, b.unsupported(fc.Location, "SESSION … WITH ORDINALITY")
	}
	rv := windowRelation(fc.Args[0])
	if rv == nil {
		return nil, nil, b.semantic("42601", fc.Location, "the first argument of SESSION must name a table, view or WITH query: %s", usage)
	}
	input, inScope, err := b.rangeVar(rv, outer)
	if err != nil {
		return nil, nil, err
	}
	ctx := exprCtx{clause: "SESSION"}
	column := func(n *pg_query.Node, what string) (int, error) {
		if n.GetColumnRef() == nil {
			return 0, b.semantic("42601", fc.Location, "the %s of SESSION must be a column of %s: %s", what, rv.Relname, usage)
		}
		s, err := b.expr(n, &scope{parent: nil, cols: inScope.cols, star: inScope.star, tables: inScope.tables}, ctx)
		if err != nil {
			return 0, err
		}
		c, ok := s.(*plan.ColRef)
		if !ok {
			return 0, b.semantic("42601", fc.Location, "the %s of SESSION must be a column of %s: %s", what, rv.Relname, usage)
		}
		return c.Index, nil
	}
	timeCol, err := column(fc.Args[1], "time argument")
	if err != nil {
		return nil, nil, err
	}
	inCols := input.Schema()
	timeType := inCols[timeCol].Type
	if timeType.Kind != types.KindTimestamp && timeType.Kind != types.KindTimestampTZ {
		return nil, nil, b.semantic("42804", fc.Location, "the time column %s of SESSION is %s; it must be a timestamp or timestamptz column", inCols[timeCol].Name, timeType)
	}
	var keys []int
	for _, a := range fc.Args[2 : len(fc.Args)-1] {
		k, err := column(a, "key argument")
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
	}
	gapArg := fc.Args[len(fc.Args)-1]
	gapScalar, err := b.expr(gapArg, &scope{parent: outer}, ctx)
	if err != nil {
		return nil, nil, err
	}
	if gapScalar, err = b.coerce(gapScalar, types.TInterval, fc.Location); err != nil {
		return nil, nil, err
	}
	gc, ok := gapScalar.(*plan.Const)
	gap, isInterval := types.Interval{}, false
	if ok {
		gap, isInterval = gc.Value.(types.Interval)
	}
	if !isInterval || gap.Months != 0 || gap.Days != 0 || gap.Micros <= 0 {
		return nil, nil, b.semantic("22023", fc.Location, "the gap of SESSION must be a positive constant interval of hours, minutes and seconds (write interval '24 hours', not '1 day')")
	}
	b.noteWindow("SESSION", relName(rv), input, timeCol)
	alias := "session"
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	node := &plan.Session{Input: input, Time: timeCol, Keys: keys, Gap: gap.Micros}
	timeType.Typmod = -1 // as op.Session's bounds
	for _, name := range []string{"window_start", "window_end"} {
		node.Cols = append(node.Cols, plan.Column{Name: name, Type: timeType})
	}
	cols := node.Schema()
	if rf.Alias != nil {
		names := aliasNames(rf.Alias.Colnames)
		if len(names) > len(cols) {
			return nil, nil, b.semantic("42P10", fc.Location, "table \"%s\" has %d columns available but %d columns specified", alias, len(cols), len(names))
		}
		for i, n := range names {
			cols[i].Name = n
		}
	}
	return node, relationScope(alias, cols, outer), nil
}

// windowRelation is the relation a window function's first argument names
// (rel or schema.rel, written as a column reference); nil if it names none.
func windowRelation(arg *pg_query.Node) *pg_query.RangeVar {
	ref := arg.GetColumnRef()
	if ref == nil || len(ref.Fields) == 0 || len(ref.Fields) > 2 {
		return nil
	}
	var names []string
	for _, f := range ref.Fields {
		if f.GetString_() == nil {
			return nil
		}
		names = append(names, f.GetString_().GetSval())
	}
	rv := &pg_query.RangeVar{Relname: names[len(names)-1], Inh: true, Location: ref.Location}
	if len(names) == 2 {
		rv.Schemaname = names[0]
	}
	return rv
}
