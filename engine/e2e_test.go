package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// server is an in-process `rockstream start` (internal/enginetest).
type server struct{ *enginetest.Server }

func (s server) url() string { return s.URL }
func (s server) stop()       { s.Stop() }

func startServer(t *testing.T, storage string) server {
	t.Helper()
	return server{enginetest.StartServer(t, storage)}
}

// startServerB starts a server for a benchmark and returns its URL.
func startServerB(b *testing.B, storage string) string {
	return enginetest.StartServer(b, storage).URL
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// rowsText runs a query in the simple protocol and returns its rows as
// sorted text lines (a multiset comparison).
func rowsText(t *testing.T, c *pgx.Conn, sql string) []string {
	t.Helper()
	res, err := c.PgConn().Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, r := range res {
		for _, row := range r.Rows {
			parts := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					parts[i] = "NULL"
				} else {
					parts[i] = string(v)
				}
			}
			out = append(out, strings.Join(parts, "|"))
		}
	}
	sort.Strings(out)
	return out
}

func exec(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.PgConn().Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// oracle runs the same statements on RockStream and PostgreSQL 15 and
// checks every view against its defining query on PostgreSQL.
type oracle struct {
	t     *testing.T
	rs    *pgx.Conn
	pg    *pgx.Conn
	views map[string]string // view name → defining query
	names []string
}

func newOracle(t *testing.T, rs *pgx.Conn) *oracle {
	pg := pgtest.Connect(t)
	schema := fmt.Sprintf("rs_%d", time.Now().UnixNano())
	exec(t, pg, "CREATE SCHEMA "+schema+"; SET search_path = "+schema)
	t.Cleanup(func() { exec(t, pg, "DROP SCHEMA "+schema+" CASCADE") })
	return &oracle{t: t, rs: rs, pg: pg, views: map[string]string{}}
}

// both runs DML/DDL on both systems.
func (o *oracle) both(sql string) {
	o.t.Helper()
	exec(o.t, o.rs, sql)
	exec(o.t, o.pg, sql)
}

func (o *oracle) view(name, query string) {
	o.t.Helper()
	exec(o.t, o.rs, "CREATE MATERIALIZED VIEW "+name+" AS "+query)
	o.views[name] = query
	o.names = append(o.names, name)
}

func (o *oracle) check(when string) {
	o.t.Helper()
	for _, name := range o.names {
		got := rowsText(o.t, o.rs, "SELECT * FROM "+name)
		want := rowsText(o.t, o.pg, o.views[name])
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			o.t.Fatalf("%s: view %s differs from PostgreSQL\n got: %q\nwant: %q", when, name, got, want)
		}
	}
}

// checkWith is check plus each ad-hoc query run on both servers, whose
// answers (in order) must be equal.
func (o *oracle) checkWith(when string, adhoc []string) {
	o.t.Helper()
	o.check(when)
	for _, q := range adhoc {
		got, want := rowsText(o.t, o.rs, q), rowsText(o.t, o.pg, q)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			o.t.Fatalf("%s: %s differs from PostgreSQL\n got: %q\nwant: %q", when, q, got, want)
		}
	}
}

// TestFirstRun is the README's first run: tables, a join+GROUP BY view and
// a filter view, INSERT/UPDATE/DELETE, every view equal to PostgreSQL's
// answer after each step, and again after a restart over the same storage.
func TestFirstRun(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, region text)")
	o.both("CREATE TABLE orders (id bigint PRIMARY KEY, customer_id int, amount numeric(10,2), status text)")
	o.view("revenue_by_region", "SELECT c.region, count(*) AS orders, sum(o.amount) AS revenue FROM orders o JOIN customers c ON o.customer_id = c.id WHERE o.status <> 'cancelled' GROUP BY c.region")
	o.view("big_orders", "SELECT id, amount FROM orders WHERE amount > 100")
	o.check("empty")
	o.both("INSERT INTO customers VALUES (1, 'ada', 'eu'), (2, 'bob', 'us'), (3, 'cy', NULL)")
	o.both("INSERT INTO orders VALUES (10, 1, 50.00, 'paid'), (11, 1, 150.50, 'paid'), (12, 2, 20.25, 'cancelled'), (13, 3, 999.99, 'paid')")
	o.check("after inserts")
	o.both("UPDATE orders SET status = 'paid' WHERE id = 12")
	o.both("UPDATE customers SET region = 'us' WHERE id = 1")
	o.check("after updates")
	o.both("DELETE FROM orders WHERE amount < 30")
	o.both("BEGIN; INSERT INTO orders VALUES (14, 2, 500, 'paid'); UPDATE orders SET amount = amount * 2 WHERE customer_id = 1; COMMIT")
	o.check("after delete and a transaction")
	// A view created over existing data is backfilled.
	o.view("per_customer", "SELECT customer_id, max(amount) AS biggest, count(*) AS n FROM orders GROUP BY customer_id")
	o.check("after backfill")
	srv.stop()
	srv = startServer(t, dir)
	o.rs = connect(t, srv.url())
	o.check("after restart")
	o.both("INSERT INTO orders VALUES (15, 3, 1.00, 'paid')")
	o.check("after restart and insert")
}

// TestGenerateRowsSource: a generator source feeds a live view; after a
// restart the sequence continues with no gap and no duplicate.
func TestGenerateRowsSource(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE SOURCE gen FROM GENERATE ROWS AS (id BIGINT GENERATED, k INT UNIFORM(1, 3), tag TEXT PICK('x', 'y')) RATE = 200 PER SECOND`)
	exec(t, rs, "CREATE MATERIALIZED VIEW gen_counts AS SELECT k, count(*) AS n FROM gen GROUP BY k")
	waitFor := func(min int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			rows := rowsText(t, rs, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM gen")
			var n, distinct, lo, hi int
			fmt.Sscanf(rows[0], "%d|%d|%d|%d", &n, &distinct, &lo, &hi)
			if n >= min {
				if distinct != n || lo != 1 || hi != n {
					t.Fatalf("generated ids are not 1..%d without gaps or duplicates: %s", n, rows[0])
				}
				// The view equals the query over the source at the same
				// time: one statement reads both at one frontier (separate
				// SELECTs would see different epochs while rows flow).
				diff := rowsText(t, rs, `(SELECT 'view' AS side, k, n FROM gen_counts EXCEPT SELECT 'view', k, count(*) FROM gen GROUP BY k)
					UNION ALL (SELECT 'query', k, count(*) FROM gen GROUP BY k EXCEPT SELECT 'query', k, n FROM gen_counts)`)
				if len(diff) != 0 {
					t.Fatalf("view and query over the source differ: %v", diff)
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d rows generated", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(50)
	srv.stop()
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	waitFor(150)
	exec(t, rs, "DROP MATERIALIZED VIEW gen_counts")
	exec(t, rs, "DROP SOURCE gen")
}

// TestSubscribe streams a view's changes with a snapshot and progress rows.
func TestSubscribe(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE s (id int PRIMARY KEY, g text)")
	exec(t, rs, "INSERT INTO s VALUES (1, 'a'), (2, 'b')")
	exec(t, rs, "CREATE MATERIALIZED VIEW sg AS SELECT g, count(*) AS n FROM s GROUP BY g")
	sub := connect(t, srv.url())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := sub.Query(ctx, "SUBSCRIBE sg WITH (SNAPSHOT)")
	if err != nil {
		t.Fatal(err)
	}
	// Cancel first (pgx sends a CancelRequest), then close the rows: an
	// endless subscription ends only by cancellation.
	defer func() { cancel(); rows.Close() }()
	type line struct {
		progressed bool
		diff       int64
		g          string
		n          int64
	}
	next := func() line {
		t.Helper()
		if !rows.Next() {
			t.Fatalf("subscription ended: %v", rows.Err())
		}
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		l := line{progressed: vals[1].(bool)}
		if !l.progressed {
			l.diff = vals[2].(int64)
			l.g = vals[3].(string)
			l.n = vals[4].(int64)
		}
		return l
	}
	// Snapshot: (a,1), (b,1), then a progress row.
	got := map[string]int64{}
	for {
		l := next()
		if l.progressed {
			break
		}
		got[fmt.Sprintf("%s:%d", l.g, l.n)] += l.diff
	}
	if got["a:1"] != 1 || got["b:1"] != 1 || len(got) != 2 {
		t.Fatalf("snapshot %v", got)
	}
	exec(t, rs, "INSERT INTO s VALUES (3, 'a')")
	got = map[string]int64{}
	for len(got) < 2 {
		l := next()
		if !l.progressed {
			got[fmt.Sprintf("%s:%d", l.g, l.n)] += l.diff
		}
	}
	if got["a:1"] != -1 || got["a:2"] != 1 {
		t.Fatalf("update diffs %v, want a:1 -1 and a:2 +1", got)
	}
}

// TestNumericScaleAfterRetraction: PostgreSQL's numeric SUM/AVG show the
// largest scale among the current inputs, so retracting the only 2-digit
// value must drop the scale again.
func TestNumericScaleAfterRetraction(t *testing.T) {
	srv := startServer(t, t.TempDir())
	o := newOracle(t, connect(t, srv.url()))
	o.both("CREATE TABLE n (id int PRIMARY KEY, g text, v numeric)")
	o.view("n_sum", "SELECT g, sum(v) AS s, avg(v) AS a, sum(DISTINCT v) AS sd, min(v), max(v) FROM n GROUP BY g")
	o.view("n_total", "SELECT sum(v) AS s, avg(v) AS a FROM n")
	o.both("INSERT INTO n VALUES (1, 'a', 1.25), (2, 'a', 2), (3, 'a', 3.5), (4, 'b', NULL)")
	o.check("inserted")
	o.both("DELETE FROM n WHERE id = 1")
	o.check("retracted the 2-digit value")
	o.both("UPDATE n SET v = 4 WHERE id = 3")
	o.check("only integers left")
	o.both("INSERT INTO n VALUES (5, 'a', 'NaN'), (6, 'b', 'NaN')")
	o.check("NaN inserted")
	o.both("DELETE FROM n WHERE id = 5")
	o.both("UPDATE n SET v = 7.125 WHERE id = 6")
	o.check("NaN retracted")
	o.both("INSERT INTO n VALUES (7, 'a', 'Infinity'), (8, 'a', '-Infinity'), (9, 'b', 'Infinity')")
	o.check("infinities inserted")
	o.both("DELETE FROM n WHERE id = 8")
	o.check("one infinity left")
	o.both("DELETE FROM n WHERE id IN (7, 9)")
	o.check("infinities retracted")

	// numeric(p,s) with p ≤ 18 sums as merge words (op/agg_linear.go):
	// values at the type's bounds, NaN, and retractions of both.
	o.both("CREATE TABLE m (id int PRIMARY KEY, g text, v numeric(18,2))")
	o.view("m_sum", "SELECT g, sum(v) AS s, avg(v) AS a, count(v) AS c FROM m GROUP BY g")
	o.view("m_total", "SELECT sum(v) AS s, avg(v) AS a FROM m")
	o.both("INSERT INTO m VALUES (1, 'a', 9999999999999999.99), (2, 'a', 9999999999999999.99), (3, 'a', -0.5), (4, 'b', 'NaN'), (5, 'b', 1.25), (6, 'b', NULL)")
	o.check("numeric(18,2) inserted")
	o.both("DELETE FROM m WHERE id IN (2, 4)")
	o.check("numeric(18,2) bound and NaN retracted")
	o.both("UPDATE m SET v = v / 3 WHERE id = 5")
	o.check("numeric(18,2) rounded on update")
}

// TestSchemaEvolutionAndViewsOnViews: ADD COLUMN fills existing rows with
// the default as PostgreSQL does, views on views are maintained, and DROP
// ... CASCADE / RESTRICT behave like PostgreSQL's.
func TestSchemaEvolutionAndViewsOnViews(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE e (id int PRIMARY KEY, v int)")
	o.both("INSERT INTO e VALUES (1, 10), (2, 20), (3, NULL)")
	o.both("ALTER TABLE e ADD COLUMN w int DEFAULT 7")
	o.both("ALTER TABLE e ADD COLUMN note text")
	o.both("INSERT INTO e VALUES (4, 40, 8, 'x')")
	o.view("e_all", "SELECT id, v, w, note FROM e")
	o.view("e_sum", "SELECT w, sum(v) AS s, count(*) AS n FROM e GROUP BY w")
	exec(t, rs, "CREATE MATERIALIZED VIEW e_big AS SELECT w, s FROM e_sum WHERE n > 1")
	o.views["e_big"] = "SELECT w, s FROM (SELECT w, sum(v) AS s, count(*) AS n FROM e GROUP BY w) x WHERE n > 1"
	o.names = append(o.names, "e_big")
	o.check("after ADD COLUMN")
	o.both("UPDATE e SET w = 8 WHERE id = 1")
	o.both("DELETE FROM e WHERE id = 2")
	o.check("after changes through a view on a view")
	if _, err := rs.Exec(context.Background(), "ALTER TABLE e ADD COLUMN t timestamptz DEFAULT now()"); err == nil {
		t.Fatal("ADD COLUMN with a volatile default must be refused")
	}
	if _, err := rs.Exec(context.Background(), "DROP MATERIALIZED VIEW e_sum"); err == nil || !strings.Contains(err.Error(), "2BP01") {
		t.Fatalf("DROP of a view with dependents: %v, want 2BP01", err)
	}
	exec(t, rs, "DROP MATERIALIZED VIEW e_sum CASCADE")
	if _, err := rs.Exec(context.Background(), "SELECT * FROM e_big"); err == nil {
		t.Fatal("e_big must be gone after CASCADE")
	}
	o.names = []string{"e_all"}
	o.check("after DROP CASCADE")
}

// TestConstraints: NOT NULL, primary key and CHECK violations reject the
// statement with PostgreSQL's SQLSTATE and message, and commit nothing.
func TestConstraints(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	o := newOracle(t, rs)
	o.both("CREATE TABLE c (id int PRIMARY KEY, v int CHECK (v > 0), lo int, hi int, name text NOT NULL, CHECK (lo < hi))")
	o.both("INSERT INTO c VALUES (1, 5, 1, 2, 'a')")
	o.view("c_all", "SELECT * FROM c")
	for _, bad := range []string{
		"INSERT INTO c VALUES (2, -1, 1, 2, 'b')",
		"INSERT INTO c VALUES (2, 1, 3, 2, 'b')",
		"INSERT INTO c VALUES (2, 1, 1, 2, NULL)",
		"INSERT INTO c VALUES (1, 1, 1, 2, 'dup')",
		"UPDATE c SET v = 0 WHERE id = 1",
		"INSERT INTO c VALUES (1, 1, 1, 2, 'x') ON CONFLICT (id) DO UPDATE SET hi = 0",
	} {
		_, rsErr := rs.Exec(context.Background(), bad)
		_, pgErr := o.pg.Exec(context.Background(), bad)
		if rsErr == nil || pgErr == nil {
			t.Fatalf("%s: RockStream error %v, PostgreSQL error %v (both must fail)", bad, rsErr, pgErr)
		}
		if got, want := sqlState(rsErr), sqlState(pgErr); got != want {
			t.Fatalf("%s: SQLSTATE %s, PostgreSQL %s (%v)", bad, got, want, rsErr)
		}
		if got, want := message(rsErr), message(pgErr); got != want {
			t.Fatalf("%s: message %q, PostgreSQL %q", bad, got, want)
		}
	}
	o.both("INSERT INTO c VALUES (2, NULL, NULL, 1, 'null checks pass')")
	// A view's columns must have distinct names, as in PostgreSQL (42701).
	_, rsErr := rs.Exec(context.Background(), "CREATE MATERIALIZED VIEW dup AS SELECT id, id FROM c")
	_, pgErr := o.pg.Exec(context.Background(), "CREATE MATERIALIZED VIEW dup AS SELECT id, id FROM c")
	if sqlState(rsErr) != "42701" || sqlState(pgErr) != "42701" {
		t.Fatalf("duplicate view column: RockStream %v, PostgreSQL %v (want 42701 from both)", rsErr, pgErr)
	}
	o.check("after rejected statements")
}

func sqlState(err error) string {
	var pgErr interface{ SQLState() string }
	if errors.As(err, &pgErr) {
		return pgErr.SQLState()
	}
	return ""
}

func message(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	return err.Error()
}

// TestSubscribeEndsWhenItsViewIsDropped: a subscription to a view dropped
// meanwhile ends with 42P01 naming the view (not its internal id).
func TestSubscribeEndsWhenItsViewIsDropped(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE sd (id int PRIMARY KEY, g text)")
	exec(t, rs, "CREATE MATERIALIZED VIEW sd_counts AS SELECT g, count(*) AS n FROM sd GROUP BY g")
	sub := connect(t, srv.url())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := sub.Query(ctx, "SUBSCRIBE sd_counts")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); rows.Close() }()
	exec(t, rs, "INSERT INTO sd VALUES (1, 'a')")
	exec(t, rs, "DROP MATERIALIZED VIEW sd_counts")
	exec(t, rs, "INSERT INTO sd VALUES (2, 'b')")
	for rows.Next() {
	}
	err = rows.Err()
	if err == nil || !strings.Contains(err.Error(), "materialized view sd_counts was dropped") || !strings.Contains(err.Error(), "42P01") {
		t.Fatalf("subscription ended with %v, want 42P01 naming sd_counts", err)
	}
}
