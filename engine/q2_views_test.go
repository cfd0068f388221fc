package engine_test

import (
	"testing"
)

// TestQ2ViewsAgainstPostgres runs, through the server, views over RANGE
// frames with offsets, IN / EXISTS under OR, an IN subquery comparing with
// a correlated aggregate of its own rows (TPC-H Q20's shape) and the JSON
// aggregates, each equal to PostgreSQL's answer after every change and
// after a restart.
func TestQ2ViewsAgainstPostgres(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE part (p int PRIMARY KEY, name text, size int)")
	o.both("CREATE TABLE ps (p int, s int, qty int, PRIMARY KEY (p, s))")
	o.both("CREATE TABLE li (id int PRIMARY KEY, p int, s int, q numeric, shipped timestamp)")
	o.both(`INSERT INTO part VALUES (1, 'forest green', 5), (2, 'red', 7), (3, 'forest brown', NULL), (4, 'blue', 5)`)
	o.both(`INSERT INTO ps VALUES (1, 10, 100), (1, 11, 5), (2, 10, 40), (3, 12, 9), (4, 11, 1)`)
	o.both(`INSERT INTO li VALUES (1, 1, 10, 20, '2024-01-01 10:00'), (2, 1, 11, 4, '2024-01-02 09:00'), (3, 3, 12, 30, '2024-01-02 11:00'),
		(4, 2, 10, 50, '2024-01-03 00:00'), (5, 1, 10, 70, '2024-01-05 12:00')`)
	o.view("q20", `SELECT s, count(*) AS n FROM ps WHERE p IN (SELECT p FROM part WHERE name LIKE 'forest%')
		AND qty > (SELECT 0.5 * sum(q) FROM li WHERE li.p = ps.p AND li.s = ps.s) GROUP BY s`)
	o.view("or_in", "SELECT p, name FROM part WHERE size IS NULL OR p IN (SELECT p FROM ps WHERE qty > 50) OR NOT EXISTS (SELECT 1 FROM li WHERE li.p = part.p)")
	o.view("ranges", `SELECT id, sum(q) OVER (ORDER BY shipped RANGE BETWEEN interval '1 day' PRECEDING AND CURRENT ROW) AS day_q,
		count(*) OVER (PARTITION BY p ORDER BY q RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING) AS near FROM li`)
	o.view("jsons", `SELECT p, json_agg(s ORDER BY s) AS ss, jsonb_object_agg(s, qty) AS qs, json_object_agg(s, qty ORDER BY s DESC) AS rq FROM ps GROUP BY p`)
	o.check("created")
	o.both("INSERT INTO li VALUES (6, 3, 12, 1, '2024-01-05 23:00'), (7, 4, 11, 2, NULL)")
	o.both("UPDATE ps SET qty = 3 WHERE p = 1 AND s = 10")
	o.both("UPDATE part SET name = 'forest red' WHERE p = 2")
	o.both("DELETE FROM li WHERE id = 2")
	o.check("after changes")
	srv.Stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	o.both("INSERT INTO ps VALUES (2, 12, 90)")
	o.both("DELETE FROM part WHERE p = 4")
	o.both("UPDATE li SET shipped = shipped + interval '1 day' WHERE id IN (1, 3)")
	o.check("after a restart")
}
