package engine_test

import (
	"fmt"
	"sync"
	"testing"
)

// TestAutocommitReadModifyWriteNeverLosesUpdates: autocommit UPDATE,
// INSERT ... ON CONFLICT DO UPDATE / DO NOTHING and an UPDATE of a table
// without a primary key, run concurrently from several sessions, all
// succeed and every one counts exactly once: each waits for the row (or,
// without a key, the table) another session's statement holds until that
// statement's commit is durable, then reads the committed row, as in
// PostgreSQL's READ COMMITTED.
func TestAutocommitReadModifyWriteNeverLosesUpdates(t *testing.T) {
	srv := startServer(t, t.TempDir())
	c := connect(t, srv.url())
	exec(t, c, "CREATE TABLE c (id int PRIMARY KEY, n int NOT NULL)")
	exec(t, c, "CREATE TABLE k (n int NOT NULL)")
	exec(t, c, "INSERT INTO c VALUES (1, 0)")
	exec(t, c, "INSERT INTO k VALUES (0)")
	const workers, each = 4, 20
	statements := []string{
		"UPDATE c SET n = n + 1 WHERE id = 1",
		"INSERT INTO c VALUES (2, 1) ON CONFLICT (id) DO UPDATE SET n = c.n + 1",
		"INSERT INTO c VALUES (3, 0) ON CONFLICT DO NOTHING",
		"UPDATE k SET n = n + 1",
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		conn := connect(t, srv.url())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				for _, sql := range statements {
					if _, err := conn.Exec(t.Context(), sql); err != nil {
						errs <- fmt.Errorf("%s: %w", sql, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[1|%d 2|%d 3|0]", workers*each, workers*each)
	if got := rowsText(t, c, "SELECT id, n FROM c ORDER BY id"); fmt.Sprint(got) != want {
		t.Fatalf("rows %v after %d increments of each, want %s (lost updates)", got, workers*each, want)
	}
	if got := rowsText(t, c, "SELECT n FROM k"); fmt.Sprint(got) != fmt.Sprintf("[%d]", workers*each) {
		t.Fatalf("keyless row %v after %d increments", got, workers*each)
	}
}
