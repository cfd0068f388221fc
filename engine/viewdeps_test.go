package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// execErr runs sql and returns its error (nil on success).
func execErr(c *pgx.Conn, sql string) error {
	_, err := c.PgConn().Exec(context.Background(), sql).ReadAll()
	return err
}

// wantError fails unless err has SQLSTATE state and a message containing
// msg.
func wantError(t *testing.T, what string, err error, state, msg string) *pgconn.PgError {
	t.Helper()
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != state || !strings.Contains(pgErr.Message, msg) {
		t.Fatalf("%s: %v, want SQLSTATE %s with %q", what, err, state, msg)
	}
	return pgErr
}

// TestDropInlineViewUnderMaterializedView (issue defect 1): dropping an
// inline view a materialized view was compiled from used to succeed, and
// every later start failed with RS-2102 for good. The DROP is refused as
// PostgreSQL refuses it, the server restarts, and CASCADE drops both.
func TestDropInlineViewUnderMaterializedView(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE t (a int PRIMARY KEY, b int)")
	exec(t, rs, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	exec(t, rs, "CREATE VIEW iv AS SELECT * FROM t WHERE b > 1")
	exec(t, rs, "CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM iv")
	e := wantError(t, "DROP VIEW iv under m", execErr(rs, "DROP VIEW iv"), "2BP01", "cannot drop view iv because other objects depend on it")
	if !strings.HasSuffix(e.Detail, ": materialized view m depends on view iv") || e.Hint != "Use DROP ... CASCADE to drop the dependent objects too." {
		t.Fatalf("detail %q, hint %q", e.Detail, e.Hint)
	}
	wantError(t, "DROP TABLE t under iv", execErr(rs, "DROP TABLE t"), "2BP01", "cannot drop table t because other objects depend on it")

	srv.stop()
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	if got := rowsText(t, rs, "SELECT n FROM m"); strings.Join(got, ",") != "2" {
		t.Fatalf("m after a restart: %v, want 2", got)
	}
	// The table under both is renamed: they read it by id.
	exec(t, rs, "ALTER TABLE t RENAME TO t2")
	exec(t, rs, "INSERT INTO t2 VALUES (5, 5)")
	if got := rowsText(t, rs, "SELECT (SELECT n FROM m), (SELECT count(*) FROM iv), (SELECT count(*) FROM pg_constraint WHERE conname = 't_pkey')"); strings.Join(got, ",") != "3|3|1" {
		t.Fatalf("m, iv and the primary key's name after the table's rename: %v, want 3|3|1", got)
	}
	exec(t, rs, "DROP VIEW iv CASCADE")
	if err := execErr(rs, "SELECT * FROM m"); err == nil {
		t.Fatal("m survived DROP VIEW iv CASCADE")
	}
	srv.stop()
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, rs, "INSERT INTO t2 VALUES (4, 4)")
}

// TestViewCycleRefused (issue defect 1): CREATE OR REPLACE VIEW that makes
// a view read itself, directly or through others, is refused with RS-1011
// (it used to be accepted and fail later with RS-2110).
func TestViewCycleRefused(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE t (a int PRIMARY KEY, b int)")
	exec(t, rs, "CREATE VIEW a AS SELECT * FROM t")
	exec(t, rs, "CREATE VIEW b AS SELECT * FROM a")
	exec(t, rs, "CREATE VIEW c AS SELECT * FROM b")
	for _, sql := range []string{
		"CREATE OR REPLACE VIEW a AS SELECT * FROM c",
		"CREATE OR REPLACE VIEW a AS SELECT * FROM a",
	} {
		e := wantError(t, sql, execErr(rs, sql), "42P17", `infinite recursion detected in the definition of view "a"`)
		if !strings.HasPrefix(e.Detail, "RS-1011 ") {
			t.Fatalf("%s: detail %q, want RS-1011", sql, e.Detail)
		}
	}
	if got := rowsText(t, rs, "SELECT count(*) FROM c"); strings.Join(got, ",") != "0" {
		t.Fatalf("c after the refused replacements: %v", got)
	}
}

// TestReplacedInlineViewIsPinned (issue defect 2): a materialized view
// keeps maintaining the inline view definition it was compiled from, also
// after a restart (it used to apply the replaced definition on top of state
// built by the old one); rockstream_catalog.views says it is behind its
// inputs, and RECOMPILE rebuilds it with the new definition. Renames of the
// inline view and of materialized views keep every dependent working.
func TestReplacedInlineViewIsPinned(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE t (a int PRIMARY KEY, b int)")
	o.both("INSERT INTO t VALUES (1, 1), (2, 2), (3, 50), (4, 150), (5, 200), (6, 3), (7, 7)")
	exec(t, rs, "CREATE VIEW iv AS SELECT * FROM t WHERE b > 1")
	o.view("m", "SELECT count(*) AS n FROM iv")
	o.view("m_sum", "SELECT sum(n) AS total FROM m")
	// The oracle evaluates the views' pinned definitions on PostgreSQL.
	pin := func(filter string) {
		o.views["m"] = "SELECT count(*) AS n FROM t WHERE " + filter
		o.views["m_sum"] = "SELECT sum(n) AS total FROM (" + o.views["m"] + ") m"
	}
	pin("b > 1")
	o.check("created")
	// NB: the column is checked only after the answers, so that the
	// test shows the wrong answer of the builds before pinned plans.
	behind := func(want string) {
		t.Helper()
		if got := strings.Join(rowsText(t, o.rs, "SELECT behind_inputs FROM rockstream_catalog.views WHERE name = 'm'"), ","); got != want {
			t.Fatalf("m behind_inputs = %s, want %s", got, want)
		}
	}
	exec(t, rs, "CREATE OR REPLACE VIEW iv AS SELECT * FROM t WHERE b > 100")
	if got := strings.Join(rowsText(t, rs, "SELECT count(*) FROM iv"), ","); got != "2" {
		t.Fatalf("the replaced inline view queried ad hoc: %s, want 2", got)
	}
	o.both("INSERT INTO t VALUES (8, 5), (9, 500)")
	o.check("after CREATE OR REPLACE VIEW")
	srv.stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	o.check("after a restart")
	o.both("INSERT INTO t VALUES (10, 9)")
	o.both("DELETE FROM t WHERE a = 1 OR a = 4")
	o.check("after a restart and changes")
	behind("t")

	exec(t, o.rs, "ALTER MATERIALIZED VIEW m RECOMPILE")
	pin("b > 100")
	o.check("after RECOMPILE")
	behind("f")
	o.both("INSERT INTO t VALUES (11, 1000), (12, 2)")
	o.check("after RECOMPILE and changes")

	// Renames: the inline view m reads, then the materialized views.
	exec(t, o.rs, "CREATE VIEW over_iv AS SELECT a FROM iv")
	exec(t, o.rs, "ALTER VIEW iv RENAME TO iv2")
	exec(t, o.rs, "ALTER MATERIALIZED VIEW m RENAME TO m2")
	if got, want := rowsText(t, o.rs, "SELECT a FROM over_iv"), rowsText(t, o.pg, "SELECT a FROM t WHERE b > 100"); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("a view over a renamed view: %v, want %v", got, want)
	}
	o.names[0] = "m2"
	o.views["m2"] = o.views["m"]
	o.both("INSERT INTO t VALUES (13, 300)")
	o.check("after renames")
	srv.stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	o.both("INSERT INTO t VALUES (14, 400)")
	o.check("after renames and a restart")
	exec(t, o.rs, "ALTER MATERIALIZED VIEW m2 RECOMPILE")
	o.check("after a RECOMPILE of the renamed view")
}

// TestDropDependentsLikePostgres (issue defect 3): DROP of a table, view,
// materialized view or sequence with dependents fails as in PostgreSQL 15
// — same SQLSTATE, message, detail (every dependent, with what it depends
// on) and hint — and CASCADE drops the whole chain.
func TestDropDependentsLikePostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	run := func(sql string) { t.Helper(); execLikePG(t, o, sql) }
	for _, sql := range []string{
		"CREATE TABLE t (a int PRIMARY KEY, b int)",
		"CREATE VIEW a1 AS SELECT * FROM t",
		"CREATE VIEW b1 AS SELECT * FROM a1",
		"CREATE VIEW c1 AS SELECT * FROM b1",
		"CREATE VIEW d1 AS SELECT a FROM a1",
		"CREATE MATERIALIZED VIEW m AS SELECT count(*) AS n FROM a1",
		"CREATE MATERIALIZED VIEW m2 AS SELECT n FROM m",
		"CREATE VIEW over_m AS SELECT n FROM m2",
		"DROP TABLE t",
		"DROP VIEW a1",
		"DROP VIEW b1",
		"DROP MATERIALIZED VIEW m",
		"DROP MATERIALIZED VIEW m2",
		"CREATE SEQUENCE s",
		"CREATE TABLE u (k int PRIMARY KEY, x int DEFAULT nextval('s'))",
		"DROP SEQUENCE s",
		"DROP VIEW b1 CASCADE",
		"DROP VIEW c1",
		"DROP MATERIALIZED VIEW m CASCADE",
		"DROP VIEW over_m",
		"DROP TABLE t CASCADE",
		"DROP VIEW a1",
		"DROP SEQUENCE s CASCADE",
		"DROP TABLE u",
	} {
		run(sql)
	}
}

// TestDropSourceWithDependents: a source is protected like a table.
func TestDropSourceWithDependents(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE SOURCE gen FROM GENERATE ROWS (id BIGINT GENERATED) RATE = 10 PER SECOND")
	exec(t, rs, "CREATE VIEW recent AS SELECT id FROM gen WHERE id > 0")
	exec(t, rs, "CREATE MATERIALIZED VIEW gen_n AS SELECT count(*) AS n FROM recent")
	e := wantError(t, "DROP SOURCE gen", execErr(rs, "DROP SOURCE gen"), "2BP01", "cannot drop source gen because other objects depend on it")
	if !strings.HasSuffix(e.Detail, ": view recent depends on source gen\nmaterialized view gen_n depends on view recent") {
		t.Fatalf("detail %q", e.Detail)
	}
	exec(t, rs, "DROP SOURCE gen CASCADE")
	for _, name := range []string{"gen", "recent", "gen_n"} {
		wantError(t, "SELECT from "+name+" after DROP SOURCE CASCADE", execErr(rs, "SELECT * FROM "+name), "42P01", "does not exist")
	}
}

// execLikePG runs sql on RockStream and PostgreSQL: both succeed, or both
// fail with the same SQLSTATE, message, detail and (where PostgreSQL has
// one) hint.
func execLikePG(t *testing.T, o *oracle, sql string) {
	t.Helper()
	rsErr, pgErr := execErr(o.rs, sql), execErr(o.pg, sql)
	if (rsErr == nil) != (pgErr == nil) {
		t.Fatalf("%s: RockStream %v, PostgreSQL %v", sql, rsErr, pgErr)
	}
	if rsErr == nil {
		return
	}
	var r, p *pgconn.PgError
	if !errors.As(rsErr, &r) || !errors.As(pgErr, &p) {
		t.Fatalf("%s: RockStream %v, PostgreSQL %v", sql, rsErr, pgErr)
	}
	// RockStream's detail starts with its error code and slug, and its
	// hint gives next steps where PostgreSQL has none.
	_, detail, _ := strings.Cut(r.Detail, ": ")
	if r.Code != p.Code || r.Message != p.Message || detail != p.Detail || (p.Hint != "" && r.Hint != p.Hint) {
		t.Fatalf("%s:\nRockStream %s %q\n  detail %q\n  hint %q\nPostgreSQL %s %q\n  detail %q\n  hint %q", sql, r.Code, r.Message, detail, r.Hint, p.Code, p.Message, p.Detail, p.Hint)
	}
}

// TestViewColumnNamesUniqueLikePostgres: a view's output columns are a
// relation's, each name once (42701), for materialized and plain views,
// named by the query or by a column list.
func TestViewColumnNamesUniqueLikePostgres(t *testing.T) {
	srv := startServer(t, t.TempDir())
	o := newOracle(t, connect(t, srv.url()))
	for _, sql := range []string{
		"CREATE TABLE t (a int PRIMARY KEY, b int)",
		"CREATE MATERIALIZED VIEW m1 AS SELECT a, a FROM t",
		"CREATE MATERIALIZED VIEW m2 AS SELECT a, b AS a FROM t",
		"CREATE MATERIALIZED VIEW m3 AS SELECT 1, 2 FROM t",
		"CREATE MATERIALIZED VIEW m4 (x, x) AS SELECT a, b FROM t",
		"CREATE MATERIALIZED VIEW m5 (b) AS SELECT a, b FROM t",
		"CREATE VIEW v1 AS SELECT a, a FROM t",
		"CREATE VIEW v2 (x, x) AS SELECT a, b FROM t",
		"CREATE MATERIALIZED VIEW ok1 (x) AS SELECT a, b FROM t",
		"CREATE VIEW ok2 AS SELECT a, b AS c FROM t",
	} {
		execLikePG(t, o, sql)
	}
}
