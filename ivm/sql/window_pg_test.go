package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
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
