// Package differential runs random schemas, materialized views and DML
// transaction streams against RockStream and PostgreSQL 15 and checks,
// after every commit, that every view equals its defining query on
// PostgreSQL. Generation uses pgregory.net/rapid, so a mismatch is shrunk
// and printed as a self-contained SQL script.
package differential

import (
	"fmt"
	"strings"

	"pgregory.net/rapid"
)

// Column types the generator uses.
const (
	tInt  = "int"
	tText = "text"
	tNum  = "numeric"
	tBool = "bool"
)

// Table is a generated table: id int PRIMARY KEY plus typed columns.
type Table struct {
	Name string
	Cols []Col // excluding id
}

// Col is one column.
type Col struct {
	Name, Type string
}

// DDL is the CREATE TABLE statement.
func (t Table) DDL() string {
	parts := []string{"id int PRIMARY KEY"}
	for _, c := range t.Cols {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return fmt.Sprintf("CREATE TABLE %s (%s)", t.Name, strings.Join(parts, ", "))
}

// colOf returns an expression of type typ over alias's table: a column of
// that type when there is one, else a conversion of id.
func (t Table) colOf(rt *rapid.T, alias, typ, label string) string {
	var cands []string
	for _, c := range t.Cols {
		if c.Type == typ {
			cands = append(cands, alias+"."+c.Name)
		}
	}
	if typ == tInt {
		cands = append(cands, alias+".id")
	}
	if len(cands) == 0 {
		switch typ {
		case tText:
			return "(" + alias + ".id)::text"
		case tNum:
			return "(" + alias + ".id)::numeric"
		case tBool:
			return "(" + alias + ".id > 2)"
		}
	}
	return rapid.SampledFrom(cands).Draw(rt, label)
}

func genSchema(rt *rapid.T) []Table {
	n := rapid.IntRange(2, 3).Draw(rt, "tables")
	var ts []Table
	for i := 0; i < n; i++ {
		t := Table{Name: fmt.Sprintf("t%d", i)}
		nc := rapid.IntRange(1, 3).Draw(rt, "cols")
		for j := 0; j < nc; j++ {
			typ := rapid.SampledFrom([]string{tInt, tInt, tText, tNum, tBool}).Draw(rt, "coltype")
			t.Cols = append(t.Cols, Col{Name: fmt.Sprintf("c%d", j), Type: typ})
		}
		ts = append(ts, t)
	}
	return ts
}

// literal draws a NULL-heavy boundary-aware literal of typ.
func literal(rt *rapid.T, typ string) string {
	switch typ {
	case tInt:
		return rapid.SampledFrom([]string{"NULL", "NULL", "0", "1", "2", "3", "-1", "2147483647", "-2147483648"}).Draw(rt, "int")
	case tText:
		return rapid.SampledFrom([]string{"NULL", "NULL", "''", "'a'", "'b'", "'ab'", "'A'", "' a'"}).Draw(rt, "text")
	case tNum:
		return rapid.SampledFrom([]string{"NULL", "NULL", "0", "1.5", "-2.25", "10", "0.001", "100.25"}).Draw(rt, "num")
	default:
		return rapid.SampledFrom([]string{"NULL", "true", "false"}).Draw(rt, "bool")
	}
}

// smallLit is a non-NULL literal for predicates.
func smallLit(rt *rapid.T, typ string) string {
	switch typ {
	case tInt:
		return rapid.SampledFrom([]string{"0", "1", "2", "3"}).Draw(rt, "sint")
	case tText:
		return rapid.SampledFrom([]string{"''", "'a'", "'b'", "'ab'"}).Draw(rt, "stext")
	case tNum:
		return rapid.SampledFrom([]string{"0", "1.5", "-2.25", "10"}).Draw(rt, "snum")
	default:
		return rapid.SampledFrom([]string{"true", "false"}).Draw(rt, "sbool")
	}
}

// pred draws a boolean predicate over alias's table.
func pred(rt *rapid.T, t Table, alias string, depth int) string {
	k := rapid.IntRange(0, 7).Draw(rt, "pred")
	if depth > 1 && k >= 5 {
		k = k % 5
	}
	typ := rapid.SampledFrom([]string{tInt, tText, tNum, tBool}).Draw(rt, "predtype")
	switch k {
	case 0:
		c := t.colOf(rt, alias, typ, "pc")
		if typ == tBool {
			return c
		}
		op := rapid.SampledFrom([]string{"=", "<>", "<", "<=", ">", ">="}).Draw(rt, "cmp")
		return fmt.Sprintf("%s %s %s", c, op, smallLit(rt, typ))
	case 1:
		return fmt.Sprintf("%s IS %sNULL", t.colOf(rt, alias, typ, "pc"), rapid.SampledFrom([]string{"", "NOT "}).Draw(rt, "not"))
	case 2:
		if typ == tBool {
			typ = tInt
		}
		return fmt.Sprintf("%s IN (%s, %s)", t.colOf(rt, alias, typ, "pc"), smallLit(rt, typ), smallLit(rt, typ))
	case 3:
		return fmt.Sprintf("%s BETWEEN 0 AND 2", t.colOf(rt, alias, tInt, "pc"))
	case 4:
		return fmt.Sprintf("%s IS DISTINCT FROM %s", t.colOf(rt, alias, typ, "pc"), smallLit(rt, typ))
	case 5:
		return fmt.Sprintf("(%s AND %s)", pred(rt, t, alias, depth+1), pred(rt, t, alias, depth+1))
	case 6:
		return fmt.Sprintf("(%s OR %s)", pred(rt, t, alias, depth+1), pred(rt, t, alias, depth+1))
	default:
		return fmt.Sprintf("NOT (%s)", pred(rt, t, alias, depth+1))
	}
}

// scalar draws a projected expression (with its alias name).
func scalar(rt *rapid.T, t Table, alias string) string {
	switch rapid.IntRange(0, 11).Draw(rt, "scalar") {
	case 10: // subscripts and slices: out of range and NULL give NULL, slices clamp
		arr := fmt.Sprintf("(ARRAY[%s, %s, 3])", t.colOf(rt, alias, tInt, "sc"), t.colOf(rt, alias, tInt, "sc"))
		i := t.colOf(rt, alias, tInt, "sc")
		return rapid.SampledFrom([]string{arr + "[" + i + "]", arr + "[" + i + ":]", arr + "[2:" + i + "]", "cardinality(" + arr + "[:" + i + "])"}).Draw(rt, "sub")
	case 11: // array functions and operators
		x, y := t.colOf(rt, alias, tInt, "sc"), t.colOf(rt, alias, tInt, "sc")
		return rapid.SampledFrom([]string{
			fmt.Sprintf("array_position(array_append(ARRAY[%s, 1], %s), %s)", x, y, y),
			fmt.Sprintf("array_cat(ARRAY[%s], array_prepend(%s, ARRAY[2]))", x, y),
			fmt.Sprintf("ARRAY[%s, 2] @> ARRAY[%s]", x, y),
			fmt.Sprintf("ARRAY[%s] && ARRAY[%s, 1]", x, y),
			fmt.Sprintf("array_length(array_append(ARRAY[%s], %s), 1)", x, y),
		}).Draw(rt, "arrfn")
	case 8: // may overflow at the int boundary: the view and the query must both fail
		return fmt.Sprintf("%s + 1", t.colOf(rt, alias, tInt, "sc"))
	case 9: // may divide by zero
		return fmt.Sprintf("100 / %s", t.colOf(rt, alias, tInt, "sc"))
	case 0:
		return fmt.Sprintf("%s::bigint + %s", t.colOf(rt, alias, tInt, "sc"), smallLit(rt, tInt))
	case 1:
		return fmt.Sprintf("COALESCE(%s, %s)", t.colOf(rt, alias, tText, "sc"), "'-'")
	case 2:
		return fmt.Sprintf("CASE WHEN %s THEN 1 ELSE 0 END", pred(rt, t, alias, 2))
	case 3:
		return fmt.Sprintf("%s * 2", t.colOf(rt, alias, tNum, "sc"))
	case 4:
		return fmt.Sprintf("upper(%s)", t.colOf(rt, alias, tText, "sc"))
	case 5:
		return fmt.Sprintf("NULLIF(%s, %s)", t.colOf(rt, alias, tInt, "sc"), smallLit(rt, tInt))
	case 6:
		return fmt.Sprintf("%s || 'x'", t.colOf(rt, alias, tText, "sc"))
	default:
		return t.colOf(rt, alias, rapid.SampledFrom([]string{tInt, tText, tNum, tBool}).Draw(rt, "ct"), "sc")
	}
}

func pick2(rt *rapid.T, ts []Table) (Table, Table) {
	i := rapid.IntRange(0, len(ts)-1).Draw(rt, "ta")
	j := rapid.IntRange(0, len(ts)-1).Draw(rt, "tb")
	return ts[i], ts[j]
}

// genView draws a view definition; ordered reports a top-k shape whose
// order key is unique (so its contents are determined).
func genView(rt *rapid.T, ts []Table) string {
	a, b := pick2(rt, ts)
	where := func(t Table, alias string) string {
		if rapid.Bool().Draw(rt, "where") {
			return " WHERE " + pred(rt, t, alias, 0)
		}
		return ""
	}
	switch rapid.IntRange(0, 15).Draw(rt, "shape") {
	case 15: // window aggregates over RANGE frames with an offset
		typ := rapid.SampledFrom([]string{tInt, tNum}).Draw(rt, "rt")
		off := map[string][]string{tInt: {"0", "1", "3"}, tNum: {"0", "0.5", "2.25"}}[typ]
		k := a.colOf(rt, "x", typ, "rk")
		frame := fmt.Sprintf("RANGE BETWEEN %s PRECEDING AND %s FOLLOWING", rapid.SampledFrom(off).Draw(rt, "ro1"), rapid.SampledFrom(off).Draw(rt, "ro2"))
		if rapid.Bool().Draw(rt, "rframe") {
			frame = fmt.Sprintf("RANGE BETWEEN %s FOLLOWING AND UNBOUNDED FOLLOWING", rapid.SampledFrom(off).Draw(rt, "ro3"))
		}
		return fmt.Sprintf("SELECT x.id, count(*) OVER (ORDER BY %s%s %s) AS n, sum(%s) OVER (PARTITION BY %s ORDER BY %s %s) AS s FROM %s x",
			k, rapid.SampledFrom([]string{"", " DESC", " NULLS FIRST"}).Draw(rt, "rdir"), frame, a.colOf(rt, "x", tInt, "rs"), a.colOf(rt, "x", tBool, "rp"), k, frame, a.Name)
	case 13:
		return lateralFunction(rt, a, b)
	case 14:
		return lateralSubquery(rt, a, b)
	case 12:
		return multiJoin(rt, ts)
	case 0: // filter + projection
		return fmt.Sprintf("SELECT x.id, %s AS e1, %s AS e2 FROM %s x%s", scalar(rt, a, "x"), scalar(rt, a, "x"), a.Name, where(a, "x"))
	case 1, 2: // joins
		kind := rapid.SampledFrom([]string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}).Draw(rt, "join")
		on := fmt.Sprintf("%s = %s", a.colOf(rt, "x", tInt, "jx"), b.colOf(rt, "y", tInt, "jy"))
		if rapid.Bool().Draw(rt, "on2") {
			on += " AND " + pred(rt, b, "y", 1)
		}
		return fmt.Sprintf("SELECT x.id AS xid, y.id AS yid, %s AS e1, %s AS e2 FROM %s x %s %s y ON %s", scalar(rt, a, "x"), scalar(rt, b, "y"), a.Name, kind, b.Name, on)
	case 3, 4: // group by
		g := a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tBool, tNum}).Draw(rt, "gt"), "g")
		aggs := []string{"count(*) AS n"}
		for _, f := range []string{
			"sum(" + a.colOf(rt, "x", tInt, "ag") + ") AS s",
			"avg(" + a.colOf(rt, "x", tNum, "ag") + ") AS av",
			"min(" + a.colOf(rt, "x", tText, "ag") + ") AS mn",
			"max(" + a.colOf(rt, "x", tInt, "ag") + ") AS mx",
			"bool_and(" + pred(rt, a, "x", 2) + ") AS ba",
			"count(DISTINCT " + a.colOf(rt, "x", tInt, "ag") + ") AS cd",
			"bool_or(" + a.colOf(rt, "x", tBool, "ag") + ") AS bo",
			"sum(" + a.colOf(rt, "x", tNum, "ag") + ") AS sn",
			"percentile_cont(" + rapid.SampledFrom([]string{"0", "0.5", "0.3", "1", "ARRAY[0.25, NULL, 0.75]"}).Draw(rt, "frac") + ") WITHIN GROUP (ORDER BY " + a.colOf(rt, "x", tInt, "ag") + rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "dir") + ") AS pc",
			"percentile_disc(" + rapid.SampledFrom([]string{"0", "0.5", "0.4", "1", "ARRAY[0.1, 0.9]"}).Draw(rt, "frac") + ") WITHIN GROUP (ORDER BY " + a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tNum}).Draw(rt, "pdt"), "ag") + rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "dir") + ") AS pd",
			"mode() WITHIN GROUP (ORDER BY " + a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tBool}).Draw(rt, "mt"), "ag") + rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "dir") + ") AS mo",
			"json_agg(" + a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tNum, tBool}).Draw(rt, "jt"), "ag") + " ORDER BY x.id" + rapid.SampledFrom([]string{"", " DESC"}).Draw(rt, "dir") + ")::text AS ja",
			"jsonb_object_agg(x.id, " + a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tNum}).Draw(rt, "jot"), "ag") + ")::text AS jo",
		} {
			if rapid.Bool().Draw(rt, "agg") {
				aggs = append(aggs, f)
			}
		}
		having := ""
		if rapid.IntRange(0, 3).Draw(rt, "having") == 0 {
			having = " HAVING count(*) > 1"
		}
		// Sometimes grouping sets over g and a second column: a rolled-up
		// NULL beside NULL group values, told apart by GROUPING().
		g2 := a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tBool}).Draw(rt, "gt2"), "g2")
		var by string
		switch rapid.IntRange(0, 7).Draw(rt, "gsets") {
		case 0:
			by = fmt.Sprintf("ROLLUP (%s, %s)", g, g2)
		case 1:
			by = fmt.Sprintf("CUBE (%s, %s)", g, g2)
		case 2:
			by = fmt.Sprintf("GROUPING SETS ((%s), (%s), ())", g, g2)
		case 3:
			by = fmt.Sprintf("%s, ROLLUP (%s)", g, g2)
		default:
			return fmt.Sprintf("SELECT %s AS g, %s FROM %s x%s GROUP BY %s%s", g, strings.Join(aggs, ", "), a.Name, where(a, "x"), g, having)
		}
		if having != "" && rapid.Bool().Draw(rt, "having_grouping") {
			having += fmt.Sprintf(" OR GROUPING(%s) = 1", g2)
		}
		return fmt.Sprintf("SELECT %s AS g, %s AS g2, %s, GROUPING(%s, %s) AS gg FROM %s x%s GROUP BY %s%s", g, g2, strings.Join(aggs, ", "), g, g2, a.Name, where(a, "x"), by, having)
	case 5: // join + group by
		kind := rapid.SampledFrom([]string{"JOIN", "LEFT JOIN", "FULL JOIN"}).Draw(rt, "join")
		g := b.colOf(rt, "y", tInt, "g")
		return fmt.Sprintf("SELECT %s AS g, count(*) AS n, count(x.id) AS nx, sum(%s) AS s FROM %s x %s %s y ON %s = %s GROUP BY %s",
			g, a.colOf(rt, "x", tInt, "sx"), a.Name, kind, b.Name, a.colOf(rt, "x", tInt, "jx"), b.colOf(rt, "y", tInt, "jy"), g)
	case 6: // distinct
		return fmt.Sprintf("SELECT DISTINCT %s AS d1, %s AS d2 FROM %s x%s", scalar(rt, a, "x"), a.colOf(rt, "x", tBool, "d"), a.Name, where(a, "x"))
	case 7: // set operations
		op := rapid.SampledFrom([]string{"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}).Draw(rt, "setop")
		return fmt.Sprintf("SELECT %s AS v FROM %s x%s %s SELECT %s FROM %s y%s", a.colOf(rt, "x", tInt, "sa"), a.Name, where(a, "x"), op, b.colOf(rt, "y", tInt, "sb"), b.Name, where(b, "y"))
	case 8: // subqueries
		switch rapid.IntRange(0, 6).Draw(rt, "subq") {
		case 0:
			return fmt.Sprintf("SELECT x.id FROM %s x WHERE %s IN (SELECT %s FROM %s y%s)", a.Name, a.colOf(rt, "x", tInt, "ia"), b.colOf(rt, "y", tInt, "ib"), b.Name, where(b, "y"))
		case 1:
			return fmt.Sprintf("SELECT x.id FROM %s x WHERE %s NOT IN (SELECT %s FROM %s y%s)", a.Name, a.colOf(rt, "x", tInt, "ia"), b.colOf(rt, "y", tInt, "ib"), b.Name, where(b, "y"))
		case 2:
			return fmt.Sprintf("SELECT x.id FROM %s x WHERE %sEXISTS (SELECT 1 FROM %s y WHERE %s = %s)", a.Name, rapid.SampledFrom([]string{"", "NOT "}).Draw(rt, "not"), b.Name, b.colOf(rt, "y", tInt, "eb"), a.colOf(rt, "x", tInt, "ea"))
		case 4: // [NOT] IN / [NOT] EXISTS under OR
			sub := rapid.SampledFrom([]string{
				fmt.Sprintf("%s IN (SELECT %s FROM %s y%s)", a.colOf(rt, "x", tInt, "oa"), b.colOf(rt, "y", tInt, "ob"), b.Name, where(b, "y")),
				fmt.Sprintf("%s NOT IN (SELECT %s FROM %s y%s)", a.colOf(rt, "x", tInt, "oa"), b.colOf(rt, "y", tInt, "ob"), b.Name, where(b, "y")),
				fmt.Sprintf("%sEXISTS (SELECT 1 FROM %s y WHERE %s = %s)", rapid.SampledFrom([]string{"", "NOT "}).Draw(rt, "onot"), b.Name, b.colOf(rt, "y", tInt, "oeb"), a.colOf(rt, "x", tInt, "oea")),
			}).Draw(rt, "orsub")
			return fmt.Sprintf("SELECT x.id FROM %s x WHERE %s OR %s", a.Name, pred(rt, a, "x", 1), sub)
		case 5: // IN over a correlated aggregate of the subquery's rows (TPC-H Q20)
			return fmt.Sprintf("SELECT x.id FROM %s x WHERE %s IN (SELECT %s FROM %s y WHERE %s >= (SELECT count(*) FROM %s z WHERE %s = %s))",
				a.Name, a.colOf(rt, "x", tInt, "qa"), b.colOf(rt, "y", tInt, "qb"), b.Name, b.colOf(rt, "y", tInt, "qv"), a.Name, a.colOf(rt, "z", tInt, "qz"), b.colOf(rt, "y", tInt, "qk"))
		default:
			return fmt.Sprintf("SELECT x.id, (SELECT count(*) FROM %s y WHERE %s = %s) AS n FROM %s x", b.Name, b.colOf(rt, "y", tInt, "eb"), a.colOf(rt, "x", tInt, "ea"), a.Name)
		}
	case 9: // CTE
		c := a.colOf(rt, "x", tInt, "cte")
		return fmt.Sprintf("WITH c AS (SELECT x.id, %s AS k FROM %s x%s) SELECT k, count(*) AS n FROM c GROUP BY k", c, a.Name, where(a, "x"))
	case 10: // top-k with a unique order key (id last)
		dir := rapid.SampledFrom([]string{"ASC", "DESC"}).Draw(rt, "dir")
		nulls := rapid.SampledFrom([]string{"", " NULLS FIRST", " NULLS LAST"}).Draw(rt, "nulls")
		off := ""
		if rapid.Bool().Draw(rt, "offset") {
			off = " OFFSET 1"
		}
		return fmt.Sprintf("SELECT x.id, %s AS k FROM %s x ORDER BY 2 %s%s, x.id LIMIT %d%s",
			a.colOf(rt, "x", rapid.SampledFrom([]string{tInt, tText, tNum}).Draw(rt, "kt"), "k"), a.Name, dir, nulls, rapid.IntRange(1, 3).Draw(rt, "limit"), off)
	default: // global aggregate
		return fmt.Sprintf("SELECT count(*) AS n, sum(%s) AS s, max(%s) AS m, min(%s) AS mn FROM %s x%s", a.colOf(rt, "x", tInt, "ga"), a.colOf(rt, "x", tText, "gm"), a.colOf(rt, "x", tNum, "gn"), a.Name, where(a, "x"))
	}
}

func rowValues(rt *rapid.T, t Table) string {
	vals := []string{rapid.SampledFrom([]string{"1", "2", "3", "4", "5"}).Draw(rt, "key")}
	for _, c := range t.Cols {
		vals = append(vals, literal(rt, c.Type))
	}
	return "(" + strings.Join(vals, ", ") + ")"
}

// genDML draws one data statement.
func genDML(rt *rapid.T, ts []Table) string {
	t := ts[rapid.IntRange(0, len(ts)-1).Draw(rt, "dmltable")]
	key := rapid.SampledFrom([]string{"1", "2", "3", "4", "5"}).Draw(rt, "dmlkey")
	switch rapid.IntRange(0, 9).Draw(rt, "dml") {
	case 0, 1, 2:
		rows := []string{rowValues(rt, t)}
		if rapid.Bool().Draw(rt, "multi") {
			rows = append(rows, rowValues(rt, t))
		}
		return fmt.Sprintf("INSERT INTO %s VALUES %s", t.Name, strings.Join(rows, ", "))
	case 3:
		if len(t.Cols) == 0 {
			return fmt.Sprintf("DELETE FROM %s WHERE id = %s", t.Name, key)
		}
		c := t.Cols[0]
		return fmt.Sprintf("INSERT INTO %s VALUES %s ON CONFLICT (id) DO UPDATE SET %s = EXCLUDED.%s", t.Name, rowValues(rt, t), c.Name, c.Name)
	case 4, 5:
		c := t.Cols[rapid.IntRange(0, len(t.Cols)-1).Draw(rt, "setcol")]
		w := "id = " + key
		if rapid.IntRange(0, 2).Draw(rt, "updwhere") == 0 {
			w = pred(rt, t, t.Name, 1)
		}
		return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", t.Name, c.Name, literal(rt, c.Type), w)
	case 6: // primary-key change of one row
		return fmt.Sprintf("UPDATE %s SET id = %s WHERE id = %s", t.Name, rapid.SampledFrom([]string{"1", "2", "3", "4", "5", "6"}).Draw(rt, "newkey"), key)
	case 7:
		return fmt.Sprintf("DELETE FROM %s WHERE id = %s", t.Name, key)
	case 8:
		return fmt.Sprintf("DELETE FROM %s WHERE %s", t.Name, pred(rt, t, t.Name, 1))
	default:
		return fmt.Sprintf("INSERT INTO %s VALUES %s ON CONFLICT (id) DO NOTHING", t.Name, rowValues(rt, t))
	}
}

// multiJoin draws a 3- or 4-way join in comma (FROM a, b, c WHERE ...)
// form whose equalities connect the tables in a random spanning tree, so
// FROM order often is not a connected order (the optimizer reorders inner
// joins), optionally with a theta conjunct, a one-table filter and a LEFT
// JOIN at the end (outer joins are never reordered across).
func multiJoin(rt *rapid.T, ts []Table) string {
	n := rapid.IntRange(3, 4).Draw(rt, "mjn")
	tabs := make([]Table, n)
	from := make([]string, n)
	for i := range tabs {
		tabs[i] = rapid.SampledFrom(ts).Draw(rt, "mjt")
		from[i] = fmt.Sprintf("%s z%d", tabs[i].Name, i)
	}
	alias := func(i int) string { return fmt.Sprintf("z%d", i) }
	perm := rapid.Permutation([]int{0, 1, 2, 3}[:n]).Draw(rt, "mjperm")
	var conds []string
	for k := 1; k < n; k++ {
		a, b := perm[k], perm[rapid.IntRange(0, k-1).Draw(rt, "mjedge")]
		conds = append(conds, fmt.Sprintf("%s = %s", tabs[a].colOf(rt, alias(a), tInt, "mjc"), tabs[b].colOf(rt, alias(b), tInt, "mjc")))
	}
	if rapid.Bool().Draw(rt, "mjtheta") {
		a, b := rapid.IntRange(0, n-1).Draw(rt, "mja"), rapid.IntRange(0, n-1).Draw(rt, "mjb")
		conds = append(conds, fmt.Sprintf("%s.id <= %s.id", alias(a), alias(b)))
	}
	if rapid.Bool().Draw(rt, "mjfilter") {
		i := rapid.IntRange(0, n-1).Draw(rt, "mjf")
		conds = append(conds, pred(rt, tabs[i], alias(i), 0))
	}
	conds = rapid.Permutation(conds).Draw(rt, "mjorder")
	sel := fmt.Sprintf("z0.id AS i0, z%d.id AS i1, %s AS e1", n-1, scalar(rt, tabs[1], "z1"))
	q := "FROM " + strings.Join(from, ", ")
	if rapid.Bool().Draw(rt, "mjleft") {
		b := rapid.SampledFrom(ts).Draw(rt, "mjlt")
		// The comma binds looser than JOIN: ON sees the last table only.
		q += fmt.Sprintf(" LEFT JOIN %s zl ON %s = %s", b.Name, b.colOf(rt, "zl", tInt, "mjc"), tabs[n-1].colOf(rt, alias(n-1), tInt, "mjc"))
		sel += ", zl.id AS il"
		// A WHERE conjunct over zl: some reject its NULL-extended rows
		// (the LEFT JOIN becomes inner), some keep them.
		switch rapid.IntRange(0, 3).Draw(rt, "mjlw") {
		case 1:
			conds = append(conds, "zl.id > 1")
		case 2:
			conds = append(conds, "zl.id IS NULL")
		case 3:
			conds = append(conds, "(zl.id + z0.id > 3 OR z0.id = 1)")
		}
	}
	if rapid.Bool().Draw(rt, "mjgroup") {
		return fmt.Sprintf("SELECT z0.id AS g, count(*) AS n %s WHERE %s GROUP BY z0.id", q, strings.Join(conds, " AND "))
	}
	return fmt.Sprintf("SELECT %s %s WHERE %s", sel, q, strings.Join(conds, " AND "))
}

// lateralFunction draws a function in FROM whose arguments reference the
// table to its left (implicitly LATERAL): generate_series, unnest [WITH
// ORDINALITY], the jsonb expanders, LEFT JOIN LATERAL ... ON cond, and
// an aggregate or join over the expansion.
func lateralFunction(rt *rapid.T, a, b Table) string {
	i1, i2 := a.colOf(rt, "x", tInt, "fi"), a.colOf(rt, "x", tInt, "fi")
	var fn, cols string
	mayFail := false
	switch rapid.IntRange(0, 6).Draw(rt, "srf") {
	case 6: // a zero step fails (22023): the view holds the error
		fn, cols, mayFail = fmt.Sprintf("generate_series(0, 4, %s %% 3)", i1), "f(v)", true
	case 0:
		fn, cols = fmt.Sprintf("generate_series(%s %% 3, %s %% 4)", i1, i2), "f(v)"
	case 1:
		// Empty when the start is past 2 (or NULL).
		fn, cols = fmt.Sprintf("generate_series(%s %% 4, 2, 1 + abs(%s %% 2))", i1, i2), "f(v)"
	case 2:
		// A NULL array (no rows) when the guard fails.
		fn, cols = fmt.Sprintf("unnest(CASE WHEN %s THEN ARRAY[%s, %s] END)", pred(rt, a, "x", 1), i1, i2), "f(v)"
	case 3:
		fn, cols = fmt.Sprintf("unnest(ARRAY[%s, %s]) WITH ORDINALITY", i1, i2), "f(v, o)"
	case 4:
		fn, cols = fmt.Sprintf("jsonb_array_elements_text(jsonb_build_array(%s, %s, %s))", i1, scalar(rt, a, "x"), i2), "f(v)"
	default:
		fn, cols = fmt.Sprintf("jsonb_each_text(jsonb_build_object('p', %s, 'q', %s))", i1, a.colOf(rt, "x", tText, "fj")), "f(k, v)"
	}
	from := fmt.Sprintf("%s x, %s AS %s", a.Name, fn, cols)
	if rapid.Bool().Draw(rt, "srfleft") {
		on := "true"
		if rapid.Bool().Draw(rt, "srfon") {
			on = fmt.Sprintf("f.v::text IS DISTINCT FROM '%s'", smallLit(rt, tInt))
		}
		from = fmt.Sprintf("%s x LEFT JOIN LATERAL %s AS %s ON %s", a.Name, fn, cols, on)
	}
	use := rapid.IntRange(0, 3).Draw(rt, "srfuse")
	if mayFail && use == 1 {
		// PostgreSQL skips the function when the join's other side is
		// empty, so whether the query fails depends on its plan.
		use = 0
	}
	switch use {
	case 0:
		return fmt.Sprintf("SELECT f.v::text AS v, count(*) AS n, count(x.id) AS nx FROM %s GROUP BY 1", from)
	case 1:
		return fmt.Sprintf("SELECT x.id AS xid, y.id AS yid, f.v::text AS v FROM %s JOIN %s y ON %s::text = f.v::text", from, b.Name, b.colOf(rt, "y", tInt, "fy"))
	}
	return fmt.Sprintf("SELECT x.id, f.* FROM %s", from)
}

// lateralSubquery draws a LATERAL subquery correlated with the table to
// its left: filtered rows, a global aggregate, or a grouped one, after a
// comma or as LEFT JOIN LATERAL ... ON.
func lateralSubquery(rt *rapid.T, a, b Table) string {
	corr := fmt.Sprintf("%s = %s", b.colOf(rt, "y", tInt, "lb"), a.colOf(rt, "x", tInt, "la"))
	if rapid.IntRange(0, 3).Draw(rt, "lcorr") == 0 {
		corr += " AND " + pred(rt, b, "y", 1)
	}
	var sub, sel string
	switch rapid.IntRange(0, 7).Draw(rt, "lform") {
	case 7: // over a function reading the outer row
		fn := fmt.Sprintf("unnest(ARRAY[%s, %s, 1])", a.colOf(rt, "x", tInt, "lf"), a.colOf(rt, "x", tInt, "lf"))
		if rapid.Bool().Draw(rt, "lfgs") {
			fn = fmt.Sprintf("generate_series(0, %s %% 4)", a.colOf(rt, "x", tInt, "lf"))
		}
		switch rapid.IntRange(0, 2).Draw(rt, "lfuse") {
		case 0:
			sub, sel = fmt.Sprintf("SELECT f, count(*) AS n FROM %s AS f GROUP BY f", fn), "s.f, s.n"
		case 1:
			sub, sel = fmt.Sprintf("SELECT sum(f) AS s, count(f) AS n FROM %s AS f", fn), "s.s, s.n"
		default:
			sub, sel = fmt.Sprintf("SELECT f, y.id AS yid FROM %s AS f JOIN %s y ON %s = f", fn, b.Name, b.colOf(rt, "y", tInt, "lfj")), "s.f, s.yid"
		}
	case 6: // window functions per outer row
		sub, sel = fmt.Sprintf("SELECT y.id AS sid, row_number() OVER (ORDER BY y.id DESC) AS rn, sum(%s) OVER (ORDER BY y.id) AS run FROM %s y WHERE %s", b.colOf(rt, "y", tInt, "lw"), b.Name, corr), "s.sid, s.rn, s.run"
	case 5: // distinct per outer row
		sub, sel = fmt.Sprintf("SELECT DISTINCT %s AS e FROM %s y WHERE %s", b.colOf(rt, "y", rapid.SampledFrom([]string{tInt, tText, tBool}).Draw(rt, "ldt"), "ld"), b.Name, corr), "s.e"
	case 4: // the first rows per outer row, in a unique order
		dir := rapid.SampledFrom([]string{"", " DESC", " DESC NULLS LAST", " NULLS FIRST"}).Draw(rt, "ldir")
		lim := fmt.Sprintf(" LIMIT %d", rapid.IntRange(1, 2).Draw(rt, "llimit"))
		if rapid.Bool().Draw(rt, "loffset") {
			lim += " OFFSET 1"
		}
		sub, sel = fmt.Sprintf("SELECT y.id AS sid, %s AS e FROM %s y WHERE %s ORDER BY 2%s, 1%s", b.colOf(rt, "y", rapid.SampledFrom([]string{tInt, tText, tNum}).Draw(rt, "lot"), "lo"), b.Name, corr, dir, lim), "s.sid, s.e"
	case 0:
		if rapid.Bool().Draw(rt, "ltheta") {
			corr = fmt.Sprintf("%s < %s", b.colOf(rt, "y", tInt, "lb"), a.colOf(rt, "x", tInt, "la"))
		}
		e := scalar(rt, b, "y")
		if rapid.Bool().Draw(rt, "louter") { // the SELECT list reads the outer row
			e = fmt.Sprintf("%s + y.id", a.colOf(rt, "x", tInt, "lo"))
		}
		sub, sel = fmt.Sprintf("SELECT y.id AS sid, %s AS e FROM %s y WHERE %s", e, b.Name, corr), "s.sid, s.e"
	case 1:
		sub, sel = fmt.Sprintf("SELECT count(*) AS n, sum(%s) AS s, max(%s) AS m FROM %s y WHERE %s", b.colOf(rt, "y", tInt, "ls"), b.colOf(rt, "y", tText, "lm"), b.Name, corr), "s.n, s.s, s.m"
	case 2:
		sub, sel = fmt.Sprintf("SELECT count(*) AS n, count(%s) AS nn FROM %s y WHERE %s HAVING count(*) > 1", b.colOf(rt, "y", tInt, "ls"), b.Name, corr), "s.n, s.nn"
	default:
		sub, sel = fmt.Sprintf("SELECT %s AS g, count(*) AS n, min(y.id) AS m FROM %s y WHERE %s GROUP BY 1", b.colOf(rt, "y", rapid.SampledFrom([]string{tInt, tText, tBool}).Draw(rt, "lgt"), "lg"), b.Name, corr), "s.g, s.n, s.m"
	}
	if rapid.IntRange(0, 2).Draw(rt, "lleft") == 0 {
		return fmt.Sprintf("SELECT x.id AS xid, %s FROM %s x LEFT JOIN LATERAL (%s) s ON true", sel, a.Name, sub)
	}
	return fmt.Sprintf("SELECT x.id AS xid, %s FROM %s x, LATERAL (%s) s", sel, a.Name, sub)
}
