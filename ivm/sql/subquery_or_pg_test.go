package sql_test

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// subqueryViews are subquery shapes maintained incrementally: [NOT] IN and
// [NOT] EXISTS under OR (disjoint UNION ALL branches of semi and anti
// joins), and an IN subquery whose WHERE compares with a correlated
// aggregate of its own rows (TPC-H Q20's shape).
//
//lint:immutable a constant table of test queries.
var subqueryViews = []string{
	"SELECT a FROM t WHERE b IN (SELECT v FROM u) OR a = 0",
	"SELECT a, c FROM t WHERE c = 'x' OR b IN (SELECT v FROM u WHERE u.g = t.c)",
	"SELECT a FROM t WHERE b NOT IN (SELECT v FROM u) OR c = 'y'",
	"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.b) OR a = 0 OR b IN (SELECT k FROM u WHERE v = 1)",
	"SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.v = t.b) OR b NOT IN (SELECT k FROM u WHERE g = 'x')",
	"SELECT a FROM t WHERE (b IN (SELECT v FROM u) OR b IS NULL) AND c IS NOT NULL",
	"SELECT b, c FROM t WHERE b IN (SELECT v FROM u) OR c = 'x'",
	"SELECT c, count(*) FROM t WHERE a IN (SELECT v FROM u) OR b IN (SELECT k FROM u) GROUP BY c",
	"SELECT a FROM t WHERE b IN (SELECT v FROM u WHERE u.k <> t.a) OR b > 2",
	"SELECT a FROM t WHERE NOT (b IN (SELECT v FROM u) OR a = 0)",
	"SELECT a FROM t WHERE a = 1 OR b = 2 OR NOT EXISTS (SELECT 1 FROM u WHERE u.g = t.c)",
	"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.b AND (u.v IN (SELECT b FROM t t2) OR u.g = 'x'))",
	"SELECT a, c FROM t WHERE b IN (SELECT k FROM u WHERE u.v > (SELECT sum(b) FROM t t2 WHERE t2.c = u.g))",
	"SELECT a FROM t WHERE b IN (SELECT k FROM u WHERE u.v >= (SELECT count(*) FROM t t2 WHERE t2.b = u.k AND t2.c = u.g))",
	"SELECT a FROM t WHERE b IN (SELECT k FROM u WHERE u.g = t.c AND u.v > (SELECT 0.5 * sum(t2.b) FROM t t2 WHERE t2.c = u.g))",
	"SELECT a FROM t WHERE a IN (SELECT k FROM u WHERE u.v IN (SELECT b FROM t t2 WHERE t2.c = 'x') AND u.v > (SELECT 0.5 * sum(t2.a) FROM t t2 WHERE t2.b = u.v))",
}

// TestSubqueryViewsAgainstPostgres maintains each query as a view over
// random inserts, updates and deletes and runs it ad hoc, comparing both
// with PostgreSQL 15 after every change batch.
func TestSubqueryViewsAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	for i, q := range subqueryViews {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for seed := int64(0); seed < 4; seed++ {
				checkSupported(t, conn, coverageRow{construct: "subquery view", status: "supported", example: q}, 1000+10*int64(i)+seed)
			}
		})
	}
}
