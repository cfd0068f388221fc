package engine_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// timeWindowViews are the TUMBLE and HOP views of the test, each with
// PostgreSQL 15's form (date_bin, and a join with the window offsets for
// HOP): rows over a timestamptz column (windows aligned to midnight in
// the session's TimeZone, which is not UTC here), an aggregate per window
// over a timestamp column, HOP rows, a HOP aggregate (Nexmark q5's
// shape), and a HOP over a WITH query under an alias naming its columns.
var timeWindowViews = []windowView{
	{"tw_rows", "SELECT id, k, ts, window_start, window_end FROM TUMBLE(ev, ts, interval '1 hour')",
		"SELECT id, k, ts, date_bin('1 hour', ts, '1970-01-01') AS window_start, date_bin('1 hour', ts, '1970-01-01') + interval '1 hour' AS window_end FROM ev"},
	{"tw_agg", "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS total FROM TUMBLE(ev, lts, interval '15 minutes') GROUP BY k, window_start, window_end",
		"SELECT k, date_bin('15 minutes', lts, '1970-01-01') AS ws, date_bin('15 minutes', lts, '1970-01-01') + interval '15 minutes', count(*) AS n, sum(v) AS total FROM ev GROUP BY 1, 2, 3"},
	{"hw_rows", "SELECT id, ts, window_start, window_end FROM HOP(ev, ts, interval '5 minutes', interval '15 minutes')",
		"SELECT id, ts, date_bin('5 minutes', ts, '1970-01-01') - w.k * interval '5 minutes' AS ws, date_bin('5 minutes', ts, '1970-01-01') - w.k * interval '5 minutes' + interval '15 minutes' FROM ev CROSS JOIN (VALUES (0), (1), (2)) AS w(k)"},
	{"hw_agg", "SELECT k, window_start, count(*) AS n, max(v) AS top FROM HOP(ev, lts, interval '10 minutes', interval '20 minutes') AS h GROUP BY 1, 2",
		"SELECT ev.k, date_bin('10 minutes', lts, '1970-01-01') - w.k * interval '10 minutes' AS ws, count(*) AS n, max(v) AS top FROM ev CROSS JOIN (VALUES (0), (1)) AS w(k) GROUP BY 1, 2"},
	{"hw_cte", "WITH big AS (SELECT id, ts FROM ev WHERE v > 0) SELECT x.id, x.s, x.e FROM HOP(big, ts, interval '10 minutes', interval '30 minutes') AS x(id, t, s, e)",
		"SELECT id, date_bin('10 minutes', ts, '1970-01-01') - w.k * interval '10 minutes' AS s, date_bin('10 minutes', ts, '1970-01-01') - w.k * interval '10 minutes' + interval '30 minutes' FROM ev CROSS JOIN (VALUES (0), (1), (2)) AS w(k) WHERE v > 0"},
}

// TestTimeWindowsAgainstPostgres maintains TUMBLE and HOP views over
// random inserts, updates and deletes (NULL times, rows moving between
// windows and keys) and compares every view, and each view's query run
// ad hoc, with PostgreSQL 15's date_bin form after every transaction.
func TestTimeWindowsAgainstPostgres(t *testing.T) {
	w := newWindowTest(t, "rs_timewindow", "Asia/Kolkata", timeWindowViews)
	both, check, at, row := w.both, w.check, evAt, evRow
	both(row(1, 1, 0, 1) + "; " + row(2, 1, 15, 1) + "; " + row(3, 2, 44, 2))
	check("three rows")
	both("INSERT INTO ev VALUES (22, 1, NULL, NULL, 1)")
	check("a NULL time")

	r := rand.New(rand.NewSource(20261207))
	for batch := 0; batch < 40; batch++ {
		var stmts []string
		for n := 1 + r.Intn(5); n > 0; n-- {
			id := r.Intn(16)
			switch r.Intn(4) {
			case 0:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ev WHERE id = %d", id))
			case 1:
				stmts = append(stmts, fmt.Sprintf("UPDATE ev SET ts = %s, lts = (%s) AT TIME ZONE 'UTC' WHERE id = %d", at(7*r.Intn(30)), at(7*r.Intn(30)), id))
			case 2:
				stmts = append(stmts, fmt.Sprintf("UPDATE ev SET k = %d, v = %d WHERE id = %d", r.Intn(3), r.Intn(3), id))
			default:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ev WHERE id = %d", id), row(id, r.Intn(3), 7*r.Intn(30), r.Intn(3)))
			}
		}
		both("BEGIN; " + strings.Join(stmts, "; ") + "; COMMIT")
		check(fmt.Sprintf("batch %d (%s)", batch, strings.Join(stmts, "; ")))
	}
}
