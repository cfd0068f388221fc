package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestCopyKeysAndSavepointsMatchPostgres: COPY into a keyed table across
// several 10,000-row chunks, inside transactions with savepoints, with
// duplicate keys in one chunk, across chunks and against committed or
// pending rows, and savepoint rollbacks of rows first written after the
// savepoint (which keep no undo entry) and before it (which do): every
// statement's outcome (SQLSTATE or rows) and the table after each step
// equal PostgreSQL's.
func TestCopyKeysAndSavepointsMatchPostgres(t *testing.T) {
	ctx := context.Background()
	_, pg := pgtest.Database(t)
	rs := dialPgx(t, enginetest.StartServer(t, t.TempDir()).URL)
	rows := func(from, to int, extra ...int) string {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&sb, "%d\t%d\n", i, i%7)
		}
		for _, i := range extra {
			fmt.Fprintf(&sb, "%d\t%d\n", i, 100+i)
		}
		return sb.String()
	}
	// Each step is SQL, or "copy:" and the data of a COPY t FROM STDIN.
	steps := []string{
		"CREATE TABLE t (id int PRIMARY KEY, v int)",
		"copy:" + rows(1, 5),
		"BEGIN",
		"INSERT INTO t VALUES (6, 6)",
		"SAVEPOINT a",
		"copy:" + rows(7, 25000),
		"SELECT count(*), sum(v), max(id) FROM t",
		"ROLLBACK TO SAVEPOINT a",
		"SELECT count(*), sum(v), max(id) FROM t",
		"copy:" + rows(7, 21000), // the same keys again after the rollback
		"UPDATE t SET v = v + 1 WHERE id > 20990",
		"SAVEPOINT b",
		"UPDATE t SET v = v + 10 WHERE id > 20995", // rows touched before b
		"copy:" + rows(21001, 21010),
		"UPDATE t SET v = v + 100 WHERE id > 21005", // rows touched after b, twice
		"SELECT id, v FROM t WHERE id > 20985 ORDER BY id",
		"ROLLBACK TO SAVEPOINT b",
		"SELECT id, v FROM t WHERE id > 20985 ORDER BY id",
		"RELEASE SAVEPOINT b",
		"COMMIT",
		"SELECT count(*), sum(v), max(id) FROM t",
		"copy:" + rows(30001, 30003, 30002),               // duplicate in one chunk
		"copy:" + rows(30001, 45000, 30005),               // duplicate across chunks
		"copy:" + rows(30001, 30003, 21000),               // duplicate of a committed row
		"copy:" + rows(21011, 21011) + rows(21011, 21011), // duplicate rows only
		// The first bad row decides the error, the rows after it being
		// decoded while earlier chunks are written or not.
		"copy:" + rows(30001, 30003, 30002) + rows(30004, 52000) + "x\t1\n", // 23505 first
		"copy:" + rows(30001, 30003) + "x\t1\n" + rows(30004, 52000, 30002), // 22P02 first
		"copy:" + rows(30001, 52000) + "x\t1\n",                             // 22P02 after 2 chunks
		"SELECT count(*), sum(v), max(id) FROM t",
		"BEGIN",
		"SAVEPOINT c",
		"copy:" + rows(50001, 50010),
		"SAVEPOINT d",
		"DELETE FROM t WHERE id > 50005",
		"copy:" + rows(50006, 50007), // deleted in this transaction: insertable again
		"copy:" + rows(50001, 50001), // pending row: duplicate, aborts the block
		"ROLLBACK TO SAVEPOINT d",
		"SELECT count(*), sum(v) FROM t WHERE id > 50000",
		"ROLLBACK TO SAVEPOINT c",
		"SELECT count(*), sum(v) FROM t WHERE id > 50000",
		"copy:" + rows(50001, 50003),
		"COMMIT",
		"SELECT count(*), sum(v), max(id) FROM t",
		// A CHECK constraint is checked per chunk, over that chunk's rows
		// only: a violation in a later chunk aborts the whole COPY.
		"CREATE TABLE c (id int PRIMARY KEY, v int CHECK (v < 100))",
		"copyc:" + rows(1, 25000),
		"copyc:" + rows(25001, 50000, 50001),
		"SELECT count(*), sum(v), max(id) FROM c",
	}
	run := func(c *pgx.Conn, step string) string {
		table, data, ok := "t", "", false
		if data, ok = strings.CutPrefix(step, "copyc:"); ok {
			table = "c"
		} else {
			data, ok = strings.CutPrefix(step, "copy:")
		}
		if ok {
			tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data), "COPY "+table+" FROM STDIN")
			if err != nil {
				return copyOutcome(err)
			}
			return tag.String()
		}
		res, err := c.Query(ctx, step)
		if err != nil {
			return copyOutcome(err)
		}
		var out []string
		for res.Next() {
			vals, err := res.Values()
			if err != nil {
				res.Close()
				return copyOutcome(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		res.Close()
		if err := res.Err(); err != nil {
			return copyOutcome(err)
		}
		return res.CommandTag().String() + " " + strings.Join(out, "; ")
	}
	for _, c := range []*pgx.Conn{pg} {
		_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS t")
		_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS c")
	}
	for i, step := range steps {
		want, got := run(pg, step), run(rs, step)
		if got != want {
			t.Fatalf("step %d (%.60q):\n got %s\nwant %s", i, step, got, want)
		}
	}
}

// copyOutcome is an error as its SQLSTATE.
func copyOutcome(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return "ERROR " + pe.Code
	}
	return "ERROR " + err.Error()
}
