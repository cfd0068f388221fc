package engine_test

import (
	"context"
	"strings"
	"testing"
)

// TestDistinctOnHiddenKeysMatchPostgres: DISTINCT ON may order by, and be
// keyed on, expressions outside the select list, as PostgreSQL allows
// (they were refused with 42P10 in views and ad hoc); the chosen row per
// key follows the ORDER BY through inserts, updates and deletes.
func TestDistinctOnHiddenKeysMatchPostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE dt (id int PRIMARY KEY, a int, b int, c text)")
	// Each ORDER BY determines the row chosen per key (id breaks ties), so
	// PostgreSQL's answer does not depend on its scan order.
	o.view("latest_c", "SELECT DISTINCT ON (a) c FROM dt ORDER BY a, b DESC, id")
	o.view("by_parity", "SELECT DISTINCT ON (a % 2) c, b FROM dt ORDER BY a % 2, b NULLS FIRST, id")
	o.view("by_two", "SELECT DISTINCT ON (b, a) id FROM dt ORDER BY a, b, id DESC")
	adhoc := []string{
		"SELECT DISTINCT ON (a) c FROM dt ORDER BY a, b DESC, id",
		"SELECT DISTINCT ON (a % 2) c, b FROM dt ORDER BY a % 2, b NULLS FIRST, id",
		"SELECT DISTINCT ON (upper(c)) id FROM dt ORDER BY upper(c), id",
	}
	check := func(when string) { t.Helper(); o.checkWith(when, adhoc) }
	check("empty")
	o.both("INSERT INTO dt VALUES (1, 1, 2, 'x'), (2, 1, 3, 'y'), (3, 2, 1, 'z'), (4, 2, 5, 'w'), (5, 3, NULL, 'q'), (6, 1, 3, 'Y')")
	check("inserted")
	o.both("UPDATE dt SET b = 10 WHERE id = 1")
	check("a new winner")
	o.both("DELETE FROM dt WHERE id IN (1, 4)")
	check("winners deleted")
	for _, q := range []string{"SELECT DISTINCT ON (a) c FROM dt ORDER BY b", "SELECT DISTINCT c FROM dt ORDER BY a"} {
		_, errRS := rs.Exec(context.Background(), q)
		_, errPG := o.pg.Exec(context.Background(), q)
		if errRS == nil || errPG == nil || !strings.Contains(errRS.Error(), "42P10") || !strings.Contains(errPG.Error(), "42P10") {
			t.Fatalf("%s: RockStream %v, PostgreSQL %v; want 42P10 from both", q, errRS, errPG)
		}
	}
}
