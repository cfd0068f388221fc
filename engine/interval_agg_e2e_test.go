package engine_test

import (
	"strings"
	"testing"
)

// TestIntervalSumAvgMatchPostgres: sum(interval) and avg(interval) in views
// (maintained through updates and deletes, plain and DISTINCT, beside a
// MIN so both aggregate paths run) and ad hoc, equal to PostgreSQL 15's,
// including avg's cascading of fractional months into days and days into
// time (interval_div). They used to fail with XX000 "this is a bug".
func TestIntervalSumAvgMatchPostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE iv (id int PRIMARY KEY, g text, d interval)")
	o.view("iv_by_g", "SELECT g, count(*) AS n, sum(d) AS s, avg(d) AS a FROM iv GROUP BY g")
	o.view("iv_total", "SELECT sum(d) AS s, avg(d) AS a, sum(DISTINCT d) AS sd, avg(DISTINCT d) AS ad, min(d) AS lo FROM iv")
	adhoc := []string{
		"SELECT sum(d), avg(d) FROM iv",
		"SELECT g, sum(d), avg(d), avg(DISTINCT d) FROM iv GROUP BY g ORDER BY g",
		"SELECT sum(d) FILTER (WHERE id > 2), avg(d * 2) FROM iv",
	}
	check := func(when string) {
		t.Helper()
		o.check(when)
		for _, q := range adhoc {
			got, want := rowsText(t, rs, q), rowsText(t, o.pg, q)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: %s differs from PostgreSQL\n got: %q\nwant: %q", when, q, got, want)
			}
		}
	}
	check("empty")
	o.both("INSERT INTO iv VALUES (1, 'x', '1 month'), (2, 'x', '2 days 3 hours'), (3, 'y', NULL)")
	check("first rows")
	o.both("INSERT INTO iv VALUES (4, 'x', '1 year 1 month 1 day 00:00:01.5'), (5, 'y', '-3 days 04:05:06'), (6, 'y', '1 month'), (7, 'x', '1 month')")
	check("mixed signs, repeated values")
	o.both("UPDATE iv SET d = '7 mons 13 days 01:02:03.456789' WHERE id = 2")
	check("updated")
	o.both("DELETE FROM iv WHERE id IN (1, 4)")
	check("deleted")
	o.both("DELETE FROM iv WHERE g = 'x'")
	check("x gone")
}
