package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// step is one statement of a two-session interleaving. Session "a" or
// "b" runs sql; with async the statement is started in the background
// (it may block on a row lock) and the next step of the form
// {session, "", join} collects its outcome.
type step struct {
	session string
	sql     string
	mode    int
}

const (
	now = iota
	async
	join
)

// isolationScript exercises PostgreSQL 15's READ COMMITTED and
// REPEATABLE READ (transaction-iso.html) with two sessions. Every
// outcome (rows or SQLSTATE and message) must equal PostgreSQL's.
var isolationScript = []step{
	{"a", `CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)`, now},
	{"a", `INSERT INTO t VALUES (1, 0), (2, 0)`, now},

	// REPEATABLE READ: reads are stable across another session's commits.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT id, v FROM t ORDER BY id`, now},
	{"b", `UPDATE t SET v = 1 WHERE id = 1`, now},
	{"b", `INSERT INTO t VALUES (3, 30)`, now},
	{"a", `SELECT id, v FROM t ORDER BY id`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"a", `SELECT count(*), sum(v) FROM t`, now},
	{"a", `UPDATE t SET v = 100 WHERE id = 3 RETURNING v`, now}, // inserted after the snapshot: invisible
	{"a", `COMMIT`, now},
	{"a", `SELECT id, v FROM t ORDER BY id`, now},

	// The snapshot is taken at the first statement, not at BEGIN.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"b", `UPDATE t SET v = 2 WHERE id = 1`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `UPDATE t SET v = 3 WHERE id = 1`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"a", `COMMIT`, now},

	// READ COMMITTED: every statement sees the commits before it.
	{"a", `BEGIN`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `UPDATE t SET v = 4 WHERE id = 1`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"a", `UPDATE t SET v = v + 1 WHERE id = 1 RETURNING v`, now},
	{"a", `COMMIT`, now},

	// REPEATABLE READ update of a row committed after the snapshot: 40001.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `UPDATE t SET v = 6 WHERE id = 1`, now},
	{"a", `UPDATE t SET v = v + 1 WHERE id = 2 RETURNING v`, now}, // untouched row: fine
	{"a", `UPDATE t SET v = v + 1 WHERE id = 1 RETURNING v`, now},
	{"a", `ROLLBACK`, now},
	// ... and DELETE of it, set with SET TRANSACTION.
	{"a", `BEGIN`, now},
	{"a", `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SHOW transaction_isolation`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `UPDATE t SET v = 7 WHERE id = 1`, now},
	{"a", `DELETE FROM t WHERE id = 1 RETURNING v`, now},
	{"a", `ROLLBACK`, now},
	// ... and of a row deleted after the snapshot.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT v FROM t WHERE id = 3`, now},
	{"b", `DELETE FROM t WHERE id = 3`, now},
	{"a", `SELECT v FROM t WHERE id = 3`, now},
	{"a", `UPDATE t SET v = 0 WHERE id = 3 RETURNING v`, now},
	{"a", `ROLLBACK`, now},

	// INSERT ... ON CONFLICT meeting a row committed after the snapshot.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT v FROM t WHERE id = 2`, now},
	{"b", `UPDATE t SET v = v + 100 WHERE id = 1`, now},
	{"a", `INSERT INTO t VALUES (2, 0) ON CONFLICT DO NOTHING RETURNING v`, now}, // unchanged since the snapshot
	{"a", `INSERT INTO t VALUES (1, 0) ON CONFLICT DO NOTHING RETURNING v`, now},
	{"a", `ROLLBACK`, now},
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT v FROM t WHERE id = 2`, now},
	{"b", `UPDATE t SET v = v + 100 WHERE id = 1`, now},
	{"a", `INSERT INTO t VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = t.v + 1 RETURNING v`, now},
	{"a", `ROLLBACK`, now},

	// The other transaction is still open: wait, then 40001 when it commits.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `BEGIN`, now},
	{"b", `UPDATE t SET v = 8 WHERE id = 1`, now},
	{"a", `UPDATE t SET v = v + 1 WHERE id = 1 RETURNING v`, async},
	{"b", `COMMIT`, now},
	{"a", ``, join},
	{"a", `ROLLBACK`, now},

	// ... and success when it rolls back.
	{"a", `BEGIN ISOLATION LEVEL REPEATABLE READ`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `BEGIN`, now},
	{"b", `UPDATE t SET v = 9 WHERE id = 1`, now},
	{"a", `UPDATE t SET v = v + 1 WHERE id = 1 RETURNING v`, async},
	{"b", `ROLLBACK`, now},
	{"a", ``, join},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"a", `COMMIT`, now},
	{"b", `SELECT v FROM t WHERE id = 1`, now},

	// READ COMMITTED waits and applies to the committed row instead.
	{"a", `BEGIN`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `BEGIN`, now},
	{"b", `UPDATE t SET v = 20 WHERE id = 1`, now},
	{"a", `UPDATE t SET v = v + 1 WHERE id = 1 RETURNING v`, async},
	{"b", `COMMIT`, now},
	{"a", ``, join},
	{"a", `COMMIT`, now},

	// default_transaction_isolation applies to the next transactions.
	{"a", `SET default_transaction_isolation = 'repeatable read'`, now},
	{"a", `BEGIN`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"b", `UPDATE t SET v = 30 WHERE id = 1`, now},
	{"a", `SELECT v FROM t WHERE id = 1`, now},
	{"a", `UPDATE t SET v = 0 WHERE id = 1`, now},
	{"a", `ROLLBACK`, now},
	{"a", `RESET default_transaction_isolation`, now},
	{"a", `SELECT id, v FROM t ORDER BY id`, now},

	// A wait for a row lock ends with lock_timeout (55P03) or
	// statement_timeout (57014); the waiter leaves the row's queue, so
	// the holder's rollback frees the row for the next statement.
	{"a", `BEGIN`, now},
	{"a", `UPDATE t SET v = 40 WHERE id = 1`, now},
	{"b", `SET lock_timeout = '50ms'`, now},
	{"b", `UPDATE t SET v = 41 WHERE id = 1`, now},
	{"b", `INSERT INTO t VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET v = 42`, now},
	{"b", `RESET lock_timeout`, now},
	{"b", `SET statement_timeout = '50ms'`, now},
	{"b", `DELETE FROM t WHERE id = 1`, now},
	{"b", `RESET statement_timeout`, now},
	{"a", `ROLLBACK`, now},
	{"b", `UPDATE t SET v = v + 1 WHERE id = 1 RETURNING v`, now},
}

// TestIsolationLevelsMatchPostgres runs isolationScript on RockStream and
// on PostgreSQL 15 and compares every statement's outcome.
func TestIsolationLevelsMatchPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	want := runInterleaving(t, harness.ConnectRS(t, srv), harness.ConnectRS(t, srv), isolationScript)
	url := pgtest.Start(t)
	pa, pb := harness.Dial(t, "postgresql", url), harness.Dial(t, "postgresql", url)
	schema := fmt.Sprintf("iso_%d", time.Now().UnixNano())
	if _, err := pa.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pa.Exec("DROP SCHEMA " + schema + " CASCADE") })
	for _, c := range []*harness.Conn{pa, pb} {
		if _, err := c.Exec("SET search_path = " + schema); err != nil {
			t.Fatal(err)
		}
	}
	got := runInterleaving(t, pa, pb, isolationScript)
	for i := range isolationScript {
		if want[i] != got[i] {
			t.Errorf("step %d %s: %s\n  rockstream: %s\n  postgresql: %s", i, isolationScript[i].session, isolationScript[i].sql, want[i], got[i])
		}
	}
}

// runInterleaving runs script over sessions a and b and returns each
// step's outcome. A blocked (async) statement's outcome is reported at
// its join step; before the next step runs it is given a moment to
// reach its row lock (the outcomes do not depend on whether it did), and
// if it finished meanwhile its outcome is marked as not having waited.
func runInterleaving(t *testing.T, a, b *harness.Conn, script []step) []string {
	t.Helper()
	conns := map[string]*harness.Conn{"a": a, "b": b}
	out := make([]string, len(script))
	pending := map[string]chan string{}
	for i, s := range script {
		c := conns[s.session]
		switch s.mode {
		case now:
			out[i] = outcome(c, s.sql)
		case async:
			done := make(chan string, 1)
			pending[s.session] = done
			go func(sql string) { done <- outcome(c, sql) }(s.sql)
			select {
			case r := <-done:
				// It finished while the other transaction still held
				// the row: it did not wait (never true of a correct
				// server, however slow).
				done <- "did not wait: " + r
			case <-time.After(200 * time.Millisecond):
			}
		case join:
			out[i] = <-pending[s.session]
			delete(pending, s.session)
		}
	}
	return out
}

// TestRepeatableReadViewsShareTheSnapshot: a materialized view read in a
// REPEATABLE READ transaction describes the same epoch as the tables
// (both pinned at the first statement), not a later commit; after
// COMMIT it is fresh again.
func TestRepeatableReadViewsShareTheSnapshot(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	a, b := harness.ConnectRS(t, srv), harness.ConnectRS(t, srv)
	for _, sql := range []string{
		`CREATE TABLE o (id int PRIMARY KEY, amount int NOT NULL)`,
		`INSERT INTO o VALUES (1, 10), (2, 20)`,
		`CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n, sum(amount) AS s FROM o`,
	} {
		if _, err := a.Exec(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	expect := func(c *harness.Conn, sql, want string) {
		t.Helper()
		if got := outcome(c, sql); got != want {
			t.Fatalf("%s = %q, want %q", sql, got, want)
		}
	}
	expect(a, `BEGIN ISOLATION LEVEL REPEATABLE READ`, "")
	expect(b, `INSERT INTO o VALUES (3, 30)`, "") // before the first statement: visible
	expect(a, `SELECT n, s FROM total`, "3|60")
	expect(b, `INSERT INTO o VALUES (4, 40)`, "")
	expect(b, `SELECT n, s FROM total`, "4|100")
	expect(a, `SELECT n, s FROM total`, "3|60")
	expect(a, `SELECT count(*), sum(amount) FROM o`, "3|60")
	expect(a, `SELECT t.n, (SELECT count(*) FROM o) FROM total t`, "3|3")
	expect(a, `COMMIT`, "")
	expect(a, `SELECT n, s FROM total`, "4|100")

	// READ COMMITTED: each statement sees the newest view.
	expect(a, `BEGIN`, "")
	expect(a, `SELECT n FROM total`, "4")
	expect(b, `DELETE FROM o WHERE id = 4`, "")
	expect(a, `SELECT n FROM total`, "3")
	expect(a, `COMMIT`, "")
}
