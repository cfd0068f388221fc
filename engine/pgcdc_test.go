package engine_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// cdcCompare are the queries whose answers must be equal on the upstream
// PostgreSQL and on RockStream's mirrors of its tables.
var cdcCompare = []string{
	"SELECT * FROM customers",
	"SELECT * FROM orders",
}

// cdcViewQuery is the defining query of the test's materialized view over
// the mirrors (compared with the same query on the upstream).
const cdcViewQuery = `SELECT c.region, count(*) AS n, sum(o.amount) AS total, count(o.note) AS notes
	FROM orders o JOIN customers c ON o.customer_id = c.id GROUP BY c.region`

// waitMirrored waits until every query of compare answers the same on
// the upstream and on RockStream (with the view over the mirrors equal
// to its query upstream), or fails with the difference.
func waitMirrored(t *testing.T, rs, pg *pgx.Conn, compare []string, views map[string]string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		diff := ""
		for _, q := range compare {
			got, want := rowsText(t, rs, q), rowsText(t, pg, q)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				diff = fmt.Sprintf("%s\n got: %q\nwant: %q", q, got, want)
				break
			}
		}
		for name, q := range views {
			if diff != "" {
				break
			}
			got, want := rowsText(t, rs, "SELECT * FROM "+name), rowsText(t, pg, q)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				diff = fmt.Sprintf("view %s\n got: %q\nwant: %q", name, got, want)
			}
		}
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mirrors did not reach the upstream's contents: %s", diff)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPostgresSource mirrors two upstream tables of every supported type:
// the initial snapshot, then inserts, updates (of the key too), deletes,
// multi-statement and rolled-back transactions, updates that leave a
// TOASTed value unsent, across a restart, a
// compatible schema change (ADD COLUMN) and a TRUNCATE; a view over the
// mirrors equals its query upstream throughout. DROP SOURCE ... CASCADE
// removes the mirrors and the replication slot.
func TestPostgresSource(t *testing.T) {
	url, pg := pgtest.Database(t)
	exec(t, pg, `CREATE TABLE customers (id bigint PRIMARY KEY, name text NOT NULL, region varchar(10))`)
	exec(t, pg, `CREATE TABLE orders (id int, line smallint, customer_id bigint, amount numeric(10,2), paid boolean,
		placed timestamptz, day date, at timestamp, note text, data bytea, uid uuid, doc jsonb, ratio float8, weight real,
		PRIMARY KEY (id, line))`)
	exec(t, pg, `INSERT INTO customers VALUES (1, 'ada', 'eu'), (2, 'bob', 'us'), (3, 'cy', NULL)`)
	exec(t, pg, `INSERT INTO orders SELECT i, 1, 1 + i % 3, i * 1.25, i % 2 = 0, '2024-01-01 00:00:00+00'::timestamptz + i * interval '1 hour',
		'2024-01-01'::date + i, '2024-02-01 12:00:00'::timestamp + i * interval '1 minute', CASE WHEN i % 4 = 0 THEN NULL ELSE 'note ' || i END,
		decode(lpad(to_hex(i), 4, '0'), 'hex'), md5(i::text)::uuid, jsonb_build_object('i', i, 'tags', jsonb_build_array('a', i)), i / 7.0, i / 3.0
		FROM generate_series(1, 200) i`)
	exec(t, pg, `CREATE PUBLICATION p FOR TABLE customers, orders`)

	dir := t.TempDir()
	srv := startServer(t, dir)
	rs := connect(t, srv.url())
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE pg FROM POSTGRES (connection = '%s', publication = 'p')`, url))
	exec(t, rs, "CREATE MATERIALIZED VIEW revenue AS "+cdcViewQuery)
	views := map[string]string{"revenue": cdcViewQuery}
	waitMirrored(t, rs, pg, cdcCompare, views)
	// The source drew its own slot name, kept in its definition.
	slot := rowsText(t, pg, "SELECT slot_name FROM pg_replication_slots WHERE database = current_database()")
	if def := rowsText(t, rs, "SELECT definition FROM rockstream_catalog.sources WHERE name = 'pg'"); len(slot) != 1 || !strings.HasPrefix(slot[0], "rockstream_") || !strings.Contains(def[0], "slot = '"+slot[0]+"'") {
		t.Fatalf("upstream slots %v, source definition %v", slot, def)
	}

	exec(t, pg, `INSERT INTO customers VALUES (4, 'dee', 'ap')`)
	exec(t, pg, `UPDATE orders SET amount = amount + 1, note = 'changed' WHERE id % 5 = 0`)
	exec(t, pg, `UPDATE orders SET line = 2 WHERE id = 7`) // the key changes: the row moves
	exec(t, pg, `DELETE FROM orders WHERE id % 11 = 0`)
	exec(t, pg, `BEGIN; INSERT INTO orders (id, line, customer_id, amount) VALUES (1000, 1, 4, 9.99); UPDATE customers SET region = 'eu' WHERE id = 3; DELETE FROM customers WHERE id = 2; COMMIT`)
	exec(t, pg, `BEGIN; INSERT INTO orders (id, line, customer_id, amount) VALUES (1001, 1, 4, 1); ROLLBACK`)
	// Updates that leave a TOASTed value alone do not send it: the source
	// takes it from the row's current version (stored, or earlier in the
	// same transaction).
	big := `(SELECT string_agg(md5(i::text), '') FROM generate_series(1, 500) i)`
	exec(t, pg, `INSERT INTO orders (id, line, customer_id, amount, note) VALUES (3000, 1, 1, 1, `+big+`)`)
	exec(t, pg, `UPDATE orders SET amount = 7 WHERE id = 3000`)
	exec(t, pg, `BEGIN; INSERT INTO orders (id, line, customer_id, amount, note) VALUES (3001, 1, 1, 1, `+big+`); UPDATE orders SET amount = 8 WHERE id = 3001; COMMIT`)
	waitMirrored(t, rs, pg, cdcCompare, views)

	// A restart resumes from the stored position: nothing lost, nothing
	// applied twice (the view would count it).
	srv.stop()
	exec(t, pg, `INSERT INTO orders (id, line, customer_id, amount) SELECT i, 1, 1, 2 FROM generate_series(2000, 2099) i`)
	srv = startServer(t, dir)
	rs = connect(t, srv.url())
	exec(t, pg, `UPDATE orders SET amount = 3 WHERE id BETWEEN 2000 AND 2009`)
	waitMirrored(t, rs, pg, cdcCompare, views)

	// A compatible change continues: the new column is not mirrored.
	exec(t, pg, `ALTER TABLE customers ADD COLUMN tier int`)
	exec(t, pg, `INSERT INTO customers VALUES (5, 'eve', 'us', 1)`)
	exec(t, pg, `UPDATE customers SET tier = 2, name = 'ada2' WHERE id = 1`)
	exec(t, pg, `TRUNCATE orders`)
	exec(t, pg, `INSERT INTO orders (id, line, customer_id, amount) VALUES (1, 1, 1, 5)`)
	waitMirrored(t, rs, pg, []string{"SELECT id, name, region FROM customers", "SELECT * FROM orders"}, views)

	if _, err := rs.Exec(t.Context(), "INSERT INTO orders (id, line) VALUES (9, 9)"); err == nil {
		t.Fatal("a mirrored table accepted an INSERT")
	}
	if _, err := rs.Exec(t.Context(), "DROP SOURCE orders"); err == nil || !strings.Contains(err.Error(), "DROP SOURCE pg CASCADE") && !strings.Contains(message(err), "mirrors it") {
		t.Fatalf("dropping a mirror alone: %v", err)
	}
	exec(t, rs, "DROP SOURCE pg CASCADE")
	if got := rowsText(t, pg, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"); got[0] != "0" {
		t.Fatalf("DROP SOURCE left %s replication slots upstream", got[0])
	}
	if got := rowsText(t, rs, "SELECT count(*) FROM rockstream_catalog.sources"); got[0] != "0" {
		t.Fatalf("DROP SOURCE left %s sources", got[0])
	}
}

// TestPostgresSourceRefusals: CREATE SOURCE ... FROM POSTGRES refuses what
// it cannot mirror, naming the object at fault and creating nothing.
func TestPostgresSourceRefusals(t *testing.T) {
	url, pg := pgtest.Database(t)
	exec(t, pg, `CREATE TABLE keyless (a int)`)
	exec(t, pg, `CREATE TABLE odd (id int PRIMARY KEY, r int4range)`)
	exec(t, pg, `CREATE PUBLICATION p_keyless FOR TABLE keyless`)
	exec(t, pg, `CREATE PUBLICATION p_odd FOR TABLE odd`)
	exec(t, pg, `CREATE PUBLICATION p_empty`)
	exec(t, pg, `CREATE TABLE good (id int PRIMARY KEY)`)
	exec(t, pg, `CREATE PUBLICATION p_good FOR TABLE good`)
	exec(t, pg, `SELECT pg_create_logical_replication_slot('taken', 'pgoutput')`)
	exec(t, pg, `CREATE TABLE listed (id int PRIMARY KEY, v int)`)
	exec(t, pg, `CREATE PUBLICATION p_cols FOR TABLE listed (v)`)
	srv := startServer(t, t.TempDir())
	rs := connect(t, srv.url())
	for _, c := range []struct{ options, code, mentions string }{
		{fmt.Sprintf("connection = '%s', publication = 'nope'", url), "RS-1008", `"nope"`},
		{fmt.Sprintf("connection = '%s', publication = 'p_empty'", url), "RS-1008", "no tables"},
		{fmt.Sprintf("connection = '%s', publication = 'p_keyless'", url), "RS-1006", "public.keyless"},
		{fmt.Sprintf("connection = '%s', publication = 'p_odd'", url), "RS-1007", `column "r"`},
		{"connection = 'postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=5', publication = 'p'", "RS-1000", "127.0.0.1:1"},
		{fmt.Sprintf("connection = '%s'", url), "RS-2113", "publication"},
		{fmt.Sprintf("connection = '%s', publication = 'p_good', slot = 'taken'", url), "RS-1013", `"taken" already exists`},
		{fmt.Sprintf("connection = '%s', publication = 'p_cols'", url), "RS-1006", `leaves out primary key column "id"`},
	} {
		_, err := rs.Exec(t.Context(), "CREATE SOURCE s FROM POSTGRES ("+c.options+")")
		if err == nil || !strings.Contains(detailOf(err), c.code) || !strings.Contains(message(err), c.mentions) {
			t.Errorf("CREATE SOURCE (%s): got %v (detail %q), want %s mentioning %s", c.options, err, detailOf(err), c.code, c.mentions)
		}
	}
	if got := rowsText(t, rs, "SELECT count(*) FROM rockstream_catalog.sources"); got[0] != "0" {
		t.Fatalf("refused sources left %s catalog entries", got[0])
	}
}

// detailOf is an error's DETAIL, which carries the RS code.
func detailOf(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Detail
	}
	return ""
}

// TestPostgresSourceMetrics: /metrics counts a POSTGRES source's row
// changes and reports it BLOCKED after an incompatible upstream change.
func TestPostgresSourceMetrics(t *testing.T) {
	url, pg := pgtest.Database(t)
	exec(t, pg, `CREATE TABLE t (id int PRIMARY KEY, v int)`)
	exec(t, pg, `INSERT INTO t SELECT i, i FROM generate_series(1, 30) i`)
	exec(t, pg, `CREATE PUBLICATION p FOR TABLE t`)
	a := serveHTTP(t)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	exec(t, rs, fmt.Sprintf(`CREATE SOURCE pg FROM POSTGRES (connection = '%s', publication = 'p')`, url))
	waitMetric := func(line string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			resp, err := http.Get("http://" + a.http + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), line+"\n") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/metrics has no line %q:\n%s", line, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitMetric(`rockstream_source_rows_total{source="pg"} 30`) // the snapshot
	exec(t, pg, `UPDATE t SET v = 0 WHERE id <= 5`)
	waitMetric(`rockstream_source_rows_total{source="pg"} 35`)
	waitMetric(`rockstream_source_blocked{source="pg"} 0`)
	exec(t, pg, `ALTER TABLE t DROP COLUMN v`)
	exec(t, pg, `INSERT INTO t VALUES (100)`)
	waitMetric(`rockstream_source_blocked{source="pg"} 1`)
}
