package sql_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/sql"
)

// groupingSetQueries are GROUPING SETS, ROLLUP, CUBE and GROUPING()
// queries: each is maintained as a materialized view over random changes
// (from the empty tables on) and run ad hoc, and both must equal
// PostgreSQL 15 on the same data (checkSupported).
//
//lint:immutable a constant table of test queries.
var groupingSetQueries = []string{
	`SELECT b, count(*) FROM t GROUP BY ROLLUP (b)`,
	`SELECT b, c, count(*), sum(a), GROUPING(b, c) FROM t GROUP BY ROLLUP (b, c)`,
	`SELECT b, c, count(*), GROUPING(b), GROUPING(c), GROUPING(c, b) FROM t GROUP BY CUBE (b, c)`,
	`SELECT b, c, count(*), max(a) FROM t GROUP BY GROUPING SETS ((b), (c), ())`,
	`SELECT c, b, a % 2 AS p, count(*) FROM t GROUP BY c, ROLLUP (b, a % 2)`,
	`SELECT b, c, count(*) FROM t GROUP BY ROLLUP (b), CUBE (c)`,
	`SELECT b, c, count(*) FROM t GROUP BY DISTINCT ROLLUP (b, c), ROLLUP (b)`,
	`SELECT b, c, count(*) FROM t GROUP BY ROLLUP (b, c), ROLLUP (b)`,
	`SELECT b, count(*), GROUPING(b) FROM t GROUP BY b`,
	`SELECT count(*), sum(b) FROM t GROUP BY ()`,
	`SELECT count(*) FROM t GROUP BY GROUPING SETS ((), ())`,
	`SELECT b, c, count(*) FROM t GROUP BY GROUPING SETS ((b, c), ROLLUP (b), CUBE (c))`,
	`SELECT b, c, count(*) FROM t GROUP BY ROLLUP ((b, c))`,
	`SELECT b, count(*) FROM t GROUP BY ROLLUP (b) HAVING count(*) > 1 OR GROUPING(b) = 1`,
	`SELECT b, c, sum(a) FROM t GROUP BY CUBE (b, c) HAVING GROUPING(b, c) <> 2 AND b IS NULL`,
	`SELECT CASE WHEN GROUPING(c) = 1 THEN 'all' ELSE coalesce(c, 'null') END AS c, count(*), count(DISTINCT b), sum(a) FILTER (WHERE b > 1) FROM t GROUP BY ROLLUP (c)`,
	`SELECT t.b, u.g, count(u.k) FROM t LEFT JOIN u ON u.v = t.a GROUP BY ROLLUP (t.b, u.g)`,
	`SELECT b + 1 AS b1, count(*) FROM t GROUP BY ROLLUP (b + 1)`,
	`SELECT b, c, string_agg(a::text, ',' ORDER BY a) FROM t GROUP BY GROUPING SETS (b, c)`,
	`SELECT a, c, count(*) FROM t GROUP BY a, ROLLUP (c)`,
	`SELECT a, b, c, count(*) FROM t GROUP BY a, ROLLUP (c)`,
	`SELECT b, count(*), rank() OVER (PARTITION BY GROUPING(b) ORDER BY count(*) DESC, b) FROM t GROUP BY ROLLUP (b)`,
	`SELECT s.b, s.n FROM (SELECT b, count(*) AS n, GROUPING(b) AS g FROM t GROUP BY ROLLUP (b)) s WHERE s.g = 0`,
	`SELECT b, c, count(*) FROM t GROUP BY ROLLUP (b, c) ORDER BY GROUPING(b, c), b NULLS FIRST, c NULLS FIRST`,
	`SELECT b, count(*) FROM t GROUP BY ROLLUP (b) ORDER BY count(*) DESC, b NULLS FIRST LIMIT 2`,
	`SELECT b AS bb, c, count(*) FROM t GROUP BY ROLLUP (1, 2)`,
	`SELECT b AS bb, count(*) FROM t GROUP BY CUBE (bb)`,
	`SELECT DISTINCT count(*) FROM t GROUP BY GROUPING SETS (b, c, ())`,
	`SELECT b AS bb, count(*) FROM t GROUP BY bb`,
}

func TestGroupingSetsAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	for i, q := range groupingSetQueries {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkSupported(t, conn, coverageRow{example: q}, int64(1000+i))
		})
	}
}

// groupingSetErrors are misuses of GROUPING() and grouping sets that
// PostgreSQL refuses; RockStream must refuse them ad hoc and as views
// with the same SQLSTATE.
//
//lint:immutable a constant table of test queries.
var groupingSetErrors = []string{
	`SELECT a FROM t WHERE GROUPING(b) = 0 GROUP BY ROLLUP (b)`,
	`SELECT b, GROUPING(c) FROM t GROUP BY ROLLUP (b)`,
	`SELECT GROUPING(b) FROM t`,
	`SELECT b, sum(GROUPING(b)) FROM t GROUP BY ROLLUP (b)`,
	`SELECT b, c, count(*) FROM t GROUP BY ROLLUP (b)`,
	`SELECT b, count(*) FROM t GROUP BY ROLLUP (a, c)`,
	`SELECT b FROM t GROUP BY GROUPING (b)`,
	// An input column wins over an output name.
	`SELECT c AS b, count(*) FROM t GROUP BY ROLLUP (b)`,
	`SELECT count(*) FROM t GROUP BY CUBE (a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7, a + 8, a + 9, a + 10, a + 11, a + 12)`,
	`SELECT count(*) FROM t GROUP BY CUBE (a, b, c, a + 1, a + 2, a + 3), CUBE (a + 4, a + 5, a + 6, a + 7, a + 8, a + 9, a + 10)`,
}

func TestGroupingSetErrorsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	pgExec(t, conn, "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u")
	pgExec(t, conn, coverageSchema)
	e := newEngine()
	if _, err := e.exec(coverageSchema); err != nil {
		t.Fatal(err)
	}
	for _, q := range groupingSetErrors {
		_, pgErr := pgRows(t, conn, q, false)
		var pge *pgconn.PgError
		if !errors.As(pgErr, &pge) {
			t.Fatalf("%s: PostgreSQL did not refuse it: %v", q, pgErr)
		}
		_, adhocErr := sql.CompileQuery(e.cat, q, sql.Options{})
		_, viewErr := sql.CompileView(e.cat, q)
		for what, err := range map[string]error{"ad hoc": adhocErr, "view": viewErr} { //lint:maprange each entry is checked independently
			ce, ok := errcode.As(err)
			if !ok || ce.State() != pge.Code {
				t.Errorf("%s (%s): PostgreSQL refuses with %s %q, RockStream with %v", q, what, pge.Code, pge.Message, err)
			}
		}
	}
}
