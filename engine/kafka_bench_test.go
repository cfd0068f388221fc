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
)

// BenchmarkKafkaSource measures the KAFKA source's throughput on the local
// filesystem: b.N small JSON records are produced to a three-partition
// topic of an in-process broker first, then the measured time is CREATE
// SOURCE until a materialized view over it has counted every record
// (records read, decoded, committed with their offsets and maintained).
// Run (append, and upsert by key):
//
//	go test ./engine -run '^$' -bench KafkaSource -benchtime 1000000x
func BenchmarkKafkaSource(b *testing.B) {
	for _, mode := range []struct{ name, key string }{{"append", ""}, {"upsert", ", key = 'id'"}} {
		b.Run(mode.name, func(b *testing.B) { benchKafkaSource(b, mode.key) })
	}
}

func benchKafkaSource(b *testing.B, keyOption string) {
	ctx := context.Background()
	const partitions = 3
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "items"))
	if err != nil {
		b.Fatal(err)
	}
	defer cluster.Close()
	producer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DefaultProduceTopic("items"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer producer.Close()
	for i := 0; i < b.N; i++ {
		producer.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"id": %d, "category": %d, "price": "%d.25", "name": "item %d"}`, i, i%100, i%1000, i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := producer.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	srv := enginetest.StartServer(b, b.TempDir())
	rs, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer rs.Close(ctx)
	b.ResetTimer()
	start := time.Now()
	for _, sql := range []string{
		fmt.Sprintf(`CREATE SOURCE items (id bigint, category int, price numeric(10,2), name text) FROM KAFKA (brokers = '%s', topic = 'items', format = 'json'%s)`,
			strings.Join(cluster.ListenAddrs(), ","), keyOption),
		`CREATE MATERIALIZED VIEW by_category AS SELECT category, count(*) AS n, sum(price) AS total FROM items GROUP BY category`,
	} {
		if _, err := rs.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var n int64
		if err := rs.QueryRow(ctx, `SELECT coalesce(sum(n), 0) FROM by_category`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		if n == int64(b.N) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the view counted %d of %d records", n, b.N)
		}
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(0, "ns/op")
}
