package engine_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// slowViewSQL is the reproducer: ln at a thousand digits of
// precision costs a large fraction of a second per row, so over
// slowViewRows rows the view's backfill takes minutes; each test below
// ends it long before.
const (
	slowViewSQL  = `CREATE MATERIALIZED VIEW v AS SELECT a, ln(1e-1000 + a) AS l FROM big`
	slowViewRows = 2000
)

// backfillServer starts a server with table big (slowViewRows rows) and
// table other, and returns it with a connection.
func backfillServer(t *testing.T) (*enginetest.Server, *pgx.Conn) {
	t.Helper()
	srv := enginetest.StartServer(t, t.TempDir())
	conn := dialPgx(t, srv.URL)
	for _, sql := range []string{
		`CREATE TABLE big (a int PRIMARY KEY)`,
		fmt.Sprintf(`INSERT INTO big SELECT generate_series(1, %d)`, slowViewRows),
		`CREATE TABLE other (k int PRIMARY KEY)`,
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	return srv, conn
}

// viewState is view v's state in SHOW VIEW STATUS ("" when it has no
// line).
func viewState(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SHOW VIEW STATUS`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	state := ""
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		if vals[0] == "v" {
			state = vals[1].(string)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return state
}

// awaitBackfilling waits until view v is being backfilled. The bound is
// a deadlock guard, not a timing assertion: the backfill starts right
// after the CREATE reaches the shard.
func awaitBackfilling(t *testing.T, conn *pgx.Conn, created <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); viewState(t, conn) != "backfilling"; {
		select {
		case err := <-created:
			t.Fatalf("the CREATE ended before its backfill was seen running: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the view's backfill never showed in SHOW VIEW STATUS")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startSlowCreate runs slowViewSQL in a new session of srv and waits
// until its backfill shows; the CREATE's outcome arrives on created.
func startSlowCreate(t *testing.T, srv *enginetest.Server, conn *pgx.Conn) (creator *pgx.Conn, created <-chan error) {
	t.Helper()
	creator = dialPgx(t, srv.URL)
	done := make(chan error, 1)
	go func() {
		_, err := creator.Exec(context.Background(), slowViewSQL)
		done <- err
	}()
	awaitBackfilling(t, conn, done)
	return creator, done
}

// requireViewGoneAndCreatable checks that a canceled CREATE left nothing
// behind: no catalog entry, no backfill or failed line, and the same name
// can be created again.
func requireViewGoneAndCreatable(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), `SELECT * FROM v`); err == nil {
		t.Fatal("the view of a canceled CREATE is still readable")
	} else if sqlState(err) != "42P01" {
		t.Fatalf("reading the view of a canceled CREATE: %v, want 42P01", err)
	}
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_class WHERE relname = 'v'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("pg_class rows named v after the canceled CREATE: %d (%v)", n, err)
	}
	if s := viewState(t, conn); s != "" {
		t.Fatalf("SHOW VIEW STATUS still has the canceled view, state %q", s)
	}
	if _, err := conn.Exec(context.Background(), `CREATE MATERIALIZED VIEW v AS SELECT a FROM big WHERE a <= 10`); err != nil {
		t.Fatalf("CREATE of the same name after the canceled one: %v", err)
	}
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM v`).Scan(&n); err != nil || n != 10 {
		t.Fatalf("the view created again has %d rows (%v), want 10", n, err)
	}
}

// TestBackfillDoesNotBlockCommits (issue 18, R2 item 4): while a slow
// CREATE MATERIALIZED VIEW backfills, another session's INSERT into
// another table commits and is readable — it completes while the CREATE
// is still running — and a cancel request then stops the backfill: the
// CREATE fails with 57014, the view is gone, and the name is free again.
func TestBackfillDoesNotBlockCommits(t *testing.T) {
	srv, conn := backfillServer(t)
	creator, created := startSlowCreate(t, srv, conn)
	for k := 1; k <= 3; k++ {
		if _, err := conn.Exec(context.Background(), `INSERT INTO other VALUES ($1)`, k); err != nil {
			t.Fatalf("INSERT during the backfill: %v", err)
		}
	}
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM other`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("other has %d rows (%v) during the backfill, want 3", n, err)
	}
	select {
	case err := <-created:
		t.Fatalf("the CREATE ended (%v) before the INSERTs were checked: they may have waited for it", err)
	default:
	}
	if s := viewState(t, conn); s != "backfilling" {
		t.Fatalf("view state after the INSERTs %q, want backfilling", s)
	}
	// A CancelRequest (what psql's Ctrl-C sends) for the CREATE's session.
	if err := creator.PgConn().CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := <-created
	if sqlState(err) != "57014" || !strings.Contains(message(err), "user request") {
		t.Fatalf("canceled CREATE: %v, want 57014 canceling statement due to user request", err)
	}
	requireViewGoneAndCreatable(t, conn)
}

// TestStatementTimeoutStopsBackfill: statement_timeout ends a slow
// CREATE MATERIALIZED VIEW with 57014 "due to statement timeout", and its
// backfill with it: nothing of the view stays behind.
func TestStatementTimeoutStopsBackfill(t *testing.T) {
	srv, conn := backfillServer(t)
	creator := dialPgx(t, srv.URL)
	if _, err := creator.Exec(context.Background(), `SET statement_timeout = '1s'`); err != nil {
		t.Fatal(err)
	}
	_, err := creator.Exec(context.Background(), slowViewSQL)
	if sqlState(err) != "57014" || !strings.Contains(message(err), "statement timeout") {
		t.Fatalf("CREATE under statement_timeout: %v, want 57014 canceling statement due to statement timeout", err)
	}
	// The session that timed out is usable, and the name is free.
	if _, err := creator.Exec(context.Background(), `SET statement_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	requireViewGoneAndCreatable(t, creator)
	var n int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM big`).Scan(&n); err != nil || n != slowViewRows {
		t.Fatalf("big has %d rows (%v)", n, err)
	}
}

// TestBackfillProgressSeenFromAnotherSession: a view being filled shows in
// rockstream_catalog.progress with its phase and the input rows fed so
// far, and leaves it when its CREATE is canceled.
func TestBackfillProgressSeenFromAnotherSession(t *testing.T) {
	srv, conn := backfillServer(t)
	creator, created := startSlowCreate(t, srv, conn)
	progress := func() string {
		var out []string
		rows, err := conn.Query(context.Background(), `SELECT kind, relation, phase, rows_done > 0, rows_done <= $1 FROM rockstream_catalog.progress`, slowViewRows)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = fmt.Sprint(v)
			}
			out = append(out, strings.Join(parts, "|"))
		}
		return strings.Join(out, "; ")
	}
	for deadline := time.Now().Add(time.Minute); ; {
		got := progress()
		if got == "backfill|v|reading inputs|true|true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rockstream_catalog.progress during the backfill: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The estimated percent follows the rows fed (the rows are spread
	// evenly over the buckets the scan goes through in order), here and in
	// SHOW VIEW STATUS.
	for deadline := time.Now().Add(time.Minute); ; {
		var done int64
		var pct float32
		err := conn.QueryRow(context.Background(), `SELECT rows_done, percent FROM rockstream_catalog.progress WHERE relation = 'v'`).Scan(&done, &pct)
		if err != nil {
			t.Fatal(err)
		}
		want := 100 * float64(done) / float64(slowViewRows)
		if pct > 0 && pct < 100 && math.Abs(float64(pct)-want) < 15 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backfill at %d of %d input rows shows %.1f%%", done, slowViewRows, pct)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, line := range rowsText(t, conn, "SHOW VIEW STATUS") {
		if f := strings.Split(line, "|"); f[0] == "v" && (f[1] != "backfilling" || f[len(f)-1] == "NULL") {
			t.Fatalf("SHOW VIEW STATUS during the backfill shows no percent: %s", line)
		}
	}
	if err := creator.PgConn().CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-created; sqlState(err) != "57014" {
		t.Fatalf("canceled CREATE: %v", err)
	}
	if got := progress(); got != "" {
		t.Fatalf("rockstream_catalog.progress after the canceled CREATE: %q", got)
	}
}

// TestSubscribeWaitsForTheBackfill: SUBSCRIBE to a view still being
// filled waits for the fill, as a read does (it failed at once naming the
// view by an internal id); when the fill is canceled instead, it fails
// naming the view.
func TestSubscribeWaitsForTheBackfill(t *testing.T) {
	srv, conn := backfillServer(t)
	creator, created := startSlowCreate(t, srv, conn)
	sub := dialPgx(t, srv.URL)
	subscribed := make(chan error, 1)
	go func() {
		rows, err := sub.Query(context.Background(), "SUBSCRIBE v")
		if err == nil {
			rows.Next()
			err = rows.Err()
			rows.Close()
		}
		subscribed <- err
	}()
	// The subscription waits while the view is being filled (a bound on a
	// deadlock guard's scale, not a timing assertion: it failed at once).
	select {
	case err := <-subscribed:
		t.Fatalf("SUBSCRIBE to a view being filled ended at once: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := creator.PgConn().CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-created; sqlState(err) != "57014" {
		t.Fatalf("canceled CREATE: %v", err)
	}
	err := <-subscribed
	if err == nil || !strings.Contains(message(err), "materialized view v ") {
		t.Fatalf("SUBSCRIBE to a view whose fill was canceled: %v, want an error naming v", err)
	}
}
