package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// TestViewShardFeedsExportAsItArrives: on 2 shards, views over existing
// rows that read only tables (a GROUP BY, a join, a filter) are filled on
// the view shard from the table shard's export as it arrives: no exported
// row is written to the view shard's store (they were staged there, then
// scanned and deleted: half of a two-shard backfill's CPU), and each view
// equals its query, as does a view over one of them and a table.
func TestViewShardFeedsExportAsItArrives(t *testing.T) {
	ctx := context.Background()
	e := openQuiet(t, Config{Store: objstore.NewMemory(), Shards: 2})
	defer e.Close(ctx)
	must := func(sql string) string { t.Helper(); return mustSQL(t, e, sql) }
	must(`CREATE TABLE base (id bigint PRIMARY KEY, grp int, dim_id int, amount int)`)
	must(`CREATE TABLE dim (id int PRIMARY KEY, name text, category int)`)
	must(`INSERT INTO dim SELECT i, 'name ' || (i % 50), i % 10 FROM generate_series(0, 999) i`)
	must(`INSERT INTO base SELECT i, i % 100, (i * 31) % 1000, (i * 7919) % 1000 FROM generate_series(1, 30000) i`)
	sorted := func(sql string) []string {
		t.Helper()
		out := strings.Split(must(sql), "; ")
		slices.Sort(out)
		return out
	}
	staged := func() uint64 {
		t.Helper()
		st, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.BackfillRowsStaged
	}
	views := []string{
		`SELECT grp, count(*) AS cnt, sum(amount) AS total FROM base GROUP BY grp`,
		`SELECT b.id, b.amount, d.name FROM base b JOIN dim d ON b.dim_id = d.id WHERE d.category = 1`,
		`SELECT id, amount FROM base WHERE amount > 900`,
	}
	for i, q := range views {
		must(fmt.Sprintf(`CREATE MATERIALIZED VIEW v%d AS %s`, i, q))
		// Changes after the export's epoch reach the view through the
		// exchange (buffered while it is filled, then stepped).
		must(fmt.Sprintf(`UPDATE base SET amount = amount + 1 WHERE id %% 97 = %d`, i))
	}
	if n := staged(); n != 0 {
		t.Fatalf("the view shard staged %d exported rows for views reading only tables", n)
	}
	for i, q := range views {
		if got, want := sorted(fmt.Sprintf(`SELECT * FROM v%d`, i)), sorted(q); !slices.Equal(got, want) {
			t.Errorf("view %s: %d rows, its query %d (first %v vs %v)", q, len(got), len(want), got[:min(3, len(got))], want[:min(3, len(want))])
		}
	}
	const mixed = `SELECT g.grp, g.cnt, d.name FROM v0 g JOIN dim d ON g.grp = d.id`
	must(`CREATE MATERIALIZED VIEW mixed AS ` + mixed)
	if got, want := sorted(`SELECT * FROM mixed`), sorted(mixed); !slices.Equal(got, want) {
		t.Errorf("view mixed: %v, its query %v", got, want)
	}
}

// TestViewShardBackfillRestartsAfterCrashMidStream: on 2 shards, a server
// stopped while a view's export is being fed to it restarts the backfill
// from scratch (its partial state dropped, the tables asked for again),
// and the view then equals its query: no row fed twice, none lost.
func TestViewShardBackfillRestartsAfterCrashMidStream(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	open := func() *Engine { return openQuiet(t, Config{Store: store, Shards: 2}) }
	e := open()
	mustSQL(t, e, `CREATE TABLE big (a int PRIMARY KEY)`)
	mustSQL(t, e, `INSERT INTO big SELECT generate_series(1, 12000)`)
	fed := func(e *Engine) (string, int64) {
		t.Helper()
		st, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range st.Views {
			if v.Name == "v" {
				return v.Backfill, v.BackfillRowsRead
			}
		}
		return "", 0
	}
	const q = `SELECT a, ln(1e-30 + a) AS l FROM big`
	created := make(chan error, 1)
	go func() {
		_, err := execSQL(ctx, e, `CREATE MATERIALIZED VIEW v AS `+q)
		created <- err
	}()
	// The bound guards against a hang; it is not a timing assertion.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		// NB: rows fed, the export arriving ("copying inputs") or in.
		if phase, rows := fed(e); (phase == "copying inputs" || phase == "reading inputs") && rows > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the view's export was never seen arriving")
		}
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-created; err == nil {
		t.Fatal("the CREATE succeeded although the server stopped during its backfill")
	}
	e = open()
	defer e.Close(ctx)
	// A read of the view waits for its backfill.
	if got, want := mustSQL(t, e, `SELECT count(*), count(DISTINCT a), sum(a) FROM v`), "(12000,12000,72006000)"; got != want {
		t.Fatalf("the view after the restart: %s, want %s", got, want)
	}
	if got, want := mustSQL(t, e, `SELECT count(*) FROM v v1 JOIN big b ON v1.a = b.a WHERE v1.l = ln(1e-30 + b.a)`), "(12000)"; got != want {
		t.Fatalf("the view's rows after the restart: %s match their query, want %s", got, want)
	}
}
