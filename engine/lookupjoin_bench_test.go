package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// BenchmarkLookupJoin times a prepared join of one order (read by key)
// with its customer among 100,000: lookup (the customer read by primary
// key at the order's customer_id), index (a customer by key, its orders
// through an index), whole (the join on `c.id + 0`, which cannot be looked
// up: customers read whole, as every join ran before lookup joins), and
// the lookup on PostgreSQL 15. Run:
//
//	go test ./engine -run '^$' -bench LookupJoin -benchtime 50x
func BenchmarkLookupJoin(b *testing.B) {
	ctx := context.Background()
	load := []string{
		"CREATE TABLE customers (id int PRIMARY KEY, name text)",
		"CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount int)",
		"INSERT INTO customers SELECT g, 'c' || g FROM generate_series(1, 100000) g",
		"INSERT INTO orders SELECT g, g * 97 % 100000 + 1, g FROM generate_series(1, 1000) g",
		"CREATE INDEX orders_customer ON orders (customer_id)",
	}
	rs, err := pgx.Connect(ctx, startServerB(b, "memory://"))
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	pg := pgtest.Connect(b)
	for _, s := range []string{"DROP TABLE IF EXISTS orders", "DROP TABLE IF EXISTS customers"} {
		if _, err := pg.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []*pgx.Conn{rs, pg} {
		start := time.Now()
		for _, s := range load {
			if _, err := c.Exec(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("loaded in %v", time.Since(start))
	}
	if _, err := pg.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, c *pgx.Conn, sql string) {
		i := 0
		for b.Loop() {
			i = i%1000 + 1
			var n int64
			if err := c.QueryRow(ctx, sql, i).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n != 1 {
				b.Fatalf("%s ($1 = %d) = %d, want 1", sql, i, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
	}
	const lookup = "SELECT count(*) FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = $1"
	b.Run("lookup", func(b *testing.B) { run(b, rs, lookup) })
	b.Run("index", func(b *testing.B) {
		run(b, rs, "SELECT count(*) FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.id = $1 * 97 % 100000 + 1")
	})
	b.Run("whole", func(b *testing.B) {
		run(b, rs, "SELECT count(*) FROM orders o JOIN customers c ON c.id + 0 = o.customer_id WHERE o.id = $1")
	})
	b.Run("postgres", func(b *testing.B) { run(b, pg, lookup) })
}
