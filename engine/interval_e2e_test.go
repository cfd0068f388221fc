package engine_test

import "testing"

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
	check := func(when string) { t.Helper(); o.checkWith(when, adhoc) }
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

// TestIntervalFieldRestrictionsMatchPostgres: SQL-standard interval
// literals and types (`interval '90' day`, `interval '1-2' year to month`,
// `interval hour to minute` columns, `interval(2)`) read, cut and print as
// in PostgreSQL 15, in tables, views and ad hoc. They were refused with
// 0A000 "interval field restrictions", which blocked 9 of the 22 TPC-H
// queries as written.
func TestIntervalFieldRestrictionsMatchPostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE ev (id int PRIMARY KEY, ts timestamp, d interval hour to minute, e interval(2), f interval year)")
	o.view("ev_recent", "SELECT id, ts + interval '1' month AS due FROM ev WHERE ts > timestamp '2024-01-01' - interval '90' day")
	o.view("ev_cut", "SELECT id, d::interval hour AS dh, CAST(e AS interval second(0)) AS e0, f + interval '1-2' year to month AS f2 FROM ev")
	adhoc := []string{
		"SELECT * FROM ev ORDER BY id",
		"SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'ev'::regclass AND attnum > 0 ORDER BY attnum",
		"SELECT interval '1' minute, interval '90' day, interval '1-2' year to month, interval '10:20' minute to second, interval '1.5' day, interval '1 2:03' day to minute",
		"SELECT date '1998-12-01' - interval '90' day, date '1995-01-01' + interval '1' year",
	}
	check := func(when string) { t.Helper(); o.checkWith(when, adhoc) }
	check("empty")
	o.both("INSERT INTO ev VALUES (1, '2024-01-01', '1 day 02:03:04', '1.23456 second', '1 year 5 months'), (2, '2023-10-01', '5', '3', '2'), (3, '2023-12-01 10:00', '-1:30', '-0.125', '-1.5')")
	check("inserted")
	o.both("UPDATE ev SET ts = '2023-09-01', d = '2 1:30' WHERE id = 1")
	check("updated")
	o.both("DELETE FROM ev WHERE id = 3")
	check("deleted")
}
