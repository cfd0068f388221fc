package engine_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// sessionPG is PostgreSQL's form of a query over SESSION(input, ts,
// keys, gap) (PostgreSQL 15 has no session windows): a row starts a
// session when the key's previous row is gap or more before it (lag), a
// running sum numbers the sessions, and each session's window is its
// first time to its last time plus gap. outer reads the sessioned rows
// as s.
func sessionPG(input, ts, keys, gap, outer string) string {
	part := ""
	if keys != "" {
		part = "PARTITION BY " + keys + " "
	}
	sessionPart := "PARTITION BY session_number"
	if keys != "" {
		sessionPart = "PARTITION BY " + keys + ", session_number"
	}
	return fmt.Sprintf(`WITH e AS (%[1]s),
f AS (SELECT *, CASE WHEN %[2]s - lag(%[2]s) OVER (%[3]sORDER BY %[2]s) < %[4]s THEN 0 ELSE 1 END AS new_session FROM e WHERE %[2]s IS NOT NULL AND isfinite(%[2]s)),
g AS (SELECT *, sum(new_session) OVER (%[3]sORDER BY %[2]s ROWS UNBOUNDED PRECEDING) AS session_number FROM f),
s AS (SELECT *, min(%[2]s) OVER (%[5]s) AS window_start, max(%[2]s) OVER (%[5]s) + %[4]s AS window_end FROM g)
%[6]s`, input, ts, part, gap, sessionPart, outer)
}

// sessionViews are the session-window views of the test, each with its
// PostgreSQL form: the sessioned rows, an aggregate per session (Nexmark
// q11's shape), one sequence for the whole table over a timestamp
// column, a filter over the sessions (which must not filter the rows the
// sessions are made of), and a WITH query with two key columns under an
// alias.
var sessionViews = []windowView{
	{"s_rows", "SELECT id, k, ts, v, window_start, window_end FROM SESSION(ev, ts, k, interval '10 minutes')",
		sessionPG("SELECT * FROM ev", "ts", "k", "interval '10 minutes'", "SELECT id, k, ts, v, window_start, window_end FROM s")},
	{"s_agg", "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS total FROM SESSION(ev, ts, k, interval '10 minutes') GROUP BY k, window_start, window_end",
		sessionPG("SELECT * FROM ev", "ts", "k", "interval '10 minutes'", "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS total FROM s GROUP BY k, window_start, window_end")},
	{"s_global", "SELECT window_start, window_end, count(*) AS n FROM SESSION(ev, lts, interval '5 minutes') GROUP BY window_start, window_end",
		sessionPG("SELECT * FROM ev", "lts", "", "interval '5 minutes'", "SELECT window_start, window_end, count(*) AS n FROM s GROUP BY window_start, window_end")},
	{"s_filter", "SELECT id, window_start, window_end FROM SESSION(ev, ts, k, interval '10 minutes') WHERE v = 1",
		sessionPG("SELECT * FROM ev", "ts", "k", "interval '10 minutes'", "SELECT id, window_start, window_end FROM s WHERE v = 1")},
	{"s_cte", "WITH big AS (SELECT id, k, v, ts FROM ev WHERE v > 0) SELECT x.id, x.k, x.v, x.window_start, x.window_end FROM SESSION(big, ts, k, v, interval '15 minutes') AS x",
		sessionPG("SELECT id, k, v, ts FROM ev WHERE v > 0", "ts", "k, v", "interval '15 minutes'", "SELECT id, k, v, window_start, window_end FROM s")},
}

// TestSessionWindowsAgainstPostgres maintains session-window views over
// random inserts, updates and deletes (rows that merge sessions, deletes
// that split them, NULL times, moving a row between keys) and compares
// every view, and each view's query run ad hoc, with PostgreSQL 15's
// lag/running-sum form after every transaction.
func TestSessionWindowsAgainstPostgres(t *testing.T) {
	w := newWindowTest(t, "rs_session", "UTC", sessionViews)
	both, check, at, row := w.both, w.check, evAt, evRow
	// Two sessions of key 1; a row between them merges them, and deleting
	// it splits them again.
	both(row(1, 1, 0, 1) + "; " + row(2, 1, 15, 1))
	check("two sessions")
	both(row(3, 1, 8, 2))
	check("a row bridging them (merge)")
	both("DELETE FROM ev WHERE id = 3")
	check("the bridge deleted (split)")
	both("UPDATE ev SET ts = ts + interval '20 minutes' WHERE id = 1")
	check("a row moved past the other session")
	both("INSERT INTO ev VALUES (20, 1, 'infinity', 'infinity', 1), (21, 1, '-infinity', '-infinity', 1), (22, 1, NULL, NULL, 1)")
	check("infinite and NULL times (in no session)")

	r := rand.New(rand.NewSource(20261207))
	for batch := 0; batch < 40; batch++ {
		var stmts []string
		for n := 1 + r.Intn(5); n > 0; n-- {
			id := r.Intn(16)
			switch r.Intn(5) {
			case 0:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ev WHERE id = %d", id))
			case 1:
				stmts = append(stmts, fmt.Sprintf("UPDATE ev SET ts = %s, lts = (%s) AT TIME ZONE 'UTC' WHERE id = %d", at(3*r.Intn(20)), at(3*r.Intn(20)), id))
			case 2:
				stmts = append(stmts, fmt.Sprintf("UPDATE ev SET k = %d, v = %d WHERE id = %d", r.Intn(3), r.Intn(3), id))
			case 3:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ev WHERE id = %d", id), fmt.Sprintf("INSERT INTO ev VALUES (%d, %d, NULL, NULL, %d)", id, r.Intn(3), r.Intn(3)))
			default:
				stmts = append(stmts, fmt.Sprintf("DELETE FROM ev WHERE id = %d", id), row(id, r.Intn(3), 3*r.Intn(20), r.Intn(3)))
			}
		}
		both("BEGIN; " + strings.Join(stmts, "; ") + "; COMMIT")
		check(fmt.Sprintf("batch %d (%s)", batch, strings.Join(stmts, "; ")))
	}
}
