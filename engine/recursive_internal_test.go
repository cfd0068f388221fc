package engine

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestRecursiveViewDivergesAlone: a UNION ALL recursive view whose data
// gains a cycle never converges; its step fails with RS-3503 naming the
// view, the query and the bound, the view goes to the FAILED state (reads
// answer RS-1514 with that reason), and the shard keeps maintaining every
// other view, including a UNION view over the same cycle. A view created
// over a cycle is refused with the same reason.
func TestRecursiveViewDivergesAlone(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Store: objstore.NewMemory(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close(ctx) }()
	must := func(sql string) string {
		t.Helper()
		out, err := execSQL(ctx, e, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return out
	}
	for _, sql := range []string{
		`CREATE TABLE edges (id int PRIMARY KEY, src int, dst int)`,
		`INSERT INTO edges VALUES (1, 0, 1), (2, 1, 2)`,
		`CREATE MATERIALIZED VIEW walks AS WITH RECURSIVE w(n) AS (SELECT 0 UNION ALL SELECT e.dst FROM w JOIN edges e ON w.n = e.src) SELECT n, count(*) AS c FROM w GROUP BY n`,
		`CREATE MATERIALIZED VIEW reach AS WITH RECURSIVE r(n) AS (SELECT 0 UNION SELECT e.dst FROM r JOIN edges e ON r.n = e.src) SELECT n FROM r`,
	} {
		must(sql)
	}
	if got := must(`SELECT * FROM walks ORDER BY n`); !strings.Contains(got, "2") {
		t.Fatalf("walks before the cycle: %q", got)
	}
	must(`INSERT INTO edges VALUES (3, 2, 0)`)
	_, err = execSQL(ctx, e, `SELECT * FROM walks`)
	if err == nil || !strings.Contains(err.Error(), "RS-1514") {
		t.Fatalf("reading the diverged view: want it failed, got %v", err)
	}
	for _, want := range []string{"walks", `"w"`, "10000 iterations"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the failure must name %s: %v", want, err)
		}
	}
	// Created over the cycle, the view fails its backfill: CREATE
	// answers the reason and the view is not created.
	_, err = execSQL(ctx, e, `CREATE MATERIALIZED VIEW walks2 AS WITH RECURSIVE w(n) AS (SELECT 0 UNION ALL SELECT e.dst FROM w JOIN edges e ON w.n = e.src) SELECT n FROM w`)
	if err == nil || !strings.Contains(err.Error(), "RS-3503") {
		t.Fatalf("CREATE over a cycle: want RS-3503, got %v", err)
	}
	if _, err := execSQL(ctx, e, `SELECT * FROM walks2`); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a refused CREATE left the view behind: %v", err)
	}
	must(`INSERT INTO edges VALUES (4, 2, 3)`)
	if got := must(`SELECT n FROM reach ORDER BY n`); got != must(`SELECT n FROM (VALUES (0), (1), (2), (3)) v(n) ORDER BY n`) {
		t.Fatalf("reach after the cycle: %q", got)
	}
}
