package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// heavyQuery evaluates a million-row cross join (seconds of work).
const heavyQuery = `SELECT sum(a.k * b.k + c.k) FROM t a, t b, t c`

func loadHeavy(t *testing.T, url string) {
	t.Helper()
	c := harness.Dial(t, "rockstream", url)
	var vals []string
	for i := 1; i <= 100; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	if _, err := c.Exec(`CREATE TABLE t (k int PRIMARY KEY); INSERT INTO t VALUES ` + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownStopsRunningQuery: a graceful shutdown with a query running
// stops the server (the statement's context is cancelled, so the session
// returns: TestCancelStopsEvaluation shows it returns at once) and the
// client gets an error, not a result.
func TestShutdownStopsRunningQuery(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	loadHeavy(t, srv.URL)
	conn, err := pgx.Connect(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	type result struct {
		sum int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.err = conn.QueryRow(context.Background(), heavyQuery).Scan(&r.sum)
		done <- r
	}()
	time.Sleep(300 * time.Millisecond) // let the query start (if it has not, it is cancelled all the same)
	srv.Stop()
	r := <-done
	if r.err == nil {
		t.Fatalf("the query ran to completion (sum %d) instead of being cancelled by the shutdown", r.sum)
	}
}

// TestStatementTimeoutCancelsQuery: statement_timeout cancels the
// evaluation with 57014 and the session stays usable.
func TestStatementTimeoutCancelsQuery(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	loadHeavy(t, srv.URL)
	c := harness.Dial(t, "rockstream", srv.URL)
	if _, err := c.Exec(`SET statement_timeout = 200`); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(heavyQuery)
	if harness.SQLState(err) != "57014" {
		t.Fatalf("heavy query under statement_timeout: %v", err)
	}
	if _, err := c.Exec(`SET statement_timeout = 0`); err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(`SELECT count(*) FROM t`)
	if err != nil || harness.Lines(res.Rows)[0] != "100" {
		t.Fatalf("session after a cancelled statement: %v %v", res, err)
	}
}
