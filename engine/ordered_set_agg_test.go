package engine_test

import (
	"context"
	"testing"
)

// TestOrderedSetAggregates: percentile_cont, percentile_disc and mode()
// WITHIN GROUP views (ascending and descending, the array form, intervals,
// FILTER, the global form) match PostgreSQL through inserts, updates and
// deletes, including retracting one of two equal values and emptying a
// group; ad-hoc queries, a fraction given as a parameter, and the 22003
// of a fraction outside [0, 1] match too.
func TestOrderedSetAggregates(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE s (id int PRIMARY KEY, g text, n int, x float8, d interval, v text)")
	o.view("s_pct", "SELECT g, percentile_cont(0.5) WITHIN GROUP (ORDER BY n) AS med, percentile_cont(0.3) WITHIN GROUP (ORDER BY x DESC) AS p30, percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS dv, percentile_cont(0.25) WITHIN GROUP (ORDER BY d) AS di FROM s GROUP BY g")
	o.view("s_arr", "SELECT g, percentile_cont(ARRAY[0, 0.5, NULL, 1]) WITHIN GROUP (ORDER BY x) AS ca, percentile_disc(ARRAY[0.1, 0.9]) WITHIN GROUP (ORDER BY n DESC) AS da FROM s GROUP BY g")
	o.view("s_mode", "SELECT g, mode() WITHIN GROUP (ORDER BY n) AS m, mode() WITHIN GROUP (ORDER BY v DESC) AS mv, mode() WITHIN GROUP (ORDER BY n) FILTER (WHERE id > 2) AS mf FROM s GROUP BY g")
	o.view("s_all", "SELECT percentile_cont(0.75) WITHIN GROUP (ORDER BY n) AS p, percentile_disc(1) WITHIN GROUP (ORDER BY d DESC) AS dd, mode() WITHIN GROUP (ORDER BY x) AS m, count(*) AS c FROM s")
	adhoc := []string{
		"SELECT g, percentile_cont(0.9) WITHIN GROUP (ORDER BY n), mode() WITHIN GROUP (ORDER BY x DESC) FROM s GROUP BY g ORDER BY g",
		"SELECT percentile_disc(ARRAY[0.5, 0.25]) WITHIN GROUP (ORDER BY v), percentile_cont(0.5) WITHIN GROUP (ORDER BY n::numeric) FROM s",
	}
	o.checkWith("empty", adhoc)
	o.both("INSERT INTO s VALUES (1, 'x', 2, 1.5, '1 day', 'b'), (2, 'x', 1, -2, '3 hours', 'a'), (3, 'x', 2, NULL, '1 mon', 'b'), (4, 'y', NULL, 'Infinity', NULL, NULL), (5, 'y', 7, 0.25, '-2 days', 'c'), (6, 'x', 5, 8, '1 day 2 hours', 'a')")
	o.checkWith("inserted", adhoc)
	o.both("DELETE FROM s WHERE id = 1")
	o.checkWith("retracted one of two equal values", adhoc)
	o.both("UPDATE s SET n = 1, v = 'z', x = 3 WHERE id = 5")
	o.checkWith("updated", adhoc)
	o.both("DELETE FROM s WHERE g = 'y'")
	o.checkWith("group gone", adhoc)

	// A parameter fraction (extended protocol).
	const param = "SELECT percentile_cont($1) WITHIN GROUP (ORDER BY n) FROM s"
	var got, want float64
	if err := rs.QueryRow(context.Background(), param, 0.4).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if err := o.pg.QueryRow(context.Background(), param, 0.4).Scan(&want); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("%s with 0.4: %v, PostgreSQL %v", param, got, want)
	}
	// A fraction outside [0, 1]: 22003 with PostgreSQL's message, even over
	// no rows for a single fraction.
	for _, bad := range []string{
		"SELECT percentile_cont(2) WITHIN GROUP (ORDER BY n) FROM s",
		"SELECT percentile_disc(-0.5) WITHIN GROUP (ORDER BY n) FROM s WHERE false",
		"SELECT g, percentile_disc(ARRAY[0.5, 1.5]) WITHIN GROUP (ORDER BY n) FROM s GROUP BY g",
	} {
		_, rsErr := rs.Exec(context.Background(), bad)
		_, pgErr := o.pg.Exec(context.Background(), bad)
		if rsErr == nil || pgErr == nil {
			t.Fatalf("%s: RockStream error %v, PostgreSQL error %v (both must fail)", bad, rsErr, pgErr)
		}
		if sqlState(rsErr) != sqlState(pgErr) || message(rsErr) != message(pgErr) {
			t.Fatalf("%s: RockStream %s %q, PostgreSQL %s %q", bad, sqlState(rsErr), message(rsErr), sqlState(pgErr), message(pgErr))
		}
	}
	o.both("DELETE FROM s")
	o.checkWith("empty again", adhoc)
}
