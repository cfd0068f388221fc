package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rockstream/rockstream/connect/kafka"
)

// topicReader reads a topic's committed records (read_committed: the
// records of aborted or open transactions are never seen).
type topicReader struct {
	t       *testing.T
	client  *kgo.Client
	records []*kgo.Record
}

func readTopic(t *testing.T, brokers, topic string) *topicReader {
	t.Helper()
	c, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &topicReader{t: t, client: c}
}

// poll reads what arrives within d.
func (r *topicReader) poll(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	f := r.client.PollFetches(ctx)
	f.EachRecord(func(rec *kgo.Record) { r.records = append(r.records, rec) })
}

// upsertState applies the records read so far as upserts: key → value,
// a tombstone deleting its key.
func (r *topicReader) upsertState() []string {
	m := map[string]string{}
	for _, rec := range r.records {
		if !fromSink(rec) {
			continue
		}
		if rec.Value == nil {
			delete(m, string(rec.Key))
		} else {
			m[string(rec.Key)] = string(rec.Value)
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m { //lint:maprange sorted below
		out = append(out, k+" "+v)
	}
	sort.Strings(out)
	return out
}

// waitState polls until state() equals want.
func (r *topicReader) waitState(state func() []string, want []string, what string) {
	r.t.Helper()
	sort.Strings(want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := state()
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s:\n got: %q\nwant: %q", what, got, want)
		}
		r.poll(200 * time.Millisecond)
	}
}

// fromSink reports whether a record was written by a sink (it carries
// the epoch header).
func fromSink(rec *kgo.Record) bool {
	for _, h := range rec.Headers {
		if h.Key == kafka.EpochHeader {
			return true
		}
	}
	return false
}

// checkExactlyOnce fails if a record's epoch header is missing, if a
// partition's epochs go backwards, or if one key appears twice at one
// epoch (an epoch delivered twice). Records of other producers (no
// header) are skipped.
func checkExactlyOnce(t *testing.T, records []*kgo.Record) {
	t.Helper()
	last := map[int32]uint64{}
	seen := map[string]bool{}
	for _, rec := range records {
		if !fromSink(rec) {
			continue
		}
		var epoch uint64
		var ok bool
		for _, h := range rec.Headers {
			if h.Key == kafka.EpochHeader {
				e, err := strconv.ParseUint(string(h.Value), 10, 64)
				epoch, ok = e, err == nil
			}
		}
		if !ok {
			t.Fatalf("record at %d/%d has no %s header", rec.Partition, rec.Offset, kafka.EpochHeader)
		}
		if epoch < last[rec.Partition] {
			t.Fatalf("partition %d: epoch %d after epoch %d (offset %d)", rec.Partition, epoch, last[rec.Partition], rec.Offset)
		}
		last[rec.Partition] = epoch
		id := fmt.Sprintf("%d/%s", epoch, rec.Key)
		if rec.Key != nil && seen[id] {
			t.Fatalf("key %s delivered twice at epoch %d (offset %d/%d)", rec.Key, epoch, rec.Partition, rec.Offset)
		}
		seen[id] = true
	}
}

// perCatWant is what an upsert sink of per_cat must hold: the view's rows
// as key and value JSON.
func perCatWant(t *testing.T, rows []string) []string {
	var want []string
	for _, r := range rows {
		f := strings.Split(r, "|")
		want = append(want, fmt.Sprintf(`{"cat":%q} {"cat":%q,"n":%s,"qty":%s}`, f[0], f[0], f[1], f[2]))
	}
	return want
}

// TestKafkaSinkUpsert writes a view's changes to a three-partition topic
// as upserts (a deleted group is a tombstone), starting with the view's
// snapshot, across a restart of the server (with another producer's
// records written to the topic meanwhile): a read_committed consumer
// ends with exactly the view's rows, every record carries its epoch, and
// no epoch is delivered twice. rockstream_catalog.sinks shows the sink;
// DROP MATERIALIZED VIEW refuses while it exists; DROP SINK stops it.
func TestKafkaSinkUpsert(t *testing.T) {
	brokers, producer := startKafka(t, "per-cat", 3)
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE items (id int PRIMARY KEY, cat text NOT NULL, qty int)`)
	exec(t, rs, `INSERT INTO items VALUES (1, 'a', 1), (2, 'b', 2), (3, 'a', 3)`)
	exec(t, rs, `CREATE MATERIALIZED VIEW per_cat AS SELECT cat, count(*) AS n, sum(qty) AS qty FROM items GROUP BY cat`)
	exec(t, rs, fmt.Sprintf(`CREATE SINK out FROM per_cat INTO KAFKA (brokers = '%s', topic = 'per-cat', format = 'upsert', key = 'cat')`, brokers))
	reader := readTopic(t, brokers, "per-cat")
	view := func() []string { return perCatWant(t, rowsText(t, rs, "SELECT cat, n, qty FROM per_cat")) }
	reader.waitState(reader.upsertState, view(), "the snapshot")

	exec(t, rs, `INSERT INTO items VALUES (4, 'c', 10), (5, 'b', 5)`)
	exec(t, rs, `UPDATE items SET qty = qty + 100 WHERE id = 1`)
	exec(t, rs, `DELETE FROM items WHERE cat = 'b'`)
	reader.waitState(reader.upsertState, view(), "after changes")
	tombstones := 0
	for _, r := range reader.records {
		if r.Value == nil {
			tombstones++
		}
	}
	if tombstones == 0 {
		t.Fatalf("deleting group b wrote no tombstone: %d records", len(reader.records))
	}
	waitFor(t, rs, `SELECT name, kind, view, topic, format, state, delivered_epoch IS NOT NULL, error FROM rockstream_catalog.sinks`,
		[]string{"out|kafka|per_cat|per-cat|upsert|RUNNING|t|NULL"}, "rockstream_catalog.sinks")

	// A restart resumes after the last delivered epoch, read back from
	// the topic's tail past records of another producer (more than the
	// first window the sink reads).
	rs.Close(context.Background())
	srv.stop()
	before := len(reader.records)
	for i := 0; i < 1200; i++ {
		produce(t, producer, int32(i%3), []byte("other"), []byte("{}"))
	}
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, rs, `INSERT INTO items VALUES (6, 'd', 7), (7, 'a', 1)`)
	exec(t, rs, `DELETE FROM items WHERE id = 4`)
	reader.waitState(reader.upsertState, view(), "after the restart")
	reader.poll(500 * time.Millisecond)
	checkExactlyOnce(t, reader.records)
	// Only the changes after the restart: no snapshot again, no epoch
	// before it again.
	var after []string
	for _, rec := range reader.records[before:] {
		if fromSink(rec) {
			after = append(after, string(rec.Key))
		}
	}
	sort.Strings(after)
	if got := strings.Join(after, " "); got != `{"cat":"a"} {"cat":"c"} {"cat":"d"}` {
		t.Fatalf("records written after the restart: %s, want one for each of a, c, d", got)
	}

	err := execErr(rs, `DROP MATERIALIZED VIEW per_cat`)
	wantError(t, "DROP MATERIALIZED VIEW with a sink", err, "2BP01", "other objects depend on it")
	exec(t, rs, `DROP SINK out`)
	waitFor(t, rs, `SELECT count(*) FROM rockstream_catalog.sinks`, []string{"0"}, "sinks after DROP SINK")
	n := len(reader.records)
	exec(t, rs, `INSERT INTO items VALUES (8, 'z', 1)`)
	exec(t, rs, `SELECT 1`)
	reader.poll(time.Second)
	if len(reader.records) != n {
		t.Fatalf("the dropped sink still wrote %d records", len(reader.records)-n)
	}
	exec(t, rs, `DROP MATERIALIZED VIEW per_cat`)
}

// TestKafkaSinkDebezium writes a view without a key in Debezium's change
// envelope (a record per row copy, op c or d), and a keyed view's update
// as one op u record with before and after.
func TestKafkaSinkDebezium(t *testing.T) {
	brokers, _ := startKafka(t, "big", 1)
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE items (id int PRIMARY KEY, cat text NOT NULL, qty int)`)
	exec(t, rs, `CREATE MATERIALIZED VIEW big AS SELECT cat, qty FROM items WHERE qty > 10`)
	exec(t, rs, `CREATE MATERIALIZED VIEW totals AS SELECT cat, sum(qty) AS qty FROM items GROUP BY cat`)
	exec(t, rs, fmt.Sprintf(`CREATE SINK big_out FROM big INTO KAFKA (brokers = '%s', topic = 'big', format = 'debezium')`, brokers))
	exec(t, rs, fmt.Sprintf(`CREATE SINK totals_out FROM totals INTO KAFKA (brokers = '%s', topic = 'big', format = 'debezium', key = 'cat')`, brokers))
	reader := readTopic(t, brokers, "big")
	// The changes below are written as changes only once both sinks
	// subscribed (RUNNING): a sink starting later writes the views'
	// contents then as its snapshot (over several shards its start may
	// come after the commits).
	waitFor(t, rs, `SELECT count(*) FROM rockstream_catalog.sinks WHERE state = 'RUNNING'`, []string{"2"}, "both sinks running")
	exec(t, rs, `INSERT INTO items VALUES (1, 'a', 20), (2, 'a', 20), (3, 'b', 5)`)
	values := func() []string {
		var out []string
		for _, r := range reader.records {
			out = append(out, string(r.Key)+" "+string(r.Value))
		}
		sort.Strings(out)
		return out
	}
	// NB: a sink writes each epoch step's changes, and one step may
	// take several commits (a view shard steps the epochs the exchange
	// brought together): the UPDATE waits until the INSERT is out.
	reader.waitState(values, []string{
		` {"before":null,"after":{"cat":"a","qty":20},"op":"c"}`,
		` {"before":null,"after":{"cat":"a","qty":20},"op":"c"}`,
		`{"cat":"a"} {"before":null,"after":{"cat":"a","qty":40},"op":"c"}`,
		`{"cat":"b"} {"before":null,"after":{"cat":"b","qty":5},"op":"c"}`,
	}, "debezium records of the INSERT")
	exec(t, rs, `UPDATE items SET qty = 1 WHERE id = 2`)
	reader.waitState(values, []string{
		// big: two copies of (a, 20) inserted, one deleted.
		` {"before":null,"after":{"cat":"a","qty":20},"op":"c"}`,
		` {"before":null,"after":{"cat":"a","qty":20},"op":"c"}`,
		` {"before":{"cat":"a","qty":20},"after":null,"op":"d"}`,
		// totals: a and b created, a updated.
		`{"cat":"a"} {"before":null,"after":{"cat":"a","qty":40},"op":"c"}`,
		`{"cat":"b"} {"before":null,"after":{"cat":"b","qty":5},"op":"c"}`,
		`{"cat":"a"} {"before":{"cat":"a","qty":40},"after":{"cat":"a","qty":21},"op":"u"}`,
	}, "debezium records")
}

// TestKafkaSinkRefusals: CREATE SINK refuses, naming the option, what it
// does not support, before anything is created.
func TestKafkaSinkRefusals(t *testing.T) {
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, `CREATE TABLE items (id int PRIMARY KEY, cat text)`)
	exec(t, rs, `CREATE MATERIALIZED VIEW v AS SELECT cat, count(*) AS n FROM items GROUP BY cat`)
	for _, c := range []struct{ sql, state, msg string }{
		{`CREATE SINK s FROM v INTO KAFKA (brokers = 'k:9092', topic = 't', format = 'upsert', key = 'cat', compression = 'zstd')`, "0A000", "option compression is not supported"},
		{`CREATE SINK s FROM v INTO KAFKA (brokers = 'k:9092', topic = 't', format = 'avro')`, "0A000", "format = 'avro' is not supported"},
		{`CREATE SINK s FROM v INTO KAFKA (brokers = 'k:9092', topic = 't', format = 'upsert')`, "0A000", "needs option key"},
		{`CREATE SINK s FROM v INTO KAFKA (brokers = 'k:9092', format = 'upsert', key = 'cat')`, "0A000", "needs option topic"},
		{`CREATE SINK s FROM v INTO KAFKA (topic = 't', format = 'upsert', key = 'cat')`, "0A000", "needs option brokers"},
		{`CREATE SINK s FROM v INTO KAFKA (brokers = 'k:9092', topic = 't', format = 'upsert', key = 'nope')`, "0A000", `key names column "nope"`},
		{`CREATE SINK s FROM items INTO KAFKA (brokers = 'k:9092', topic = 't', format = 'debezium')`, "42809", "needs a materialized view"},
		{`CREATE SINK s FROM missing INTO KAFKA (brokers = 'k:9092', topic = 't', format = 'debezium')`, "42P01", "does not exist"},
		{`CREATE SINK s FROM v INTO S3 (bucket = 'b')`, "0A000", "only INTO KAFKA"},
	} {
		pgErr := wantError(t, c.sql, execErr(rs, c.sql), c.state, c.msg)
		if strings.Contains(c.msg, "option") && !strings.HasPrefix(pgErr.Detail, "RS-1021") {
			t.Fatalf("%s: detail %q, want the RS-1021 code", c.sql, pgErr.Detail)
		}
	}
	waitFor(t, rs, `SELECT count(*) FROM rockstream_catalog.sinks`, []string{"0"}, "no sink created")
	err := execErr(rs, `DROP SINK nope`)
	wantError(t, "DROP SINK of a missing sink", err, "42P01", `sink "nope" does not exist`)
	exec(t, rs, `DROP SINK IF EXISTS nope`)
}
