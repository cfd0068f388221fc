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
	"SELECT a, ('{10,20,30}'::int[])[b] AS s, ('{10,20,30}'::int[])[1.6] AS r, ('{10,20,30}'::int[])['3'] AS u, ('{10,20,30}'::int[])[NULL] AS n, ('{10,20,30}'::int[])[b:NULL] AS sn, (NULL::int[])[1] AS na, ('{x,y}'::text[])[-1:b] AS sl, (ARRAY[c])[1] || '!' AS cat FROM t ORDER BY a",
	"SELECT a, array_append(NULL::int[], b) AS an, array_append(ARRAY[b], NULL) AS ae, array_append('{1}', b) AS al, array_prepend(NULL, NULL::text[]) AS pn, array_cat(NULL::int[], NULL) AS cn, array_cat('{}', ARRAY[a]) AS ce, array_append(ARRAY[a], 2.5) AS num FROM t ORDER BY a",
	"SELECT a, array_position(ARRAY[1, NULL, 3], NULL) AS pn, array_position(ARRAY[1, 2, 3, 1], 1, b) AS ps, array_position(NULL::int[], b) AS na, array_position(ARRAY[1.0, 2], b) AS nu, array_position(ARRAY['x', c], c) AS tx, array_length('{}'::int[], 1) AS l0, array_length(ARRAY[a], 2) AS l2, cardinality(NULL::int[]) AS cn FROM t ORDER BY a",
	"SELECT a, ARRAY[1, NULL] @> ARRAY[NULL::int] AS nn, NULL::int[] @> ARRAY[b] AS na, ARRAY[a, a] <@ ARRAY[a] AS dup, ARRAY[c] && ARRAY['x', NULL] AS tx, '{}' <@ ARRAY[b] AS e, ARRAY[1.0] @> ARRAY[1.00] AS num FROM t ORDER BY a",
	"SELECT a, array_position(ARRAY[a], a, NULL) FROM t ORDER BY a",
	"SELECT a, ('{10,20}'::int[])[2147483648] FROM t ORDER BY a",
	"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY b::float8 / 3) AS pc, percentile_disc(0.5) WITHIN GROUP (ORDER BY b > 1) AS pb, mode() WITHIN GROUP (ORDER BY c) AS mc, percentile_disc(0.5) WITHIN GROUP (ORDER BY b / 2.0) AS pn FROM t",
	"SELECT mode() WITHIN GROUP (ORDER BY CASE WHEN b = 1 THEN 'NaN'::float8 ELSE b END) AS m, percentile_cont(0.7) WITHIN GROUP (ORDER BY CASE WHEN b = 2 THEN 'Infinity'::float8 ELSE b END) AS pinf FROM t",
	"SELECT b, percentile_disc(0.5) WITHIN GROUP (ORDER BY ARRAY[a, b]) AS pa, percentile_cont(0.5) WITHIN GROUP (ORDER BY b * interval '1.5 days') AS pi FROM t GROUP BY b ORDER BY b",
	"SELECT c FROM t GROUP BY c HAVING percentile_cont(0.5) WITHIN GROUP (ORDER BY a) > 1 ORDER BY percentile_disc(0.5) WITHIN GROUP (ORDER BY a), c",
	"SELECT s.g, percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY s.v DESC) FROM (SELECT t.c AS g, u.v FROM t JOIN u ON u.k = t.b) s GROUP BY s.g ORDER BY s.g",
	"SELECT a, (WITH RECURSIVE d(k, depth) AS (SELECT t.a, 0 UNION ALL SELECT k / 2, depth + 1 FROM d WHERE k > 1) SELECT max(depth) FROM d) AS halvings FROM t ORDER BY a",
}
