package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestShardsViewsOnViewShards runs a server laid out over 2 and 3 shards:
// the tables on the table shard, each view on a view shard fed by the
// exchange. Views created over existing rows (backfilled from the table
// shard's export), a view over a view, inserts, updates and deletes, and a
// restart: every view equals its query on PostgreSQL; a statement reading
// a view and a table sees both as of one epoch, and a REPEATABLE READ
// transaction both as of its snapshot.
func TestShardsViewsOnViewShards(t *testing.T) {
	for _, shards := range []int{2, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			dir := t.TempDir()
			srv, err := enginetest.StartShards(dir, shards)
			if err != nil {
				t.Fatal(err)
			}
			rs := connect(t, srv.URL)
			o := newOracle(t, rs)
			o.both("CREATE TABLE orders (id int PRIMARY KEY, customer int NOT NULL, amount int, status text)")
			o.both("CREATE TABLE customers (id int PRIMARY KEY, region text)")
			for i := range 300 {
				o.both(fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, %d, '%s')", i, i%17, i*7%101, []string{"new", "paid", "sent"}[i%3]))
			}
			for c := range 17 {
				o.both(fmt.Sprintf("INSERT INTO customers VALUES (%d, 'r%d')", c, c%4))
			}
			o.view("by_status", "SELECT status, count(*) AS n, sum(amount) AS total FROM orders GROUP BY status")
			exec(t, o.pg, "CREATE VIEW by_status AS "+o.views["by_status"])
			const byRegion = "SELECT c.region, count(*) AS n, max(o.amount) AS top FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.region"
			o.view("by_region", byRegion)
			exec(t, o.pg, "CREATE VIEW by_region AS "+byRegion) // what regions_over reads, on PostgreSQL
			o.view("big", "SELECT id, amount FROM orders WHERE amount > 90")
			exec(t, o.pg, "CREATE VIEW big AS "+o.views["big"])
			o.view("regions_over", "SELECT region, n FROM by_region WHERE n > 10")
			// Spread by an expression of the table's columns.
			o.view("by_rest", "SELECT amount % 7 AS r, count(*) AS n, max(id) AS top FROM orders GROUP BY amount % 7")
			o.check("after backfill")
			for i := range 200 {
				switch i % 4 {
				case 0:
					o.both(fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, %d, 'new')", 1000+i, i%17, i%113))
				case 1:
					o.both(fmt.Sprintf("UPDATE orders SET amount = amount + 3, status = 'paid' WHERE id = %d", i))
				case 2:
					o.both(fmt.Sprintf("DELETE FROM orders WHERE id = %d", i))
				case 3:
					o.both(fmt.Sprintf("UPDATE customers SET region = 'r%d' WHERE id = %d", i%5, i%17))
				}
				if i%50 == 49 {
					o.check(fmt.Sprintf("after %d changes", i+1))
				}
			}
			o.both("BEGIN; INSERT INTO orders VALUES (5000, 1, 100, 'sent'); UPDATE orders SET amount = 0 WHERE id = 3; COMMIT")
			o.check("after a transaction")
			// A view and a table in one statement: both as of one epoch.
			o.checkWith("reading a view and a table", []string{
				"SELECT b.id, o.status FROM big b JOIN orders o ON o.id = b.id ORDER BY 1",
				"SELECT (SELECT count(*) FROM by_status) + (SELECT count(*) FROM orders)",
			})
			// REPEATABLE READ: views (on the view shard) and tables (on
			// the table shard) from one snapshot, however they change.
			rr := connect(t, srv.URL)
			const snapQ = "SELECT (SELECT sum(n) FROM by_status), (SELECT count(*) FROM orders), (SELECT count(*) FROM big), (SELECT sum(amount) FROM orders)"
			exec(t, rr, "BEGIN ISOLATION LEVEL REPEATABLE READ")
			first := fmt.Sprint(rowsText(t, rr, snapQ))
			firstView := fmt.Sprint(rowsText(t, rr, "SELECT n, total FROM by_status ORDER BY status"))
			o.both("INSERT INTO orders VALUES (5001, 2, 95, 'new')")
			o.both("DELETE FROM orders WHERE id = 10")
			o.both("UPDATE orders SET amount = 99 WHERE id = 11")
			o.check("while a REPEATABLE READ transaction is open")
			if got := fmt.Sprint(rowsText(t, rr, snapQ)); got != first {
				t.Fatalf("REPEATABLE READ saw %s, then %s", first, got)
			}
			if got := fmt.Sprint(rowsText(t, rr, "SELECT n, total FROM by_status ORDER BY status")); got != firstView {
				t.Fatalf("REPEATABLE READ view read saw %s, then %s", firstView, got)
			}
			if n := rowsText(t, rr, "SELECT count(*) FROM orders"); fmt.Sprint(n) == fmt.Sprint(rowsText(t, rs, "SELECT count(*) FROM orders")) {
				t.Fatalf("REPEATABLE READ saw the later commits: %v", n)
			}
			exec(t, rr, "COMMIT")
			if got, want := fmt.Sprint(rowsText(t, rr, snapQ)), fmt.Sprint(rowsText(t, o.pg, snapQ)); got != want {
				t.Fatalf("after COMMIT: %s, PostgreSQL %s", got, want)
			}
			_ = rr.Close(context.Background())
			if shards >= 3 {
				checkViewsOverTwoViewShards(t, o, srv.URL)
			}
			// EXPLAIN INCREMENTAL shows where the view runs and the
			// exchange its tables' changes take.
			plan := strings.Join(rowsText(t, rs, "EXPLAIN INCREMENTAL SELECT c.region, count(*) FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.region"), "\n")
			for _, want := range []string{"SHARD  1 (view shard; tables on shard 0)", "Exchange loopback shard 0 → 1: orders", "Exchange loopback shard 0 → 1: customers"} {
				if !strings.Contains(plan, want) {
					t.Fatalf("EXPLAIN INCREMENTAL lacks %q:\n%s", want, plan)
				}
			}
			st := rowsText(t, rs, "SHOW VIEW STATUS")
			if len(st) < 4 {
				t.Fatalf("SHOW VIEW STATUS lists %d views: %q", len(st), st)
			}
			_ = rs.Close(context.Background())
			srv.Stop()
			for id := range shards {
				if _, err := os.Stat(filepath.Join(dir, "shards", fmt.Sprint(id))); err != nil {
					t.Fatalf("shard %d has no database: %v", id, err)
				}
			}

			srv, err = enginetest.StartShards(dir, 1) // the store keeps its layout
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			o.rs = connect(t, srv.URL)
			o.check("after a restart")
			o.both("INSERT INTO orders VALUES (6000, 2, 99, 'new')")
			o.both("DELETE FROM customers WHERE id = 2")
			o.check("after a restart and more changes")
			o.view("late", "SELECT customer, count(*) AS n FROM orders GROUP BY customer")
			o.both("INSERT INTO orders VALUES (6001, 3, 1, 'new')")
			o.check("after a view created after the restart")
		})
	}
}

// checkViewsOverTwoViewShards: over 3 shards the views run on two view
// shards (by_status and big on shard 1, by_region and regions_over on
// shard 2). A view reading views of both computes the other shard's view
// itself, and equals its query; a statement reading views of both sees
// them as of one epoch, while another session keeps committing.
func checkViewsOverTwoViewShards(t *testing.T, o *oracle, url string) {
	t.Helper()
	// by_region (a GROUP BY over a join on other columns) runs whole on
	// view shard 1; totals (a global aggregate) on view shard 2, the one
	// running fewer views; by_status and big are spread over both.
	o.view("totals", "SELECT count(*) AS n, sum(amount) AS total FROM orders")
	exec(t, o.pg, "CREATE VIEW totals AS "+o.views["totals"])
	const mixed = "SELECT t.n, t.total, r.region, r.top FROM totals t JOIN by_region r ON r.n > t.n / 100"
	o.view("mixed", mixed)
	o.both("INSERT INTO orders VALUES (7000, 4, 50, 'sent')")
	o.both("UPDATE customers SET region = 'r9' WHERE id = 4")
	o.check("a view over views of two view shards")
	plan := strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL mixed"), "\n")
	for _, want := range []string{"SHARD  1 (view shard; tables on shard 0)", "by_region: materialized view on shard 1 (no exchange)", "totals: materialized view on shard 2, computed here from its definition (inlined)"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("EXPLAIN INCREMENTAL mixed lacks %q:\n%s", want, plan)
		}
	}
	// The same query explained before it is a view says where it would
	// run and what it would compute itself, as the view says once made.
	plan = strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL "+mixed), "\n")
	for _, want := range []string{"SHARD  1 (view shard; tables on shard 0)", "by_region: materialized view on shard 1 (no exchange)", "totals: materialized view on shard 2, computed here from its definition (inlined)"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("EXPLAIN INCREMENTAL %s lacks %q:\n%s", mixed, want, plan)
		}
	}
	plan = strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL SELECT status, n FROM by_status WHERE n > 1"), "\n")
	if want := "by_status: materialized view spread over shards 0, 1, 2, computed here from its definition (inlined)"; !strings.Contains(plan, want) {
		t.Fatalf("EXPLAIN INCREMENTAL of a query over a spread view lacks %q:\n%s", want, plan)
	}
	// totals is computed inside mixed: recompiling it would change
	// mixed's plan, so it is refused; a view computing it in another time
	// zone is refused at CREATE. So is one computing a spread view.
	if err := execErr(o.rs, "ALTER MATERIALIZED VIEW totals RECOMPILE"); err == nil || !strings.Contains(err.Error(), "would change materialized view mixed") {
		t.Fatalf("RECOMPILE of a view another shard's view computes: %v", err)
	}
	tz := connect(t, url)
	exec(t, tz, "SET TimeZone = 'Europe/Paris'")
	for _, q := range []string{"SELECT t.n, r.region FROM by_region r, totals t", "SELECT s.status, r.region FROM by_region r, by_status s"} {
		if err := execErr(tz, "CREATE MATERIALIZED VIEW tz_mixed AS "+q); err == nil || !strings.Contains(err.Error(), "another TimeZone setting") {
			t.Fatalf("a view computing another shard's view in another time zone (%s): %v", q, err)
		}
	}
	_ = tz.Close(context.Background())
	checkSpreadViews(t, o)
	// Both views count every order: read together, they agree.
	reader := connect(t, url)
	defer reader.Close(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := connect(t, url)
		defer w.Close(context.Background())
		for i := range 60 {
			exec(t, w, fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, 1, 'new')", 8000+i, i%17))
		}
	}()
	for range 30 {
		got := rowsText(t, reader, "SELECT (SELECT sum(n) FROM by_status) - (SELECT sum(n) FROM by_region), (SELECT n FROM totals) - (SELECT sum(n) FROM by_region)")
		if fmt.Sprint(got) != "[0|0]" {
			t.Fatalf("views of two view shards read in one statement disagree: by_status - by_region, totals - by_region = %v", got)
		}
	}
	<-done
	for i := range 60 {
		exec(t, o.pg, fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, 1, 'new')", 8000+i, i%17))
	}
	o.check("after reads of two view shards")
}

// checkSpreadViews checks the views spread over both view shards of a
// 3-shard server (their rows were checked against PostgreSQL all along):
// the status adds the parts up, EXPLAIN INCREMENTAL says how the rows are
// split, and
// SUBSCRIBE and sinks, which do not follow such a view yet, are refused.
func checkSpreadViews(t *testing.T, o *oracle) {
	t.Helper()
	plan := strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL by_status"), "\n")
	for _, want := range []string{"SHARDS  0, 1, 2 (spread", "Exchange loopback shard 0 → 1, 2: orders's committed changes, in epoch order, durable on both sides before collected (shard 0 keeps its own share)", "each shard keeps the rows of its hash(status)"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("EXPLAIN INCREMENTAL by_status lacks %q:\n%s", want, plan)
		}
	}
	plan = strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL by_rest"), "\n")
	if !strings.Contains(plan, "each shard keeps the rows of its hash((amount % 7))") {
		t.Fatalf("EXPLAIN INCREMENTAL by_rest does not spread it by amount %% 7:\n%s", plan)
	}
	if got := rowsText(t, o.rs, "SELECT rows FROM rockstream_catalog.views WHERE name = 'by_status'"); fmt.Sprint(got) != "[3]" {
		t.Fatalf("rockstream_catalog.views shows by_status with %v rows", got)
	}
}
