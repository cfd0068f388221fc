package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/connect/kafka"
)

// kafkaSinkCrashCycles is how many times the KAFKA sink's crash test kills
// the server.
const kafkaSinkCrashCycles = 10

// kafkaSinkKeys is the number of groups of the sink's view.
const kafkaSinkKeys = 20

// TestKafkaSinkCrashKill9 writes a grouped view's changes to a topic of an
// in-process broker (which outlives the server) as upserts while a writer
// inserts into the view's table and the server is killed with SIGKILL
// kafkaSinkCrashCycles times — often in the middle of a sink transaction
// — and restarted. A read_committed consumer then checks:
//
//   - every record carries its epoch, epochs never go backwards in a
//     partition, and no key appears twice at one epoch (no epoch delivered
//     twice, by a replay after a restart or by a fenced producer);
//   - each group's count only grows from record to record (inserts only:
//     a replay from too early an epoch would take it back);
//   - the last record of every key equals the view's row.
//
// It runs over one shard and over four (the view on another shard than
// its table, fed through the exchange).
func TestKafkaSinkCrashKill9(t *testing.T) {
	bin := buildBinary(t)
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { kafkaSinkCrashKill9(t, bin, shards) })
	}
}

func kafkaSinkCrashKill9(t *testing.T, bin string, shards int) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "groups"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := strings.Join(cluster.ListenAddrs(), ",")

	storage := t.TempDir()
	// --shards lays out a new store; later starts keep its layout.
	p := startProcess(t, bin, storage, fmt.Sprintf("--shards=%d", shards))
	defer func() { p.kill9() }()
	ctx := context.Background()
	rs, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE events (id bigint PRIMARY KEY, k int NOT NULL, v int NOT NULL)`,
		`CREATE MATERIALIZED VIEW groups AS SELECT k, count(*) AS n, sum(v) AS total FROM events GROUP BY k`,
		fmt.Sprintf(`CREATE SINK groups_out FROM groups INTO KAFKA (brokers = '%s', topic = 'groups', format = 'upsert', key = 'k')`, brokers),
	} {
		if _, err := rs.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rs.Close(ctx)

	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	var nextID int64
	var mu sync.Mutex
	inserted := 0
	for cycle := 0; cycle < kafkaSinkCrashCycles; cycle++ {
		// The writer runs until the kill cuts it off.
		var wg sync.WaitGroup
		wg.Add(1)
		go func(url string, seed uint64) {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				return
			}
			defer conn.Close(ctx)
			w := rand.New(rand.NewPCG(seed, 1))
			for {
				mu.Lock()
				id := nextID
				nextID += 5
				mu.Unlock()
				var vals []string
				for i := int64(0); i < 5; i++ {
					vals = append(vals, fmt.Sprintf("(%d, %d, %d)", id+i, w.IntN(kafkaSinkKeys), 1+w.IntN(100)))
				}
				if _, err := conn.Exec(ctx, "INSERT INTO events VALUES "+strings.Join(vals, ", ")); err != nil {
					return
				}
				mu.Lock()
				inserted += 5
				mu.Unlock()
			}
		}(p.url, uint64(cycle))
		time.Sleep(time.Duration(300+rnd.IntN(1200)) * time.Millisecond)
		p.kill9()
		wg.Wait()
		p = startProcess(t, bin, storage)
	}

	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var want []string
	for _, r := range queryText(t, conn, "SELECT k, n, total FROM groups") {
		want = append(want, fmt.Sprintf(`{"k":%s} {"k":%s,"n":%s,"total":%s}`, r[0], r[0], r[1], r[2]))
	}
	sort.Strings(want)

	consumer, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("groups"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var records []*kgo.Record
	deadline := time.Now().Add(60 * time.Second)
	for {
		pollCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		consumer.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) { records = append(records, r) })
		cancel()
		state := map[string]string{}
		for _, r := range records {
			state[string(r.Key)] = string(r.Value)
		}
		var got []string
		for k, v := range state {
			got = append(got, k+" "+v)
		}
		sort.Strings(got)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d crashes the topic's last records differ from the view\n got: %q\nwant: %q", kafkaSinkCrashCycles, got, want)
		}
	}

	lastEpoch := map[int32]uint64{}
	seen := map[string]bool{}
	lastCount := map[string]int64{}
	epochs := map[uint64]bool{}
	for _, r := range records {
		var epoch uint64
		for _, h := range r.Headers {
			if h.Key == kafka.EpochHeader {
				epoch, _ = strconv.ParseUint(string(h.Value), 10, 64)
			}
		}
		if epoch == 0 {
			t.Fatalf("record %d/%d has no epoch header", r.Partition, r.Offset)
		}
		if epoch < lastEpoch[r.Partition] {
			t.Fatalf("partition %d: epoch %d after %d at offset %d (an old epoch delivered again)", r.Partition, epoch, lastEpoch[r.Partition], r.Offset)
		}
		lastEpoch[r.Partition] = epoch
		epochs[epoch] = true
		id := fmt.Sprintf("%s@%d", r.Key, epoch)
		if seen[id] {
			t.Fatalf("key %s delivered twice at epoch %d (offset %d/%d)", r.Key, epoch, r.Partition, r.Offset)
		}
		seen[id] = true
		var row struct{ N int64 }
		if err := json.Unmarshal(r.Value, &row); err != nil {
			t.Fatalf("record %d/%d: %v", r.Partition, r.Offset, err)
		}
		if row.N <= lastCount[string(r.Key)] {
			t.Fatalf("key %s: count %d after %d (offset %d/%d): a change applied twice or out of order", r.Key, row.N, lastCount[string(r.Key)], r.Partition, r.Offset)
		}
		lastCount[string(r.Key)] = row.N
	}
	if len(epochs) < kafkaSinkCrashCycles {
		t.Fatalf("only %d epochs delivered over %d cycles", len(epochs), kafkaSinkCrashCycles)
	}
	t.Logf("%d SIGKILLs; %d rows inserted; %d records over %d epochs delivered exactly once", kafkaSinkCrashCycles, inserted, len(records), len(epochs))
}
