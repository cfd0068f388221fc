package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// kafkaCrashCycles is how many times the KAFKA source's crash test kills
// the server (issue X2 asks for at least 10).
const kafkaCrashCycles = 10

// Shape of the crash test's topics: events (append, no key) and accounts
// (upsert by id, tombstones delete).
const (
	kafkaEventPartitions   = 3
	kafkaAccountPartitions = 2
	kafkaAccounts          = 100
	// kafkaProduceBatch records of each topic are produced every
	// kafkaProduceInterval: a few thousand records a second, enough for
	// every kill to land between commits with records in flight.
	kafkaProduceBatch    = 40
	kafkaProduceInterval = 15 * time.Millisecond
)

// kafkaEventAmount is the amount of an event, a function of its position
// so that the test can sum any prefix of a partition without storing it.
func kafkaEventAmount(partition, seq int) int { return (seq*7+partition*13)%100 + 1 }

// TestKafkaSourceCrashKill9 reads two topics of an in-process broker (the
// broker outlives the server) while a producer keeps writing to them and
// the RockStream server is killed with SIGKILL kafkaCrashCycles times and
// restarted. events (no key) appends every record; accounts upserts by
// id, and a record without a value deletes its id. Checked:
//
//   - after every restart, each events partition holds exactly a prefix
//     of what was produced to it (sequence numbers 0..n-1, each once, and
//     the sum of their amounts), in the table and in a view over it, and
//     that prefix is never shorter than the one seen before the kill: no
//     record lost, none applied twice;
//   - at the end, events holds everything produced, accounts holds the
//     last value of every key (deleted keys absent), and every view equals
//     PostgreSQL 15's answer to its query over the source tables.
//
// It runs over one shard and over four (the views on another shard than
// the source tables, fed through the exchange).
func TestKafkaSourceCrashKill9(t *testing.T) {
	bin := buildBinary(t)
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { kafkaSourceCrashKill9(t, bin, shards) })
	}
}

func kafkaSourceCrashKill9(t *testing.T, bin string, shards int) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.SeedTopics(kafkaEventPartitions, "events"), kfake.SeedTopics(kafkaAccountPartitions, "accounts"))
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
	views := map[string]string{
		"event_totals":   `SELECT p, count(*) AS n, count(DISTINCT seq) AS distinct_seqs, max(seq) AS max_seq, sum(amount) AS amount FROM events GROUP BY p`,
		"account_totals": `SELECT count(*) AS n, sum(balance) AS balance, sum(version) AS version FROM accounts`,
		"rich":           `SELECT a.id, a.balance, e.n FROM accounts a JOIN (SELECT p, count(*) AS n FROM events GROUP BY p) e ON e.p = a.id % 3 WHERE a.balance > 500`,
	}
	for _, s := range []string{
		fmt.Sprintf(`CREATE SOURCE events (p int, seq bigint, amount int) FROM KAFKA (brokers = '%s', topic = 'events', format = 'json')`, brokers),
		fmt.Sprintf(`CREATE SOURCE accounts (id int, version bigint, balance bigint) FROM KAFKA (brokers = '%s', topic = 'accounts', format = 'json', key = 'id')`, brokers),
		`CREATE MATERIALIZED VIEW event_totals AS ` + views["event_totals"],
		`CREATE MATERIALIZED VIEW account_totals AS ` + views["account_totals"],
		`CREATE MATERIALIZED VIEW rich AS ` + views["rich"],
	} {
		if _, err := rs.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rs.Close(ctx)

	producer := &kafkaCrashProducer{seq: make([]int, kafkaEventPartitions), accounts: map[int]kafkaAccount{}}
	client, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	stop := make(chan struct{})
	producerDone := make(chan error, 1)
	go func() { producerDone <- producer.run(client, stop) }()

	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 12))
	start := time.Now()
	seen := make([]int, kafkaEventPartitions) // the longest prefix seen per events partition
	for cycle := 0; cycle < kafkaCrashCycles; cycle++ {
		time.Sleep(time.Duration(300+rnd.IntN(1500)) * time.Millisecond)
		p.kill9()
		p = startProcess(t, bin, storage)
		conn, err := pgx.Connect(ctx, p.url)
		if err != nil {
			t.Fatalf("cycle %d: reconnect: %v", cycle, err)
		}
		prefix := checkEventPrefixes(t, conn, "SELECT p, count(*), count(DISTINCT seq), max(seq), sum(amount) FROM events GROUP BY p", "table", cycle)
		for part, n := range prefix {
			if n < seen[part] {
				t.Fatalf("cycle %d: events partition %d holds %d records after the restart, %d before: committed records lost", cycle, part, n, seen[part])
			}
			seen[part] = n
		}
		checkEventPrefixes(t, conn, "SELECT p, n, distinct_seqs, max_seq, amount FROM event_totals", "view event_totals", cycle)
		conn.Close(ctx)
	}
	close(stop)
	if err := <-producerDone; err != nil {
		t.Fatalf("producer: %v", err)
	}
	elapsed := time.Since(start)

	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	wantEvents, wantAccounts := producer.want()
	deadline := time.Now().Add(60 * time.Second)
	for {
		diff := ""
		if got := joinRows(queryText(t, conn, "SELECT p, count(*), count(DISTINCT seq), sum(amount) FROM events GROUP BY p")); got != wantEvents {
			diff = fmt.Sprintf("events per partition\n got: %s\nwant: %s", got, wantEvents)
		} else if got := joinRows(queryText(t, conn, "SELECT id, version, balance FROM accounts")); got != wantAccounts {
			diff = fmt.Sprintf("accounts: %d rows, want %d (or different values)", strings.Count(got, "\n")+1, strings.Count(wantAccounts, "\n")+1)
		} else {
			diff = kafkaViewsDiff(t, conn, views)
		}
		if diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d crashes: %s", kafkaCrashCycles, diff)
		}
		time.Sleep(200 * time.Millisecond)
	}
	total := 0
	for _, n := range producer.seq {
		total += n
	}
	if total < kafkaCrashCycles*kafkaProduceBatch {
		t.Fatalf("only %d events produced over %d cycles: the producer did not run", total, kafkaCrashCycles)
	}
	t.Logf("%d SIGKILLs; %d events and %d account records in %v applied exactly once",
		kafkaCrashCycles, total, producer.accountRecords, elapsed.Round(time.Millisecond))
}

// checkEventPrefixes runs query (p, count, distinct seqs, max seq, sum of
// amounts per events partition) and fails unless each partition holds
// exactly the first n records produced to it; it returns n per partition.
func checkEventPrefixes(t *testing.T, conn *pgx.Conn, query, what string, cycle int) []int {
	t.Helper()
	out := make([]int, kafkaEventPartitions)
	for _, r := range queryText(t, conn, query) {
		part, _ := strconv.Atoi(r[0])
		n, _ := strconv.Atoi(r[1])
		distinct, _ := strconv.Atoi(r[2])
		maxSeq, _ := strconv.Atoi(r[3])
		sum, _ := strconv.Atoi(r[4])
		want := 0
		for seq := 0; seq < n; seq++ {
			want += kafkaEventAmount(part, seq)
		}
		if part < 0 || part >= kafkaEventPartitions || distinct != n || maxSeq != n-1 || sum != want {
			t.Fatalf("cycle %d: %s: events partition %d is not a prefix of what was produced (count %d, distinct %d, max seq %d, sum %d, want sum %d): a record lost or applied twice",
				cycle, what, part, n, distinct, maxSeq, sum, want)
		}
		out[part] = n
	}
	return out
}

// kafkaViewsDiff compares every view with PostgreSQL's answer to its
// query over a copy of the source tables, read from one snapshot ("" when
// equal).
func kafkaViewsDiff(t *testing.T, conn *pgx.Conn, views map[string]string) string {
	t.Helper()
	pg := pgtest.Connect(t)
	defer pg.Close(context.Background())
	schema := fmt.Sprintf("kafka_crash_%d_%d", os.Getpid(), time.Now().UnixNano())
	execPG(t, pg, "CREATE SCHEMA "+schema+"; SET search_path = "+schema+
		"; CREATE TABLE events (p int, seq bigint, amount int); CREATE TABLE accounts (id int PRIMARY KEY, version bigint, balance bigint)")
	defer execPG(t, pg, "DROP SCHEMA "+schema+" CASCADE")
	copyTable(t, conn, pg, "events", "SELECT p, seq, amount FROM events")
	copyTable(t, conn, pg, "accounts", "SELECT id, version, balance FROM accounts")
	names := []string{"account_totals", "event_totals", "rich"}
	for _, name := range names {
		got := joinRows(queryText(t, conn, "SELECT * FROM "+name))
		want := joinRows(queryText(t, pg, views[name]))
		if got != want {
			return fmt.Sprintf("view %s differs from PostgreSQL\n got: %s\nwant: %s", name, got, want)
		}
	}
	return ""
}

type kafkaAccount struct {
	version, balance int64
	deleted          bool
}

// kafkaCrashProducer writes both topics until stopped and remembers what
// the brokers acknowledged.
type kafkaCrashProducer struct {
	mu             sync.Mutex
	seq            []int // next sequence number per events partition
	accounts       map[int]kafkaAccount
	accountRecords int
}

func (k *kafkaCrashProducer) run(client *kgo.Client, stop <-chan struct{}) error {
	rnd := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return nil
		case <-time.After(kafkaProduceInterval):
		}
		var records []*kgo.Record
		seq := append([]int(nil), k.seq...)
		for i := 0; i < kafkaProduceBatch; i++ {
			part := rnd.IntN(kafkaEventPartitions)
			records = append(records, &kgo.Record{Topic: "events", Partition: int32(part),
				Value: fmt.Appendf(nil, `{"p": %d, "seq": %d, "amount": %d}`, part, seq[part], kafkaEventAmount(part, seq[part]))})
			seq[part]++
		}
		accounts := map[int]kafkaAccount{}
		for i := 0; i < kafkaProduceBatch/4; i++ {
			id := rnd.IntN(kafkaAccounts)
			a, ok := accounts[id]
			if !ok {
				a = k.accounts[id]
			}
			a.version++
			r := &kgo.Record{Topic: "accounts", Partition: int32(id % kafkaAccountPartitions), Key: []byte(strconv.Itoa(id))}
			if rnd.IntN(8) == 0 {
				a.deleted = true // a tombstone: the key as a bare JSON value
			} else {
				a.deleted, a.balance = false, int64(rnd.IntN(1000))
				r.Value = fmt.Appendf(nil, `{"id": %d, "version": %d, "balance": %d}`, id, a.version, a.balance)
			}
			accounts[id] = a
			records = append(records, r)
		}
		// NB: one producer, and franz-go keeps a partition's records in
		// order, so each partition's sequence numbers are its offsets'
		// order; a failed batch ends the test.
		if err := client.ProduceSync(ctx, records...).FirstErr(); err != nil {
			return err
		}
		k.mu.Lock()
		k.seq = seq
		for id, a := range accounts { //lint:maprange independent keys
			k.accounts[id] = a
		}
		k.accountRecords += kafkaProduceBatch / 4
		k.mu.Unlock()
	}
}

// want is what the source tables must hold once everything produced was
// read: events per partition (p, count, distinct seqs, sum) and the
// accounts' rows.
func (k *kafkaCrashProducer) want() (events, accounts string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var ev, ac [][]string
	for part, n := range k.seq {
		if n == 0 {
			continue
		}
		sum := 0
		for seq := 0; seq < n; seq++ {
			sum += kafkaEventAmount(part, seq)
		}
		ev = append(ev, []string{strconv.Itoa(part), strconv.Itoa(n), strconv.Itoa(n), strconv.Itoa(sum)})
	}
	for id, a := range k.accounts { //lint:maprange joinRows sorts
		if !a.deleted {
			ac = append(ac, []string{strconv.Itoa(id), strconv.FormatInt(a.version, 10), strconv.FormatInt(a.balance, 10)})
		}
	}
	return joinRows(ev), joinRows(ac)
}
