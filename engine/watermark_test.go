package engine_test

import (
	"context"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// watermarkModel replays the watermark rule of a table declared WITH
// (watermark = 'ts - interval ”<lateness>”'): a transaction's rows are
// judged against the watermark as it was before it (event time below it:
// late, dropped), then the watermark moves to the largest event time of
// the transaction's rows minus the lateness, never back.
type watermarkModel struct {
	lateness time.Duration
	mark     time.Time
	set      bool
	late     int
}

// admit says which of a transaction's event times are on time and moves
// the watermark.
func (m *watermarkModel) admit(times []time.Time) []bool {
	onTime := make([]bool, len(times))
	var maxSeen time.Time
	any := false
	for i, ts := range times {
		if m.set && ts.Before(m.mark) {
			m.late++
			continue
		}
		onTime[i], any = true, true
		if ts.After(maxSeen) {
			maxSeen = ts
		}
	}
	if any {
		if next := maxSeen.Add(-m.lateness); !m.set || next.After(m.mark) {
			m.mark, m.set = next, true
		}
	}
	return onTime
}

const watermarkBidsDDL = "CREATE TABLE bids (auction int, price int, ts timestamptz)"

// watermarkViews are windowed aggregates over bids: tumbling windows by
// date_bin (COUNT/SUM on the linear path, MAX on the multiset path), a
// window keyed by its end, and an aggregate without a window (its state is
// not bounded by the watermark: it keeps every group, as before).
var watermarkViews = [][2]string{
	{"tumble", "SELECT date_bin('10 seconds', ts, '2024-01-01 00:00:00+00') AS w, auction, count(*) AS n, sum(price) AS s, max(price) AS hi FROM bids GROUP BY 1, 2"},
	{"ends", "SELECT date_bin('4 seconds', ts, '2024-01-01 00:00:03+00') + interval '4 seconds' AS wend, count(*) AS n, min(price) AS lo FROM bids WHERE price > 2 GROUP BY 1"},
	{"nowindow", "SELECT auction, count(*) AS n FROM bids GROUP BY auction"},
	// Nexmark q5's shape: HOP(size 6 s, slide 2 s) windows by a join
	// with the window offsets, counts per auction and window, and the
	// auctions reaching the window's largest count.
	{"hot", "WITH hop AS (SELECT b.auction, date_bin('2 seconds', b.ts, '2024-01-01 00:00:00+00') - w.k * interval '2 seconds' AS starttime FROM bids b CROSS JOIN (VALUES (0), (1), (2)) AS w(k)), " +
		"counts AS (SELECT auction, count(*) AS num, starttime FROM hop GROUP BY auction, starttime) " +
		"SELECT c.auction, c.num, c.starttime FROM counts c JOIN (SELECT max(num) AS maxn, starttime FROM counts GROUP BY starttime) m ON c.starttime = m.starttime AND c.num >= m.maxn"},
}

// TestWatermarkMatchesPostgres (issue Q3 item 2): random transactions of
// bids, some behind the watermark, into a table with a watermark. After
// every few transactions each windowed view equals its query on
// PostgreSQL 15 over the on-time rows only (the oracle drops late rows by
// the same rule, replayed in watermarkModel), the late rows are counted in
// /metrics, and windowed views keep state only for open windows. Checked
// again after a restart, and with more rows after it.
func TestWatermarkMatchesPostgres(t *testing.T) {
	dir := t.TempDir()
	a, stop := serveHTTPAt(t, dir)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	o := newOracle(t, rs)
	o.both("SET TimeZone = 'UTC'")
	exec(t, rs, watermarkBidsDDL+" WITH (watermark = 'ts - interval ''5 seconds''')")
	exec(t, o.pg, watermarkBidsDDL)
	for _, v := range watermarkViews {
		o.view(v[0], v[1])
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	model := &watermarkModel{lateness: 5 * time.Second}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	round := func(i int) {
		// Event times drift forward by up to 2 s a transaction and
		// scatter 12 s back (late once more than 5 s behind the newest)
		// to 2 s ahead of it.
		base = base.Add(time.Duration(rng.Intn(2000)) * time.Millisecond)
		n := 1 + rng.Intn(4)
		times := make([]time.Time, n)
		for j := range times {
			times[j] = base.Add(time.Duration(rng.Intn(14000)-12000) * time.Millisecond)
		}
		var rows []string
		for _, ts := range times {
			rows = append(rows, fmt.Sprintf("(%d, %d, '%s')", rng.Intn(3), rng.Intn(6), ts.Format("2006-01-02 15:04:05.000Z07")))
		}
		exec(t, rs, "INSERT INTO bids VALUES "+strings.Join(rows, ", "))
		var onTime []string
		for j, ok := range model.admit(times) {
			if ok {
				onTime = append(onTime, rows[j])
			}
		}
		if len(onTime) > 0 {
			exec(t, o.pg, "INSERT INTO bids VALUES "+strings.Join(onTime, ", "))
		}
		if i%10 == 9 {
			o.check(fmt.Sprintf("after transaction %d", i))
		}
	}
	for i := 0; i < 120; i++ {
		round(i)
	}
	if model.late == 0 {
		t.Fatal("no late row in the stream: the test exercises nothing")
	}
	checkLate := func(when string) {
		t.Helper()
		text := metricsText(t, a)
		m := regexp.MustCompile(`rockstream_table_late_rows_total\{table="bids"\} (\d+)`).FindStringSubmatch(text)
		if m == nil || m[1] != strconv.Itoa(model.late) {
			t.Fatalf("%s: late rows in /metrics %v, want %d", when, m, model.late)
		}
		w := regexp.MustCompile(`rockstream_table_watermark_seconds\{table="bids"\} (\S+)`).FindStringSubmatch(text)
		var at float64
		if w != nil {
			at, _ = strconv.ParseFloat(w[1], 64)
		}
		if want := float64(model.mark.UnixMilli()) / 1e3; w == nil || at < want-0.0005 || at > want+0.0005 {
			t.Fatalf("%s: watermark in /metrics %v, want %.3f", when, w, want)
		}
	}
	checkLate("before the restart")
	openWindows := func(when string) {
		t.Helper()
		// At most the windows at or after the watermark hold state: 3
		// auctions × 2 open 10 s windows × (accumulator + max multiset
		// values + close index) stays far below one state row per
		// window seen.
		got := rowsText(t, rs, "SELECT state_rows, rows FROM rockstream_catalog.views WHERE name = 'tumble'")
		parts := strings.Split(got[0], "|")
		stateRows, _ := strconv.Atoi(parts[0])
		viewRows, _ := strconv.Atoi(parts[1])
		if stateRows > 60 || viewRows < 20 {
			t.Fatalf("%s: view tumble has %d rows and %d state rows: closed windows kept their state", when, viewRows, stateRows)
		}
	}
	openWindows("before the restart")
	// hot: counts (planned twice, once per use), their maximum and the join.
	for view, want := range map[string]int{"tumble": 1, "ends": 1, "hot": 4, "nowindow": 0} {
		n := strings.Count(strings.Join(explainLines(t, rs, "EXPLAIN ANALYZE INCREMENTAL "+view), "\n"), "closes windows at the watermark")
		if n != want {
			t.Errorf("EXPLAIN ANALYZE INCREMENTAL %s marks %d operators as closing windows, want %d", view, n, want)
		}
	}
	stop()
	a, stop = serveHTTPAt(t, dir)
	defer stop()
	rs = connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	o.rs = rs
	exec(t, rs, "SET TimeZone = 'UTC'")
	o.check("after a restart")
	checkLate("after a restart")
	for i := 120; i < 200; i++ {
		round(i)
	}
	o.check("after more rows")
	checkLate("after more rows")
	openWindows("after more rows")
	// A view created over the stream so far is filled with every window,
	// the closed ones forgotten once its backfill ends.
	o.view("later", watermarkViews[0][1])
	o.check("a view created later")
}

// TestWatermarkDDL: the option's forms and refusals.
func TestWatermarkDDL(t *testing.T) {
	s := startServer(t, t.TempDir())
	rs := connect(t, s.url())
	exec(t, rs, "CREATE TABLE ok1 (ts timestamptz) WITH (watermark = 'ts')")
	exec(t, rs, "CREATE TABLE ok2 (id int, ts timestamp) WITH (watermark = 'ts - interval ''1 minute 30 seconds''', insert_only = true)")
	exec(t, rs, "CREATE SOURCE bid FROM NEXMARK (events = 100, watermark = 'date_time - interval ''4 seconds''')")
	for _, c := range []struct{ sql, want string }{
		{"CREATE TABLE bad1 (ts timestamptz) WITH (watermark = 'nope - interval ''1 second''')", "no column nope"},
		{"CREATE TABLE bad2 (ts int) WITH (watermark = 'ts')", "not timestamp or timestamptz"},
		{"CREATE TABLE bad3 (ts timestamptz) WITH (watermark = 'ts - interval ''1 day''')", "hours, minutes and seconds"},
		{"CREATE TABLE bad4 (ts timestamptz) WITH (watermark = 'ts + interval ''1 second''')", "column - interval"},
		{"CREATE TABLE bad5 (ts timestamptz PRIMARY KEY) WITH (watermark = 'ts')", "cannot have a PRIMARY KEY"},
		{"CREATE TABLE bad6 (ts timestamptz) WITH (watermark = 'ts', insert_only = false)", "insert-only"},
		{"UPDATE ok1 SET ts = now()", "insert-only"},
		{"DELETE FROM ok1", "insert-only"},
		{"TRUNCATE ok1", "insert-only"},
		{"CREATE SOURCE auction FROM NEXMARK (events = 100, watermark = 'expires - interval ''1 day''')", "hours, minutes and seconds"},
	} {
		_, err := rs.Exec(context.Background(), c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.sql, err, c.want)
		}
	}
}

// TestWatermarkStateBounded: over a long stream of bids whose event time
// keeps moving forward, windowed aggregates' state stops growing (it holds
// the open windows only) while their rows keep growing: tumbling windows,
// HOP windows by a join with the window offsets, and Nexmark q5's shape
// (HOP counts joined with their per-window maximum), and the same
// windows written with the TUMBLE and HOP functions. An aggregate over a
// UNION ALL, which the watermark does not bound, keeps growing. Run with
// -v to see the numbers.
func TestWatermarkStateBounded(t *testing.T) {
	s := startServer(t, t.TempDir())
	rs := connect(t, s.url())
	exec(t, rs, "SET TimeZone = 'UTC'")
	exec(t, rs, watermarkBidsDDL+" WITH (watermark = 'ts - interval ''5 seconds''')")
	exec(t, rs, "CREATE MATERIALIZED VIEW tumble AS "+watermarkViews[0][1])
	exec(t, rs, "CREATE MATERIALIZED VIEW hop AS SELECT date_bin('10 seconds', ts, '2024-01-01') - w.k * interval '5 seconds' AS w, count(*) AS n FROM bids CROSS JOIN (VALUES (0), (1)) AS w(k) GROUP BY 1")
	exec(t, rs, "CREATE MATERIALIZED VIEW hot AS "+watermarkViews[3][1])
	exec(t, rs, "CREATE MATERIALIZED VIEW tumble_fn AS SELECT auction, window_start, count(*) AS n FROM TUMBLE(bids, ts, interval '10 seconds') GROUP BY 1, 2")
	exec(t, rs, "CREATE MATERIALIZED VIEW hop_fn AS SELECT window_start, count(*) AS n FROM HOP(bids, ts, interval '5 seconds', interval '10 seconds') GROUP BY 1")
	exec(t, rs, "CREATE MATERIALIZED VIEW unioned AS SELECT w, count(*) AS n FROM (SELECT date_bin('10 seconds', ts, '2024-01-01') AS w FROM bids UNION ALL SELECT date_bin('10 seconds', ts, '2024-01-01') FROM bids WHERE price = 0) s GROUP BY w")
	const rounds, rowsPerRound = 30, 2000
	stats := func(view string) (rows, stateRows, stateBytes int) {
		got := rowsText(t, rs, "SELECT rows, state_rows, state_bytes FROM rockstream_catalog.views WHERE name = '"+view+"'")
		parts := strings.Split(got[0], "|")
		rows, _ = strconv.Atoi(parts[0])
		stateRows, _ = strconv.Atoi(parts[1])
		stateBytes, _ = strconv.Atoi(parts[2])
		return
	}
	views := []string{"tumble", "hop", "hot", "tumble_fn", "hop_fn", "unioned"}
	early := map[string]int{}
	for r := 0; r < rounds; r++ {
		// 2,000 bids over 20 s of event time (10 ms apart), 50 auctions.
		exec(t, rs, fmt.Sprintf("INSERT INTO bids SELECT i %% 50, i %% 97, timestamptz '2024-01-01 00:00:00+00' + i * interval '10 milliseconds' FROM generate_series(%d, %d) i", r*rowsPerRound, (r+1)*rowsPerRound-1))
		line := fmt.Sprintf("after %6d bids:", (r+1)*rowsPerRound)
		for _, v := range views {
			rows, stateRows, stateBytes := stats(v)
			line += fmt.Sprintf("  %s %4d rows, state %4d rows %7d B;", v, rows, stateRows, stateBytes)
			switch {
			case r == 2:
				early[v] = stateBytes
			case r > 2 && v != "unioned" && stateBytes > early[v]+early[v]/2:
				t.Fatalf("after %d bids the state of %s grew to %d bytes (%d after 6,000): closed windows kept their state", (r+1)*rowsPerRound, v, stateBytes, early[v])
			}
			if r == rounds-1 && v == "tumble" {
				if want := 50 * rounds * 2; rows < want-100 {
					t.Fatalf("tumble has %d rows, want about %d (one per window and auction)", rows, want)
				}
			}
			if r == rounds-1 && v == "unioned" && stateBytes < 5*early[v] {
				t.Fatalf("unioned's state went from %d to %d bytes: the test no longer shows an unbounded view", early[v], stateBytes)
			}
		}
		t.Log(line)
	}
}

// TestWatermarkLateRowsMatchesPostgres (issue Q3, late-data policy): bids
// declared WITH (late_rows = 'audit.bids_late') insert each late row into
// the dead-letter table in the commit that brought it. The oracle replays
// the watermark rule: on-time rows go into PostgreSQL's bids, late ones
// into its bids_late, and after every transaction both tables and the
// views over each (and over both) equal PostgreSQL's. Also across a
// restart, after ALTER TABLE ... SET (late_rows = 'drop') (late rows are
// then dropped again) and after naming the dead-letter table once more.
func TestWatermarkLateRowsMatchesPostgres(t *testing.T) {
	dir := t.TempDir()
	a, stop := serveHTTPAt(t, dir)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	o := newOracle(t, rs)
	o.both("SET TimeZone = 'UTC'")
	const lateDDL = "bids_late (auction int, price int, at timestamptz)"
	exec(t, rs, "CREATE SCHEMA audit")
	exec(t, rs, "CREATE TABLE audit."+lateDDL)
	exec(t, o.pg, "CREATE TABLE "+lateDDL)
	exec(t, rs, watermarkBidsDDL+" WITH (watermark = 'ts - interval ''5 seconds''', late_rows = 'audit.bids_late')")
	exec(t, o.pg, watermarkBidsDDL)
	// view creates a view over both systems' tables: the dead-letter
	// table is audit.bids_late here and bids_late in PostgreSQL.
	view := func(name, query string) {
		t.Helper()
		o.view(name, query)
		o.views[name] = strings.ReplaceAll(query, "audit.bids_late", "bids_late")
	}
	view("tumble", watermarkViews[0][1])
	view("late_rows", "SELECT auction, price, at FROM audit.bids_late")
	view("late_per_auction", "SELECT auction, count(*) AS n, sum(price) AS s, min(at) AS first FROM audit.bids_late GROUP BY auction")
	view("late_vs_on_time", "SELECT b.auction, count(*) AS n FROM (SELECT auction FROM bids UNION ALL SELECT auction FROM audit.bids_late WHERE price > 1) b GROUP BY b.auction")
	tables := func(when string) {
		t.Helper()
		o.check(when)
		for _, q := range [][2]string{{"SELECT * FROM bids", "SELECT * FROM bids"}, {"SELECT * FROM audit.bids_late", "SELECT * FROM bids_late"}} {
			got, want := rowsText(t, rs, q[0]), rowsText(t, o.pg, q[1])
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s: %s differs from PostgreSQL\n got: %q\nwant: %q", when, q[0], got, want)
			}
		}
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	model := &watermarkModel{lateness: 5 * time.Second}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	deadLetter := true
	deadLettered := 0
	round := func(i int) {
		t.Helper()
		base = base.Add(time.Duration(rng.Intn(2000)) * time.Millisecond)
		// One to three INSERTs in one transaction: its rows are judged
		// together, against the watermark as it was before it.
		statements := 1 + rng.Intn(3)
		var times []time.Time
		var rows []string
		var sqls []string
		for s := 0; s < statements; s++ {
			var stmt []string
			for j := 1 + rng.Intn(3); j > 0; j-- {
				ts := base.Add(time.Duration(rng.Intn(14000)-12000) * time.Millisecond)
				row := fmt.Sprintf("(%d, %d, '%s')", rng.Intn(3), rng.Intn(6), ts.Format("2006-01-02 15:04:05.000Z07"))
				times, rows, stmt = append(times, ts), append(rows, row), append(stmt, row)
			}
			sqls = append(sqls, "INSERT INTO bids VALUES "+strings.Join(stmt, ", "))
		}
		if rng.Intn(8) == 0 {
			// The user's own rows in the dead-letter table mix with the
			// late ones.
			sqls = append(sqls, "INSERT INTO audit.bids_late VALUES (7, 7, NULL)")
			exec(t, o.pg, "INSERT INTO bids_late VALUES (7, 7, NULL)")
		}
		if len(sqls) == 1 {
			exec(t, rs, sqls[0])
		} else {
			exec(t, rs, "BEGIN; "+strings.Join(sqls, "; ")+"; COMMIT")
		}
		var onTime, late []string
		for j, ok := range model.admit(times) {
			if ok {
				onTime = append(onTime, rows[j])
			} else {
				late = append(late, rows[j])
			}
		}
		if len(onTime) > 0 {
			exec(t, o.pg, "INSERT INTO bids VALUES "+strings.Join(onTime, ", "))
		}
		if len(late) > 0 && deadLetter {
			exec(t, o.pg, "INSERT INTO bids_late VALUES "+strings.Join(late, ", "))
			deadLettered += len(late)
		}
		tables(fmt.Sprintf("after transaction %d", i))
	}
	checkLate := func(when string) {
		t.Helper()
		m := regexp.MustCompile(`rockstream_table_late_rows_total\{table="bids"\} (\d+)`).FindStringSubmatch(metricsText(t, a))
		if m == nil || m[1] != strconv.Itoa(model.late) {
			t.Fatalf("%s: late rows in /metrics %v, want %d", when, m, model.late)
		}
	}
	shown := func(when, lateRows, explained string) {
		t.Helper()
		got := rowsText(t, rs, "SELECT array_to_string(reloptions, ' | ') FROM pg_class WHERE relname = 'bids'")
		want := "watermark=ts - interval '00:00:05'"
		if lateRows != "" {
			want += " | late_rows=" + lateRows
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("%s: reloptions of bids %q, want %q", when, got, want)
		}
		for _, v := range []string{"tumble", "late_vs_on_time"} {
			text := strings.Join(explainLines(t, rs, "EXPLAIN INCREMENTAL "+v), "\n")
			if line := "Watermark: bids (ts - interval '00:00:05'), " + explained; !strings.Contains(text, line) {
				t.Fatalf("%s: EXPLAIN INCREMENTAL %s lacks %q:\n%s", when, v, line, text)
			}
		}
	}
	for i := 0; i < 60; i++ {
		round(i)
	}
	if deadLettered == 0 {
		t.Fatal("no late row in the stream: the test exercises nothing")
	}
	checkLate("before the restart")
	shown("before the restart", "audit.bids_late", "late rows into audit.bids_late")
	stop()
	a, stop = serveHTTPAt(t, dir)
	defer stop()
	rs = connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	o.rs = rs
	exec(t, rs, "SET TimeZone = 'UTC'")
	tables("after a restart")
	checkLate("after a restart")
	shown("after a restart", "audit.bids_late", "late rows into audit.bids_late")
	for i := 60; i < 90; i++ {
		round(i)
	}
	exec(t, rs, "ALTER TABLE bids SET (late_rows = 'drop')")
	deadLetter = false
	shown("with late_rows = 'drop'", "", "late rows dropped")
	before := deadLettered
	lateBefore := model.late
	for i := 90; i < 120; i++ {
		round(i)
	}
	if model.late == lateBefore || deadLettered != before {
		t.Fatalf("late rows while dropping: %d, dead-lettered %d (was %d)", model.late-lateBefore, deadLettered, before)
	}
	exec(t, rs, "ALTER TABLE bids SET (late_rows = 'audit.bids_late')")
	deadLetter = true
	for i := 120; i < 150; i++ {
		round(i)
	}
	checkLate("after late_rows is set again")
	// A view created over the dead-letter table now is filled with every
	// row it holds.
	view("later", "SELECT auction, count(*) AS n FROM audit.bids_late GROUP BY auction")
	tables("a view created later")
}

// TestWatermarkLateRowsDDL: late_rows's forms and refusals, each with its
// SQLSTATE and message, and the changes refused while a dead-letter table
// is named.
func TestWatermarkLateRowsDDL(t *testing.T) {
	s := startServer(t, t.TempDir())
	rs := connect(t, s.url())
	for _, sql := range []string{
		"CREATE SCHEMA audit",
		"CREATE TABLE audit.dl (a int, b text, ts timestamptz)",
		"CREATE TABLE dl2 (x int, y text NOT NULL, z timestamptz)",
		"CREATE TABLE ok1 (a int, b text, ts timestamptz) WITH (watermark = 'ts', late_rows = 'audit.dl')",
		"CREATE TABLE ok2 (a int, b text, ts timestamptz) WITH (watermark = 'ts', late_rows = 'DROP')",
		"CREATE TABLE ok3 (a int, b text NOT NULL, ts timestamptz) WITH (watermark = 'ts', late_rows = 'dl2')",
		"SET search_path = audit, public",
		"CREATE TABLE public.ok4 (a int, b text, ts timestamptz) WITH (watermark = 'ts', late_rows = 'dl')",
		"SET search_path = public",
		"CREATE TABLE keyed (a int PRIMARY KEY, b text, ts timestamptz)",
		"CREATE TABLE checked (a int CHECK (a > 0), b text, ts timestamptz)",
		"CREATE TABLE narrow (a int, b text)",
		"CREATE TABLE wide (a int, b text, ts timestamptz, extra int DEFAULT 0)",
		"CREATE TABLE typed (a bigint, b text, ts timestamptz)",
		"CREATE TABLE strict (a int NOT NULL, b text, ts timestamptz)",
		"CREATE TABLE marked (a int, b text, ts timestamptz) WITH (watermark = 'ts')",
		"CREATE MATERIALIZED VIEW mv AS SELECT * FROM audit.dl",
		"ALTER TABLE audit.dl RENAME TO dead", // names resolve by id
		"INSERT INTO ok1 VALUES (1, 'x', '2024-01-01 00:00:10+00')",
		"INSERT INTO ok1 VALUES (2, 'y', '2024-01-01 00:00:01+00')",
	} {
		exec(t, rs, sql)
	}
	if got := rowsText(t, rs, "SELECT a, b FROM audit.dead"); strings.Join(got, ",") != "2|y" {
		t.Fatalf("dead-letter table after a rename holds %q, want the late row 2|y", got)
	}
	const wm = "(a int, b text, ts timestamptz) WITH (watermark = 'ts', late_rows = "
	for _, c := range []struct{ sql, state, msg string }{
		{"CREATE TABLE e1 " + wm + "'nope')", "42P01", `relation "nope" does not exist`},
		{"CREATE TABLE e2 " + wm + "'e2')", "42P01", `relation "e2" does not exist`},
		{"CREATE TABLE e3 " + wm + "'keyed')", "22023", `dead-letter table "keyed" has a primary key`},
		{"CREATE TABLE e4 " + wm + "'checked')", "22023", `dead-letter table "checked" has CHECK constraints`},
		{"CREATE TABLE e5 " + wm + "'narrow')", "42804", `dead-letter table "narrow" has 2 columns, but table "e5" has 3`},
		{"CREATE TABLE e6 " + wm + "'wide')", "42804", `dead-letter table "wide" has 4 columns, but table "e6" has 3`},
		{"CREATE TABLE e7 " + wm + "'typed')", "42804", `column 1 of dead-letter table "typed" is a of type bigint, but column 1 of table "e7" is a of type integer`},
		{"CREATE TABLE e8 " + wm + "'strict')", "22023", `column "a" of dead-letter table "strict" is NOT NULL, but column "a" of table "e8" is not`},
		{"CREATE TABLE e9 " + wm + "'marked')", "22023", `dead-letter table "marked" has a watermark of its own`},
		{"CREATE TABLE e10 " + wm + "'mv')", "42809", `dead-letter table "mv" is not a table`},
		{"CREATE TABLE e11 " + wm + "'a b')", "22023", `invalid value for option "late_rows"`},
		{"CREATE TABLE e12 (a int, ts timestamptz) WITH (late_rows = 'narrow')", "22023", `option "late_rows" needs a watermark`},
		{"CREATE TABLE e13 " + wm + "'nosuch.dl')", "3F000", `schema "nosuch" does not exist`},
		{"ALTER TABLE ok1 SET (late_rows = 'ok1')", "22023", `table "ok1" cannot be its own dead-letter table`},
		{"ALTER TABLE ok1 SET (late_rows = 'keyed')", "22023", `dead-letter table "keyed" has a primary key`},
		{"ALTER TABLE narrow SET (late_rows = 'audit.dead')", "22023", `table "narrow" has no watermark`},
		{"ALTER TABLE ok1 SET (watermark = 'ts')", "0A000", "only late_rows can be changed"},
		{"DROP TABLE audit.dead", "2BP01", "cannot drop table dead because other objects depend on it"},
		{"DROP TABLE audit.dead CASCADE", "2BP01", "cannot drop table dead because other objects depend on it"},
		{"DROP SCHEMA audit CASCADE", "2BP01", "cannot drop table dead because other objects depend on it"},
		{"DROP TABLE dl2", "2BP01", "cannot drop table dl2 because other objects depend on it"},
		{"ALTER TABLE audit.dead ADD COLUMN c int", "0A000", "cannot add a column to table dead because it is the dead-letter table of table ok1"},
		{"ALTER TABLE ok1 ADD COLUMN c int", "0A000", "cannot add a column to table ok1 because its late rows go into table dead"},
		{"ALTER TABLE audit.dead ADD PRIMARY KEY (a)", "0A000", "cannot add a primary key to table dead because it is the dead-letter table of table ok1"},
	} {
		e := wantError(t, c.sql, execErr(rs, c.sql), c.state, c.msg)
		if !strings.Contains(e.Detail, "RS-") || e.Hint == "" {
			t.Errorf("%s: detail %q, hint %q: want an RS code and a hint", c.sql, e.Detail, e.Hint)
		}
	}
	e := wantError(t, "DROP TABLE dl2", execErr(rs, "DROP TABLE dl2"), "2BP01", "")
	if !strings.Contains(e.Detail, "late_rows of table ok3 names table dl2") {
		t.Fatalf("DROP TABLE dl2: detail %q, want it to name ok3", e.Detail)
	}
	// Once no table names it, a dead-letter table is an ordinary table.
	exec(t, rs, "ALTER TABLE ok3 RESET (late_rows)")
	exec(t, rs, "DROP TABLE dl2")
	exec(t, rs, "DROP TABLE ok1")
	exec(t, rs, "ALTER TABLE ok4 SET (late_rows = drop)")
	exec(t, rs, "ALTER TABLE audit.dead ADD COLUMN c int")
	exec(t, rs, "DROP SCHEMA audit CASCADE")
	// One DROP of both tables drops both, in either order.
	exec(t, rs, "CREATE TABLE dl3 (ts timestamptz)")
	exec(t, rs, "CREATE TABLE w3 (ts timestamptz) WITH (watermark = 'ts', late_rows = 'dl3')")
	exec(t, rs, "DROP TABLE dl3, w3")
	// A schema holding both tables drops with both.
	exec(t, rs, "CREATE SCHEMA s2")
	exec(t, rs, "CREATE TABLE s2.dl (ts timestamptz)")
	exec(t, rs, "CREATE TABLE s2.w (ts timestamptz) WITH (watermark = 'ts', late_rows = 's2.dl')")
	exec(t, rs, "DROP SCHEMA s2 CASCADE")
	if got := rowsText(t, rs, "SELECT count(*) FROM pg_class WHERE relname IN ('dl', 'w')"); got[0] != "0" {
		t.Fatalf("DROP SCHEMA s2 CASCADE left %s of its tables", got[0])
	}
}
