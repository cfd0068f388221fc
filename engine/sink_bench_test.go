package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// sinkBenchInsertBatch is the rows of one INSERT of the sink benchmarks'
// "changes" phase.
const sinkBenchInsertBatch = 10_000

// sinkBench is one sink benchmark: a server with table items and a
// materialized view over it of one row per item, and a downstream count.
type sinkBench struct {
	b  *testing.B
	rs *pgx.Conn
	// delivered counts what the sink delivered downstream.
	delivered func() int
}

// startSinkBench starts a server with the items table and its view
// items_v (id, cat, price, name).
func startSinkBench(b *testing.B) *sinkBench {
	ctx := context.Background()
	srv := enginetest.StartServer(b, b.TempDir())
	rs, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rs.Close(context.Background()) })
	s := &sinkBench{b: b, rs: rs}
	s.exec(`CREATE TABLE items (id bigint PRIMARY KEY, cat int NOT NULL, price numeric(10,2), name text)`)
	s.exec(`CREATE MATERIALIZED VIEW items_v AS SELECT id, cat, price, name FROM items`)
	return s
}

func (s *sinkBench) exec(sql string) {
	s.b.Helper()
	if _, err := s.rs.Exec(context.Background(), sql); err != nil {
		s.b.Fatalf("%s: %v", sql, err)
	}
}

// insert adds items [from, to) in batches.
func (s *sinkBench) insert(from, to int) {
	for lo := from; lo < to; lo += sinkBenchInsertBatch {
		hi := min(to, lo+sinkBenchInsertBatch)
		s.exec(fmt.Sprintf(`INSERT INTO items SELECT i, i %% 100, (i %% 1000) + 0.25, 'item ' || i FROM generate_series(%d, %d) i`, lo, hi-1))
	}
}

// run measures, in phase "snapshot", CREATE SINK over a view of b.N rows
// until they are all delivered; in phase "changes", b.N rows inserted
// (sinkBenchInsertBatch per statement) into the view's table while the
// sink runs until they are all delivered.
func (s *sinkBench) run(phase, createSink string) {
	b := s.b
	if phase == "snapshot" {
		s.insert(0, b.N)
		b.ResetTimer()
	}
	start := time.Now()
	s.exec(createSink)
	if phase == "changes" {
		s.wait(0)
		b.ResetTimer()
		start = time.Now()
		s.insert(0, b.N)
	}
	s.wait(b.N)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(0, "ns/op")
}

// wait polls until the sink delivered n rows; for n = 0, until it runs
// (NB: only then is rockstream_catalog.sinks read: it counts the views'
// rows, which would slow the server down while it is measured).
func (s *sinkBench) wait(n int) {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		state := "RUNNING"
		if n == 0 {
			if err := s.rs.QueryRow(context.Background(), `SELECT coalesce(state, '') FROM rockstream_catalog.sinks`).Scan(&state); err != nil {
				s.b.Fatal(err)
			}
		}
		if got := s.delivered(); got == n && state == "RUNNING" {
			return
		} else if got > n {
			s.b.Fatalf("the sink delivered %d rows, more than %d", got, n)
		}
		if time.Now().After(deadline) {
			s.b.Fatalf("the sink delivered %d of %d rows (state %s)", s.delivered(), n, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkPostgresSink measures the POSTGRES sink's throughput into a
// PostgreSQL 15 started by the test (local, fsync off) in both modes:
// "snapshot" is CREATE SINK over a view of b.N rows until the table holds
// them (one transaction), "changes" is b.N rows inserted into the view's
// table while the sink runs until the table holds them (RockStream's own
// ingest and view maintenance included). Run:
//
//	go test ./engine -run '^$' -bench PostgresSink -benchtime 200000x
func BenchmarkPostgresSink(b *testing.B) {
	for _, mode := range []string{"upsert", "append"} {
		for _, phase := range []string{"snapshot", "changes"} {
			b.Run(mode+"/"+phase, func(b *testing.B) {
				url, pg := pgtest.Database(b)
				s := startSinkBench(b)
				table, opts := "items_out", "mode = 'upsert', key = 'id'"
				ddl := `CREATE TABLE items_out (id bigint PRIMARY KEY, cat int, price numeric(10,2), name text)`
				if mode == "append" {
					table, opts = "items_log", "mode = 'append'"
					ddl = `CREATE TABLE items_log (id bigint, cat int, price numeric(10,2), name text, rockstream_epoch bigint, rockstream_diff bigint)`
				}
				if _, err := pg.Exec(context.Background(), ddl); err != nil {
					b.Fatal(err)
				}
				s.delivered = func() int {
					var n int
					if err := pg.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
						b.Fatal(err)
					}
					return n
				}
				s.run(phase, fmt.Sprintf(`CREATE SINK out FROM items_v INTO POSTGRES (connection = '%s', table = '%s', %s)`, url, table, opts))
			})
		}
	}
}

// BenchmarkKafkaSink measures the KAFKA sink's throughput into a
// three-partition topic of an in-process broker (kfake), as
// BenchmarkPostgresSink does (snapshot and changes phases), for the
// upsert format (keyed by id) and the keyless debezium one; a
// read_committed consumer counts the records. Run:
//
//	go test ./engine -run '^$' -bench KafkaSink -benchtime 200000x
func BenchmarkKafkaSink(b *testing.B) {
	for _, format := range []string{"upsert", "debezium"} {
		for _, phase := range []string{"snapshot", "changes"} {
			b.Run(format+"/"+phase, func(b *testing.B) {
				cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "items"))
				if err != nil {
					b.Fatal(err)
				}
				defer cluster.Close()
				consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("items"),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
				if err != nil {
					b.Fatal(err)
				}
				defer consumer.Close()
				s := startSinkBench(b)
				records := 0
				s.delivered = func() int {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					defer cancel()
					records += consumer.PollFetches(ctx).NumRecords()
					return records
				}
				key := ""
				if format == "upsert" {
					key = ", key = 'id'"
				}
				s.run(phase, fmt.Sprintf(`CREATE SINK out FROM items_v INTO KAFKA (brokers = '%s', topic = 'items', format = '%s'%s)`,
					strings.Join(cluster.ListenAddrs(), ","), format, key))
			})
		}
	}
}
