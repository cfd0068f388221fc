package engine_test

import (
	"context"
	"strings"
	"testing"
)

// dateStyleViews are materialized views whose text depends on DateStyle
// and IntervalStyle: casts of dates, timestamps and intervals to text,
// concat, text read as dates in the view (ambiguous under MDY/DMY), an
// ambiguous literal, an aggregate of the text; to_char does not depend
// on them, the date column itself prints in the reader's style.
//
//lint:immutable test table.
var dateStyleViews = [][2]string{
	{"ds_text", "SELECT k, dt, dt::text AS dt_t, ts::text AS ts_t, tz::text AS tz_t, iv::text AS iv_t, concat('d=', dt, ' i=', iv, ' t=', ts) AS c, to_char(ts, 'YYYY-MM-DD HH24:MI') AS tc FROM d"},
	{"ds_parse", "SELECT k, s::date AS parsed, (s || ' 10:00')::timestamp AS pts, '01/02/03'::date AS lit, '-1 2:00:00'::interval AS ivlit, (s::date)::text AS parsed_t FROM d WHERE s IS NOT NULL"},
	{"ds_agg", "SELECT count(*) AS n, string_agg(dt::text, ',' ORDER BY k) AS dts, string_agg(iv::text, ';' ORDER BY k) AS ivs FROM d"},
}

// TestViewKeepsItsCreatorsDateStyle: a materialized view is maintained
// with the DateStyle and IntervalStyle of the session that created it,
// as PostgreSQL's REFRESH in that session computes it, also for rows
// written later from sessions with other settings and after a restart;
// a reader with another DateStyle sees the view's stored text as it was
// made and its date-typed columns in its own style (as reading a
// PostgreSQL materialized view does).
func TestViewKeepsItsCreatorsDateStyle(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	const creator = "SET DateStyle = 'SQL, DMY'; SET IntervalStyle = 'sql_standard'; SET TimeZone = 'America/New_York'"
	o.both("CREATE TABLE d (k int PRIMARY KEY, dt date, ts timestamp, tz timestamptz, iv interval, s text)")
	o.both(creator)
	o.both(`INSERT INTO d VALUES
		(1, '2024-01-02', '2024-01-02 03:04:05.123456', '2024-07-01 12:00:00.5+00', '1 year 2 mons 3 days 04:05:06.789', '01/02/03'),
		(2, '0044-03-15 BC', '0044-03-15 12:00:00 BC', '-infinity', '-1 year -2 mons', '13/01/2024'),
		(3, 'infinity', 'infinity', '2024-12-31 23:59:59.999999+00', '-1 days +02:00:00', '2024-05-06'),
		(4, NULL, '1999-12-31 23:59:59.5', '2000-01-01 00:00:00+00', '-00:00:01.5', NULL)`)
	for _, v := range dateStyleViews {
		o.both("CREATE MATERIALIZED VIEW " + v[0] + " AS " + v[1])
	}
	// check reads every view on both servers under reader (SET on both);
	// PostgreSQL's views are refreshed in the creator's settings first.
	check := func(when, reader string) {
		t.Helper()
		exec(t, o.pg, creator)
		for _, v := range dateStyleViews {
			exec(t, o.pg, "REFRESH MATERIALIZED VIEW "+v[0])
		}
		exec(t, o.pg, reader)
		exec(t, o.rs, reader)
		for _, v := range dateStyleViews {
			got, want := rowsText(t, o.rs, "SELECT * FROM "+v[0]), rowsText(t, o.pg, "SELECT * FROM "+v[0])
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: view %s differs from PostgreSQL's\n got: %q\nwant: %q", when, v[0], got, want)
			}
		}
		// Ad-hoc queries follow the reader's settings.
		for _, q := range []string{"SELECT k, dt::text, ts, tz, iv, concat(dt, '/', iv) FROM d", "SELECT k, s::date FROM d WHERE k = 3",
			"SELECT k, to_json(dt)::text, to_json(ts)::text, to_json(tz)::text, to_json(iv)::text, array_to_string(ARRAY[dt, dt + 1], ';'), ARRAY[ts], to_json(CASE WHEN isfinite(tz) THEN tz - interval '2100 years' END)::text FROM d"} {
			if got, want := rowsText(t, o.rs, q), rowsText(t, o.pg, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: %s\n got: %q\nwant: %q", when, q, got, want)
			}
		}
	}
	check("after CREATE, read by the creator", creator)
	o.both("UPDATE d SET dt = dt + 1, iv = iv * 2 WHERE k = 1")
	check("after changes, read under ISO", "SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; SET TimeZone = 'UTC'")

	// Rows written from a session with other settings: the views still
	// make the creator's text and read text in the creator's order
	// ('05/06/2024' is 5 June to the view). The literal is written in
	// ISO so that both servers store the same row.
	exec(t, o.rs, "SET DateStyle = 'Postgres, MDY'; SET IntervalStyle = 'iso_8601'")
	exec(t, o.pg, "SET DateStyle = 'Postgres, MDY'; SET IntervalStyle = 'iso_8601'")
	o.both("INSERT INTO d VALUES (5, '2024-02-29', '2024-02-29 00:00:00', '2024-02-29 00:00:00+00', '-1 mons +1 days -00:00:01', '05/06/2024')")
	check("rows from a Postgres, MDY session, read under German", "SET DateStyle = 'German'; SET IntervalStyle = 'postgres_verbose'; SET TimeZone = 'Europe/Berlin'")

	// Restart; a session with the defaults changes rows.
	srv.Stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	exec(t, o.pg, "RESET DateStyle; RESET IntervalStyle; RESET TimeZone")
	o.both("INSERT INTO d VALUES (6, '2001-02-03', '2001-02-03 04:05:06', '2001-02-03 04:05:06+00', '2 hours', '2001-02-03')")
	o.both("DELETE FROM d WHERE k = 2")
	check("after a restart, read under the defaults", "RESET DateStyle; RESET IntervalStyle; RESET TimeZone")
	check("after a restart, read by the creator", creator)
}

// TestViewDateStyleShown: the DateStyle and IntervalStyle a materialized
// view is maintained with are pg_class.reloptions and EXPLAIN
// INCREMENTAL's "Settings:" line, WITH (datestyle = ..., intervalstyle =
// ...) names them, and ALTER cannot change them.
func TestViewDateStyleShown(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE m (k int PRIMARY KEY, d date, i interval)")
	exec(t, rs, "INSERT INTO m VALUES (1, '2024-01-02', '-1 2:00:00')")
	exec(t, rs, "SET DateStyle = 'SQL, DMY'")
	exec(t, rs, "SET IntervalStyle = 'sql_standard'")
	exec(t, rs, "CREATE MATERIALIZED VIEW v_session AS SELECT k, d::text AS d, i::text AS i FROM m")
	exec(t, rs, "RESET DateStyle")
	exec(t, rs, "RESET IntervalStyle")
	exec(t, rs, "CREATE MATERIALIZED VIEW v_default AS SELECT k, d::text AS d, i::text AS i FROM m")
	exec(t, rs, "CREATE MATERIALIZED VIEW v_with WITH (datestyle = 'German', intervalstyle = 'iso_8601') AS SELECT k, d::text AS d, i::text AS i, '01.02.2024'::date AS lit FROM m")
	got := rowsText(t, rs, "SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'v\\_%' ORDER BY relname")
	want := []string{"v_default|NULL", `v_session|{"datestyle=SQL, DMY",intervalstyle=sql_standard}`, `v_with|{"datestyle=German, DMY",intervalstyle=iso_8601}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("reloptions: got %q, want %q", got, want)
	}
	for view, want := range map[string]string{
		"v_session": "1|02/01/2024|+0-0 -1 +2:00:00",
		"v_default": "1|2024-01-02|-1 days +02:00:00",
		"v_with":    "1|02.01.2024|P-1DT2H|2024-02-01",
	} {
		if got := rowsText(t, rs, "SELECT * FROM "+view); strings.Join(got, "\n") != want {
			t.Errorf("%s: got %q, want %q", view, got, want)
		}
	}
	plan := strings.Join(rowsText(t, rs, "EXPLAIN INCREMENTAL v_with"), "\n")
	if !strings.Contains(plan, "Settings: DateStyle = 'German, DMY', IntervalStyle = 'iso_8601'") {
		t.Fatalf("EXPLAIN INCREMENTAL v_with has no Settings line:\n%s", plan)
	}
	for _, bad := range []string{
		"ALTER MATERIALIZED VIEW v_with SET (datestyle = 'ISO')",
		"ALTER MATERIALIZED VIEW v_with RESET (intervalstyle)",
		"CREATE MATERIALIZED VIEW v_bad WITH (datestyle = 'Swiss') AS SELECT k FROM m",
		"CREATE MATERIALIZED VIEW v_bad WITH (intervalstyle = 'german') AS SELECT k FROM m",
	} {
		if _, err := rs.Exec(context.Background(), bad); err == nil {
			t.Fatalf("%s: accepted", bad)
		}
	}
}
