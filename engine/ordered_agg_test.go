package engine_test

import "testing"

// TestOrderedAggregates: string_agg and array_agg views (ORDER BY inside
// the call, DISTINCT, FILTER, NULL values and delimiters, the global
// form) match PostgreSQL through inserts, updates and deletes, including
// retracting one of two equal values.
func TestOrderedAggregates(t *testing.T) {
	srv := startServer(t, t.TempDir())
	o := newOracle(t, connect(t, srv.url()))
	o.both("CREATE TABLE s (id int PRIMARY KEY, g text, v text, n int, d text)")
	o.view("s_str", "SELECT g, string_agg(v, ',' ORDER BY v) AS a, string_agg(v, '-' ORDER BY n DESC, v) AS b, string_agg(v, d ORDER BY id) AS c, string_agg(DISTINCT v, ';') AS dv FROM s GROUP BY g")
	o.view("s_arr", "SELECT g, array_agg(n ORDER BY n NULLS FIRST, id) AS a, array_agg(v ORDER BY id DESC) FILTER (WHERE n > 1) AS f FROM s GROUP BY g")
	o.view("s_all", "SELECT string_agg(v, ', ' ORDER BY id) AS a, array_agg(id ORDER BY id) AS ids, count(*) AS c FROM s")
	o.check("empty")
	o.both("INSERT INTO s VALUES (1, 'x', 'b', 2, '+'), (2, 'x', 'a', 1, NULL), (3, 'x', 'b', 3, '/'), (4, 'y', NULL, NULL, '+'), (5, 'y', 'c', 2, '*')")
	o.check("inserted")
	o.both("DELETE FROM s WHERE id = 1")
	o.check("retracted one of two equal values")
	o.both("UPDATE s SET n = 0, v = 'z' WHERE id = 5")
	o.check("updated")
	o.both("DELETE FROM s WHERE g = 'y'")
	o.check("group gone")
	o.both("DELETE FROM s")
	o.check("empty again")
}
