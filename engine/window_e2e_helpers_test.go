package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// windowView is a materialized view of the window tests and its
// PostgreSQL 15 form.
type windowView struct{ name, query, pg string }

// windowTest is a RockStream server and PostgreSQL (in a fresh schema),
// each with table ev (id, k, ts timestamptz, lts timestamp, v) in TimeZone
// tz, and views created on RockStream (their windows never close: ev has
// no watermark).
type windowTest struct {
	t      *testing.T
	rs, pg *pgx.Conn
	views  []windowView
}

func newWindowTest(t *testing.T, schemaPrefix, tz string, views []windowView) *windowTest {
	srv := startServer(t, t.TempDir())
	w := &windowTest{t: t, rs: connect(t, srv.url()), pg: pgtest.Connect(t), views: views}
	schema := fmt.Sprintf("%s_%d", schemaPrefix, time.Now().UnixNano())
	exec(t, w.pg, "CREATE SCHEMA "+schema+"; SET search_path = "+schema)
	t.Cleanup(func() { exec(t, w.pg, "DROP SCHEMA "+schema+" CASCADE") })
	w.both("SET TimeZone = '" + tz + "'")
	w.both("CREATE TABLE ev (id int PRIMARY KEY, k int, ts timestamptz, lts timestamp, v int)")
	for _, v := range views {
		exec(t, w.rs, "CREATE MATERIALIZED VIEW "+v.name+" WITH (windows = 'never_close') AS "+v.query)
	}
	return w
}

// both runs sql on RockStream and on PostgreSQL.
func (w *windowTest) both(sql string) {
	w.t.Helper()
	exec(w.t, w.rs, sql)
	exec(w.t, w.pg, sql)
}

// check compares every view, and its query run ad hoc, with its
// PostgreSQL form.
func (w *windowTest) check(when string) {
	w.t.Helper()
	for _, v := range w.views {
		want := rowsText(w.t, w.pg, v.pg)
		got := rowsText(w.t, w.rs, "SELECT * FROM "+v.name)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			w.t.Fatalf("%s: view %s\n got: %q\nwant: %q", when, v.name, got, want)
		}
		if adhoc := rowsText(w.t, w.rs, v.query); strings.Join(adhoc, "\n") != strings.Join(want, "\n") {
			w.t.Fatalf("%s: ad hoc %s\n got: %q\nwant: %q", when, v.query, adhoc, want)
		}
	}
}

// evAt is a time minute minutes after the tests' origin; evRow inserts a
// row of ev at that time (ts, and lts in UTC).
func evAt(minute int) string {
	return fmt.Sprintf("'2026-03-01 12:00:00+00'::timestamptz + interval '%d minutes'", minute)
}

func evRow(id, k, minute, v int) string {
	return fmt.Sprintf("INSERT INTO ev VALUES (%d, %d, %s, (%s) AT TIME ZONE 'UTC', %d)", id, k, evAt(minute), evAt(minute), v)
}
