package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// savepointScript exercises SAVEPOINT / RELEASE / ROLLBACK TO on a
// transaction's pending inserts, updates, deletes and key-less appends,
// nested and shadowed names, failed blocks resumed by ROLLBACK TO, and the
// errors outside blocks; every outcome must equal PostgreSQL 15's.
var savepointScript = []string{
	`CREATE TABLE t (k int PRIMARY KEY, v text)`,
	`INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')`,

	// Outside a block.
	`SAVEPOINT a`,
	`RELEASE SAVEPOINT a`,
	`ROLLBACK TO SAVEPOINT a`,
	`SAVEPOINT a; SELECT 1`,

	// Undo inserts, updates and deletes after the savepoint, keep earlier ones.
	`BEGIN`,
	`INSERT INTO t VALUES (4, 'four')`,
	`UPDATE t SET v = 'ONE' WHERE k = 1`,
	`SAVEPOINT a`,
	`INSERT INTO t VALUES (5, 'five')`,
	`UPDATE t SET v = 'one!' WHERE k = 1`,
	`UPDATE t SET v = 'TWO' WHERE k = 2`,
	`DELETE FROM t WHERE k IN (3, 4)`,
	`SELECT * FROM t ORDER BY k`,
	`ROLLBACK TO SAVEPOINT a`,
	`SELECT * FROM t ORDER BY k`,
	// The savepoint survives ROLLBACK TO: use it again.
	`DELETE FROM t WHERE k = 2`,
	`ROLLBACK TO a`,
	`SELECT * FROM t ORDER BY k`,
	`RELEASE a`,
	`ROLLBACK TO a`,
	`ROLLBACK`,
	`SELECT * FROM t ORDER BY k`,

	// Nested savepoints, RELEASE keeps changes, shadowed names.
	`BEGIN`,
	`SAVEPOINT outer_sp`,
	`INSERT INTO t VALUES (10, 'ten')`,
	`SAVEPOINT inner_sp`,
	`INSERT INTO t VALUES (11, 'eleven')`,
	`UPDATE t SET v = 'TEN' WHERE k = 10`,
	`RELEASE SAVEPOINT inner_sp`,
	`SELECT * FROM t WHERE k >= 10 ORDER BY k`,
	`SAVEPOINT x`,
	`INSERT INTO t VALUES (12, 'twelve')`,
	`SAVEPOINT x`,
	`INSERT INTO t VALUES (13, 'thirteen')`,
	`ROLLBACK TO x`,
	`SELECT k FROM t WHERE k >= 10 ORDER BY k`,
	`RELEASE x`,
	`ROLLBACK TO x`,
	`SELECT k FROM t WHERE k >= 10 ORDER BY k`,
	`ROLLBACK TO outer_sp`,
	`SELECT k FROM t WHERE k >= 10 ORDER BY k`,
	`INSERT INTO t VALUES (14, 'fourteen')`,
	`COMMIT`,
	`SELECT * FROM t ORDER BY k`,

	// An error inside the block: only ROLLBACK TO (or ROLLBACK) is allowed,
	// and it undoes the failed statement's partial effects.
	`BEGIN`,
	`UPDATE t SET v = 'x' WHERE k = 14`,
	`SAVEPOINT s1`,
	`INSERT INTO t VALUES (20, 'twenty'), (1, 'dup')`,
	`SELECT 1`,
	`RELEASE s1`,
	`SAVEPOINT s2`,
	`ROLLBACK TO nope`,
	`ROLLBACK TO s1`,
	`SELECT * FROM t WHERE k IN (1, 14, 20) ORDER BY k`,
	`INSERT INTO t VALUES (21, 'twenty-one')`,
	`RELEASE nope`,
	`ROLLBACK TO SAVEPOINT s1`,
	`COMMIT`,
	`SELECT * FROM t ORDER BY k`,

	// COMMIT of a failed block with savepoints rolls everything back.
	`BEGIN`,
	`INSERT INTO t VALUES (30, 'thirty')`,
	`SAVEPOINT s`,
	`SELECT 1/0`,
	`COMMIT`,
	`SELECT count(*) FROM t WHERE k = 30`,

	// A table first written after the savepoint, and key-less rows.
	`CREATE TABLE u (k int PRIMARY KEY)`,
	`BEGIN`,
	`INSERT INTO log VALUES ('kept')`,
	`SAVEPOINT s`,
	`INSERT INTO log VALUES ('undone'), ('undone too')`,
	`INSERT INTO u VALUES (1)`,
	`ROLLBACK TO s`,
	`SELECT * FROM log`,
	`SELECT count(*) FROM u`,
	`INSERT INTO u VALUES (2)`,
	`COMMIT`,
	`SELECT * FROM log`,
	`SELECT * FROM u`,

	// ON CONFLICT DO UPDATE of a row changed before the savepoint.
	`BEGIN`,
	`UPDATE t SET v = 'before' WHERE k = 1`,
	`SAVEPOINT s`,
	`INSERT INTO t VALUES (1, 'upsert') ON CONFLICT (k) DO UPDATE SET v = excluded.v`,
	`SELECT v FROM t WHERE k = 1`,
	`ROLLBACK TO s`,
	`SELECT v FROM t WHERE k = 1`,
	`COMMIT`,
	`SELECT v FROM t WHERE k = 1`,

	// Session parameters set after a savepoint are restored by ROLLBACK TO
	// and kept by RELEASE; SET LOCAL ends with the block.
	`BEGIN`,
	`SET lock_timeout = '1s'`,
	`SAVEPOINT s`,
	`SET lock_timeout = '2s'`,
	`SET LOCAL client_min_messages = 'error'`,
	`SHOW lock_timeout`,
	`ROLLBACK TO s`,
	`SHOW lock_timeout`,
	`SHOW client_min_messages`,
	`SET LOCAL client_min_messages = 'error'`,
	`SAVEPOINT s2`,
	`SET lock_timeout = '3s'`,
	`RELEASE s2`,
	`COMMIT`,
	`SHOW lock_timeout`,
	`SHOW client_min_messages`,
	`RESET lock_timeout`,
}

// TestSavepointsMatchPostgres runs savepointScript on RockStream and on
// PostgreSQL 15 and compares every statement's outcome.
func TestSavepointsMatchPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	// A key-less table: RockStream needs insert_only, which PostgreSQL lacks.
	for c, ddl := range map[*harness.Conn]string{rs: `CREATE TABLE log (msg text) WITH (insert_only = true)`, pg: `CREATE TABLE log (msg text)`} { //lint:maprange independent setup per server
		if _, err := c.Exec(ddl); err != nil {
			t.Fatal(err)
		}
	}
	checkScriptMatchesPostgres(t, rs, pg, savepointScript)
}

// TestDDLInBlockWarns: DDL inside BEGIN ... takes effect at once, unlike
// PostgreSQL's transactional DDL, so the client gets a WARNING (01000,
// RS-2438) saying ROLLBACK will not undo it; outside a block it gets none.
func TestDDLInBlockWarns(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	var notices []*pgconn.Notice
	cfg, err := pgconn.ParseConfig(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { notices = append(notices, n) }
	ctx := context.Background()
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `CREATE TABLE outside (k int PRIMARY KEY)`).ReadAll(); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 0 {
		t.Fatalf("DDL outside a block: notices %v", notices)
	}
	if _, err := c.Exec(ctx, `BEGIN; SAVEPOINT s; CREATE TABLE inside (k int PRIMARY KEY); ROLLBACK TO s; ROLLBACK`).ReadAll(); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || notices[0].Code != "01000" || notices[0].Severity != "WARNING" || !strings.Contains(notices[0].Message, "not undone by ROLLBACK") {
		t.Fatalf("DDL inside a block: notices %+v", notices)
	}
	// The table exists: the warning told the truth.
	if _, err := c.Exec(ctx, `SELECT * FROM inside`).ReadAll(); err != nil {
		t.Fatal(err)
	}
}
