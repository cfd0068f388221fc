package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/connect/pgcdc"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/slate/objstore"
)

// waitSource waits until the POSTGRES source's status satisfies ok, or
// fails with the last status.
func waitSource(t *testing.T, e *Engine, what string, ok func(SourceStatus) bool) SourceStatus {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sts := e.SourceStatuses()
		if len(sts) == 1 && ok(sts[0]) {
			return sts[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: source statuses %+v", what, sts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresSourceResumesExactlyOnce restarts the engine over its
// storage while the upstream changes, and counts the row changes the
// source commits after the restart: exactly the upstream's new changes,
// so nothing before the stored LSN is applied again and the snapshot is
// not copied again. Upstream writes outside the publication advance the
// slot, never past what is committed. Then an incompatible upstream change (a mirrored
// column dropped) puts the source in BLOCKED with RS-1002 naming the
// column, after the transactions before it were applied; nothing after
// it is.
func TestPostgresSourceResumesExactlyOnce(t *testing.T) {
	ctx := context.Background()
	url, pg := pgtest.Database(t)
	for _, sql := range []string{
		`CREATE TABLE t (id int PRIMARY KEY, a text, b int)`,
		`INSERT INTO t SELECT i, 'a' || i, i FROM generate_series(1, 50) i`,
		`CREATE PUBLICATION p FOR TABLE t`,
	} {
		if _, err := pg.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	store := objstore.NewMemory()
	open := func() *Engine {
		e, err := Open(ctx, Config{Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	must := func(e *Engine, sql string) string {
		t.Helper()
		out, err := execSQL(ctx, e, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return out
	}
	e := open()
	must(e, fmt.Sprintf(`CREATE SOURCE pg FROM POSTGRES (connection = '%s', publication = 'p')`, url))
	waitSource(t, e, "the snapshot", func(s SourceStatus) bool { return s.State == pgcdc.StateRunning && s.Rows == 50 })
	if _, err := pg.Exec(ctx, `UPDATE t SET b = b + 1 WHERE id <= 10`); err != nil {
		t.Fatal(err)
	}
	waitSource(t, e, "the update", func(s SourceStatus) bool { return s.Rows == 60 })
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// While RockStream is down: 5 inserts and 3 deletes.
	for _, sql := range []string{
		`INSERT INTO t SELECT i, 'x', i FROM generate_series(100, 104) i`,
		`DELETE FROM t WHERE id IN (1, 2, 3)`,
	} {
		if _, err := pg.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	e = open()
	defer func() { _ = e.Close(ctx) }()
	st := waitSource(t, e, "the changes made while down", func(s SourceStatus) bool { return s.Rows >= 8 })
	// NB: a little time for anything applied twice to show up in Rows.
	time.Sleep(300 * time.Millisecond)
	if st = e.SourceStatuses()[0]; st.Rows != 8 {
		t.Fatalf("after the restart the source committed %d row changes, want the 8 made upstream meanwhile", st.Rows)
	}
	if got := must(e, `SELECT count(*), sum(b) FROM t`); got != "(52,1786)" {
		t.Fatalf("mirror after restart: %s, want (52,1786)", got)
	}

	// Writes upstream outside the publication still advance the slot (the
	// source stores the position of the walsender's keepalives while it
	// has nothing pending), so the upstream does not keep their WAL.
	// NB: a synchronous commit, so pg_current_wal_lsn (the WAL written)
	// is past it.
	if _, err := pg.Exec(ctx, `SET synchronous_commit = on; CREATE TABLE other AS SELECT i FROM generate_series(1, 1000) i`); err != nil {
		t.Fatal(err)
	}
	var target uint64
	if err := pg.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn`).Scan(&target); err != nil {
		t.Fatal(err)
	}
	waitSource(t, e, "the idle slot to advance", func(s SourceStatus) bool { return s.CommittedLSN >= target })
	for deadline := time.Now().Add(60 * time.Second); ; {
		var flushed uint64
		if err := pg.QueryRow(ctx, `SELECT confirmed_flush_lsn - '0/0'::pg_lsn FROM pg_replication_slots WHERE database = current_database()`).Scan(&flushed); err != nil {
			t.Fatal(err)
		}
		if committed := e.SourceStatuses()[0].CommittedLSN; flushed > committed {
			t.Fatalf("the slot was advanced to %d, past the committed %d", flushed, committed)
		}
		if flushed >= target {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot stays at %d, before %d", flushed, target)
		}
		time.Sleep(20 * time.Millisecond)
	}

	for _, sql := range []string{
		`INSERT INTO t VALUES (200, 'before', 1)`,
		`ALTER TABLE t DROP COLUMN b`,
		`INSERT INTO t VALUES (201, 'after')`,
	} {
		if _, err := pg.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	st = waitSource(t, e, "BLOCKED", func(s SourceStatus) bool { return s.State == pgcdc.StateBlocked })
	if !strings.Contains(st.LastError, "RS-1002") || !strings.Contains(st.LastError, `column "b"`) {
		t.Fatalf("BLOCKED with %q, want RS-1002 naming column b", st.LastError)
	}
	if got := must(e, `SELECT id FROM t WHERE id >= 200`); got != "(200)" {
		t.Fatalf("rows after the incompatible change: %s, want only the one before it", got)
	}
	if got := must(e, `SELECT name, state, error LIKE '%RS-1002%' FROM rockstream_catalog.sources ORDER BY name`); got != `("pg","BLOCKED",true); ("t","BLOCKED",true)` {
		t.Fatalf("rockstream_catalog.sources of the blocked source: %s", got)
	}
}
