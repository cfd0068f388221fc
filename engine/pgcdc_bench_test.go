package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// BenchmarkPostgresSource measures the POSTGRES source's throughput on the
// local filesystem with one materialized view over the mirror: the
// initial snapshot (rows copied per second), then streaming (row changes
// applied per second: the upstream inserts and updates b.N rows while
// RockStream is stopped, so the measured time is RockStream draining the
// slot, not the upstream writing). Run:
//
//	go test ./engine -run '^$' -bench PostgresSource -benchtime 100000x
func BenchmarkPostgresSource(b *testing.B) {
	ctx := context.Background()
	url, pg := pgtest.Database(b)
	for _, sql := range []string{
		`CREATE TABLE items (id bigint PRIMARY KEY, category int NOT NULL, price numeric(10,2), name text)`,
		fmt.Sprintf(`INSERT INTO items SELECT i, i %% 100, i * 0.01, 'item ' || i FROM generate_series(1, %d) i`, b.N),
		`CREATE PUBLICATION p FOR TABLE items`,
	} {
		if _, err := pg.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	srv := enginetest.StartServer(b, dir)
	rs, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	waitCount := func(rs *pgx.Conn, query string, want int64) {
		b.Helper()
		deadline := time.Now().Add(10 * time.Minute)
		for {
			var n int64
			if err := rs.QueryRow(ctx, query).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s: %d, want %d", query, n, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	b.ResetTimer()
	start := time.Now()
	if _, err := rs.Exec(ctx, fmt.Sprintf(`CREATE SOURCE pg FROM POSTGRES (connection = '%s', publication = 'p')`, url)); err != nil {
		b.Fatal(err)
	}
	if _, err := rs.Exec(ctx, `CREATE MATERIALIZED VIEW by_category AS SELECT category, count(*) AS n, sum(price) AS total FROM items GROUP BY category`); err != nil {
		b.Fatal(err)
	}
	waitCount(rs, `SELECT coalesce(sum(n), 0) FROM by_category`, int64(b.N))
	snapshot := time.Since(start)
	rs.Close(ctx)
	srv.Stop()

	// Half inserts, half updates, in transactions of 1000 rows.
	for lo := 1; lo <= b.N; lo += 1000 {
		hi := min(lo+999, b.N)
		sql := fmt.Sprintf(`BEGIN; INSERT INTO items SELECT i + %d, i %% 100, 1, 'new' FROM generate_series(%d, %d) i WHERE i %% 2 = 0;
			UPDATE items SET price = price + 1 WHERE id BETWEEN %d AND %d AND id %% 2 = 1; COMMIT`, b.N, lo, hi, lo, hi)
		if _, err := pg.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	start = time.Now()
	srv = enginetest.StartServer(b, dir)
	rs, err = pgx.Connect(ctx, srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	waitCount(rs, `SELECT coalesce(sum(n), 0) FROM by_category`, int64(b.N+b.N/2))
	waitCount(rs, fmt.Sprintf(`SELECT count(*) FROM items WHERE id <= %d AND id %% 2 = 1 AND price = id * 0.01 + 1`, b.N), int64((b.N+1)/2))
	streaming := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/snapshot.Seconds(), "snapshot-rows/s")
	b.ReportMetric(float64(b.N)/streaming.Seconds(), "stream-rows/s")
	b.ReportMetric(0, "ns/op")
}
