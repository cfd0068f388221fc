package bind

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// hopWindowsMax bounds size/slide of a HOP window: each row is joined
// with that many window offsets.
const hopWindowsMax = 1000

// timeWindowFunction binds the tumbling and hopping window functions in
// FROM, as Flink and RisingWave write them:
//
//	TUMBLE(rel, time_column, size) [AS alias]
//	HOP(rel, time_column, slide, size) [AS alias]
//
// Both are rewritten into the query a user would write without them, so
// the result is maintained (and its windows closed at the watermark)
// exactly as that query is: TUMBLE into
//
//	SELECT *, date_bin(size, t, '1970-01-01') AS window_start,
//	       date_bin(size, t, '1970-01-01') + size AS window_end FROM rel
//
// and HOP into a join of rel with the window offsets 0 … size/slide - 1
// whose window_start is date_bin(slide, t, '1970-01-01') - k * slide.
// The origin takes the time column's type (for timestamptz: midnight of
// 1970-01-01 in the session's TimeZone), as the untyped literal does in
// PostgreSQL.
func (b *binder) timeWindowFunction(name string, rf *pg_query.RangeFunction, fc *pg_query.FuncCall, outer *scope) (plan.Node, *scope, error) {
	upper := strings.ToUpper(name)
	usage, nargs := "TUMBLE(relation, time_column, size)", 3
	if name == "hop" {
		usage, nargs = "HOP(relation, time_column, slide, size)", 4
	}
	if fc.AggStar || fc.AggDistinct || fc.FuncVariadic || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil || len(fc.Args) != nargs {
		return nil, nil, b.semantic("42883", fc.Location, "%s takes %d arguments: %s", upper, nargs, usage)
	}
	if rf.Ordinality {
		return nil, nil, b.unsupported(fc.Location, upper+" … WITH ORDINALITY")
	}
	rv := windowRelation(fc.Args[0])
	if rv == nil {
		return nil, nil, b.semantic("42601", fc.Location, "the first argument of %s must name a table, view or WITH query: %s", upper, usage)
	}
	// Bound here for the checks only; the rewritten query binds it again.
	input, inScope, err := b.rangeVar(rv, outer)
	if err != nil {
		return nil, nil, err
	}
	ctx := exprCtx{clause: upper}
	notColumn := b.semantic("42601", fc.Location, "the time argument of %s must be a column of %s: %s", upper, rv.Relname, usage)
	if fc.Args[1].GetColumnRef() == nil {
		return nil, nil, notColumn
	}
	s, err := b.expr(fc.Args[1], &scope{cols: inScope.cols, star: inScope.star, tables: inScope.tables}, ctx)
	if err != nil {
		return nil, nil, err
	}
	c, ok := s.(*plan.ColRef)
	if !ok {
		return nil, nil, notColumn
	}
	inCols := input.Schema()
	timeCol := inCols[c.Index]
	if timeCol.Type.Kind != types.KindTimestamp && timeCol.Type.Kind != types.KindTimestampTZ {
		return nil, nil, b.semantic("42804", fc.Location, "the time column %s of %s is %s; it must be a timestamp or timestamptz column", timeCol.Name, upper, timeCol.Type)
	}
	interval := func(n *pg_query.Node, what string) (int64, error) {
		v, err := b.expr(n, &scope{parent: outer}, ctx)
		if err != nil {
			return 0, err
		}
		if v, err = b.coerce(v, types.TInterval, fc.Location); err != nil {
			return 0, err
		}
		k, ok := v.(*plan.Const)
		iv, isInterval := types.Interval{}, false
		if ok {
			iv, isInterval = k.Value.(types.Interval)
		}
		if !isInterval || iv.Months != 0 || iv.Days != 0 || iv.Micros <= 0 {
			return 0, b.semantic("22023", fc.Location, "the %s of %s must be a positive constant interval of hours, minutes and seconds (write interval '24 hours', not '1 day')", what, upper)
		}
		return iv.Micros, nil
	}
	var slide, size int64
	if name == "hop" {
		if slide, err = interval(fc.Args[2], "slide"); err != nil {
			return nil, nil, err
		}
	}
	if size, err = interval(fc.Args[nargs-1], "size"); err != nil {
		return nil, nil, err
	}
	b.noteWindow(upper, relName(rv), input, c.Index)
	alias := name
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	rel := quoteIdent(rv.Relname)
	if rv.Schemaname != "" {
		rel = quoteIdent(rv.Schemaname) + "." + rel
	}
	lit := func(micros int64) string { return fmt.Sprintf("interval '%d microseconds'", micros) }
	t := quoteIdent(timeCol.Name)
	var sql string
	if name == "tumble" {
		start := fmt.Sprintf("date_bin(%s, %s, '1970-01-01')", lit(size), t)
		sql = fmt.Sprintf("SELECT *, %s AS window_start, %s + %s AS window_end FROM %s", start, start, lit(size), rel)
	} else {
		if size%slide != 0 {
			return nil, nil, b.semantic("22023", fc.Location, "the size of HOP (%s) must be a multiple of its slide (%s): each row is in size/slide windows", types.Format(types.TInterval, types.Interval{Micros: size}), types.Format(types.TInterval, types.Interval{Micros: slide}))
		}
		n := size / slide
		if n > hopWindowsMax {
			return nil, nil, b.semantic("22023", fc.Location, "HOP puts each row in %d windows (size/slide); at most %d are supported: use a larger slide", n, hopWindowsMax)
		}
		offsets := make([]string, n)
		for i := range offsets {
			offsets[i] = fmt.Sprintf("(%d)", i)
		}
		start := fmt.Sprintf(`date_bin(%s, r.%s, '1970-01-01') - w.k * %s`, lit(slide), t, lit(slide))
		sql = fmt.Sprintf("SELECT r.*, %s AS window_start, %s + %s AS window_end FROM %s AS r CROSS JOIN (VALUES %s) AS w(k)",
			start, start, lit(size), rel, strings.Join(offsets, ", "))
	}
	tree, err := parse.PGParse(sql)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, nil, errcode.New(errcode.InternalError, "rewriting %s as %s: %v", upper, sql, err)
	}
	sub := &pg_query.RangeSubselect{
		Subquery: tree.Stmts[0].Stmt,
		Alias:    &pg_query.Alias{Aliasname: alias},
	}
	if rf.Alias != nil {
		sub.Alias.Colnames = rf.Alias.Colnames
	}
	// Positions inside the rewritten query are positions in its text.
	src, base := b.src, b.base
	b.src, b.base = sql, 0
	defer func() { b.src, b.base = src, base }()
	return b.fromItemPlain(&pg_query.Node{Node: &pg_query.Node_RangeSubselect{RangeSubselect: sub}}, outer)
}

// relName is rv's name as written (schema-qualified if it was).
func relName(rv *pg_query.RangeVar) string {
	if rv.Schemaname != "" {
		return rv.Schemaname + "." + rv.Relname
	}
	return rv.Relname
}

// quoteIdent double-quotes an identifier for SQL text.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
