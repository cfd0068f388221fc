package engine_test

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// keylessScript: tables without a PRIMARY KEY hold repeated rows, and
// UPDATE, DELETE and TRUNCATE change exactly the rows they match (one of
// two equal rows included), transactionally; ALTER TABLE ADD PRIMARY KEY
// then checks the rows as PostgreSQL does (duplicates 23505 before NULLs
// 23502, bad columns, a second key) and keys the table; VACUUM and ANALYZE
// are accepted and checked. Every outcome must equal PostgreSQL 15's.
var keylessScript = []string{
	`DROP TABLE IF EXISTS kl_a, kl_b`,
	`CREATE TABLE kl_a (a int, b int, f char(4)) WITH (fillfactor=100)`,
	`CREATE TABLE kl_b (a int, b text) WITH (fillfactor=5)`,
	`CREATE TABLE kl_b (a int, b text)`,
	`INSERT INTO kl_a VALUES (1, 10, 'x'), (1, 10, 'x'), (2, 20, NULL), (NULL, 30, 'y')`,
	`SELECT a, b, f FROM kl_a ORDER BY a, b`,
	`UPDATE kl_a SET b = b + 1 WHERE a = 1`,
	`SELECT a, b FROM kl_a ORDER BY a, b`,
	`DELETE FROM kl_a WHERE a = 1 AND b = 11 RETURNING a, b`,
	`SELECT count(*) FROM kl_a`,
	`BEGIN`,
	`INSERT INTO kl_a VALUES (7, 70, 'z'), (7, 70, 'z')`,
	`SAVEPOINT s`,
	`DELETE FROM kl_a WHERE a = 7`,
	`UPDATE kl_a SET a = 3 WHERE a = 2`,
	`SELECT a, b FROM kl_a ORDER BY a, b`,
	`ROLLBACK TO SAVEPOINT s`,
	`UPDATE kl_a SET b = 71 WHERE a = 7`,
	`COMMIT`,
	`SELECT a, b FROM kl_a ORDER BY a, b`,
	`ALTER TABLE kl_a ADD PRIMARY KEY (a)`,
	`DELETE FROM kl_a WHERE a = 7 AND b = 71`,
	`SELECT a, b FROM kl_a ORDER BY a, b`,
	`ALTER TABLE kl_a ADD PRIMARY KEY (a)`,
	`ALTER TABLE kl_a ADD PRIMARY KEY (nope)`,
	`ALTER TABLE kl_a ADD PRIMARY KEY (a, a)`,
	`ALTER TABLE kl_missing ADD PRIMARY KEY (a)`,
	`ALTER TABLE kl_a ADD PRIMARY KEY (b)`,
	`ALTER TABLE kl_a ADD PRIMARY KEY (a)`,
	`SELECT a, b FROM kl_a ORDER BY b`,
	`INSERT INTO kl_a VALUES (2, 99, 'q')`,
	`INSERT INTO kl_a VALUES (NULL, 99, 'q')`,
	`UPDATE kl_a SET b = b + 100 WHERE b = 20`,
	`SELECT a, b FROM kl_a ORDER BY b`,
	`SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'kl_a'::regclass AND attnum > 0 ORDER BY attnum`,
	`VACUUM`,
	`VACUUM kl_a`,
	`VACUUM ANALYZE kl_a, kl_b`,
	`ANALYZE kl_a (a, b)`,
	`ANALYZE kl_a (nope)`,
	`VACUUM kl_missing`,
	`BEGIN`,
	`ANALYZE kl_a`,
	`VACUUM kl_a`,
	`ROLLBACK`,
	`INSERT INTO kl_b VALUES (1, 'p'), (1, 'p')`,
	`ALTER TABLE kl_b ADD CONSTRAINT kl_b_key PRIMARY KEY (a, b)`,
	`TRUNCATE kl_b`,
	`ALTER TABLE kl_b ADD CONSTRAINT kl_b_key PRIMARY KEY (a, b)`,
	`INSERT INTO kl_b VALUES (1, 'p'), (1, 'q')`,
	`INSERT INTO kl_b VALUES (1, 'p')`,
	`SELECT a, b FROM kl_b ORDER BY a, b`,
	`DROP TABLE kl_a, kl_b`,
}

func TestKeylessTablesMatchPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, keylessScript)
}

// TestAddPrimaryKeyKeepsViews: materialized views over a table that gets
// its primary key after it was loaded (as pgbench -i does) keep equal to
// their queries through the ALTER and the keyed updates after it, and the
// key survives a restart (the shard's re-keying is durable).
func TestAddPrimaryKeyKeepsViews(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	c := connect(t, srv.url())
	exec(t, c, "CREATE TABLE acc (aid int NOT NULL, bid int, bal int)")
	exec(t, c, "INSERT INTO acc SELECT g, g % 3, 0 FROM generate_series(1, 300) g")
	exec(t, c, "CREATE MATERIALIZED VIEW acc_by_b AS SELECT bid, count(*) AS n, sum(bal) AS s FROM acc GROUP BY bid")
	const q = "SELECT bid, count(*), sum(bal) FROM acc GROUP BY bid"
	check := func(when string) {
		t.Helper()
		got, want := rowsText(t, c, "SELECT * FROM acc_by_b"), rowsText(t, c, q)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: view %v, query %v", when, got, want)
		}
	}
	check("before ALTER")
	exec(t, c, "ALTER TABLE acc ADD PRIMARY KEY (aid)")
	check("after ALTER")
	exec(t, c, "UPDATE acc SET bal = bal + 5 WHERE aid = 6")
	exec(t, c, "UPDATE acc SET bal = bal - 2 WHERE bid = 1")
	exec(t, c, "DELETE FROM acc WHERE aid = 9")
	check("after keyed writes")
	if got := rowsText(t, c, "SELECT bal FROM acc WHERE aid = 6"); fmt.Sprint(got) != "[5]" {
		t.Fatalf("aid 6 has %v, want [5]", got)
	}
	srv.stop()
	srv = startServer(t, dir)
	c = connect(t, srv.url())
	check("after restart")
	if _, err := c.Exec(t.Context(), "INSERT INTO acc VALUES (6, 0, 0)"); err == nil {
		t.Fatal("duplicate key accepted after restart")
	}
	exec(t, c, "UPDATE acc SET bal = bal + 1 WHERE aid = 6")
	if got := rowsText(t, c, "SELECT bal FROM acc WHERE aid = 6"); fmt.Sprint(got) != "[6]" {
		t.Fatalf("aid 6 has %v after restart, want [6]", got)
	}
	check("after restart and update")
}
