package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// uniqueOutcome is outcome with the error's DETAIL (after RockStream's
// "RS-xxxx name:" prefix), which names the duplicated key.
func uniqueOutcome(c *harness.Conn, stmt string) string {
	res, err := c.Exec(stmt)
	if err != nil {
		return uniqueErrorOutcome(err)
	}
	return strings.Join(harness.Lines(res.Rows), "; ")
}

func checkUniqueScript(t *testing.T, rs, pg *harness.Conn, script []string) {
	t.Helper()
	for _, stmt := range script {
		want := uniqueOutcome(pg, stmt)
		if got := uniqueOutcome(rs, stmt); got != want {
			t.Errorf("%s\n  rockstream: %s\n  postgresql: %s", stmt, got, want)
		}
	}
}

// uniqueIndexScript: a unique index on columns other than the primary key
// is built over the rows there (refused over duplicates), then enforced on
// INSERT, UPDATE and DELETE, in one statement, across statements of a
// transaction, with NULLs distinct; reads by its column go through it.
var uniqueIndexScript = []string{
	`CREATE TABLE u (id int PRIMARY KEY, a int, b text, c int)`,
	`INSERT INTO u VALUES (1, 10, 'x', 1), (2, 10, 'y', 2), (3, NULL, 'z', 3), (4, NULL, 'z', 4)`,
	`CREATE UNIQUE INDEX u_a_key ON u (a)`,
	`SELECT count(*) FROM pg_indexes WHERE indexname = 'u_a_key'`,
	`UPDATE u SET a = 20 WHERE id = 2`,
	`CREATE UNIQUE INDEX u_a_key ON u (a)`,
	`CREATE UNIQUE INDEX u_b_c ON u (b, c)`,
	`CREATE INDEX u_c_idx ON u (c)`,
	`INSERT INTO u VALUES (5, 10, 'w', 5)`,
	`INSERT INTO u VALUES (5, NULL, 'w', 5)`,
	`INSERT INTO u VALUES (6, 30, 'v', 6), (7, 30, 'v', 7)`,
	`INSERT INTO u VALUES (6, 31, 'z', 3)`,
	`INSERT INTO u VALUES (6, 31, 'z', NULL), (7, 32, 'z', NULL)`,
	`UPDATE u SET a = 10 WHERE id = 5`,
	`UPDATE u SET b = 'x', c = 1 WHERE id = 5`,
	`UPDATE u SET a = 11 WHERE id = 1`,
	`INSERT INTO u VALUES (8, 10, 'q', 8)`,
	`DELETE FROM u WHERE id = 8`,
	`INSERT INTO u VALUES (9, 10, 'q', 9)`,
	`INSERT INTO u SELECT id + 100, a, b || '2', c FROM u WHERE id = 9`,
	`BEGIN`,
	`INSERT INTO u VALUES (10, 40, 'a', 10)`,
	`INSERT INTO u VALUES (11, 40, 'b', 11)`,
	`SELECT 1`,
	`ROLLBACK`,
	`BEGIN`,
	`UPDATE u SET a = 50 WHERE id = 1`,
	`INSERT INTO u VALUES (10, 11, 'a', 10)`,
	`SELECT id, a FROM u WHERE a = 11`,
	`COMMIT`,
	`BEGIN`,
	`DELETE FROM u WHERE a = 50`,
	`INSERT INTO u VALUES (1, 50, 'x', 1)`,
	`COMMIT`,
	`BEGIN`,
	`INSERT INTO u VALUES (30, 300, 's', 30)`,
	`SAVEPOINT s`,
	`INSERT INTO u VALUES (31, 300, 's', 31)`,
	`ROLLBACK TO SAVEPOINT s`,
	`INSERT INTO u VALUES (31, 301, 's', 31)`,
	`COMMIT`,
	`SELECT * FROM u ORDER BY id`,
	`SELECT id FROM u WHERE a = 11`,
	`SELECT id FROM u WHERE a IN (10, 20, 99) ORDER BY id`,
	`SELECT id FROM u WHERE a >= 11 AND a < 40 ORDER BY id`,
	`SELECT id FROM u WHERE a IS NULL ORDER BY id`,
	`SELECT id FROM u WHERE b = 'z' AND c = 3`,
	`SELECT id FROM u WHERE c = 4`,
	`UPDATE u SET c = c + 100 WHERE a = 50`,
	`UPDATE u SET a = 20 WHERE a = 50`,
	`DELETE FROM u WHERE a = 20`,
	`DELETE FROM u WHERE b = 'z' AND c = 4`,
	`SELECT * FROM u ORDER BY id`,
	`INSERT INTO u VALUES (40, 301, 'n', 40), (41, 400, 'n', 41), (42, 400, 'n', 42), (43, NULL, 'n', 43), (44, NULL, 'n', 44), (2, 401, 'n', 45) ON CONFLICT DO NOTHING RETURNING id`,
	`INSERT INTO u VALUES (45, 400, 'n', 45) ON CONFLICT (id) DO NOTHING`,
	`SELECT id, a FROM u WHERE id >= 40 ORDER BY id`,
	`INSERT INTO u VALUES (2, 60, 'y', 2) ON CONFLICT (id) DO UPDATE SET a = 10`,
	`INSERT INTO u VALUES (2, 60, 'y', 2) ON CONFLICT (id) DO UPDATE SET a = 60`,
	`UPDATE u SET id = 1000 WHERE id = 1`,
	`UPDATE u SET id = 1001, a = 60 WHERE id = 9`,
	`SELECT id, a FROM u WHERE a IN (50, 60, 10) ORDER BY id`,
	`DROP INDEX u_a_key`,
	`INSERT INTO u VALUES (20, 11, 'q', 20)`,
	`SELECT id FROM u WHERE a = 11 ORDER BY id`,
	`CREATE UNIQUE INDEX u_a_key ON u (a)`,
	`TRUNCATE u`,
	`CREATE UNIQUE INDEX u_a_key ON u (a)`,
	`INSERT INTO u VALUES (1, 1, 'a', 1), (2, 1, 'b', 2)`,
	`SELECT count(*) FROM u`,
	`DROP TABLE u`,
	// An index made before the table had a primary key is kept from
	// ALTER TABLE ... ADD PRIMARY KEY on.
	`CREATE TABLE k (a int, b int)`,
	`INSERT INTO k VALUES (1, 1), (2, 1), (3, 2)`,
	`CREATE INDEX k_b_idx ON k (b)`,
	`ALTER TABLE k ADD PRIMARY KEY (a)`,
	`SELECT a FROM k WHERE b = 1 ORDER BY a`,
	`INSERT INTO k VALUES (4, 1)`,
	`UPDATE k SET b = 2 WHERE a = 1`,
	`SELECT a FROM k WHERE b = 1 ORDER BY a`,
	`SELECT a FROM k WHERE b = 2 ORDER BY a`,
	`DROP TABLE k`,
	`CREATE TABLE u (id int PRIMARY KEY, a int)`,
	`INSERT INTO u VALUES (1, 1)`,
	`CREATE UNIQUE INDEX u_a_key ON u (a)`,
	`INSERT INTO u VALUES (2, 1)`,
	`DROP TABLE u`,
}

// TestUniqueIndexMatchesPostgres runs uniqueIndexScript on RockStream and
// PostgreSQL 15: every outcome (rows, or SQLSTATE, message and detail)
// must be the same.
func TestUniqueIndexMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkUniqueScript(t, rs, pg, uniqueIndexScript)
}

// TestUniqueIndexRandomMatchesPostgres runs random INSERTs, UPDATEs and
// DELETEs (alone or in transactions), many violating a unique index of two
// columns or of one, on RockStream and PostgreSQL 15, comparing every
// outcome and the table after each transaction.
//
// NB: multi-row INSERTs use fresh primary keys, and UPDATEs change one
// row: PostgreSQL checks each row as it goes, RockStream at the end of the
// statement, and among several violations in one statement the one
// reported could differ (docs/sql.md).
func TestUniqueIndexRandomMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	setup := []string{
		`CREATE TABLE r (id int PRIMARY KEY, a int, b text, c int)`,
		`INSERT INTO r VALUES (1, 1, 'p', 1), (2, 2, 'q', 1), (3, NULL, 'p', NULL)`,
		`CREATE UNIQUE INDEX r_a_key ON r (a)`,
		`CREATE UNIQUE INDEX r_bc_key ON r (b, c)`,
	}
	checkUniqueScript(t, rs, pg, setup)
	rng := rand.New(rand.NewPCG(7, 15))
	val := func(n int) string {
		if rng.IntN(6) == 0 {
			return "NULL"
		}
		return fmt.Sprint(rng.IntN(n))
	}
	txt := func() string {
		if rng.IntN(8) == 0 {
			return "NULL"
		}
		return "'" + string(rune('p'+rng.IntN(3))) + "'"
	}
	fresh := 1000
	stmt := func() string {
		switch rng.IntN(8) {
		case 7:
			return fmt.Sprintf(`INSERT INTO r VALUES (%d, %s, %s, %s), (%d, %s, %s, %s) ON CONFLICT DO NOTHING`, rng.IntN(30), val(20), txt(), val(4), rng.IntN(30), val(20), txt(), val(4))
		case 0, 1:
			return fmt.Sprintf(`INSERT INTO r VALUES (%d, %s, %s, %s)`, rng.IntN(30), val(20), txt(), val(4))
		case 2:
			fresh += 2
			return fmt.Sprintf(`INSERT INTO r VALUES (%d, %s, %s, %s), (%d, %s, %s, %s)`, fresh, val(20), txt(), val(4), fresh+1, val(20), txt(), val(4))
		case 3:
			return fmt.Sprintf(`UPDATE r SET a = %s WHERE id = %d`, val(20), rng.IntN(30))
		case 4:
			return fmt.Sprintf(`UPDATE r SET b = %s, c = %s WHERE a = %d`, txt(), val(4), rng.IntN(20))
		case 5:
			return fmt.Sprintf(`DELETE FROM r WHERE a = %d`, rng.IntN(20))
		default:
			return fmt.Sprintf(`DELETE FROM r WHERE id = %d`, rng.IntN(30))
		}
	}
	violations := 0
	for round := 0; round < 200; round++ {
		var script []string
		if rng.IntN(3) == 0 {
			script = append(script, `BEGIN`)
			for i := 0; i < 1+rng.IntN(4); i++ {
				script = append(script, stmt())
			}
			script = append(script, []string{`COMMIT`, `ROLLBACK`}[rng.IntN(2)])
		} else {
			script = append(script, stmt())
		}
		// The whole table, and reads through each index.
		script = append(script, `SELECT * FROM r ORDER BY id`,
			fmt.Sprintf(`SELECT id FROM r WHERE a = %d`, rng.IntN(20)),
			fmt.Sprintf(`SELECT id FROM r WHERE a >= %d ORDER BY id`, rng.IntN(20)),
			fmt.Sprintf(`SELECT id FROM r WHERE b = %s AND c = %d`, txt(), rng.IntN(4)))
		for _, s := range script {
			want := uniqueOutcome(pg, s)
			if strings.Contains(want, "23505") {
				violations++
			}
			if got := uniqueOutcome(rs, s); got != want {
				t.Fatalf("round %d: %s\n  rockstream: %s\n  postgresql: %s\nscript: %q", round, s, got, want, script)
			}
		}
		if s := `ROLLBACK`; script[0] == `BEGIN` {
			_ = uniqueOutcome(pg, s)
			_ = uniqueOutcome(rs, s)
		}
	}
	if violations < 20 {
		t.Fatalf("only %d unique violations: the test exercises too few", violations)
	}
	t.Logf("%d unique violations", violations)
}

// TestUniqueIndexSurvivesRestart: after a restart the index is still
// enforced and read (no rebuild needed), and DROP INDEX then frees its
// values.
func TestUniqueIndexSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	srv := enginetest.StartServer(t, dir)
	rs := harness.ConnectRS(t, srv)
	for _, stmt := range []string{
		`CREATE TABLE t (id int PRIMARY KEY, a int)`,
		`INSERT INTO t VALUES (1, 10), (2, 20)`,
		`CREATE UNIQUE INDEX t_a_key ON t (a)`,
		`INSERT INTO t VALUES (3, 30)`,
		`UPDATE t SET a = 21 WHERE id = 2`,
	} {
		if _, err := rs.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	srv.Stop()
	srv = enginetest.StartServer(t, dir)
	rs = harness.ConnectRS(t, srv)
	for _, c := range []struct{ stmt, want string }{
		{`INSERT INTO t VALUES (4, 30)`, `ERROR 23505 duplicate key value violates unique constraint "t_a_key" / Key (a)=(30) already exists.`},
		{`INSERT INTO t VALUES (4, 20)`, ``},
		{`SELECT id FROM t WHERE a = 21`, `2`},
		{`SELECT id FROM t WHERE a = 20`, `4`},
		{`DROP INDEX t_a_key`, ``},
		{`INSERT INTO t VALUES (5, 30)`, ``},
		{`CREATE UNIQUE INDEX t_a_key ON t (a)`, `ERROR 23505 could not create unique index "t_a_key" / Key (a)=(30) is duplicated.`},
		{`SELECT count(*) FROM t WHERE a = 30`, `2`},
	} {
		if got := uniqueOutcome(rs, c.stmt); got != c.want {
			t.Fatalf("after a restart %s: %q, want %q", c.stmt, got, c.want)
		}
	}
}

// TestCopyUniqueIndexMatchesPostgres: COPY into a table with a unique
// index on a non-key column — duplicates within a chunk, across 10,000-row
// chunks, of committed rows and of the transaction's own — fails as
// PostgreSQL 15 does (SQLSTATE, message and detail), and the table after
// each step is the same.
func TestCopyUniqueIndexMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	_, pg := pgtest.Database(t)
	rs := dialPgx(t, enginetest.StartServer(t, t.TempDir()).URL)
	rows := func(from, to int, extra ...[2]int) string {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&sb, "%d\t%d\n", i, i)
		}
		for _, e := range extra {
			fmt.Fprintf(&sb, "%d\t%d\n", e[0], e[1])
		}
		return sb.String()
	}
	steps := []string{
		"CREATE TABLE t (id int PRIMARY KEY, u int)",
		"CREATE UNIQUE INDEX t_u_key ON t (u)",
		"copy:" + rows(1, 5),
		"copy:" + rows(6, 8, [2]int{9, 7}),           // duplicate in one chunk
		"copy:" + rows(10, 25000, [2]int{25001, 11}), // duplicate across chunks
		"copy:" + rows(10, 12, [2]int{13, 3}),        // duplicate of a committed row
		"copy:" + rows(10, 12, [2]int{13, -1}, [2]int{14, -1}),
		"copy:30\t\\N\n31\t\\N\n", // NULLs are distinct
		"BEGIN",
		"copy:" + rows(100, 102),
		"copy:" + rows(103, 103, [2]int{104, 101}), // the transaction's own row
		"ROLLBACK",
		"SELECT count(*), sum(u) FROM t",
		"SELECT id FROM t WHERE u = -1",
	}
	run := func(c *pgx.Conn, step string) string {
		if data, ok := strings.CutPrefix(step, "copy:"); ok {
			tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data), "COPY t FROM STDIN")
			if err != nil {
				return uniqueErrorOutcome(err)
			}
			return tag.String()
		}
		res, err := c.Query(ctx, step)
		if err != nil {
			return uniqueErrorOutcome(err)
		}
		var out []string
		for res.Next() {
			vals, err := res.Values()
			if err != nil {
				res.Close()
				return uniqueErrorOutcome(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		res.Close()
		if err := res.Err(); err != nil {
			return uniqueErrorOutcome(err)
		}
		return res.CommandTag().String() + " " + strings.Join(out, "; ")
	}
	_, _ = pg.Exec(ctx, "DROP TABLE IF EXISTS t")
	for i, step := range steps {
		want, got := run(pg, step), run(rs, step)
		if got != want {
			t.Fatalf("step %d (%.60q):\n got %s\nwant %s", i, step, got, want)
		}
	}
}

// uniqueErrorOutcome is an error as its SQLSTATE, message and detail
// (after RockStream's "RS-xxxx name:" prefix).
func uniqueErrorOutcome(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "ERROR " + err.Error()
	}
	detail := pe.Detail
	if f := strings.Fields(detail); len(f) >= 2 && strings.HasPrefix(f[0], "RS-") {
		detail = strings.TrimSpace(strings.TrimPrefix(detail, f[0]+" "+f[1]))
	}
	if pe.Code == "22P02" || pe.Code == "25P02" {
		detail = "" // RockStream's detail differs; the code and message are compared
	}
	return "ERROR " + pe.Code + " " + pe.Message + " / " + detail
}
