package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestExplicitTransactionsNeverLoseUpdates: as in PostgreSQL's READ
// COMMITTED, an UPDATE of a row another open transaction changed waits
// for that transaction, then applies to its result; a DELETE that
// another transaction is waiting behind makes that UPDATE change nothing;
// and a cycle of waits fails one transaction with 40P01.
func TestExplicitTransactionsNeverLoseUpdates(t *testing.T) {
	srv := startServer(t, t.TempDir())
	a := connect(t, srv.url())
	b := connect(t, srv.url())
	exec(t, a, "CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL)")
	exec(t, a, "INSERT INTO c VALUES (1, 0), (2, 0)")
	ctx := context.Background()
	// background runs sql on conn and reports its error when done.
	background := func(conn *pgx.Conn, sql string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := conn.Exec(ctx, sql)
			done <- err
		}()
		return done
	}

	exec(t, a, "BEGIN")
	exec(t, a, "UPDATE c SET n = n + 1 WHERE id = 1")
	exec(t, b, "BEGIN")
	waiting := background(b, "UPDATE c SET n = n + 10 WHERE id = 1")
	exec(t, a, "COMMIT")
	if err := <-waiting; err != nil {
		t.Fatalf("UPDATE waiting for a committed update: %v", err)
	}
	exec(t, b, "COMMIT")
	if got := rowsText(t, a, "SELECT n FROM c WHERE id = 1"); got[0] != "11" {
		t.Fatalf("n = %s after both updates, want 11 (no lost update)", got[0])
	}

	// A delete commits while an update of the row waits: it updates nothing.
	exec(t, a, "BEGIN")
	exec(t, a, "DELETE FROM c WHERE id = 1")
	waiting = background(b, "UPDATE c SET n = 99 WHERE id = 1")
	exec(t, a, "COMMIT")
	if err := <-waiting; err != nil {
		t.Fatalf("UPDATE waiting for a delete: %v", err)
	}
	if got := rowsText(t, a, "SELECT id, n FROM c ORDER BY id"); fmt.Sprint(got) != "[2|0]" {
		t.Fatalf("rows %v after the delete and the waiting update, want [2|0]", got)
	}
	exec(t, a, "INSERT INTO c VALUES (1, 0)")

	// Deadlock: a holds 1 and asks for 2; b holds 2 and asks for 1.
	// Whichever closes the cycle fails with 40P01, which (as in
	// PostgreSQL) releases its locks at once, so the other goes on.
	exec(t, a, "BEGIN")
	exec(t, b, "BEGIN")
	exec(t, a, "UPDATE c SET n = n + 1 WHERE id = 1")
	exec(t, b, "UPDATE c SET n = n + 1 WHERE id = 2")
	doneA := background(a, "UPDATE c SET n = n + 1 WHERE id = 2")
	doneB := background(b, "UPDATE c SET n = n + 1 WHERE id = 1")
	errA, errB := <-doneA, <-doneB
	loser, winner, lost, won := b, a, errB, errA
	if errA != nil {
		loser, winner, lost, won = a, b, errA, errB
	}
	var pgErr *pgconn.PgError
	if !errors.As(lost, &pgErr) || pgErr.Code != "40P01" || won != nil {
		t.Fatalf("two transactions waiting for each other returned %v and %v, want one SQLSTATE 40P01 and one success", errA, errB)
	}
	exec(t, loser, "ROLLBACK")
	exec(t, winner, "COMMIT")
	if got := rowsText(t, a, "SELECT id, n FROM c ORDER BY id"); fmt.Sprint(got) != "[1|1 2|1]" {
		t.Fatalf("rows %v after the deadlock, want [1|1 2|1]", got)
	}
	exec(t, a, "UPDATE c SET n = 5 WHERE id = 2")

	// Concurrent increments in explicit transactions, retried on 40001:
	// every successful COMMIT counts exactly once.
	const workers, each = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		c := connect(t, srv.url())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				if _, err := c.Exec(ctx, "BEGIN"); err != nil {
					errs <- err
					return
				}
				if _, err := c.Exec(ctx, "UPDATE c SET n = n + 1 WHERE id = 2"); err != nil {
					errs <- err
					return
				}
				_, err := c.Exec(ctx, "COMMIT")
				if err == nil {
					done++
					continue
				}
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "40001" {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := rowsText(t, a, "SELECT n FROM c WHERE id = 2"); got[0] != fmt.Sprint(5+workers*each) {
		t.Fatalf("n = %s after %d committed increments from 5, want %d (lost updates)", got[0], workers*each, 5+workers*each)
	}
}
