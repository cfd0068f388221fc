package engine_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// BenchmarkBackfill times CREATE MATERIALIZED VIEW over rows already in
// the tables (the view's backfill) on RockStream and the same statement on
// PostgreSQL 15 in the same run, for a few view shapes, and reports both
// and their ratio (rs/pg: above 1, RockStream is slower), in wall time
// and in CPU time (rs-cpu: this process's, which serves the RockStream
// server; pg-cpu: the PostgreSQL backend's, from /proc), which a machine
// shared with other work disturbs less. PostgreSQL runs
// without parallel workers (max_parallel_workers_per_gather = 0), so both
// fill a view on one core; RockStream runs on ROCKSTREAM_TEST_SHARDS
// shards (default 1). ROCKSTREAM_BACKFILL_ROWS sets the rows of t
// (default 1,000,000). ROCKSTREAM_BACKFILL_PROFILE=PREFIX writes a CPU
// profile of each of RockStream's CREATEs to PREFIX-SHAPE-N.prof (the
// loading, DROPs and PostgreSQL's turns left out; go tool pprof merges
// several). Run:
//
//	go test ./engine -run '^$' -bench Backfill -benchtime 3x
func BenchmarkBackfill(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("ROCKSTREAM_BACKFILL_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("ROCKSTREAM_BACKFILL_ROWS=%q: %v", s, err)
		}
		rows = n
	}
	ctx := context.Background()
	load := []string{
		"DROP TABLE IF EXISTS t CASCADE",
		"DROP TABLE IF EXISTS u CASCADE",
		"CREATE TABLE t (id bigint PRIMARY KEY, g int, v bigint, s text)",
		"CREATE TABLE u (id int PRIMARY KEY, name text)",
		fmt.Sprintf("INSERT INTO t SELECT i, i %% 1000, i * 7 %% 10007, 'name-' || (i %% 5000) FROM generate_series(1, %d) i", rows),
		"INSERT INTO u SELECT i, 'u-' || i FROM generate_series(0, 999) i",
	}
	rs, err := pgx.Connect(ctx, startServerB(b, "memory://"))
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	pg := pgtest.Connect(b)
	for _, c := range []*pgx.Conn{rs, pg} {
		start := time.Now()
		for _, s := range load {
			if c == rs && s[:4] == "DROP" {
				continue
			}
			if _, err := c.Exec(ctx, s); err != nil {
				b.Fatalf("%s: %v", s, err)
			}
		}
		b.Logf("loaded %d rows in %v", rows, time.Since(start))
	}
	for _, s := range []string{"VACUUM ANALYZE t", "VACUUM ANALYZE u", "SET max_parallel_workers_per_gather = 0"} {
		if _, err := pg.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	shapes := []struct{ name, query string }{
		{"groupby", "SELECT g, count(*) AS n, sum(v) AS total FROM t GROUP BY g"},
		{"filter", "SELECT id, v * 2 AS w, s FROM t WHERE v % 10 = 3"},
		{"join", "SELECT t.id, t.v, u.name FROM t JOIN u ON t.g = u.id WHERE t.v % 10 = 3"},
	}
	var backend int
	if err := pg.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	cpu := func(c *pgx.Conn) time.Duration {
		if c == rs {
			return cpuTime()
		}
		return procCPU(b, backend)
	}
	profile := os.Getenv("ROCKSTREAM_BACKFILL_PROFILE")
	create := func(b *testing.B, c *pgx.Conn, query string, prof *os.File) (time.Duration, time.Duration) {
		if prof != nil {
			if err := pprof.StartCPUProfile(prof); err != nil {
				b.Fatal(err)
			}
		}
		start, startCPU := time.Now(), cpu(c)
		if _, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW mv AS "+query); err != nil {
			b.Fatal(err)
		}
		took, tookCPU := time.Since(start), cpu(c)-startCPU
		if prof != nil {
			pprof.StopCPUProfile()
		}
		if _, err := c.Exec(ctx, "DROP MATERIALIZED VIEW mv"); err != nil {
			b.Fatal(err)
		}
		return took, tookCPU
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			var rsTook, pgTook, rsCPU, pgCPU time.Duration
			n := 0
			for b.Loop() {
				var prof *os.File
				if profile != "" {
					f, err := os.Create(fmt.Sprintf("%s-%s-%d.prof", profile, shape.name, n))
					if err != nil {
						b.Fatal(err)
					}
					prof = f
				}
				n++
				took, tookCPU := create(b, rs, shape.query, prof)
				if prof != nil {
					prof.Close()
				}
				rsTook, rsCPU = rsTook+took, rsCPU+tookCPU
				took, tookCPU = create(b, pg, shape.query, nil)
				pgTook, pgCPU = pgTook+took, pgCPU+tookCPU
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(ms(rsTook), "rs-ms")
			b.ReportMetric(ms(pgTook), "pg-ms")
			b.ReportMetric(ms(rsTook)/ms(pgTook), "rs/pg")
			b.ReportMetric(ms(rsCPU), "rs-cpu-ms")
			b.ReportMetric(ms(pgCPU), "pg-cpu-ms")
			b.ReportMetric(ms(rsCPU)/ms(pgCPU), "rs/pg-cpu")
		})
	}
}

// cpuTime is this process's CPU time so far (user + system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is process pid's CPU time so far (user + system), from
// /proc/PID/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// NB: fields after the command name, which is in parentheses.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	// utime and stime are fields 14 and 15 of the line, 12 and 13 here.
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, raw)
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}
