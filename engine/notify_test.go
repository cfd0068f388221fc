package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// notifyScript is run by the notifying session; the comment after each
// group says what PostgreSQL delivers.
var notifyScript = []string{
	`NOTIFY ch1, 'a'`,                                         // delivered at once (autocommit), to the sender too
	`SELECT pg_notify('ch2', 'b')`,                            // the function form
	`SELECT pg_notify('ch1', NULL)`,                           // an empty payload
	`SELECT pg_notify(NULL, 'x')`,                             // 22023 channel name cannot be empty
	`SELECT pg_notify('', 'x')`,                               // same
	`NOTIFY ch1, 'one'; NOTIFY ch1, 'one'; NOTIFY ch1, 'two'`, // one implicit transaction: 'one' once
	`BEGIN`,
	`NOTIFY ch1, 'dup'`,
	`NOTIFY ch2, 'dup'`,
	`NOTIFY ch1, 'dup'`, // delivered once, in first-notified order
	`SELECT pg_notify('ch1', 'c')`,
	`COMMIT`,
	`BEGIN`,
	`NOTIFY ch1, 'rolled back'`, // never delivered
	`ROLLBACK`,
	`BEGIN`,
	`NOTIFY ch1, 'kept'`,
	`SAVEPOINT s`,
	`NOTIFY ch1, 'undone'`, // undone by ROLLBACK TO
	`ROLLBACK TO SAVEPOINT s`,
	`COMMIT`,
	`BEGIN`,
	`NOTIFY ch1, 'failed'`,
	`SELECT 1/0`,
	`COMMIT`, // rolls back
	`BEGIN READ ONLY`,
	`NOTIFY ch1, 'read only'`, // allowed, as in PostgreSQL
	`COMMIT`,
	`NOTIFY nobody, 'x'`,
	`NOTIFY "Mixed", 'quoted'`,
	`NOTIFY Mixed, 'folded'`,
}

// TestListenNotifyMatchesPostgres: two sessions on the same server, one
// LISTENing (and receiving with pgconn's WaitForNotification), one
// notifying (also listening on ch1, so it receives its own). The
// notifications each session receives, and where, and every statement's
// outcome, must equal PostgreSQL 15's. The listener also checks that it
// receives nothing while inside a transaction block, and nothing on a
// channel it UNLISTENed.
func TestListenNotifyMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := runNotifyScenario(t, srv.URL)
	pg := runNotifyScenario(t, pgtest.Start(t))
	if len(pg) < 10 {
		t.Fatalf("PostgreSQL's run recorded too little: %q", pg)
	}
	for i := 0; i < max(len(rs), len(pg)); i++ {
		var a, b string
		if i < len(rs) {
			a = rs[i]
		}
		if i < len(pg) {
			b = pg[i]
		}
		if a != b {
			t.Errorf("event %d:\n  rockstream: %s\n  postgresql: %s", i, a, b)
		}
	}
}

// runNotifyScenario runs the scenario against url and returns its events.
func runNotifyScenario(t *testing.T, url string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var events []string
	var senderPID uint32
	record := func(who string) func(*pgconn.PgConn, *pgconn.Notification) {
		return func(_ *pgconn.PgConn, n *pgconn.Notification) {
			mu.Lock()
			defer mu.Unlock()
			from := "other"
			if n.PID == senderPID {
				from = "sender"
			}
			events = append(events, fmt.Sprintf("%s got %s %q from %s", who, n.Channel, n.Payload, from))
		}
	}
	connect := func(who string) *pgconn.PgConn {
		cfg, err := pgconn.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.OnNotification = record(who)
		c, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(context.Background()) })
		return c
	}
	note := func(s string) {
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	}
	run := func(who string, c *pgconn.PgConn, sql string) {
		note(who + ": " + sql)
		_, err := c.Exec(ctx, sql).ReadAll()
		if err != nil {
			var pgErr *pgconn.PgError
			msg := err.Error()
			if asPgError(err, &pgErr) {
				msg = pgErr.Code + " " + pgErr.Message
			}
			note(who + " error: " + msg)
		}
	}
	listener, sender := connect("listener"), connect("sender")
	senderPID = sender.PID()
	run("listener", listener, `LISTEN ch1; LISTEN ch2; LISTEN mixed; LISTEN "Mixed"`)
	run("sender", sender, `LISTEN ch1`)
	for _, sql := range notifyScript {
		run("sender", sender, sql)
	}
	run("sender", sender, `NOTIFY ch1, 'end of script'`)
	// The listener waits (idle) for everything up to the marker.
	waitFor := func(marker string) {
		for {
			mu.Lock()
			done := strings.Contains(strings.Join(events, "\n"), "listener got ch1 \""+marker+"\"")
			mu.Unlock()
			if done {
				return
			}
			if err := listener.WaitForNotification(ctx); err != nil {
				t.Fatalf("waiting for %q: %v\nevents so far:\n%s", marker, err, strings.Join(events, "\n"))
			}
		}
	}
	waitFor("end of script")
	// Inside a transaction block the listener gets nothing until COMMIT.
	run("listener", listener, `BEGIN`)
	run("sender", sender, `NOTIFY ch1, 'while the listener is in a block'`)
	run("listener", listener, `SELECT 1`)
	run("listener", listener, `COMMIT`)
	// After UNLISTEN, nothing on that channel.
	run("listener", listener, `UNLISTEN ch2`)
	run("sender", sender, `NOTIFY ch2, 'after unlisten'; NOTIFY ch1, 'second marker'`)
	waitFor("second marker")
	run("listener", listener, `UNLISTEN *`)
	run("sender", sender, `NOTIFY ch1, 'after unlisten all'`)
	run("listener", listener, `SELECT 2`)
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), events...)
}
