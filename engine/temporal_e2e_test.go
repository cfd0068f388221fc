package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// testClock is a server's clock driven by the test.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *testClock) set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = at
}

func startClockServer(t *testing.T, storage string, clock *testClock) *enginetest.Server {
	t.Helper()
	shards, err := enginetest.Shards()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := enginetest.StartClock(storage, shards, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// temporalOracle compares temporal views with their queries run on
// PostgreSQL 15 at the same instant: now() and mz_now() replaced by it.
type temporalOracle struct {
	t      *testing.T
	rs, pg *pgx.Conn
	views  []string
	query  map[string]string
	ticks  int
}

func newTemporalOracle(t *testing.T, rs *pgx.Conn) *temporalOracle {
	pg := pgtest.Connect(t)
	schema := fmt.Sprintf("rs_temporal_%d", time.Now().UnixNano())
	exec(t, pg, "CREATE SCHEMA "+schema+"; SET search_path = "+schema)
	t.Cleanup(func() { exec(t, pg, "DROP SCHEMA "+schema+" CASCADE") })
	return &temporalOracle{t: t, rs: rs, pg: pg, query: map[string]string{}}
}

func (o *temporalOracle) both(sql string) {
	o.t.Helper()
	exec(o.t, o.rs, sql)
	exec(o.t, o.pg, sql)
}

func (o *temporalOracle) view(name, query string) {
	o.t.Helper()
	exec(o.t, o.rs, "CREATE MATERIALIZED VIEW "+name+" AS "+query)
	o.views = append(o.views, name)
	o.query[name] = query
}

// at is query with its now() evaluated at instant, for PostgreSQL.
func at(query string, instant time.Time) string {
	lit := "'" + instant.UTC().Format("2006-01-02 15:04:05.999999Z07:00") + "'::timestamptz"
	query = strings.ReplaceAll(query, "mz_now()", lit)
	query = strings.ReplaceAll(query, "CURRENT_TIMESTAMP", lit)
	return strings.ReplaceAll(query, "now()", lit)
}

// differences lists the views (and ad-hoc queries) whose rows differ
// from PostgreSQL's at instant.
func (o *temporalOracle) differences(instant time.Time, adhoc []string) []string {
	var out []string
	for _, name := range o.views {
		got := rowsText(o.t, o.rs, "SELECT * FROM "+name)
		want := rowsText(o.t, o.pg, at(o.query[name], instant))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			out = append(out, fmt.Sprintf("view %s\n got: %q\nwant: %q", name, got, want))
		}
	}
	for _, q := range adhoc {
		got, want := rowsText(o.t, o.rs, q), rowsText(o.t, o.pg, at(q, instant))
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			out = append(out, fmt.Sprintf("%s\n got: %q\nwant: %q", q, got, want))
		}
	}
	return out
}

// check commits on RockStream (an epoch at the clock's time, which the
// next read waits for) and compares every view with PostgreSQL at
// instant.
func (o *temporalOracle) check(when string, instant time.Time, adhoc ...string) {
	o.t.Helper()
	o.ticks++
	exec(o.t, o.rs, fmt.Sprintf("INSERT INTO tick VALUES (%d)", o.ticks))
	if d := o.differences(instant, adhoc); len(d) > 0 {
		o.t.Fatalf("%s (at %s): %s", when, instant.Format(time.RFC3339Nano), strings.Join(d, "\n"))
	}
}

// await compares the views with PostgreSQL at instant without committing:
// time alone (the server's tick epochs) must bring them there.
func (o *temporalOracle) await(when string, instant time.Time) {
	o.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		d := o.differences(instant, nil)
		if len(d) == 0 {
			return
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("%s (at %s), with no commit: %s", when, instant.Format(time.RFC3339Nano), strings.Join(d, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// temporalViews are the views of the temporal tests: upper and lower
// bounds, now() on either side, BETWEEN, mz_now(), an interval on the row
// side, a timestamp (without time zone) column, an aggregate over a
// temporal filter, one in HAVING and one over a join.
var temporalViews = [][2]string{
	{"v_hour", "SELECT id, ts FROM ev WHERE ts > now() - interval '1 hour'"},
	{"v_window", "SELECT id, g FROM ev WHERE ts + interval '1 day' > mz_now() AND ts <= mz_now()"},
	{"v_between", "SELECT g, count(*) AS n FROM ev WHERE ts BETWEEN now() - interval '30 minutes' AND now() + interval '10 minutes' GROUP BY g"},
	{"v_rev", "SELECT id FROM ev WHERE now() - interval '2 hours' < ts AND g > 0"},
	{"v_local", "SELECT id FROM ev WHERE lts >= CURRENT_TIMESTAMP - interval '90 minutes'"},
	{"v_having", "SELECT g, max(ts) AS last FROM ev GROUP BY g HAVING max(ts) > now() - interval '45 minutes'"},
	{"v_join", "SELECT a.id, b.id AS other FROM ev a JOIN ev b ON a.g = b.g AND a.id < b.id WHERE a.ts > now() - interval '10 minutes' AND b.ts <= now() AND a.id < 20 AND b.id < 20"},
}

// evRows inserts rows with times around the views' boundaries at base.
func evRows(base time.Time, first int) string {
	offsets := []time.Duration{
		-25 * time.Hour, -24 * time.Hour, -2*time.Hour - time.Microsecond, -2 * time.Hour,
		-90 * time.Minute, -61 * time.Minute, -time.Hour, -59 * time.Minute, -30 * time.Minute,
		-time.Second, 0, time.Microsecond, 10 * time.Minute, 11 * time.Minute, 2 * time.Hour,
	}
	var vals []string
	for i, off := range offsets {
		ts := base.Add(off).UTC().Format("2006-01-02 15:04:05.999999Z07:00")
		vals = append(vals, fmt.Sprintf("(%d, '%s', '%s', %d)", first+i, ts, strings.TrimSuffix(ts, "Z"), i%3))
	}
	vals = append(vals, fmt.Sprintf("(%d, NULL, NULL, 1)", first+len(offsets)))
	return "INSERT INTO ev VALUES " + strings.Join(vals, ", ")
}

// TestTemporalFilterAgainstPostgres drives the server's clock across the
// boundaries of temporal views while rows are inserted, updated and
// deleted, and compares every view (and an ad-hoc query using now()) with
// PostgreSQL's answer at the same instant; rows also leave with no commit
// at all, and SUBSCRIBE shows a retraction at the epoch it happens.
func TestTemporalFilterAgainstPostgres(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &testClock{at: base}
	srv := startClockServer(t, t.TempDir(), clock)
	rs := connect(t, srv.URL)
	o := newTemporalOracle(t, rs)
	o.both("SET TimeZone = 'UTC'")
	o.both("CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz, lts timestamp, g int)")
	exec(t, rs, "CREATE TABLE tick (n int PRIMARY KEY)")
	o.both(evRows(base, 0))
	for _, v := range temporalViews {
		o.view(v[0], v[1])
	}
	adhoc := []string{"SELECT id FROM ev WHERE ts > now() - interval '1 hour'", "SELECT now()"}
	o.check("after CREATE (backfilled at the clock's time)", base, adhoc...)
	o.both(evRows(base, 100))
	o.check("after inserting rows around the boundaries", base, adhoc...)

	// SUBSCRIBE sees rows leave at the epoch their time comes.
	sub := connect(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rows, err := sub.Query(ctx, "SUBSCRIBE v_hour WITH (SNAPSHOT)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); rows.Close() }()
	type update struct {
		epoch    string
		progress bool
		diff     int64
		id       int32
	}
	next := func() update {
		t.Helper()
		if !rows.Next() {
			t.Fatalf("subscription ended: %v", rows.Err())
		}
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		u := update{epoch: fmt.Sprint(vals[0]), progress: vals[1].(bool)}
		if !u.progress {
			u.diff, u.id = vals[2].(int64), vals[3].(int32)
		}
		return u
	}
	snapshot := map[int32]int64{}
	for u := next(); !u.progress; u = next() {
		snapshot[u.id] += u.diff
	}
	// Row i of evRows has offset i: row 7 (59 minutes old) is in, row 6
	// (exactly an hour old) is not.
	if snapshot[7] != 1 || snapshot[6] != 0 {
		t.Fatalf("SUBSCRIBE snapshot %v: want row 7 in and row 6 out", snapshot)
	}

	steps := []struct {
		after time.Duration
		dml   []string
	}{
		{after: time.Microsecond},
		{after: 59 * time.Minute, dml: []string{"UPDATE ev SET ts = ts + interval '3 minutes', lts = lts + interval '3 minutes' WHERE id IN (7, 107)", "DELETE FROM ev WHERE id IN (6, 113)"}},
		{after: time.Hour},
		{after: time.Hour + time.Microsecond, dml: []string{evRows(base.Add(time.Hour), 200)}},
		{after: 90 * time.Minute, dml: []string{"DELETE FROM ev WHERE id IN (204, 10)", "UPDATE ev SET g = g + 1 WHERE id % 4 = 0"}},
		{after: 2*time.Hour + 10*time.Minute},
		{after: 23 * time.Hour},
		{after: 24*time.Hour + time.Hour},
		{after: 50 * time.Hour, dml: []string{"DELETE FROM ev WHERE id >= 200"}},
	}
	for i, s := range steps {
		instant := base.Add(s.after)
		clock.set(instant)
		if i == 2 {
			// No commit: tick epochs alone make rows leave.
			o.await(fmt.Sprintf("step %d", i), instant)
		}
		for _, q := range s.dml {
			o.both(q)
		}
		o.check(fmt.Sprintf("step %d (+%s)", i, s.after), instant, adhoc...)
		if i == 2 {
			// Rows 9 and 10 (a second old and new at base) and their
			// copies 109 and 110 leave v_hour between +59min and +1h: the
			// subscription shows the four retractions at one epoch, the
			// first at the new time.
			leftAt := map[int32]string{}
			for len(leftAt) < 4 {
				u := next()
				switch {
				case u.progress:
				case u.diff == -1 && (u.id == 9 || u.id == 10 || u.id == 109 || u.id == 110):
					leftAt[u.id] = u.epoch
				case u.id == 9 || u.id == 10 || u.id == 109 || u.id == 110:
					t.Fatalf("SUBSCRIBE: row %d changed by %d before +1h", u.id, u.diff)
				}
			}
			if leftAt[9] != leftAt[10] || leftAt[9] != leftAt[109] || leftAt[9] != leftAt[110] {
				t.Fatalf("SUBSCRIBE at +1h: retractions at epochs %v, want one epoch", leftAt)
			}
		}
	}
}

// TestTemporalFilterRestart: a server stopped while its temporal views'
// rows are due to leave shows them gone after the restart, as
// PostgreSQL's query at the restarted clock's time.
func TestTemporalFilterRestart(t *testing.T) {
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := &testClock{at: base}
	dir := t.TempDir()
	shards, err := enginetest.Shards()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := enginetest.StartClock(dir, shards, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	o := newTemporalOracle(t, rs)
	o.both("SET TimeZone = 'UTC'")
	o.both("CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz, lts timestamp, g int)")
	exec(t, rs, "CREATE TABLE tick (n int PRIMARY KEY)")
	o.both(evRows(base, 0))
	for _, v := range temporalViews {
		o.view(v[0], v[1])
	}
	o.check("before the restart", base)
	_ = rs.Close(context.Background())
	srv.Stop()

	later := base.Add(75 * time.Minute)
	clock.set(later)
	srv = startClockServer(t, dir, clock)
	o.rs = connect(t, srv.URL)
	exec(t, o.rs, "SET TimeZone = 'UTC'")
	o.await("right after the restart, 75 minutes later", later)
	o.check("after the restart and a commit", later)
	clock.set(later.Add(24 * time.Hour))
	o.check("a day later", later.Add(24*time.Hour))
}
