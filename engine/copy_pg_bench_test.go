package engine_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// BenchmarkCopyVsPostgres: one COPY of ROCKSTREAM_COPY_ROWS rows (default
// 1,000,000; id bigint PRIMARY KEY, dim_id int, amount int, note text)
// into a fresh table on RockStream (local directory storage) and on
// PostgreSQL 15 in the same run, with fsync and synchronous_commit turned
// on for PostgreSQL (pgtest starts it with both off), so both acknowledge
// a COPY only once it is durable. views=0 has no views; views=3 has
// setupIngest's three maintained views (group-by, join, filter) on
// RockStream, and the time runs until a read of the views in the same
// session reflects the COPY (PostgreSQL's table has the same views as
// plain views, which cost a COPY nothing). Reported: rows/s of each and
// rs/pg (below 1, RockStream is slower), and CPU per row (rs: this
// process, client included; pg: the backend), and RockStream's heap
// allocations per row (this process; steadier than time on a busy
// machine).
//
// into=full: views=0, but the table holds ROCKSTREAM_COPY_ROWS rows
// already (copied first, untimed) and the timed COPY adds as many more,
// so every key's duplicate checks read a table that holds rows.
//
// field=N: one COPY of one row whose text field is N bytes, timed on both,
// to check COPY stays linear in the field size.
//
//	go test ./engine -run '^$' -bench CopyVsPostgres -benchtime 1x
func BenchmarkCopyVsPostgres(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("ROCKSTREAM_COPY_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("ROCKSTREAM_COPY_ROWS=%q: %v", s, err)
		}
		rows = n
	}
	ctx := context.Background()
	rs, err := pgx.Connect(ctx, startServerB(b, b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	pg := pgtest.Connect(b)
	// NB: fsync is a server-wide setting; the benchmark's PostgreSQL is
	// this process's own, and it is turned off again at the end.
	for _, s := range []string{"ALTER SYSTEM SET fsync = on", "SELECT pg_reload_conf()", "SET synchronous_commit = on"} {
		if _, err := pg.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	defer func() {
		for _, s := range []string{"ALTER SYSTEM RESET fsync", "SELECT pg_reload_conf()"} {
			_, _ = pg.Exec(ctx, s)
		}
	}()
	var backend int
	if err := pg.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	for _, c := range []*pgx.Conn{rs, pg} {
		for _, s := range []string{"DROP TABLE IF EXISTS dim CASCADE", "CREATE TABLE dim (id int PRIMARY KEY, name text)", dimRows()} {
			if c == rs && strings.HasPrefix(s, "DROP") {
				continue
			}
			if _, err := c.Exec(ctx, s); err != nil {
				b.Fatalf("%s: %v", s, err)
			}
		}
	}
	var sb strings.Builder
	for i := 0; i < rows; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\tnote %d\n", i, i%100, i%1000, i)
	}
	data := sb.String()
	sb.Reset()
	for i := rows; i < 2*rows; i++ {
		fmt.Fprintf(&sb, "%d\t%d\t%d\tnote %d\n", i, i%100, i%1000, i)
	}
	more := sb.String()
	table := 0
	// run creates a fresh table (and its views), COPYs data into it and,
	// when wait, reads a view until it reflects the COPY; it returns the
	// wall and CPU time from the COPY's start.
	var mallocs, allocBytes uint64
	run := func(b *testing.B, c *pgx.Conn, views int, before, data string, wait bool) (time.Duration, time.Duration) {
		table++
		t := fmt.Sprintf("fact%d", table)
		ddl := []string{fmt.Sprintf("CREATE TABLE %s (id bigint PRIMARY KEY, dim_id int, amount int, note text)", t)}
		kind := "MATERIALIZED VIEW"
		if c == pg {
			kind = "VIEW"
		}
		all := []string{
			fmt.Sprintf("CREATE %s %s_g AS SELECT dim_id, count(*), sum(amount) FROM %s GROUP BY dim_id", kind, t, t),
			fmt.Sprintf("CREATE %s %s_j AS SELECT d.name, count(*) FROM %s f JOIN dim d ON f.dim_id = d.id GROUP BY d.name", kind, t, t),
			fmt.Sprintf("CREATE %s %s_f AS SELECT id, amount FROM %s WHERE amount > 900", kind, t, t),
		}
		ddl = append(ddl, all[:views]...)
		for _, s := range ddl {
			if _, err := c.Exec(ctx, s); err != nil {
				b.Fatalf("%s: %v", s, err)
			}
		}
		if before != "" {
			if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(before), "COPY "+t+" FROM STDIN"); err != nil {
				b.Fatal(err)
			}
		}
		cpu := func() time.Duration {
			if c == rs {
				return cpuTime()
			}
			return procCPU(b, backend)
		}
		var ms runtime.MemStats
		if c == rs {
			runtime.ReadMemStats(&ms)
			mallocs, allocBytes = mallocs-ms.Mallocs, allocBytes-ms.TotalAlloc
		}
		start, cpu0 := time.Now(), cpu()
		tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data), "COPY "+t+" FROM STDIN")
		if err != nil {
			b.Fatal(err)
		}
		if wait && views > 0 {
			var n int64
			if err := c.QueryRow(ctx, "SELECT sum(count) FROM "+t+"_g").Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n != tag.RowsAffected() {
				b.Fatalf("view counts %d rows, COPY %d", n, tag.RowsAffected())
			}
		}
		took, tookCPU := time.Since(start), cpu()-cpu0
		if c == rs {
			runtime.ReadMemStats(&ms)
			mallocs, allocBytes = mallocs+ms.Mallocs, allocBytes+ms.TotalAlloc
		}
		return took, tookCPU
	}
	for _, views := range []int{0, 3, -1} {
		name, before, data := fmt.Sprintf("views=%d", views), "", data
		if views < 0 {
			name, before, data, views = "into=full", data, more, 0
		}
		b.Run(name, func(b *testing.B) {
			var rsTook, pgTook, rsCPU, pgCPU time.Duration
			mallocs, allocBytes = 0, 0
			for b.Loop() {
				took, tookCPU := run(b, rs, views, before, data, true)
				rsTook, rsCPU = rsTook+took, rsCPU+tookCPU
				took, tookCPU = run(b, pg, views, before, data, true)
				pgTook, pgCPU = pgTook+took, pgCPU+tookCPU
			}
			n := float64(rows) * float64(b.N)
			b.ReportMetric(n/rsTook.Seconds(), "rs-rows/s")
			b.ReportMetric(n/pgTook.Seconds(), "pg-rows/s")
			b.ReportMetric(pgTook.Seconds()/rsTook.Seconds(), "rs/pg")
			b.ReportMetric(float64(rsCPU.Nanoseconds())/1000/n, "rs-cpu-us/row")
			b.ReportMetric(float64(pgCPU.Nanoseconds())/1000/n, "pg-cpu-us/row")
			b.ReportMetric(float64(mallocs)/n, "rs-allocs/row")
			b.ReportMetric(float64(allocBytes)/n, "rs-B/row")
		})
	}
	for _, mb := range []int{1, 5, 10} {
		b.Run(fmt.Sprintf("field=%dMB", mb), func(b *testing.B) {
			field := "1\t1\t1\t" + strings.Repeat("x", mb<<20) + "\n"
			var rsTook, pgTook time.Duration
			for b.Loop() {
				took, _ := run(b, rs, 0, "", field, false)
				rsTook += took
				took, _ = run(b, pg, 0, "", field, false)
				pgTook += took
			}
			b.ReportMetric(rsTook.Seconds()/float64(b.N), "rs-s")
			b.ReportMetric(pgTook.Seconds()/float64(b.N), "pg-s")
		})
	}
}
