package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestInsertRaceFailsAtCommit: a transaction's COPY finds its keys absent,
// then another session commits one of them (a plain INSERT takes no row
// lock), then the transaction looks up more keys of the table: its COMMIT
// fails with 23505 and the other session's row stays. The commit skips
// reading keys its lookups found absent only if no commit wrote the table
// after the OLDEST of those lookups (actors/shard absent.go); the newest
// one here came after the other session's insert.
func TestInsertRaceFailsAtCommit(t *testing.T) {
	ctx := context.Background()
	url := enginetest.StartServer(t, t.TempDir()).URL
	a, b := dialPgx(t, url), dialPgx(t, url)
	rows := func(from, to int) string {
		var sb strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&sb, "%d\t%d\n", i, 1)
		}
		return sb.String()
	}
	exec := func(c interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	}, sql string) {
		t.Helper()
		if _, err := c.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(a, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(a, "INSERT INTO t VALUES (0, 0)") // the table holds rows: the commit reads keys
	for _, second := range []bool{false, true} {
		exec(a, "DELETE FROM t WHERE id > 0")
		exec(a, "BEGIN")
		if _, err := a.PgConn().CopyFrom(ctx, strings.NewReader(rows(1, 15000)), "COPY t FROM STDIN"); err != nil {
			t.Fatal(err)
		}
		exec(b, "INSERT INTO t VALUES (7, 2)")
		if second {
			if _, err := a.PgConn().CopyFrom(ctx, strings.NewReader(rows(15001, 30000)), "COPY t FROM STDIN"); err != nil {
				t.Fatal(err)
			}
		}
		_, err := a.Exec(ctx, "COMMIT")
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
			t.Fatalf("second statement %v: COMMIT after another session inserted a key: %v, want 23505", second, err)
		}
		var n, v int
		if err := b.QueryRow(ctx, "SELECT count(*), sum(v) FROM t WHERE id > 0").Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		if n != 1 || v != 2 {
			t.Fatalf("second statement %v: %d rows summing to %d after the failed commit, want the other session's one", second, n, v)
		}
	}
}
