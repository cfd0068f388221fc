package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/sql"
)

// randomWindowQuery draws a window query over t (a int PRIMARY KEY, b int,
// c text). Functions whose value depends on the order among peers get a
// unique order (… , a) so PostgreSQL's result is determined.
func randomWindowQuery(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	var calls []string
	for n := 1 + r.Intn(3); len(calls) < n; {
		part := pick("", "PARTITION BY b ", "PARTITION BY c ", "PARTITION BY b % 2, c ")
		dir := pick("", " DESC", " NULLS FIRST", " DESC NULLS LAST")
		peerOrder := "ORDER BY b" + dir
		total := "ORDER BY b" + dir + ", a" + pick("", " DESC")
		frame := pick("",
			" ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 FOLLOWING",
			" ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", " ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING",
			" GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW", " RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING")
		var f, over string
		switch r.Intn(9) {
		case 0:
			f, over = pick("rank()", "dense_rank()", "percent_rank()", "cume_dist()"), peerOrder
		case 1:
			f, over = pick("row_number()", fmt.Sprintf("ntile(%d)", 1+r.Intn(3))), total
		case 2:
			f, over = pick("lag(b)", "lead(c)", "lag(b, 2, -1)", "lead(a, 1, 0)"), total
		case 3:
			f, over = pick("first_value(c)", "last_value(b)", "nth_value(b, 2)"), total+frame
		case 4, 5:
			f, over = pick("count(*)", "count(c)", "sum(b)", "avg(b)", "min(c)", "max(b)", "bool_or(b > 1)"), total+frame
		case 6:
			f, over = pick("sum(b)", "count(*)", "max(c)"), peerOrder+pick("", " GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING", " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING")
		case 7:
			f, over = pick("count(*)", "sum(b)", "avg(a)"), ""
		default:
			f, over = "sum(a) FILTER (WHERE b > 0)", total
		}
		calls = append(calls, fmt.Sprintf("%s OVER (%s%s) AS w%d", f, part, over, len(calls)))
	}
	q := "SELECT a, b, c, " + strings.Join(calls, ", ") + " FROM t"
	if r.Intn(4) == 0 {
		q += " WHERE b IS DISTINCT FROM 1"
	}
	if r.Intn(4) == 0 {
		q = fmt.Sprintf("SELECT * FROM (SELECT a, b, c, row_number() OVER (%sORDER BY b%s, a) AS rn FROM t) s WHERE rn %s %d",
			pick("", "PARTITION BY c ", "PARTITION BY b "), pick("", " DESC"), pick("<=", "<", "="), 1+r.Intn(3))
	}
	return q
}

// TestWindowQueriesAgainstPostgres compiles random window queries as views
// and ad hoc, maintains them over random inserts, updates and deletes, and
// compares both with PostgreSQL 15 after every change batch (the
// docs/sql.md coverage check).
func TestWindowQueriesAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	r := rand.New(rand.NewSource(20261130))
	for i := 0; i < 40; i++ {
		q := randomWindowQuery(r)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkSupported(t, conn, coverageRow{construct: "random window query", status: "supported", example: q}, int64(i))
		})
	}
}

// randomRangeFrameQuery draws a window query whose frame is RANGE with an
// offset over one ORDER BY expression of t: integers (with NULLs), numeric,
// double precision, dates, timestamps, timestamptz and intervals with
// interval offsets, ascending and descending, NULLs first and last.
func randomRangeFrameQuery(r *rand.Rand) string {
	pick := func(xs ...string) string { return xs[r.Intn(len(xs))] }
	type orderKind struct{ expr, off1, off2, zero string }
	kinds := []orderKind{
		{"b", "1", "2", "0"},
		{"a", "1", "3", "0"},
		{"b / 2.0", "0.5", "1", "0"},
		{"b * 0.75::float8", "0.75", "1.5", "0"},
		{"date '2024-01-30' + b", "'1 day'", "interval '2 days'", "'0'"},
		{"timestamp '2024-01-01' + b * interval '7 hours'", "'7 hours'", "interval '1 day'", "'0 days'"},
		{"timestamptz '2024-01-31 00:00+00' + a * interval '1 month'", "'1 month'", "interval '2 months'", "interval '0'"},
		{"b * interval '1 day 3 hours'", "'1 day'", "interval '27 hours'", "'0'"},
	}
	var calls []string
	for n := 1 + r.Intn(3); len(calls) < n; {
		k := kinds[r.Intn(len(kinds))]
		part := pick("", "", "PARTITION BY c ")
		dir := pick("", " DESC", " NULLS FIRST", " DESC NULLS LAST")
		off := func() string { return pick(k.off1, k.off2, k.zero) }
		frame := pick(
			"RANGE BETWEEN "+off()+" PRECEDING AND "+off()+" FOLLOWING",
			"RANGE "+off()+" PRECEDING",
			"RANGE BETWEEN "+off()+" PRECEDING AND CURRENT ROW",
			"RANGE BETWEEN CURRENT ROW AND "+off()+" FOLLOWING",
			"RANGE BETWEEN UNBOUNDED PRECEDING AND "+off()+" PRECEDING",
			"RANGE BETWEEN "+off()+" FOLLOWING AND UNBOUNDED FOLLOWING",
			"RANGE BETWEEN "+k.off2+" PRECEDING AND "+k.off1+" PRECEDING",
			"RANGE BETWEEN "+k.off1+" FOLLOWING AND "+k.off2+" FOLLOWING",
		)
		f := pick("count(*)", "count(b)", "sum(a)", "max(c)", "min(b)", "first_value("+k.expr+")", "last_value("+k.expr+")", "nth_value("+k.expr+", 2)")
		calls = append(calls, fmt.Sprintf("%s OVER (%sORDER BY %s%s %s) AS w%d", f, part, k.expr, dir, frame, len(calls)))
	}
	return "SELECT a, b, c, " + strings.Join(calls, ", ") + " FROM t"
}

// TestRangeOffsetFramesAgainstPostgres compiles random RANGE-offset window
// queries as views and ad hoc and compares both with PostgreSQL 15 after
// every batch of inserts, updates and deletes.
func TestRangeOffsetFramesAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	r := rand.New(rand.NewSource(20261207))
	for i := 0; i < 60; i++ {
		q := randomRangeFrameQuery(r)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkSupported(t, conn, coverageRow{construct: "random RANGE frame", status: "supported", example: q}, int64(i))
		})
	}
}

// TestRangeOffsetErrorsMatchPostgres checks that RANGE offsets PostgreSQL
// refuses fail with its SQLSTATE, ad hoc and as views.
func TestRangeOffsetErrorsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	pgExec(t, conn, "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u")
	pgExec(t, conn, coverageSchema)
	pgExec(t, conn, "INSERT INTO t VALUES (1, 1, 'x')")
	e := newEngine()
	if _, err := e.exec(coverageSchema); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT sum(a) OVER (ORDER BY a, b RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
		"SELECT sum(a) OVER (RANGE 1 PRECEDING) FROM t",
		"SELECT sum(a) OVER (ORDER BY c RANGE 1 PRECEDING) FROM t",
		"SELECT sum(a) OVER (ORDER BY a RANGE 1.5 PRECEDING) FROM t",
		"SELECT sum(a) OVER (ORDER BY a::numeric RANGE 1.5::float8 PRECEDING) FROM t",
		"SELECT sum(a) OVER (ORDER BY timestamp '2024-01-01' + a * interval '1 hour' RANGE 1 PRECEDING) FROM t",
		"SELECT sum(a) OVER (ORDER BY a RANGE BETWEEN -1 PRECEDING AND CURRENT ROW) FROM t",
		"SELECT sum(a) OVER (ORDER BY a::numeric RANGE BETWEEN CURRENT ROW AND -0.5 FOLLOWING) FROM t",
		"SELECT sum(a) OVER (ORDER BY a::float8 RANGE BETWEEN CURRENT ROW AND 'NaN' FOLLOWING) FROM t",
		"SELECT sum(a) OVER (ORDER BY date '2024-01-01' + a RANGE interval '-1 day' PRECEDING) FROM t",
		"SELECT sum(a) OVER (ORDER BY a RANGE BETWEEN NULL PRECEDING AND CURRENT ROW) FROM t",
	} {
		_, pgErr := pgRows(t, conn, q, false)
		if pgErr == nil {
			t.Fatalf("%s: postgres accepted it", q)
		}
		for _, view := range []bool{false, true} {
			var err error
			if view {
				_, err = sql.CompileView(e.cat, q)
			} else {
				_, err = sql.CompileQuery(e.cat, q, sql.Options{})
			}
			ce, ok := errcode.As(err)
			if !ok || !strings.Contains(pgErr.Error(), "SQLSTATE "+ce.State()) {
				t.Errorf("%s (view %v): postgres failed with %v, rockstream with %v", q, view, pgErr, err)
			}
		}
	}
}
