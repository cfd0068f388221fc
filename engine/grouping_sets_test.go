package engine_test

import (
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// groupingSetViews are materialized views over grouping sets, created on
// an empty table: ROLLUP's and GROUPING SETS' grand total has its row
// there already (count 0, sum NULL), as in PostgreSQL.
//
//lint:immutable a constant table of test views.
var groupingSetViews = map[string]string{
	"gs_rollup":  `SELECT region, product, count(*) AS n, sum(qty) AS q, GROUPING(region, product) AS gg FROM gs_sales GROUP BY ROLLUP (region, product)`,
	"gs_cube":    `SELECT region, product, count(*) AS n, GROUPING(region) AS gr, GROUPING(product) AS gp FROM gs_sales GROUP BY CUBE (region, product) HAVING count(*) > 0 OR GROUPING(region, product) = 3`,
	"gs_sets":    `SELECT region, product, max(qty) AS m, count(*) AS n FROM gs_sales GROUP BY GROUPING SETS ((region), (product), ())`,
	"gs_partial": `SELECT region, product, count(*) AS n FROM gs_sales GROUP BY region, ROLLUP (product)`,
}

// groupingSetViewNames lists groupingSetViews in a fixed order.
//
//lint:immutable a constant list.
var groupingSetViewNames = []string{"gs_rollup", "gs_cube", "gs_sets", "gs_partial"}

// TestGroupingSetViewsMatchPostgres: views over ROLLUP, CUBE and GROUPING
// SETS, created over an empty table and maintained through inserts (NULL
// group values beside rolled-up NULLs), updates (rows moving between
// groups), deletes (groups emptying) and a restart, equal their queries
// on PostgreSQL after every step.
func TestGroupingSetViewsMatchPostgres(t *testing.T) {
	dir := t.TempDir()
	srv := enginetest.StartServer(t, dir)
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	both := func(stmt string) {
		t.Helper()
		for _, c := range []*harness.Conn{rs, pg} {
			if _, err := c.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	compare := func(when string) {
		t.Helper()
		for _, name := range groupingSetViewNames {
			want, got := sortedOutcome(pg, groupingSetViews[name]), sortedOutcome(rs, "SELECT * FROM "+name)
			if got != want {
				t.Errorf("%s: %s\n  rockstream: %s\n  postgresql: %s", when, name, got, want)
			}
		}
	}
	both(`CREATE TABLE gs_sales (id int PRIMARY KEY, region text, product text, qty int)`)
	for _, name := range groupingSetViewNames {
		if _, err := rs.Exec("CREATE MATERIALIZED VIEW " + name + " AS " + groupingSetViews[name]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	compare("empty")
	if got := sortedOutcome(rs, `SELECT n, q, gg FROM gs_rollup`); got != "0|NULL|3" {
		t.Fatalf("ROLLUP over an empty table: %s, want the grand total 0|NULL|3", got)
	}
	both(`INSERT INTO gs_sales VALUES (1, 'eu', 'a', 5), (2, 'eu', 'b', 3), (3, 'us', 'a', 7), (4, NULL, 'a', 1), (5, 'eu', NULL, 2), (6, NULL, NULL, 4)`)
	compare("after insert")
	both(`UPDATE gs_sales SET region = 'us' WHERE id IN (1, 4)`)
	both(`UPDATE gs_sales SET qty = qty * 10 WHERE product = 'a'`)
	compare("after update")
	both(`DELETE FROM gs_sales WHERE region IS NULL OR product = 'b'`)
	compare("after delete")
	srv.Stop()
	srv = enginetest.StartServer(t, dir)
	rs = harness.ConnectRS(t, srv)
	compare("after restart")
	both(`DELETE FROM gs_sales`)
	compare("emptied")
	both(`INSERT INTO gs_sales VALUES (7, NULL, 'c', 1)`)
	compare("refilled")
}
