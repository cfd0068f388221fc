package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Ingest benchmarks: rows/s into a table with three maintained views
// (group-by, join, filter), via COPY and via batched INSERT, on the local
// filesystem. Run:
//
//	go test ./engine -run '^$' -bench Ingest -benchtime 20000x
//
// The same run reports commit→visible latency (BenchmarkCommitToVisible):
// a second session, with read-your-writes off, polls a view until a
// committed row is visible.
func setupIngest(b *testing.B) (*pgx.Conn, string) {
	srv := startServerB(b, b.TempDir())
	c, err := pgx.Connect(context.Background(), srv)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE dim (id int PRIMARY KEY, name text)",
		"CREATE TABLE fact (id bigint PRIMARY KEY, dim_id int, amount int, note text)",
		"CREATE MATERIALIZED VIEW v_group AS SELECT dim_id, count(*), sum(amount) FROM fact GROUP BY dim_id",
		"CREATE MATERIALIZED VIEW v_join AS SELECT d.name, count(*) FROM fact f JOIN dim d ON f.dim_id = d.id GROUP BY d.name",
		"CREATE MATERIALIZED VIEW v_filter AS SELECT id, amount FROM fact WHERE amount > 900",
	} {
		if _, err := c.Exec(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO dim VALUES ")
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "(%d, 'd%d')", i, i%10)
	}
	if _, err := c.Exec(context.Background(), sb.String()); err != nil {
		b.Fatal(err)
	}
	return c, srv
}

func BenchmarkIngestCOPY(b *testing.B) {
	c, _ := setupIngest(b)
	const perCopy = 10_000
	b.ResetTimer()
	start := time.Now()
	for done := 0; done < b.N; done += perCopy {
		n := min(perCopy, b.N-done)
		var sb strings.Builder
		for i := done; i < done+n; i++ {
			fmt.Fprintf(&sb, "%d\t%d\t%d\tnote %d\n", i, i%100, i%1000, i)
		}
		if _, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader(sb.String()), "COPY fact FROM STDIN"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}

func BenchmarkIngestInsert(b *testing.B) {
	c, _ := setupIngest(b)
	const perInsert = 100
	b.ResetTimer()
	start := time.Now()
	for done := 0; done < b.N; done += perInsert {
		n := min(perInsert, b.N-done)
		var sb strings.Builder
		sb.WriteString("INSERT INTO fact VALUES ")
		for i := done; i < done+n; i++ {
			if i > done {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, "(%d, %d, %d, 'note %d')", i, i%100, i%1000, i)
		}
		if _, err := c.Exec(context.Background(), sb.String()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}

func BenchmarkCommitToVisible(b *testing.B) {
	c, url := setupIngest(b)
	reader, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := reader.Exec(context.Background(), "SET rockstream.session_wait_for = off"); err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := 1_000_000 + i
		if _, err := c.Exec(context.Background(), fmt.Sprintf("INSERT INTO fact VALUES (%d, 1, 950, 'x')", id)); err != nil {
			b.Fatal(err)
		}
		committed := time.Now()
		for {
			var n int
			if err := reader.QueryRow(context.Background(), fmt.Sprintf("SELECT count(*) FROM v_filter WHERE id = %d", id)).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n == 1 {
				break
			}
		}
		lat = append(lat, time.Since(committed))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
}
