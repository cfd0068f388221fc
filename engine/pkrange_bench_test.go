package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// BenchmarkKeyRangeCount times `SELECT count(*) FROM t WHERE id <= 10000`
// over a 1,000,000-row table (pk: a primary-key range read), the same
// rows selected by a column that is not the key (nonkey: the whole table
// read and filtered, as every ad-hoc query ran before key ranges), and
// the pk query on PostgreSQL 15 (postgres: an index scan). Run:
//
//	go test ./engine -run '^$' -bench KeyRangeCount -benchtime 20x
func BenchmarkKeyRangeCount(b *testing.B) {
	const rows = 1_000_000
	ctx := context.Background()
	load := []string{
		"CREATE TABLE t (id int PRIMARY KEY, v int)",
		"INSERT INTO t SELECT g, g FROM generate_series(1, 1000000) g",
	}
	rs, err := pgx.Connect(ctx, startServerB(b, "memory://"))
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	pg := pgtest.Connect(b)
	if _, err := pg.Exec(ctx, "DROP TABLE IF EXISTS t"); err != nil {
		b.Fatal(err)
	}
	for _, c := range []*pgx.Conn{rs, pg} {
		start := time.Now()
		for _, s := range load {
			if _, err := c.Exec(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("loaded %d rows in %v", rows, time.Since(start))
	}
	if _, err := pg.Exec(ctx, "VACUUM ANALYZE t"); err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, c *pgx.Conn, sql string) {
		for b.Loop() {
			var n int64
			if err := c.QueryRow(ctx, sql).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n != 10000 {
				b.Fatalf("%s = %d, want 10000", sql, n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/query")
	}
	b.Run("pk", func(b *testing.B) { run(b, rs, "SELECT count(*) FROM t WHERE id <= 10000") })
	b.Run("nonkey", func(b *testing.B) { run(b, rs, "SELECT count(*) FROM t WHERE v <= 10000") })
	b.Run("postgres", func(b *testing.B) { run(b, pg, "SELECT count(*) FROM t WHERE id <= 10000") })
}
