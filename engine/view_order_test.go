package engine_test

import (
	"strings"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// viewOrderViews are materialized views defined with ORDER BY (with and
// without LIMIT / OFFSET). PostgreSQL returns a materialized view's rows
// in the order its query produced them, so a bare read of each one comes
// back in its defining order. Every order key is unique over the rows (or
// completed by a unique key), so the order PostgreSQL gives is determined.
//
//lint:immutable a constant table of test views.
var viewOrderViews = []string{
	`CREATE MATERIALIZED VIEW vo_top AS SELECT id, score FROM vo_s ORDER BY score DESC LIMIT 4`,
	`CREATE MATERIALIZED VIEW vo_offset AS SELECT id, score, name FROM vo_s ORDER BY score LIMIT 3 OFFSET 2`,
	`CREATE MATERIALIZED VIEW vo_sorted AS SELECT id, name, score FROM vo_s ORDER BY name NULLS FIRST, id DESC`,
	`CREATE MATERIALIZED VIEW vo_groups AS SELECT g, sum(score) AS total, count(*) AS n FROM vo_s GROUP BY g ORDER BY total DESC, g LIMIT 3`,
}

// viewOrderReads are the bare reads compared in order: the whole view,
// a projection that drops the order key, a filter and a LIMIT.
//
//lint:immutable a constant table of test queries.
var viewOrderReads = []string{
	`SELECT * FROM vo_top`,
	`SELECT id FROM vo_top`,
	`SELECT score, id FROM vo_top WHERE id > 2`,
	`SELECT * FROM vo_top LIMIT 2`,
	`SELECT * FROM vo_offset`,
	`SELECT * FROM vo_sorted`,
	`SELECT id, score FROM vo_sorted WHERE score < 60`,
	`SELECT name FROM vo_sorted LIMIT 4 OFFSET 1`,
	`SELECT * FROM vo_groups`,
	`SELECT g FROM vo_groups`,
}

// TestViewReadOrderMatchesPostgres: `SELECT * FROM v` (and reads that only
// project, filter and limit v) over a materialized view defined with ORDER
// BY ... [LIMIT n] returns the rows in the defining order, as PostgreSQL
// does, not in the view's key order; also after the inputs change (the
// PostgreSQL view is refreshed, the RockStream view maintained).
func TestViewReadOrderMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
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
		if _, err := pg.Exec(`REFRESH MATERIALIZED VIEW vo_top; REFRESH MATERIALIZED VIEW vo_offset; REFRESH MATERIALIZED VIEW vo_sorted; REFRESH MATERIALIZED VIEW vo_groups`); err != nil {
			t.Fatal(err)
		}
		for _, q := range viewOrderReads {
			want, got := outcome(pg, q), outcome(rs, q)
			if got != want {
				t.Errorf("%s: %s\n  rockstream: %s\n  postgresql: %s", when, q, got, want)
			}
		}
	}
	both(`CREATE TABLE vo_s (id int PRIMARY KEY, score int, name text, g int)`)
	both(`INSERT INTO vo_s VALUES (1, 90, 'e', 1), (2, 10, NULL, 2), (3, 70, 'c', 1), (4, 20, 'a', 3), (5, 50, 'c', 2), (6, 30, 'b', 3), (7, 80, NULL, 4), (8, 40, 'd', 1)`)
	for _, v := range viewOrderViews {
		both(v)
	}
	compare("after create")
	// The key order differs from the defining order, or the test proves
	// nothing.
	if got := outcome(rs, `SELECT id FROM vo_top`); got != "1; 7; 3; 5" {
		t.Fatalf("vo_top in defining order: got %s, want 1; 7; 3; 5", got)
	}
	both(`INSERT INTO vo_s VALUES (9, 95, 'a', 4), (10, 5, NULL, 2)`)
	compare("after insert")
	both(`UPDATE vo_s SET score = 99 WHERE id = 2`)
	both(`UPDATE vo_s SET name = 'z', g = 2 WHERE id = 4`)
	compare("after update")
	both(`DELETE FROM vo_s WHERE id IN (1, 9)`)
	compare("after delete")
	if !strings.Contains(outcome(rs, `SELECT * FROM vo_top`), "|") {
		t.Fatal("vo_top is empty")
	}
}
