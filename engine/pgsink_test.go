package engine_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// waitSame polls until query answers the same on RockStream (rsQuery) and
// on the sink's PostgreSQL (pgQuery), or fails with both answers.
func waitSame(t *testing.T, rs, pg *pgx.Conn, rsQuery, pgQuery, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		want, got := rowsText(t, rs, rsQuery), rowsText(t, pg, pgQuery)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the sink's table differs from the view\n got: %q\nwant: %q", what, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// appendLogChecks are the checks of an append sink's table: every
// (epoch, row) at most once, and the diffs summed per row equal to the
// view (the query answers the rows whose sum is not 0, with the sum).
const appendLogDuplicates = `SELECT rockstream_epoch, cat, n, qty, count(*) FROM per_cat_log
	GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`

const appendLogSum = `SELECT cat, n, qty, sum(rockstream_diff) FROM per_cat_log
	GROUP BY cat, n, qty HAVING sum(rockstream_diff) <> 0 ORDER BY cat, n, qty`

// TestPostgresSink writes one view into a PostgreSQL 15 table in both
// modes (upsert mirroring it by key, append logging every change with
// its epoch and diff) and a view of many types into a table of the same
// types, through inserts, updates and deletes and across a restart of the
// server: the upsert tables always reach exactly the view's rows, and the
// append table's diffs sum to the view with no (epoch, row) written twice.
// rockstream_catalog.sinks shows the sinks; DROP SINK stops one.
func TestPostgresSink(t *testing.T) {
	url, pg := pgtest.Database(t)
	for _, s := range []string{
		`CREATE TABLE per_cat (cat text PRIMARY KEY, n bigint NOT NULL, qty bigint, note text DEFAULT 'kept')`,
		`CREATE TABLE per_cat_log (cat text, n bigint, qty bigint, rockstream_epoch bigint NOT NULL, rockstream_diff bigint NOT NULL)`,
		`CREATE SCHEMA "Out"`,
		`CREATE TABLE "Out"."Items" (id int PRIMARY KEY, cat text, qty int, price numeric(10,2), at timestamptz, day date,
			ok boolean, f float8, doc jsonb, b bytea, iv interval, code varchar(5), ts timestamp)`,
	} {
		exec(t, pg, s)
	}
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE items (id int PRIMARY KEY, cat text NOT NULL, qty int, price numeric(10,2), at timestamptz, day date,
		ok boolean, f float8, doc jsonb, b bytea, iv interval, code varchar(5), ts timestamp)`)
	exec(t, rs, `INSERT INTO items VALUES (1, 'a', 1, 1.50, '2024-01-02 03:04:05.678+00', '2024-01-02', true, 0.1, '{"x": [1, "two"]}', '\x00ff', '1 day 02:03:04', 'ab''c', '2024-05-06 07:08:09.5'),
		(2, 'b', 2, NULL, NULL, NULL, NULL, 'NaN', 'null', '', '-3 months', NULL, NULL), (3, 'a', 3, -2.25, '1999-12-31 23:59:59+05', '1970-01-01', false, -1e300, '"s"', NULL, NULL, 'é"\', NULL)`)
	exec(t, rs, `CREATE MATERIALIZED VIEW per_cat AS SELECT cat, count(*) AS n, sum(qty) AS qty FROM items GROUP BY cat`)
	// A view in a schema of its own, named qualified by its sink.
	exec(t, rs, `CREATE SCHEMA rsv`)
	exec(t, rs, `CREATE MATERIALIZED VIEW rsv.all_items AS SELECT * FROM items`)
	exec(t, rs, fmt.Sprintf(`CREATE SINK up FROM per_cat INTO POSTGRES (connection = '%s', table = 'per_cat', mode = 'upsert', key = 'cat')`, url))
	exec(t, rs, fmt.Sprintf(`CREATE SINK log FROM per_cat INTO POSTGRES (connection = '%s', table = 'public.per_cat_log', mode = 'append')`, url))
	exec(t, rs, fmt.Sprintf(`CREATE SINK copy FROM rsv.all_items INTO POSTGRES (connection = '%s', table = '"Out"."Items"', mode = 'upsert', key = 'id')`, url))

	same := func(what string) {
		t.Helper()
		waitSame(t, rs, pg, `SELECT cat, n, qty FROM per_cat ORDER BY cat`, `SELECT cat, n, qty FROM per_cat ORDER BY cat`, what+" (upsert)")
		waitSame(t, rs, pg, `SELECT cat, n, qty, 1 FROM per_cat ORDER BY cat, n, qty`, appendLogSum, what+" (append)")
		all := `SELECT id, cat, qty, price, at, day, ok, f, doc, b, iv, code, ts FROM %s ORDER BY id`
		waitSame(t, rs, pg, fmt.Sprintf(all, "rsv.all_items"), fmt.Sprintf(all, `"Out"."Items"`), what+" (types)")
		if dup := rowsText(t, pg, appendLogDuplicates); len(dup) > 0 {
			t.Fatalf("%s: the append sink wrote rows twice at one epoch: %q", what, dup)
		}
	}
	same("the snapshot")
	if got := rowsText(t, pg, `SELECT DISTINCT note FROM per_cat`); strings.Join(got, ",") != "kept" {
		t.Fatalf("a column the view does not have: %q, want its default kept", got)
	}
	exec(t, rs, `INSERT INTO items (id, cat, qty) VALUES (4, 'c', 10), (5, 'b', 5)`)
	exec(t, rs, `UPDATE items SET qty = qty + 100, price = price * 3 WHERE id = 1`)
	exec(t, rs, `DELETE FROM items WHERE cat = 'b'`)
	same("after changes")
	waitFor(t, rs, `SELECT name, kind, view, target, format, topic, state, delivered_epoch > 0, lag_epochs >= 0, error FROM rockstream_catalog.sinks`,
		[]string{
			`copy|postgres|all_items|"Out"."Items"|upsert|NULL|RUNNING|t|t|NULL`,
			"log|postgres|per_cat|public.per_cat_log|append|NULL|RUNNING|t|t|NULL",
			"up|postgres|per_cat|per_cat|upsert|NULL|RUNNING|t|t|NULL",
		}, "rockstream_catalog.sinks")
	if got := rowsText(t, pg, `SELECT sink_name, target FROM rockstream_sink_progress ORDER BY 1`); strings.Join(got, " ") != "log|public.per_cat_log up|public.per_cat" {
		t.Fatalf("rockstream_sink_progress of schema public: %q", got)
	}
	// The progress row's sink_id is drawn at CREATE SINK and kept in the
	// sink's definition.
	id := rowsText(t, pg, `SELECT sink_id FROM rockstream_sink_progress WHERE sink_name = 'up'`)
	def := rowsText(t, rs, `SELECT definition FROM rockstream_catalog.sinks WHERE name = 'up'`)
	if len(id) != 1 || !strings.HasPrefix(id[0], "rockstream_") || len(def) != 1 ||
		!strings.HasSuffix(def[0], fmt.Sprintf(`mode = 'upsert', key = 'cat', sink_id = '%s')`, id[0])) {
		t.Fatalf("sink_id %q, definition %q: want the definition to name the progress row", id, def)
	}

	// A restart resumes after the epoch of the progress rows: no epoch
	// written again (the append table would count it twice) or skipped.
	rs.Close(context.Background())
	srv.stop()
	exec(t, pg, `UPDATE per_cat SET note = 'untouched'`)
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, rs, `INSERT INTO items (id, cat, qty) VALUES (6, 'd', 7), (7, 'a', 1)`)
	exec(t, rs, `DELETE FROM items WHERE id = 4`)
	exec(t, rs, `UPDATE items SET cat = 'd' WHERE id = 3`)
	same("after the restart")
	if got := rowsText(t, pg, `SELECT DISTINCT cat, note FROM per_cat WHERE cat IN ('a', 'd') ORDER BY 1`); strings.Join(got, " ") != "a|untouched d|kept" {
		t.Fatalf("the upsert sink's table's own column: %q, want it left alone (a) or its default (d, new)", got)
	}
	if got := rowsText(t, pg, `SELECT count(*) FROM per_cat_log WHERE rockstream_diff NOT IN (1, -1)`); got[0] != "0" {
		t.Fatalf("diffs other than ±1 for single rows: %s", got[0])
	}

	exec(t, rs, `DROP SINK up`)
	waitFor(t, rs, `SELECT name FROM rockstream_catalog.sinks ORDER BY name`, []string{"copy", "log"}, "sinks after DROP SINK")
	before := rowsText(t, pg, `SELECT * FROM per_cat ORDER BY cat`)
	exec(t, rs, `INSERT INTO items (id, cat, qty) VALUES (8, 'z', 1)`)
	waitSame(t, rs, pg, `SELECT cat, n, qty, 1 FROM per_cat ORDER BY cat, n, qty`, appendLogSum, "the append sink after the other's DROP")
	if after := rowsText(t, pg, `SELECT * FROM per_cat ORDER BY cat`); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("the dropped sink still wrote:\n%q\nthen\n%q", before, after)
	}
}

// TestPostgresSinkRefusals: CREATE SINK ... INTO POSTGRES refuses, with
// its RS code, what it cannot write before anything is created.
func TestPostgresSinkRefusals(t *testing.T) {
	url, pg := pgtest.Database(t)
	for _, s := range []string{
		`CREATE TABLE ok (cat text PRIMARY KEY, n bigint)`,
		`CREATE TABLE full_table (cat text PRIMARY KEY, n bigint)`,
		`INSERT INTO full_table VALUES ('x', 1)`,
		`CREATE TABLE no_key (cat text, n bigint)`,
		`CREATE TABLE bad_type (cat text PRIMARY KEY, n date)`,
		`CREATE TABLE missing_col (cat text PRIMARY KEY)`,
		`CREATE TABLE extra_required (cat text PRIMARY KEY, n bigint, must int NOT NULL)`,
		`CREATE TABLE log_no_epoch (cat text, n bigint, rockstream_diff bigint)`,
	} {
		exec(t, pg, s)
	}
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE items (id int PRIMARY KEY, cat text)`)
	exec(t, rs, `CREATE MATERIALIZED VIEW v AS SELECT cat, count(*) AS n FROM items GROUP BY cat`)
	sink := func(opts string) string { return `CREATE SINK s FROM v INTO POSTGRES (` + opts + `)` }
	conn := fmt.Sprintf("connection = '%s'", url)
	for _, c := range []struct{ sql, state, code, msg string }{
		{sink(conn + `, table = 'nope', mode = 'upsert', key = 'cat'`), "42P01", "RS-1023", "nope does not exist"},
		{sink(conn + `, table = 'a b c', mode = 'upsert', key = 'cat'`), "42P01", "RS-1023", "not a table name"},
		{sink(conn + `, table = 'no_key', mode = 'upsert', key = 'cat'`), "42804", "RS-1024", "no unique or exclusion constraint"},
		{sink(conn + `, table = 'bad_type', mode = 'upsert', key = 'cat'`), "42804", "RS-1024", `column "n" is of type date`},
		{sink(conn + `, table = 'missing_col', mode = 'upsert', key = 'cat'`), "42804", "RS-1024", `column "n" of relation "missing_col" does not exist`},
		{sink(conn + `, table = 'extra_required', mode = 'upsert', key = 'cat'`), "42804", "RS-1024", `column "must"`},
		{sink(conn + `, table = 'log_no_epoch', mode = 'append'`), "42804", "RS-1024", `"rockstream_epoch"`},
		{sink(conn + `, table = 'full_table', mode = 'upsert', key = 'cat'`), "55000", "RS-1025", "has rows"},
		{sink(conn + `, table = 'ok', mode = 'upsert', key = 'nope'`), "0A000", "RS-1021", `key names column "nope"`},
		{sink(conn + `, table = 'ok', mode = 'upsert'`), "0A000", "RS-1021", "needs option key"},
		{sink(conn + `, table = 'ok', mode = 'append', key = 'cat'`), "0A000", "RS-1021", "takes no key"},
		{sink(conn + `, table = 'ok', mode = 'merge'`), "0A000", "RS-1021", "mode = 'merge' is not supported"},
		{sink(conn + `, table = 'ok'`), "0A000", "RS-1021", "needs option mode"},
		{sink(`table = 'ok', mode = 'append'`), "0A000", "RS-1021", "needs option connection"},
		{sink(conn + `, table = 'ok', mode = 'append', batch = '10'`), "0A000", "RS-1021", "option batch is not supported"},
		{sink(`connection = 'postgres://u@127.0.0.1:1/db?connect_timeout=5', table = 'ok', mode = 'append'`), "08001", "RS-1000", "cannot connect"},
	} {
		pgErr := wantError(t, c.sql, execErr(rs, c.sql), c.state, c.msg)
		if !strings.HasPrefix(pgErr.Detail, c.code) {
			t.Fatalf("%s: detail %q, want the %s code", c.sql, pgErr.Detail, c.code)
		}
	}
	waitFor(t, rs, `SELECT count(*) FROM rockstream_catalog.sinks`, []string{"0"}, "no sink created")
	if got := rowsText(t, pg, `SELECT count(*) FROM full_table`); got[0] != "1" {
		t.Fatalf("the refused sink changed its table: %s rows", got[0])
	}
	// A table that fills between CREATE SINK and the first delivery is
	// not overwritten: the sink reports it and retries. (The progress
	// table made beforehand as the documentation says; a lock on it holds
	// the first delivery back while the table fills.)
	exec(t, rs, `INSERT INTO items VALUES (1, 'a')`)
	exec(t, pg, `CREATE TABLE rockstream_sink_progress (sink_id text PRIMARY KEY, sink_name text NOT NULL, target text NOT NULL,
		epoch bigint NOT NULL, committed_at timestamptz NOT NULL DEFAULT now())`)
	locker := connect(t, url)
	exec(t, locker, `BEGIN; LOCK TABLE rockstream_sink_progress IN EXCLUSIVE MODE`)
	exec(t, rs, sink(conn+`, table = 'ok', mode = 'upsert', key = 'cat'`))
	exec(t, pg, `INSERT INTO ok VALUES ('other', 5)`)
	exec(t, locker, `ROLLBACK`)
	waitFor(t, rs, `SELECT state, error LIKE '%RS-1025%has rows%' FROM rockstream_catalog.sinks`, []string{"RETRYING|t"}, "a sink whose table filled")
	exec(t, pg, `TRUNCATE ok`)
	waitFor(t, rs, `SELECT state, error FROM rockstream_catalog.sinks`, []string{"RUNNING|NULL"}, "the sink once its table is empty")
	waitSame(t, rs, pg, `SELECT cat, n FROM v ORDER BY cat`, `SELECT cat, n FROM ok ORDER BY cat`, "the sink after TRUNCATE")
}

// TestPostgresSinkMetrics: /metrics counts each sink's delivered rows and
// failed sessions, and shows its delivered epoch and lag.
func TestPostgresSinkMetrics(t *testing.T) {
	url, pg := pgtest.Database(t)
	exec(t, pg, `CREATE TABLE log (id int, v int, rockstream_epoch bigint, rockstream_diff bigint)`)
	a := serveHTTP(t)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	exec(t, rs, `CREATE TABLE t (id int PRIMARY KEY, v int)`)
	exec(t, rs, `INSERT INTO t SELECT i, i FROM generate_series(1, 30) i`)
	exec(t, rs, `CREATE MATERIALIZED VIEW mv AS SELECT * FROM t`)
	exec(t, rs, fmt.Sprintf(`CREATE SINK out FROM mv INTO POSTGRES (connection = '%s', table = 'log', mode = 'append')`, url))
	body := func() string {
		resp, err := http.Get("http://" + a.http + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitMetric := func(line string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !strings.Contains(body(), line+"\n") {
			if time.Now().After(deadline) {
				t.Fatalf("/metrics has no line %q:\n%s", line, body())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitMetric(`rockstream_sink_rows_total{sink="out"} 30`) // the snapshot
	exec(t, rs, `UPDATE t SET v = 0 WHERE id <= 5`)
	waitMetric(`rockstream_sink_rows_total{sink="out"} 40`) // 5 deleted, 5 inserted
	waitMetric(`rockstream_sink_errors_total{sink="out"} 0`)
	if b := body(); !strings.Contains(b, `rockstream_sink_lag_epochs{sink="out"}`) || !strings.Contains(b, `rockstream_sink_delivered_epoch{sink="out"}`) {
		t.Fatalf("/metrics has no lag or delivered epoch of the sink:\n%s", b)
	}
	exec(t, pg, `ALTER TABLE log RENAME TO gone`)
	exec(t, rs, `INSERT INTO t VALUES (100, 1)`)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(body(), `rockstream_sink_errors_total{sink="out"} `) || strings.Contains(body(), `rockstream_sink_errors_total{sink="out"} 0`+"\n") {
		if time.Now().After(deadline) {
			t.Fatalf("/metrics counts no error of the sink whose table is gone:\n%s", body())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresSinkFence: a transaction of the sink advances its progress
// row only from the epoch its session read, so a row moved meanwhile (as
// by another session of the sink) fails the transaction instead of being
// overwritten; the next session starts from the row.
func TestPostgresSinkFence(t *testing.T) {
	url, pg := pgtest.Database(t)
	exec(t, pg, `CREATE TABLE log (id int, v int, rockstream_epoch bigint, rockstream_diff bigint)`)
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE t (id int PRIMARY KEY, v int)`)
	exec(t, rs, `INSERT INTO t VALUES (1, 1)`)
	exec(t, rs, `CREATE MATERIALIZED VIEW mv AS SELECT * FROM t`)
	exec(t, rs, fmt.Sprintf(`CREATE SINK out FROM mv INTO POSTGRES (connection = '%s', table = 'log', mode = 'append')`, url))
	waitSame(t, rs, pg, `SELECT 1`, `SELECT count(*) FROM log`, "the snapshot")
	exec(t, rs, `INSERT INTO t VALUES (2, 2)`)
	waitSame(t, rs, pg, `SELECT 2`, `SELECT count(*) FROM log`, "the first change")
	// NB: back by one epoch, which the view's history still has (the
	// next session replays it: the move is what a stale session's
	// commit would have done).
	exec(t, pg, `UPDATE rockstream_sink_progress SET epoch = epoch - 1`)
	exec(t, rs, `INSERT INTO t VALUES (3, 3)`)
	waitFor(t, rs, `SELECT errors > 0, state, error FROM rockstream_catalog.sinks`, []string{"t|RUNNING|NULL"}, "the sink after its progress row moved")
	waitSame(t, rs, pg, `SELECT id, v FROM mv ORDER BY id`, `SELECT id, v FROM log GROUP BY id, v HAVING sum(rockstream_diff) > 0 ORDER BY id`, "the sink after its restart")
}

// TestPostgresSinkPinsSettings: the sink's values reach a database whose
// defaults read and print them otherwise (sql_standard intervals, SQL,
// DMY dates, another TimeZone) unchanged, because its sessions pin
// IntervalStyle, DateStyle and TimeZone (a column DEFAULT records the
// settings the sink's inserts ran in).
func TestPostgresSinkPinsSettings(t *testing.T) {
	url, pg := pgtest.Database(t)
	var db string
	if err := pg.QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	exec(t, pg, `CREATE TABLE odd (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz, iv interval,
		seen text DEFAULT current_setting('IntervalStyle') || ';' || current_setting('DateStyle') || ';' || current_setting('TimeZone'))`)
	exec(t, pg, `ALTER DATABASE `+db+` SET IntervalStyle = sql_standard`)
	exec(t, pg, `ALTER DATABASE `+db+` SET DateStyle = 'SQL, DMY'`)
	exec(t, pg, `ALTER DATABASE `+db+` SET TimeZone = 'Asia/Kolkata'`)
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE src (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz, iv interval)`)
	exec(t, rs, `INSERT INTO src VALUES (1, '2003-02-01', '2003-02-01 04:05:06.5', '2003-02-01 04:05:06+00', '-1 days +02:00:00'),
		(2, '0044-03-15 BC', '2024-12-31 23:59:59', '1999-12-31 23:30:00-05', '-1 years -2 mons +3 days -04:05:06'),
		(3, '2024-02-29', NULL, '2024-07-01 12:00:00.123456+00', '1 year -2 mons'), (4, NULL, NULL, NULL, '-00:00:01.5')`)
	exec(t, rs, `CREATE MATERIALIZED VIEW v AS SELECT * FROM src`)
	exec(t, rs, fmt.Sprintf(`CREATE SINK s FROM v INTO POSTGRES (connection = '%s', table = 'odd', mode = 'upsert', key = 'id')`, url))
	const q = `SELECT id, d, ts, tz, iv FROM %s ORDER BY id`
	waitSame(t, rs, pg, fmt.Sprintf(q, "v"), fmt.Sprintf(q, "odd"), "the sink into a database with other defaults")
	if got := rowsText(t, pg, `SELECT DISTINCT seen FROM odd`); strings.Join(got, ",") != "postgres;ISO, MDY;UTC" {
		t.Fatalf("the sink's session settings: %q, want postgres;ISO, MDY;UTC", got)
	}
}
