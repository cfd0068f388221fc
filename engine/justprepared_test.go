package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestExecuteAfterConcurrentDropRebinds: a statement prepared (Parse,
// Sync) and executed in a later batch after another session dropped its
// table is bound again and fails with 42P01, as in PostgreSQL; only a
// Query message's statement runs in the catalog its Prepare just bound it
// in.
func TestExecuteAfterConcurrentDropRebinds(t *testing.T) {
	srv := startServer(t, "memory://")
	ctx := context.Background()
	c1, c2 := connect(t, srv.url()), connect(t, srv.url())
	exec(t, c1, "CREATE TABLE jp (k int PRIMARY KEY)")
	exec(t, c1, "INSERT INTO jp VALUES (1)")
	if _, err := c1.PgConn().Prepare(ctx, "s", "SELECT k FROM jp", nil); err != nil {
		t.Fatal(err)
	}
	exec(t, c2, "DROP TABLE jp")
	_, err := c1.PgConn().ExecPrepared(ctx, "s", nil, nil, nil).Close()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P01" {
		t.Fatalf("executing after DROP TABLE: %v, want 42P01", err)
	}
	// A table of the same name again: the statement reads the new one.
	if _, err := c1.PgConn().Prepare(ctx, "s2", "SELECT k FROM jp2", nil); err == nil {
		t.Fatal("preparing over a missing table succeeded")
	}
	exec(t, c1, "CREATE TABLE jp2 (k int PRIMARY KEY)")
	exec(t, c1, "INSERT INTO jp2 VALUES (1)")
	if _, err := c1.PgConn().Prepare(ctx, "s2", "SELECT k FROM jp2", nil); err != nil {
		t.Fatal(err)
	}
	exec(t, c2, "DROP TABLE jp2")
	exec(t, c2, "CREATE TABLE jp2 (k int PRIMARY KEY)")
	exec(t, c2, "INSERT INTO jp2 VALUES (2)")
	res := c1.PgConn().ExecPrepared(ctx, "s2", nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "2" {
		t.Fatalf("executing after the table was recreated: rows %q, %v; want 2", res.Rows, res.Err)
	}
	// The simple protocol's statements still bind and run as before.
	if got := rowsText(t, c1, "SELECT 1; SELECT 2"); len(got) != 2 {
		t.Fatalf("SELECT 1; SELECT 2 = %v", got)
	}
}
