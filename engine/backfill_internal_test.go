package engine

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestRestartContinuesUnfinishedBackfill (issue 18): a server stopped in
// the middle of a slow view's backfill restarts without waiting for it —
// Open returns, which it would not for minutes if the startup sync waited
// — the backfill continues in chunks while the server serves commits, and
// DROP MATERIALIZED VIEW removes the unfinished view.
func TestRestartContinuesUnfinishedBackfill(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	open := func() *Engine { return openQuiet(t, Config{Store: store}) }
	must := func(e *Engine, sql string) string { t.Helper(); return mustSQL(t, e, sql) }
	backfill := func(e *Engine) string {
		t.Helper()
		st, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range st.Views {
			if v.Name == "v" {
				return v.Backfill
			}
		}
		return ""
	}
	e := open()
	must(e, `CREATE TABLE big (a int PRIMARY KEY)`)
	must(e, `INSERT INTO big SELECT generate_series(1, 2000)`)
	must(e, `CREATE TABLE other (k int PRIMARY KEY)`)
	created := make(chan error, 1)
	go func() {
		_, err := execSQL(ctx, e, `CREATE MATERIALIZED VIEW v AS SELECT a, ln(1e-1000 + a) AS l FROM big`)
		created <- err
	}()
	// The bound guards against a hang; it is not a timing assertion.
	for deadline := time.Now().Add(time.Minute); backfill(e) == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the view's backfill never started")
		}
	}
	// Stopped mid-backfill (the CREATE fails: its shard is gone, and so is
	// the control plane that could take the view back out).
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-created; err == nil {
		t.Fatal("the CREATE succeeded although the server stopped during its backfill")
	}
	e = open()
	defer e.Close(ctx)
	if s := backfill(e); s == "" {
		t.Fatal("after the restart the unfinished view is not backfilling")
	}
	must(e, `INSERT INTO other VALUES (1)`)
	if got := must(e, `SELECT count(*) FROM other`); got != "(1)" {
		t.Fatalf("other after the restart: %s", got)
	}
	if s := backfill(e); s == "" {
		t.Fatal("the backfill ended before the INSERT was checked: the INSERT may have waited for it")
	}
	must(e, `DROP MATERIALIZED VIEW v`)
	if s := backfill(e); s != "" {
		t.Fatalf("the dropped view is still backfilling (%s)", s)
	}
	must(e, `CREATE MATERIALIZED VIEW v AS SELECT a FROM big WHERE a <= 5`)
	if got := must(e, `SELECT count(*) FROM v`); got != "(5)" {
		t.Fatalf("the view created again: %s", got)
	}
}
