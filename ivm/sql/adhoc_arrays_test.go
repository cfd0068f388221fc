package sql_test

// adHocArrays are the ad-hoc-only constructs drivers send in catalog
// queries, checked against PostgreSQL by TestAdHocAgainstPostgres: ANY/ALL
// over arrays, ARRAY[...] and ARRAY(subquery), functions in FROM, WITH
// RECURSIVE and correlated subqueries under CASE guards.
var adHocArrays = []string{
	"SELECT a, b = ANY (ARRAY[1, 2, NULL]) AS any_null, b <> ALL ('{1,3}') AS all_ne, b = ANY ('{}'::int[]) AS empty FROM t ORDER BY a",
	"SELECT a, ARRAY[a, b] AS arr, ARRAY[c, 'z'] AS tarr FROM t ORDER BY a",
	"SELECT a, ARRAY(SELECT v FROM u WHERE u.k <= t.a ORDER BY v DESC NULLS LAST, k) AS vs FROM t ORDER BY a",
	"SELECT ARRAY(SELECT k FROM u ORDER BY k) AS ks, ARRAY(SELECT k FROM u WHERE false) AS none",
	"SELECT g, t.c FROM generate_series(1, 5) AS g LEFT JOIN t ON t.a = g ORDER BY g",
	"SELECT * FROM generate_series(10, 1, -3) WITH ORDINALITY AS s(x, n) ORDER BY n",
	"SELECT * FROM generate_series('2024-02-27'::timestamp, '2024-03-02', '1 day') AS d ORDER BY 1",
	"SELECT * FROM unnest(ARRAY[3, 1, 2], ARRAY['x', 'y']) WITH ORDINALITY AS u(n, s, o) ORDER BY o",
	"SELECT a, (SELECT sum(g) FROM generate_series(1, t.a % 4) AS g) AS s FROM t ORDER BY a",
	"WITH RECURSIVE r(n, p) AS (SELECT 1, 1 UNION ALL SELECT n + 1, p * 2 FROM r WHERE n < 10) SELECT n, p FROM r ORDER BY n",
	"WITH RECURSIVE r(x) AS (SELECT b FROM t UNION SELECT (x * 7) % 11 FROM r WHERE x IS NOT NULL) SELECT x FROM r ORDER BY x",
	"SELECT a, CASE WHEN a < 0 THEN (SELECT v FROM u) ELSE b END AS guarded FROM t ORDER BY a",
	"SELECT a, (WITH RECURSIVE d(k, depth) AS (SELECT t.a, 0 UNION ALL SELECT k / 2, depth + 1 FROM d WHERE k > 1) SELECT max(depth) FROM d) AS halvings FROM t ORDER BY a",
}
