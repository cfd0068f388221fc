package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/engine"
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
	for _, s := range append(ingestSchema(), dimRows()) {
		if _, err := c.Exec(context.Background(), s); err != nil {
			b.Fatal(err)
		}
	}
	return c, srv
}

// dimRows inserts the 100 dimension rows the ingest views join with.
func dimRows() string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO dim VALUES ")
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "(%d, 'd%d')", i, i%10)
	}
	return sb.String()
}

func BenchmarkIngestCOPY(b *testing.B) {
	c, _ := setupIngest(b)
	const perCopy = 10_000
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuSeconds()
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
	// A read in the same session waits until the views reflect its
	// writes: the time covers maintenance, not just the COPYs.
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM v_group").Scan(&n); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
	// CPU time of the whole process (server and client): on a shared
	// machine it moves far less than rows/s.
	b.ReportMetric((cpuSeconds()-cpu0)*1e6/float64(b.N), "cpu-us/row")
}

// cpuSeconds is this process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
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

// BenchmarkConcurrentCommits: N sessions each commit single-row INSERTs as
// fast as they can (one op = one COMMIT, spread over the sessions), on the
// local filesystem with the three views of setupIngest. Reported:
// commits/s, COMMIT latency p50/p99, commit→visible p50/p99 (after its
// COMMIT returns, the same session reads the row back through v_filter;
// read-your-writes makes the read wait until maintenance has applied the
// commit), and object-store requests and WAL writes per commit from
// /metrics (group commit shares one WAL write among concurrent commits).
// Run:
//
//	go test ./engine -run '^$' -bench ConcurrentCommits -benchtime 4000x
func BenchmarkConcurrentCommits(b *testing.B) {
	for _, clients := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) { benchConcurrentCommits(b, clients) })
	}
}

func benchConcurrentCommits(b *testing.B, clients int) {
	ctx := context.Background()
	pgURL, metricsURL := startServerWithHTTP(b)
	setup, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range append(ingestSchema(), dimRows()) {
		if _, err := setup.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	conns := make([]*pgx.Conn, clients)
	for i := range conns {
		if conns[i], err = pgx.Connect(ctx, pgURL); err != nil {
			b.Fatal(err)
		}
	}
	commitsBefore, reqBefore, walBefore := scrapeStoreMetrics(b, metricsURL)
	var next atomic.Int64
	commitLat := make([][]time.Duration, clients)
	visibleLat := make([][]time.Duration, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			conn := conns[c]
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO fact VALUES (%d, %d, 950, 'c%d')", i, i%100, c)); err != nil {
					errs <- err
					return
				}
				t1 := time.Now()
				var n int
				if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM v_filter WHERE id = %d", i)).Scan(&n); err != nil {
					errs <- err
					return
				}
				if n != 1 {
					errs <- fmt.Errorf("row %d not visible after its commit (read-your-writes)", i)
					return
				}
				commitLat[c] = append(commitLat[c], t1.Sub(t0))
				visibleLat[c] = append(visibleLat[c], time.Since(t1))
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	commitsAfter, reqAfter, walAfter := scrapeStoreMetrics(b, metricsURL)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
	reportPercentiles(b, "commit", commitLat)
	reportPercentiles(b, "visible", visibleLat)
	if commits := commitsAfter - commitsBefore; commits > 0 {
		b.ReportMetric((reqAfter-reqBefore)/commits, "store-req/commit")
		b.ReportMetric((walAfter-walBefore)/commits, "wal-put/commit")
	}
}

func reportPercentiles(b *testing.B, name string, per [][]time.Duration) {
	var all []time.Duration
	for _, l := range per {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, name+"-p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, name+"-p99-ms")
}

// startServerWithHTTP starts a server on a temporary directory with the
// HTTP endpoint on, and returns the pgwire URL and the /metrics URL.
func startServerWithHTTP(b *testing.B) (pgURL, metricsURL string) {
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ pg, http string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- engine.Serve(ctx, engine.ServerOptions{
			Storage: b.TempDir(),
			Listen:  "127.0.0.1:0",
			HTTP:    "127.0.0.1:0",
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			Out:     io.Discard,
			Ready:   func(pg, h string) { ready <- addrs{pg, h} },
		})
	}()
	select {
	case a := <-ready:
		b.Cleanup(func() { cancel(); <-done })
		return "postgres://rockstream@" + a.pg + "/default?sslmode=disable", "http://" + a.http + "/metrics"
	case err := <-done:
		cancel()
		b.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		b.Fatal("server did not start within 60s")
	}
	return "", ""
}

// scrapeStoreMetrics reads commits, object-store requests (all kinds) and
// WAL object writes from /metrics.
func scrapeStoreMetrics(b *testing.B, url string) (commits, requests, walPuts float64) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch {
		case f[0] == "rockstream_commits_total":
			commits = v
		case strings.HasPrefix(f[0], "rockstream_object_store_requests_total{"):
			requests += v
			if strings.Contains(f[0], `object="wal"`) && strings.Contains(f[0], `op="put`) {
				walPuts += v
			}
		}
	}
	return commits, requests, walPuts
}

// ingestSchema is the ingest benchmarks' tables and the three views they
// maintain.
func ingestSchema() []string {
	return []string{
		"CREATE TABLE dim (id int PRIMARY KEY, name text)",
		"CREATE TABLE fact (id bigint PRIMARY KEY, dim_id int, amount int, note text)",
		"CREATE MATERIALIZED VIEW v_group AS SELECT dim_id, count(*), sum(amount) FROM fact GROUP BY dim_id",
		"CREATE MATERIALIZED VIEW v_join AS SELECT d.name, count(*) FROM fact f JOIN dim d ON f.dim_id = d.id GROUP BY d.name",
		"CREATE MATERIALIZED VIEW v_filter AS SELECT id, amount FROM fact WHERE amount > 900",
	}
}
