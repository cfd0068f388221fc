package engine_test

import (
	"context"
	"strings"
	"testing"
)

// TestViewKeepsItsCreatorsExtraFloatDigits: a materialized view makes the
// text of floats (casts to text, concat, array_to_string, json) with the
// extra_float_digits of the session that created it, as PostgreSQL
// evaluates CREATE MATERIALIZED VIEW's query in that session, also for
// rows written later from a session with another setting and after a
// restart; ad-hoc queries use the session's own setting.
func TestViewKeepsItsCreatorsExtraFloatDigits(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("SET extra_float_digits = 0")
	o.both("CREATE TABLE m (k int PRIMARY KEY, x float8, y real)")
	o.both("INSERT INTO m VALUES (1, 0.1, 0.1), (2, 1e20 / 3, 1.0 / 3), (3, NULL, 2.5)")
	o.view("fd_casts", "SELECT k, (x + 0.2)::text AS s, (y * 3)::text AS r, concat('x=', x / 7) AS c, (0.1::float8 + 0.2)::text AS konst FROM m")
	o.view("fd_more", "SELECT k, array_to_string(ARRAY[x, x * 3], ';') AS a, json_build_array(x / 3, y)::text AS j, to_jsonb(x / 9)::text AS jb FROM m")
	o.view("fd_agg", "SELECT string_agg((x / 3)::text, ',' ORDER BY k) AS s, json_agg(x / 11 ORDER BY k)::text AS j FROM m")
	ad := []string{
		"SELECT k, (x + 0.2)::text, concat(x / 7), (y / 3)::text FROM m ORDER BY k",
	}
	o.checkWith("after CREATE with extra_float_digits = 0", ad)
	o.both("INSERT INTO m VALUES (4, 2.0 / 3, 4.0 / 3)")
	o.both("UPDATE m SET x = x * 1.1 WHERE k = 1")
	o.checkWith("after changes", ad)

	// Another setting in this session: the views keep the creator's
	// digits, ad-hoc queries follow the session.
	exec(t, o.rs, "SET extra_float_digits = -3")
	o.both("INSERT INTO m VALUES (5, 5.0 / 3, 1.0 / 7)")
	o.check("extra_float_digits = -3 in the session")
	exec(t, o.pg, "SET extra_float_digits = -3")
	for _, q := range ad {
		if got, want := rowsText(t, o.rs, q), rowsText(t, o.pg, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s with extra_float_digits = -3: got %q, want %q", q, got, want)
		}
	}
	exec(t, o.pg, "SET extra_float_digits = 0")

	// Restart, then change rows from a session with the default (1): the
	// views still make the creator's text.
	srv.Stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	exec(t, o.pg, "SET extra_float_digits = 0")
	o.both("INSERT INTO m VALUES (6, 1.0 / 9, 0.3)")
	o.both("DELETE FROM m WHERE k = 2")
	o.check("after a restart, changed from a session with the default")
}

// TestViewSettingsShown: the TimeZone and extra_float_digits a
// materialized view is maintained with are pg_class.reloptions (psql's
// \d+ "Options:") and EXPLAIN INCREMENTAL's "Settings:" line; WITH (...)
// names them instead of the session's; ALTER cannot change them.
func TestViewSettingsShown(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE m (k int PRIMARY KEY, x float8)")
	exec(t, rs, "SET TimeZone = 'Asia/Kolkata'")
	exec(t, rs, "SET extra_float_digits = -2")
	exec(t, rs, "CREATE MATERIALIZED VIEW v_session AS SELECT k, x::text AS s FROM m")
	exec(t, rs, "RESET TimeZone")
	exec(t, rs, "RESET extra_float_digits")
	exec(t, rs, "CREATE MATERIALIZED VIEW v_default AS SELECT k, x::text AS s FROM m")
	exec(t, rs, "CREATE MATERIALIZED VIEW v_with WITH (timezone = 'America/New_York', extra_float_digits = 0) AS SELECT k, x::text AS s, (timestamptz '2024-01-01 00:00+00' + k * interval '1 hour')::text AS ts FROM m")
	exec(t, rs, "INSERT INTO m VALUES (1, 1.0 / 3)")
	got := rowsText(t, rs, "SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'v\\_%' ORDER BY relname")
	want := []string{"v_default|NULL", "v_session|{timezone=Asia/Kolkata,extra_float_digits=-2}", "v_with|{timezone=America/New_York,extra_float_digits=0}"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("reloptions: got %q, want %q", got, want)
	}
	if got := rowsText(t, rs, "SELECT * FROM v_with"); strings.Join(got, "\n") != "1|0.333333333333333|2023-12-31 20:00:00-05" {
		t.Fatalf("v_with: got %q", got)
	}
	if got := rowsText(t, rs, "SELECT * FROM v_session"); strings.Join(got, "\n") != "1|0.3333333333333" {
		t.Fatalf("v_session: got %q", got)
	}
	plan := strings.Join(rowsText(t, rs, "EXPLAIN INCREMENTAL v_with"), "\n")
	if !strings.Contains(plan, "Settings: extra_float_digits = '0', TimeZone = 'America/New_York'") {
		t.Fatalf("EXPLAIN INCREMENTAL v_with has no Settings line:\n%s", plan)
	}
	if plan := strings.Join(rowsText(t, rs, "EXPLAIN INCREMENTAL v_default"), "\n"); strings.Contains(plan, "Settings:") {
		t.Fatalf("EXPLAIN INCREMENTAL v_default shows settings:\n%s", plan)
	}
	for _, bad := range []string{
		"ALTER MATERIALIZED VIEW v_with SET (timezone = 'UTC')",
		"ALTER MATERIALIZED VIEW v_with RESET (extra_float_digits)",
		"CREATE MATERIALIZED VIEW v_bad WITH (extra_float_digits = 4) AS SELECT k FROM m",
		"CREATE MATERIALIZED VIEW v_bad WITH (timezone = 'Nowhere/Else') AS SELECT k FROM m",
	} {
		if _, err := rs.Exec(context.Background(), bad); err == nil {
			t.Fatalf("%s: accepted", bad)
		}
	}
}
