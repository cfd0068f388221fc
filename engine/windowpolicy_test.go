package engine_test

import (
	"strings"
	"testing"
)

// TestWindowWatermarkRequired: CREATE MATERIALIZED VIEW over TUMBLE, HOP
// or SESSION windows that no watermark closes is refused with RS-1005
// (55000) naming the function and the relation, with a hint giving both
// ways out, unless the view is created WITH (windows = 'never_close');
// that option is kept with the view (pg_class.reloptions, EXPLAIN
// INCREMENTAL) across a restart. Ad-hoc queries, inline views and
// GROUP BY date_bin(...) views are not affected.
func TestWindowWatermarkRequired(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	for _, sql := range []string{
		"SET TimeZone = 'UTC'",
		"CREATE TABLE ev (id int, k int, ts timestamptz, other timestamptz)",
		"CREATE TABLE bids (auction int, price int, ts timestamptz, other timestamptz) WITH (watermark = 'ts - interval ''5 seconds''')",
		"CREATE VIEW bids_paid AS SELECT auction, ts FROM bids WHERE price > 0",
		// An inline view keeps no state: accepted; a materialized view
		// reading it is checked.
		"CREATE VIEW ev_windows AS SELECT * FROM TUMBLE(ev, ts, interval '10 seconds')",
	} {
		exec(t, rs, sql)
	}
	const tumble, hop = "interval '10 seconds')", "interval '5 seconds', interval '10 seconds')"
	for _, c := range []struct{ name, query, msg, detail string }{
		{"r_tumble", "SELECT k, window_start, count(*) AS n FROM TUMBLE(ev, ts, " + tumble + " GROUP BY 1, 2",
			`materialized view "r_tumble" uses TUMBLE over "ev", whose time column "ts" has no watermark`, `"ev" has no watermark`},
		{"r_hop", "SELECT window_start, count(*) AS n FROM HOP(ev, ts, " + hop + " GROUP BY 1",
			`materialized view "r_hop" uses HOP over "ev", whose time column "ts" has no watermark`, `"ev" has no watermark`},
		{"r_session", "SELECT k, window_start, window_end, count(*) AS n FROM SESSION(ev, ts, k, interval '10 seconds') GROUP BY 1, 2, 3",
			`materialized view "r_session" uses SESSION over "ev", whose windows never close`, "SESSION keeps every row of its input"},
		// SESSION does not close its windows at a watermark either.
		{"r_session_wm", "SELECT auction, window_start, count(*) AS n FROM SESSION(bids, ts, auction, interval '10 seconds') GROUP BY 1, 2",
			`materialized view "r_session_wm" uses SESSION over "bids", whose windows never close`, "with or without a watermark"},
		{"r_cte", "WITH e AS (SELECT k, ts FROM ev WHERE k > 0) SELECT k, window_start, count(*) AS n FROM TUMBLE(e, ts, " + tumble + " GROUP BY 1, 2",
			`materialized view "r_cte" uses TUMBLE over "e", whose time column "ts" has no watermark`, `"ts" is not the watermark column of a table`},
		{"r_column", "SELECT auction, window_start, count(*) AS n FROM TUMBLE(bids, other, " + tumble + " GROUP BY 1, 2",
			`materialized view "r_column" uses TUMBLE over "bids", whose time column "other" has no watermark`, `"bids" has a watermark on "ts", not on "other"`},
		{"r_cte_column", "WITH e AS (SELECT auction, other FROM bids) SELECT window_start, count(*) AS n FROM HOP(e, other, " + hop + " GROUP BY 1",
			`materialized view "r_cte_column" uses HOP over "e", whose time column "other" has no watermark`, `"other" is not the watermark column of a table`},
		{"r_view", "SELECT window_start, count(*) AS n FROM ev_windows GROUP BY 1",
			`materialized view "r_view" uses TUMBLE over "ev", whose time column "ts" has no watermark`, `"ev" has no watermark`},
	} {
		sql := "CREATE MATERIALIZED VIEW " + c.name + " AS " + c.query
		e := wantError(t, sql, execErr(rs, sql), "55000", c.msg)
		if !strings.HasPrefix(e.Detail, "RS-1005 connector.watermark_required") || !strings.Contains(e.Detail, c.detail) || !strings.Contains(e.Detail, "grow with the input") {
			t.Errorf("%s: detail %q, want RS-1005 and %q", c.name, e.Detail, c.detail)
		}
		if !strings.Contains(e.Hint, "WITH (windows = 'never_close')") {
			t.Errorf("%s: hint %q does not name the opt-in", c.name, e.Hint)
		}
		if !strings.HasPrefix(c.name, "r_session") && !strings.Contains(e.Hint, "WITH (watermark = ") {
			t.Errorf("%s: hint %q does not say how to declare a watermark", c.name, e.Hint)
		}
		// The opt-in accepts it.
		exec(t, rs, "CREATE MATERIALIZED VIEW "+c.name+" WITH (windows = 'never_close') AS "+c.query)
	}
	for _, sql := range []string{
		// Windows a watermark closes: the table's watermark column,
		// directly, through a WITH query and through an inline view.
		"CREATE MATERIALIZED VIEW a_tumble AS SELECT auction, window_start, count(*) AS n FROM TUMBLE(bids, ts, " + tumble + " GROUP BY 1, 2",
		"CREATE MATERIALIZED VIEW a_cte AS WITH e AS (SELECT auction, ts FROM bids WHERE price > 0) SELECT window_start, count(*) AS n FROM HOP(e, ts, " + hop + " GROUP BY 1",
		"CREATE MATERIALIZED VIEW a_view AS SELECT window_start, count(*) AS n FROM TUMBLE(bids_paid, ts, " + tumble + " GROUP BY 1",
		// Standard SQL windows are not the streaming window functions.
		"CREATE MATERIALIZED VIEW a_date_bin AS SELECT date_bin('10 seconds', ts, '2024-01-01') AS w, count(*) AS n FROM ev GROUP BY 1",
		// Ad-hoc queries keep no state.
		"SELECT * FROM TUMBLE(ev, ts, " + tumble,
		"SELECT * FROM HOP(ev, ts, " + hop,
		"SELECT * FROM SESSION(ev, ts, k, interval '10 seconds')",
		"INSERT INTO ev VALUES (1, 1, '2024-01-01 00:00:01+00', NULL), (2, 1, '2024-01-01 00:00:04+00', NULL), (3, 2, '2024-01-01 00:00:30+00', NULL)",
	} {
		exec(t, rs, sql)
	}
	sql := "CREATE MATERIALIZED VIEW bad WITH (windows = 'close') AS SELECT * FROM TUMBLE(ev, ts, " + tumble
	wantError(t, sql, execErr(rs, sql), "22023", `invalid value for parameter "windows": "close"`)
	sql = "ALTER MATERIALIZED VIEW r_tumble RESET (windows)"
	wantError(t, sql, execErr(rs, sql), "0A000", "the windows option of a materialized view cannot be changed")

	shown := func(when string) {
		t.Helper()
		opts := rowsText(t, rs, "SELECT relname, coalesce(array_to_string(reloptions, ','), '-') FROM pg_class WHERE relname IN ('r_tumble', 'r_session', 'a_tumble')")
		if got, want := strings.Join(opts, " "), "a_tumble|- r_session|windows=never_close r_tumble|windows=never_close"; got != want {
			t.Fatalf("%s: reloptions %q, want %q", when, got, want)
		}
		const line = "Windows: never close without a watermark (windows = 'never_close'): their state grows with the input"
		if text := strings.Join(explainLines(t, rs, "EXPLAIN INCREMENTAL r_session"), "\n"); !strings.Contains(text, line) {
			t.Fatalf("%s: EXPLAIN INCREMENTAL r_session lacks %q:\n%s", when, line, text)
		}
		if text := strings.Join(explainLines(t, rs, "EXPLAIN INCREMENTAL a_tumble"), "\n"); strings.Contains(text, "Windows:") {
			t.Fatalf("%s: EXPLAIN INCREMENTAL a_tumble shows a windows line:\n%s", when, text)
		}
		if got := rowsText(t, rs, "SELECT k, window_start, window_end, n FROM r_session"); strings.Join(got, ",") != "1|2024-01-01 00:00:01+00|2024-01-01 00:00:14+00|2,2|2024-01-01 00:00:30+00|2024-01-01 00:00:40+00|1" {
			t.Fatalf("%s: r_session %q", when, got)
		}
	}
	shown("before a restart")
	srv.stop()
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, rs, "SET TimeZone = 'UTC'")
	shown("after a restart")
}
