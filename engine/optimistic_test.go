package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestExplicitTransactionsNeverLoseUpdates: a transaction that read a row
// and wrote it fails at COMMIT with 40001 (RS-2008) when another
// transaction changed the row in between, instead of overwriting it.
func TestExplicitTransactionsNeverLoseUpdates(t *testing.T) {
	srv := startServer(t, t.TempDir())
	a := connect(t, srv.url())
	b := connect(t, srv.url())
	exec(t, a, "CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL)")
	exec(t, a, "INSERT INTO c VALUES (1, 0), (2, 0)")
	ctx := context.Background()

	exec(t, a, "BEGIN")
	exec(t, a, "UPDATE c SET n = n + 1 WHERE id = 1")
	exec(t, b, "BEGIN")
	exec(t, b, "UPDATE c SET n = n + 10 WHERE id = 1")
	exec(t, b, "COMMIT")
	_, err := a.Exec(ctx, "COMMIT")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("COMMIT after a concurrent update: %v, want SQLSTATE 40001", err)
	}
	if got := rowsText(t, a, "SELECT n FROM c WHERE id = 1"); got[0] != "10" {
		t.Fatalf("n = %s after the conflict, want 10 (the committed update kept)", got[0])
	}

	// A delete that raced an update conflicts too; an unrelated row does not.
	exec(t, a, "BEGIN")
	exec(t, a, "DELETE FROM c WHERE id = 1")
	exec(t, a, "UPDATE c SET n = 5 WHERE id = 2")
	exec(t, b, "UPDATE c SET n = 11 WHERE id = 1")
	if _, err := a.Exec(ctx, "COMMIT"); !errors.As(err, &pgErr) || pgErr.Code != "40001" {
		t.Fatalf("COMMIT of a delete after a concurrent update: %v, want 40001", err)
	}
	exec(t, a, "BEGIN")
	exec(t, a, "UPDATE c SET n = 5 WHERE id = 2")
	exec(t, b, "UPDATE c SET n = 12 WHERE id = 1")
	exec(t, a, "COMMIT")
	if got := rowsText(t, a, "SELECT id, n FROM c ORDER BY id"); fmt.Sprint(got) != "[1|12 2|5]" {
		t.Fatalf("rows %v", got)
	}

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
