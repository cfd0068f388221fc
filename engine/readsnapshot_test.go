package engine_test

import (
	"context"
	"sync"
	"testing"
)

// TestMultiRequestReadsSeeOneState: a statement whose reads take several
// requests to the shard (a lookup join reads customers at the join values
// of the order it read; a point read beside a whole-table read) sees one
// committed state in READ COMMITTED, as PostgreSQL's statement snapshot
// does: while a writer moves one unit from an order to its customer in
// each transaction, every read sees the sum unchanged. Without the shared
// snapshot, a commit landing between the requests showed half of it.
func TestMultiRequestReadsSeeOneState(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, "CREATE TABLE customers (id int PRIMARY KEY, y int)")
	exec(t, rs, "CREATE TABLE orders (id int PRIMARY KEY, customer_id int, x int)")
	exec(t, rs, "INSERT INTO customers SELECT g, 0 FROM generate_series(1, 50) g")
	exec(t, rs, "INSERT INTO orders VALUES (1, 7, 1000)")
	writer := connect(t, srv.url())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			tx, err := writer.Begin(ctx)
			if err != nil {
				return
			}
			_, err1 := tx.Exec(ctx, "UPDATE orders SET x = x - 1 WHERE id = 1")
			_, err2 := tx.Exec(ctx, "UPDATE customers SET y = y + 1 WHERE id = 7")
			if err1 != nil || err2 != nil || tx.Commit(ctx) != nil {
				_ = tx.Rollback(context.Background())
				return
			}
		}
	}()
	defer func() { cancel(); wg.Wait() }()
	for _, q := range []string{
		"SELECT o.x + c.y FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = 1",
		"SELECT o.x + (SELECT sum(y) FROM customers) FROM orders o WHERE o.id = 1",
	} {
		for i := 0; i < 400; i++ {
			var sum int64
			if err := rs.QueryRow(context.Background(), q).Scan(&sum); err != nil {
				t.Fatal(err)
			}
			if sum != 1000 {
				t.Fatalf("read %d of %s: sum %d, want 1000 (a transaction seen in part)", i, q, sum)
			}
		}
	}
}
