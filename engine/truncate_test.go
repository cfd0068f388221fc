package engine_test

import (
	"context"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// truncateScript: TRUNCATE empties one or several tables, is undone by
// ROLLBACK and by ROLLBACK TO SAVEPOINT, and fails as PostgreSQL 15 does on
// a missing relation; every outcome must equal PostgreSQL's.
var truncateScript = []string{
	`CREATE TABLE ta (k int PRIMARY KEY, v text)`,
	`CREATE TABLE tb (k int PRIMARY KEY)`,
	`INSERT INTO ta VALUES (1, 'one'), (2, 'two')`,
	`INSERT INTO tb VALUES (1), (2), (3)`,
	`BEGIN`,
	`TRUNCATE ta`,
	`SELECT count(*) FROM ta`,
	`ROLLBACK`,
	`SELECT * FROM ta ORDER BY k`,
	`BEGIN`,
	`SAVEPOINT s`,
	`TRUNCATE TABLE ta, tb`,
	`SELECT (SELECT count(*) FROM ta), (SELECT count(*) FROM tb)`,
	`ROLLBACK TO SAVEPOINT s`,
	`SELECT (SELECT count(*) FROM ta), (SELECT count(*) FROM tb)`,
	`COMMIT`,
	`TRUNCATE ONLY tb CASCADE`,
	`SELECT count(*) FROM tb`,
	`INSERT INTO tb VALUES (1)`,
	`SELECT * FROM tb`,
	`TRUNCATE missing`,
	`TRUNCATE ta, missing`,
	`SELECT count(*) FROM ta`,
}

func TestTruncateMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, truncateScript)
}

// TestTruncateMaintainsViews: a view over a truncated table follows it, and
// the command tag is PostgreSQL's.
func TestTruncateMaintainsViews(t *testing.T) {
	ctx := context.Background()
	conn := dialPgx(t, enginetest.StartServer(t, t.TempDir()).URL)
	for _, sql := range []string{
		`CREATE TABLE t (k int PRIMARY KEY, g int)`,
		`INSERT INTO t SELECT i, i % 3 FROM generate_series(1, 30) AS i`,
		`CREATE MATERIALIZED VIEW mv AS SELECT g, count(*) AS n FROM t GROUP BY g`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	tag, err := conn.Exec(ctx, `TRUNCATE t`)
	if err != nil || tag.String() != "TRUNCATE TABLE" {
		t.Fatalf("TRUNCATE: tag %q, %v", tag.String(), err)
	}
	var n int64
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM mv`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("view rows after TRUNCATE: %d %v", n, err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO t VALUES (1, 1), (2, 1)`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT n FROM mv WHERE g = 1`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("view after TRUNCATE and INSERT: %d %v", n, err)
	}
}

// restartIdentityScript: TRUNCATE ... RESTART IDENTITY restarts the
// sequences owned by the tables' columns (serial and identity), the
// transaction's own inserts see the restart, and ROLLBACK or ROLLBACK TO
// puts the sequences back; CONTINUE IDENTITY (the default) leaves them.
var restartIdentityScript = []string{
	`DROP TABLE IF EXISTS ri_a, ri_b, ri_c`,
	`CREATE TABLE ri_a (id serial PRIMARY KEY, v text)`,
	`CREATE TABLE ri_b (id int GENERATED ALWAYS AS IDENTITY (START WITH 10 INCREMENT BY 5) PRIMARY KEY, v text)`,
	`CREATE TABLE ri_c (id bigserial PRIMARY KEY)`,
	`INSERT INTO ri_a (v) VALUES ('x'), ('y')`,
	`INSERT INTO ri_b (v) VALUES ('x'), ('y'), ('z')`,
	`INSERT INTO ri_c DEFAULT VALUES`,
	`TRUNCATE ri_a RESTART IDENTITY`,
	`INSERT INTO ri_a (v) VALUES ('p') RETURNING id, v`,
	`INSERT INTO ri_c DEFAULT VALUES RETURNING id`,
	`BEGIN`,
	`TRUNCATE ri_a, ri_b RESTART IDENTITY`,
	`INSERT INTO ri_b (v) VALUES ('q') RETURNING id`,
	`SELECT count(*) FROM ri_a`,
	`ROLLBACK`,
	`INSERT INTO ri_b (v) VALUES ('r') RETURNING id`,
	`SELECT id, v FROM ri_b ORDER BY id`,
	`BEGIN`,
	`SAVEPOINT s`,
	`TRUNCATE TABLE ri_b RESTART IDENTITY`,
	`ROLLBACK TO SAVEPOINT s`,
	`INSERT INTO ri_b (v) VALUES ('s') RETURNING id`,
	`SAVEPOINT t`,
	`TRUNCATE ri_a RESTART IDENTITY`,
	`RELEASE SAVEPOINT t`,
	`INSERT INTO ri_a (v) VALUES ('u') RETURNING id`,
	`COMMIT`,
	`SELECT id, v FROM ri_a ORDER BY id`,
	`TRUNCATE ri_b CONTINUE IDENTITY`,
	`INSERT INTO ri_b (v) VALUES ('t') RETURNING id`,
	`BEGIN`,
	`TRUNCATE ri_b RESTART IDENTITY`,
	`COMMIT`,
	`INSERT INTO ri_b (v) VALUES ('w') RETURNING id`,
	`SELECT last_value, is_called FROM ri_a_id_seq`,
	`TRUNCATE ri_missing RESTART IDENTITY`,
	`DROP TABLE ri_a, ri_b, ri_c`,
}

func TestTruncateRestartIdentityMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, restartIdentityScript)
}
