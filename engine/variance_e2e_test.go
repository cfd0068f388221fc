package engine_test

import (
	"context"
	"strings"
	"testing"
)

// TestVarianceViewsMatchPostgres: var_pop, var_samp, variance,
// stddev_pop, stddev_samp and stddev over int4, int8 and numeric columns,
// in views maintained through inserts, updates and deletes (N passing 0,
// 1 and 2, NaN and Infinity in and out) and in ad-hoc queries, print what
// PostgreSQL 15 prints; float arguments are refused naming the call.
func TestVarianceViewsMatchPostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE s (id int PRIMARY KEY, g text, a int4, b int8, v numeric, f float8)")
	const calls = "var_pop(a) AS vpa, var_samp(b) AS vsb, variance(v) AS vv, stddev_pop(v) AS spv, stddev_samp(a) AS ssa, stddev(b) AS sb, stddev(DISTINCT v) AS sdv"
	o.view("s_by_g", "SELECT g, count(*) AS n, "+calls+" FROM s GROUP BY g")
	o.view("s_total", "SELECT "+calls+" FROM s")
	adhoc := []string{
		"SELECT " + calls + " FROM s",
		"SELECT g, " + calls + " FROM s GROUP BY g ORDER BY g",
		"SELECT stddev(v * 2), variance(b / 2), var_samp((a % 1000)::int2) FILTER (WHERE a > 0) FROM s",
	}
	check := func(when string) { t.Helper(); o.checkWith(when, adhoc) }
	check("empty")
	o.both("INSERT INTO s VALUES (1, 'x', 1, 10, 1.5, 1), (2, 'y', NULL, NULL, NULL, NULL)")
	check("one row per group")
	o.both("INSERT INTO s VALUES (3, 'x', 2147483647, 9223372036854775807, 12345678901234567890.123456789, 2), (4, 'x', -2147483648, -9223372036854775808, -0.000001, 3), (5, 'y', 7, 7, 7, 7)")
	check("extremes inserted")
	o.both("INSERT INTO s VALUES (6, 'x', 5, 5, 'NaN', 4), (7, 'y', 3, 3, 'Infinity', 5)")
	check("NaN and Infinity inserted")
	o.both("DELETE FROM s WHERE id IN (6, 7)")
	check("NaN and Infinity deleted")
	o.both("UPDATE s SET v = 2.25, a = 3 WHERE id = 3")
	check("updated")
	o.both("DELETE FROM s WHERE id IN (3, 4)")
	check("back to one row in x")
	o.both("DELETE FROM s WHERE id = 1")
	check("x gone")

	for _, q := range []string{"SELECT stddev(f) FROM s", "CREATE MATERIALIZED VIEW bad AS SELECT var_pop(f::float4) FROM s"} {
		_, err := rs.Exec(context.Background(), q)
		if err == nil || !strings.Contains(err.Error(), "(double precision)") && !strings.Contains(err.Error(), "(real)") {
			t.Fatalf("%s: err = %v, want a refusal naming the float argument", q, err)
		}
	}
}
