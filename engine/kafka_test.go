package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startKafka starts an in-process Kafka-protocol broker with topic of
// partitions partitions and a producer client for it.
func startKafka(t *testing.T, topic string, partitions int32) (brokers string, producer *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers = strings.Join(c.ListenAddrs(), ",")
	producer, err = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	return brokers, producer
}

func produce(t *testing.T, p *kgo.Client, partition int32, key, value []byte) {
	t.Helper()
	if err := p.ProduceSync(context.Background(), &kgo.Record{Partition: partition, Key: key, Value: value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestKafkaSource reads JSON records of a three-partition topic into an
// upserting source (later records of a key replace it), with a materialized view over it, across a restart; malformed
// records land in orders_errors with their position and bytes, counted
// in rockstream_catalog.sources; DROP SOURCE stops the consumer.
func TestKafkaSource(t *testing.T) {
	brokers, p := startKafka(t, "orders", 3)
	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE orders (id bigint, item text, qty int, price numeric(10,2))
		FROM KAFKA (brokers = '%s', topic = 'orders', format = 'json', key = 'id')`, brokers))
	exec(t, rs, `CREATE MATERIALIZED VIEW per_item AS SELECT item, count(*) AS n, sum(qty) AS qty FROM orders GROUP BY item`)
	for i := 1; i <= 30; i++ {
		produce(t, p, int32(i%3), nil, fmt.Appendf(nil, `{"id": %d, "item": "i%d", "qty": %d, "price": "%d.50"}`, i, i%4, i, i))
	}
	// Upserts and a tombstone (key as a bare JSON value and as an object).
	produce(t, p, 1, nil, []byte(`{"id": 1, "item": "i9", "qty": 100, "price": 1}`))
	// Bad records: malformed JSON, a wrong type, a null key.
	produce(t, p, 0, []byte(`k`), []byte(`{"id": 4,`))
	produce(t, p, 1, nil, []byte(`{"id": 40, "qty": "many"}`))
	produce(t, p, 2, nil, []byte(`{"item": "x"}`))

	want := func() (rows, view []string) {
		m := map[int]string{}
		for i := 1; i <= 30; i++ {
			m[i] = fmt.Sprintf("%d|i%d|%d|%d.50", i, i%4, i, i)
		}
		m[1] = "1|i9|100|1.00"
		per := map[string][2]int{}
		for i := 1; i <= 30; i++ {
			if _, ok := m[i]; !ok {
				continue
			}
			item, qty := fmt.Sprintf("i%d", i%4), i
			if i == 1 {
				item, qty = "i9", 100
			}
			v := per[item]
			per[item] = [2]int{v[0] + 1, v[1] + qty}
		}
		for i := 1; i <= 30; i++ {
			if r, ok := m[i]; ok {
				rows = append(rows, r)
			}
		}
		for _, item := range []string{"i0", "i1", "i2", "i3", "i9"} {
			view = append(view, fmt.Sprintf("%s|%d|%d", item, per[item][0], per[item][1]))
		}
		return rows, view
	}
	wantRows, wantView := want()
	check := func(what string) {
		t.Helper()
		waitFor(t, rs, "SELECT * FROM orders ORDER BY id", wantRows, what)
		waitFor(t, rs, "SELECT * FROM per_item ORDER BY item", wantView, what)
		waitFor(t, rs, "SELECT kafka_partition, kafka_offset, error, raw_key, raw_value FROM orders_errors ORDER BY 1, 2", []string{
			fmt.Sprintf(`0|10|invalid JSON object: unexpected end of JSON input|\x%x|\x%x`, "k", `{"id": 4,`),
			fmt.Sprintf(`1|11|column "qty": RS-2061: invalid input syntax for type integer: "many"|NULL|\x%x`, `{"id": 40, "qty": "many"}`),
			fmt.Sprintf(`2|10|key column "id" is missing|NULL|\x%x`, `{"item": "x"}`),
		}, what)
	}
	check("first start")
	if got := rowsText(t, rs, "SELECT kind, state, rows, bad_records, lag_records FROM rockstream_catalog.sources WHERE name = 'orders'"); strings.Join(got, ",") != "kafka|RUNNING|31|3|0" {
		t.Fatalf("rockstream_catalog.sources: %v", got)
	}
	rs.Close(context.Background())
	srv.stop()

	// Restarted: nothing read twice, and records produced while it was
	// down are read.
	produce(t, p, 0, nil, []byte(`{"id": 30, "item": "i2", "qty": 30, "price": "30.50"}`))
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	check("after a restart")
	exec(t, rs, "DROP SOURCE orders CASCADE")
	if got := rowsText(t, rs, "SELECT count(*) FROM rockstream_catalog.sources"); got[0] != "0" {
		t.Fatalf("DROP SOURCE left %s sources", got[0])
	}
}

// waitFor waits until query answers want (rowsText's sorted lines).
func waitFor(t *testing.T, rs *pgx.Conn, query string, want []string, what string) {
	t.Helper()
	sort.Strings(want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := rowsText(t, rs, query)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s\n got: %q\nwant: %q", what, query, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKafkaTombstones: in an upserting source a record with a key and no
// value deletes the row of that key (the key as a bare JSON value, a JSON
// object, or plain text); a materialized view over the source follows.
// A tombstone for an absent key changes nothing; one without a key (or
// whose key lacks the key column) is a dead letter. An upsert of a new key
// and its tombstone in one commit leave no row (the shard's delete of a
// key it does not store yet must see the upsert before it).
func TestKafkaTombstones(t *testing.T) {
	brokers, p := startKafka(t, "kv", 2)
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE kv (id bigint, grp text, v int)
		FROM KAFKA (brokers = '%s', topic = 'kv', format = 'json', key = 'id')`, brokers))
	exec(t, rs, `CREATE MATERIALIZED VIEW kv_sum AS SELECT grp, count(*) AS n, sum(v) AS v FROM kv GROUP BY grp`)
	rows := map[int][2]any{}
	put := func(partition int32, id int, grp string, v int) {
		produce(t, p, partition, fmt.Appendf(nil, "%d", id), fmt.Appendf(nil, `{"id": %d, "grp": "%s", "v": %d}`, id, grp, v))
		rows[id] = [2]any{grp, v}
	}
	del := func(partition int32, key string, id int) {
		produce(t, p, partition, []byte(key), nil)
		delete(rows, id)
	}
	// Upserts and tombstones of a key in one produce request (one record
	// batch), so that the source reads them in one poll and one commit.
	var batch []*kgo.Record
	for _, id := range []int{20, 21, 22} {
		batch = append(batch, &kgo.Record{Partition: 0, Key: fmt.Appendf(nil, "%d", id), Value: fmt.Appendf(nil, `{"id": %d, "grp": "g5", "v": 1}`, id)})
	}
	batch = append(batch, &kgo.Record{Partition: 0, Key: []byte("20")}, &kgo.Record{Partition: 0, Key: []byte(`{"id": 22}`)})
	rows[21] = [2]any{"g5", 1}
	if err := p.ProduceSync(context.Background(), batch...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 12; i++ {
		put(int32(i%2), i, fmt.Sprintf("g%d", i%3), i)
	}
	del(1, `1`, 1)         // bare JSON value
	del(0, `{"id": 2}`, 2) // JSON object
	del(1, ` 3 `, 3)       // bare JSON value with spaces
	del(0, `4`, 4)         // then re-inserted
	put(0, 4, "g9", 40)
	del(1, `99`, 99)                              // absent key
	put(1, 5, "g0", 50)                           // upsert
	del(1, `5`, 5)                                // ... then deleted
	produce(t, p, 0, nil, nil)                    // tombstone without a key: dead letter
	produce(t, p, 1, []byte(`{"grp": "x"}`), nil) // key object without the key column
	want := func() (src, view []string) {
		per := map[string][2]int{}
		for id := 1; id <= 30; id++ {
			r, ok := rows[id]
			if !ok {
				continue
			}
			src = append(src, fmt.Sprintf("%d|%s|%d", id, r[0], r[1]))
			s := per[r[0].(string)]
			per[r[0].(string)] = [2]int{s[0] + 1, s[1] + r[1].(int)}
		}
		for g, s := range per {
			view = append(view, fmt.Sprintf("%s|%d|%d", g, s[0], s[1]))
		}
		return src, view
	}
	wantSrc, wantView := want()
	waitFor(t, rs, "SELECT * FROM kv ORDER BY id", wantSrc, "source")
	waitFor(t, rs, "SELECT * FROM kv_sum ORDER BY grp", wantView, "view")
	waitFor(t, rs, "SELECT kafka_partition, kafka_offset, error FROM kv_errors ORDER BY 1, 2", []string{
		"0|14|a record without a value (a tombstone) has no key either",
		`1|11|key column "id" is missing`,
	}, "dead letters")
	// Then record by record, each in its own poll or not.
	for i := 6; i <= 12; i++ {
		del(int32(i%2), fmt.Sprint(i), i)
		if i%3 == 0 {
			put(int32(i%2), i, "g7", 70+i)
		}
	}
	put(1, 13, "g1", 13)
	del(1, `{"id": 13}`, 13)
	wantSrc, wantView = want()
	waitFor(t, rs, "SELECT * FROM kv ORDER BY id", wantSrc, "source, later")
	waitFor(t, rs, "SELECT * FROM kv_sum ORDER BY grp", wantView, "view, later")
}

// TestKafkaFormats reads csv and text records: CSV quoting as in COPY ...
// CSV (an unquoted empty field is NULL, a quoted one the empty string), a
// CSV tombstone's key as a CSV line; text values as the only column's
// text. Records that do not decode land in <source>_errors.
func TestKafkaFormats(t *testing.T) {
	brokers, p := startKafka(t, "csvt", 1)
	c2, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "lines", "nums"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c2.Close)
	p2, err := kgo.NewClient(kgo.SeedBrokers(c2.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p2.Close)
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE csvt (id int, name text, amount numeric(8,2))
		FROM KAFKA (brokers = '%s', topic = 'csvt', format = 'csv', key = 'id')`, brokers))
	exec(t, rs, `CREATE MATERIALIZED VIEW csvt_total AS SELECT count(*) AS n, count(name) AS names, sum(amount) AS amount FROM csvt`)
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE lines FROM KAFKA (brokers = '%s', topic = 'lines', format = 'text')`, strings.Join(c2.ListenAddrs(), ",")))
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE nums (n int) FROM KAFKA (brokers = '%s', topic = 'nums', format = 'text')`, strings.Join(c2.ListenAddrs(), ",")))
	for _, v := range []string{
		`1,alice,1.50`,
		`2,"bob, jr",2`,
		`3,"say ""hi""",`,
		`4,"",3`,
		"5,\"two\nlines\",4\n",
		`6,x`,               // 5: too few fields
		`7,"unterminated,1`, // 6
		`8,y,abc`,           // 7: not a numeric
		`,z,1`,              // 8: null key
		`9,"a"b,1`,          // 9: data after a quoted field
		"10,a\nb,1",         // 10: unquoted line break
		`1,alice2,9`,        // upsert
	} {
		produce(t, p, 0, nil, []byte(v))
	}
	produce(t, p, 0, []byte("2"), nil)       // tombstone: deletes 2
	produce(t, p, 0, []byte("2,3"), nil)     // 13: a key line of two fields
	produce(t, p, 0, []byte("\"4\"\n"), nil) // quoted key: deletes 4
	waitFor(t, rs, "SELECT id, name, amount, name IS NULL FROM csvt ORDER BY id", []string{
		"1|alice2|9.00|f",
		`3|say "hi"|NULL|f`,
		"5|two\nlines|4.00|f",
	}, "csv source")
	waitFor(t, rs, "SELECT * FROM csvt_total", []string{"3|3|13.00"}, "csv view")
	waitFor(t, rs, "SELECT kafka_offset, error FROM csvt_errors ORDER BY 1", []string{
		"5|expected 3 CSV fields, got 2",
		"6|unterminated CSV quoted field",
		`7|column "amount": RS-2061: invalid input syntax for type numeric: "abc"`,
		`8|key column "id" is null`,
		"9|extra data after CSV quoted field",
		"10|a CSV value holds one line (an unquoted line break)",
		"13|expected 1 CSV fields, got 2",
	}, "csv dead letters")

	for _, v := range []string{"hello", "with, comma", "tab\tand \"quotes\"", "\xff\xfe", "a\x00b", "  spaced  "} {
		produce2(t, p2, "lines", []byte(v))
	}
	for _, v := range []string{"42", " 7 ", "x", "99999999999", ""} {
		produce2(t, p2, "nums", []byte(v))
	}
	waitFor(t, rs, "SELECT value FROM lines", []string{"hello", "with, comma", "tab\tand \"quotes\"", "  spaced  "}, "text source")
	waitFor(t, rs, "SELECT kafka_offset, error FROM lines_errors ORDER BY 1", []string{
		`3|column "value": invalid byte sequence for encoding "UTF8"`,
		`4|column "value": invalid byte sequence for encoding "UTF8": 0x00`,
	}, "text dead letters")
	waitFor(t, rs, "SELECT n FROM nums", []string{"42", "7"}, "typed text source")
	waitFor(t, rs, "SELECT kafka_offset, error FROM nums_errors ORDER BY 1", []string{
		`2|column "n": RS-2061: invalid input syntax for type integer: "x"`,
		`3|column "n": RS-2061: value "99999999999" is out of range for type integer`,
		`4|column "n": RS-2061: invalid input syntax for type integer: ""`,
	}, "typed text dead letters")
}

func produce2(t *testing.T, p *kgo.Client, topic string, value []byte) {
	t.Helper()
	if err := p.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Value: value}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
