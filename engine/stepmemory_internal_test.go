package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestJoinExplosionRefusedForMemory (issue R2, item 3): a self-join whose
// keys match thousands of rows on both sides is refused with 53200
// (RS-5502) by the per-step memory bound — as an ad-hoc query, and as the
// maintenance step of a view that was created over an empty table (the
// view fails, the commit and every other view go on). As CREATE
// MATERIALIZED VIEW it is filled: the backfill runs in chunks, each step
// within the bound. The engine opens again with the failed views
// backfilled again, in chunks within the bound, and DROP removes them.
func TestJoinExplosionRefusedForMemory(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	open := func() *Engine { return openQuiet(t, Config{Store: store, StepBytesMax: 16 << 20}) }
	e := open()
	must := func(sql string) string {
		t.Helper()
		out, err := execSQL(ctx, e, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return out
	}
	refused := func(sql string) {
		t.Helper()
		_, err := execSQL(ctx, e, sql)
		ce, ok := errcode.As(err)
		if !ok || ce.State() != "53200" || !errcode.Has(err, errcode.StepMemoryExceeded) {
			t.Fatalf("%s: %v, want 53200 (RS-5502)", sql, err)
		}
	}
	// 5,000 rows in 10 keys: 2.5M join pairs, far beyond 16 MiB.
	must(`CREATE TABLE j2 (id int PRIMARY KEY, k int, v int)`)
	must(`INSERT INTO j2 SELECT i, i % 10, i FROM generate_series(1, 5000) i`)
	const explode = `SELECT (a.v + b.v) % 100 AS r, count(*) AS n FROM j2 a JOIN j2 b ON a.k = b.k GROUP BY 1`
	refused(explode)
	must(`CREATE MATERIALIZED VIEW jx AS ` + explode)
	if out := must(`SELECT sum(n), count(*) FROM jx`); out != "(2500000,50)" {
		t.Fatalf("jx, filled in chunks: %s, want 2.5M pairs in 50 groups (a.v and b.v agree mod 10, so their sum is even mod 100)", out)
	}
	must(`DROP MATERIALIZED VIEW jx`)
	// A join within the bound runs, as a view and ad hoc.
	must(`CREATE MATERIALIZED VIEW fine AS SELECT a.k, count(*) AS n FROM j2 a JOIN j2 b ON a.id = b.id GROUP BY a.k`)
	if out := must(`SELECT count(*), min(n), max(n) FROM fine`); out != "(10,500,500)" {
		t.Fatalf("fine: %s", out)
	}
	// Ad-hoc queries share one bound: with the others' share taken (as
	// by queries running beside it), a query within its own bound is
	// refused too, and runs once the share is given back.
	const within = `SELECT a.k, count(*) AS n FROM j2 a JOIN j2 b ON a.id = b.id GROUP BY a.k ORDER BY a.k LIMIT 1`
	taken := e.queryMemory.limitBytes - 64<<10
	if err := e.queryMemory.Reserve(taken); err != nil {
		t.Fatal(err)
	}
	refused(within)
	e.queryMemory.Release(taken)
	if out := must(within); out != "(0,500)" {
		t.Fatalf("%s: %s", within, out)
	}
	if used := e.queryMemory.usedBytes.Load(); used != 0 {
		t.Fatalf("finished queries still hold %d bytes of the shared bound", used)
	}
	// The same explosion arriving as one commit under an existing view.
	must(`CREATE TABLE j3 (id int PRIMARY KEY, k int, v int)`)
	must(`CREATE MATERIALIZED VIEW jy AS SELECT (a.v + b.v) % 100 AS r, count(*) AS n FROM j3 a JOIN j3 b ON a.k = b.k GROUP BY 1`)
	must(`CREATE MATERIALIZED VIEW over_jy AS SELECT sum(n) AS total FROM jy`)
	must(`INSERT INTO j3 SELECT i, i % 10, i FROM generate_series(1, 5000) i`)
	must(`INSERT INTO j2 VALUES (5001, 3, 0)`)
	if out := must(`SELECT n FROM fine WHERE k = 3`); out != "(501)" {
		t.Fatalf("fine after the refused step: %s, want (501)", out)
	}
	failedView := func(name string) {
		t.Helper()
		_, err := execSQL(ctx, e, `SELECT * FROM `+name)
		if !errcode.Has(err, errcode.ViewBuildFailed) || (name == "jy" && !strings.Contains(err.Error(), "RS-5502")) {
			t.Fatalf("reading %s: %v, want RS-1514 naming RS-5502", name, err)
		}
	}
	failedView("jy")
	failedView("over_jy")
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// At the start the failed views are backfilled again — in chunks,
	// each within the bound, so this time they are filled (a read waits
	// for the fill).
	e = open()
	defer func() { e.Close(ctx) }()
	if out := must(`SELECT sum(n) FROM jy`); out != "(2500000)" {
		t.Fatalf("jy backfilled at the start: %s, want 2.5M pairs", out)
	}
	if out := must(`SELECT total FROM over_jy`); out != "(2500000)" {
		t.Fatalf("over_jy backfilled at the start: %s, want 2.5M", out)
	}
	if out := must(`SELECT n FROM fine WHERE k = 3`); out != "(501)" {
		t.Fatalf("fine after the restart: %s, want (501)", out)
	}
	must(`DROP MATERIALIZED VIEW jy CASCADE`)
	if out := must(`SELECT name, state FROM rockstream_catalog.views ORDER BY name`); out != `("fine","running")` {
		t.Fatalf("views after the drop: %s", out)
	}
}
