package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgState reads one session's pg_stat_activity row: state|wait_event_type|query.
func pgState(t *testing.T, c interface {
	Exec(context.Context, string) *pgconn.MultiResultReader
}, pid string) string {
	t.Helper()
	res, err := c.Exec(context.Background(), "SELECT state, coalesce(wait_event_type, ''), query FROM pg_stat_activity WHERE pid = "+pid).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || len(res[0].Rows) == 0 {
		return ""
	}
	r := res[0].Rows[0]
	return string(r[0]) + "|" + string(r[1]) + "|" + string(r[2])
}

// TestStatActivityCancelAndTerminate: pg_stat_activity lists every
// session with its state and statement, a session waiting for a row lock
// shows wait_event_type Lock; pg_cancel_backend cancels that wait (57014)
// and pg_terminate_backend ends a session (57P01), as in PostgreSQL.
func TestStatActivityCancelAndTerminate(t *testing.T) {
	srv := startServer(t, t.TempDir())
	a, b, c := connect(t, srv.url()), connect(t, srv.url()), connect(t, srv.url())
	exec(t, a, "CREATE TABLE acct (k int PRIMARY KEY, v int)")
	exec(t, a, "INSERT INTO acct VALUES (1, 0)")
	pidOf := func(conn interface {
		Exec(context.Context, string) *pgconn.MultiResultReader
	}) string {
		res, err := conn.Exec(context.Background(), "SELECT pg_backend_pid()").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return string(res[0].Rows[0][0])
	}
	pa, pb, pc := pidOf(a.PgConn()), pidOf(b.PgConn()), pidOf(c.PgConn())
	if pa == pb || pa == "1" {
		t.Fatalf("pg_backend_pid: a %s, b %s", pa, pb)
	}
	if got := pgState(t, c.PgConn(), pc); !strings.HasPrefix(got, "active||SELECT state") {
		t.Fatalf("the querying session's own row: %q", got)
	}
	exec(t, a, "BEGIN")
	exec(t, a, "UPDATE acct SET v = v + 1 WHERE k = 1")
	if got := pgState(t, c.PgConn(), pa); got != "idle in transaction||UPDATE acct SET v = v + 1 WHERE k = 1" {
		t.Fatalf("a holding the row lock: %q", got)
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := b.PgConn().Exec(context.Background(), "UPDATE acct SET v = v + 10 WHERE k = 1").ReadAll()
		blocked <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := pgState(t, c.PgConn(), pb)
		if got == "active|Lock|UPDATE acct SET v = v + 10 WHERE k = 1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b waiting for a's lock shows %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := rowsText(t, c, "SELECT pg_cancel_backend("+pb+")"); got[0] != "t" {
		t.Fatalf("pg_cancel_backend: %v", got)
	}
	var pgErr *pgconn.PgError
	if err := <-blocked; !errors.As(err, &pgErr) || pgErr.Code != "57014" {
		t.Fatalf("b's canceled UPDATE: %v", err)
	}
	if got := rowsText(t, c, "SELECT pg_cancel_backend(2147483647)"); got[0] != "f" {
		t.Fatalf("pg_cancel_backend of no session: %v", got)
	}
	if got := rowsText(t, c, "SELECT pg_terminate_backend("+pa+")"); got[0] != "t" {
		t.Fatalf("pg_terminate_backend: %v", got)
	}
	// NB: as in PostgreSQL, pg_terminate_backend signals the session and
	// returns; the session ends soon after, not necessarily before the
	// next statement arrives (seen once in CI).
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, err = a.PgConn().Exec(context.Background(), "SELECT 1").ReadAll()
		if err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err == nil {
		t.Fatal("the terminated session still answers after 10s")
	}
	if errors.As(err, &pgErr) && pgErr.Code != "57P01" {
		t.Fatalf("the terminated session: %v, want 57P01 or a closed connection", err)
	}
	// a's transaction ended with it: b's update now gets the lock.
	exec(t, b, "UPDATE acct SET v = v + 10 WHERE k = 1")
	if got := rowsText(t, c, "SELECT v FROM acct"); got[0] != "10" {
		t.Fatalf("after a was terminated: v = %v, want 10", got)
	}
	deadline = time.Now().Add(30 * time.Second)
	for pgState(t, c.PgConn(), pa) != "" {
		if time.Now().After(deadline) {
			t.Fatal("the terminated session is still listed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
