package engine_test

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestExchangeStagesSpread: with exchange stages on (--exchange-stages),
// a view whose operators are co-partitioned by a subset of their keys, or
// that joins a VALUES list, is spread over both view shards of a 3-shard
// server (dist.StageKeys), and equals its query on PostgreSQL through
// backfill, random inserts, updates (moving rows between the shards'
// parts) and deletes, and a restart without the setting; a view created
// without it runs whole on one view shard.
func TestExchangeStagesSpread(t *testing.T) {
	dir := t.TempDir()
	srv, err := enginetest.StartStages(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	o := newOracle(t, rs)
	o.both("CREATE TABLE t (id int PRIMARY KEY, a int, b int, v int)")
	o.both("CREATE TABLE u (id int PRIMARY KEY, a int, w int)")
	rng := rand.New(rand.NewSource(11))
	for i := range 200 {
		o.both(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, %d)", i, rng.Intn(9), rng.Intn(5), rng.Intn(100)))
		if i < 60 {
			o.both(fmt.Sprintf("INSERT INTO u VALUES (%d, %d, %d)", i, rng.Intn(9), rng.Intn(4)))
		}
	}
	views := map[string]string{
		// GROUP BY the join key and more: the join places (a, w) by a.
		"by_aw": "SELECT t.a, u.w, max(t.v) AS m, count(*) AS n FROM t JOIN u ON t.a = u.a GROUP BY t.a, u.w",
		// A HOP-like join with VALUES, grouped by a key computed over
		// them: placed by a alone.
		"hop": "SELECT a, b * 10 + k AS s, count(*) AS n, sum(v) AS total FROM t CROSS JOIN (VALUES (0), (1), (2)) w(k) WHERE v + k > 5 GROUP BY a, b * 10 + k",
	}
	for _, name := range []string{"by_aw", "hop"} {
		o.view(name, views[name])
	}
	for _, name := range []string{"by_aw", "hop"} {
		plan := strings.Join(rowsText(t, rs, "EXPLAIN INCREMENTAL "+name), "\n")
		if !strings.Contains(plan, "SHARDS  0, 1, 2 (spread") || !strings.Contains(plan, "each shard keeps the rows of its hash(a)") {
			t.Fatalf("EXPLAIN INCREMENTAL %s: not spread by a:\n%s", name, plan)
		}
	}
	o.check("after backfill")
	change := func(n int) {
		t.Helper()
		for i := range n {
			id := rng.Intn(260)
			switch rng.Intn(5) {
			case 0, 1:
				o.both(fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, %d) ON CONFLICT (id) DO UPDATE SET v = excluded.v", id, rng.Intn(9), rng.Intn(5), rng.Intn(100)))
			case 2:
				o.both(fmt.Sprintf("UPDATE t SET a = %d, v = v + 1 WHERE id = %d", rng.Intn(9), id))
			case 3:
				o.both(fmt.Sprintf("DELETE FROM t WHERE id = %d", id))
			case 4:
				o.both(fmt.Sprintf("UPDATE u SET a = %d, w = %d WHERE id = %d", rng.Intn(9), rng.Intn(4), id%60))
			}
			if i%40 == 39 {
				o.check(fmt.Sprintf("after %d changes", i+1))
			}
		}
	}
	change(120)
	o.both("BEGIN; DELETE FROM t WHERE a = 3; UPDATE u SET a = 3 WHERE a = 4; COMMIT")
	o.check("after a transaction")
	srv.Stop()

	// Without the setting, the views keep their placement; a new one is
	// not spread.
	srv, err = enginetest.StartShards(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	o.rs = connect(t, srv.URL)
	o.check("after a restart")
	change(80)
	o.view("by_aw_whole", views["by_aw"])
	plan := strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL by_aw_whole"), "\n")
	if strings.Contains(plan, "(spread") {
		t.Fatalf("a view created without exchange stages is spread:\n%s", plan)
	}
	change(40)
	o.check("at the end")
}

// TestExchangeStagesStaged: with exchange stages on, a view needing an
// exchange between its operators (q4's shape: a join, a max per key and
// more, an average per another key) runs in stages on a 3-shard server:
// the lower stage spread over both view shards, the upper stage on the
// first, fed by both. It equals its query on PostgreSQL through backfill,
// random inserts, updates and deletes, a restart (the upper stage starts
// over from the lower stages' outputs) and more changes; SUBSCRIBE of it
// and a view reading it are refused.
func TestExchangeStagesStaged(t *testing.T) {
	dir := t.TempDir()
	srv, err := enginetest.StartStages(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	o := newOracle(t, rs)
	o.both("CREATE TABLE auction (id int PRIMARY KEY, category int, reserve int)")
	o.both("CREATE TABLE bid (id int PRIMARY KEY, auction int, price int)")
	rng := rand.New(rand.NewSource(5))
	for i := range 60 {
		o.both(fmt.Sprintf("INSERT INTO auction VALUES (%d, %d, %d)", i, rng.Intn(6), rng.Intn(50)))
	}
	for i := range 300 {
		o.both(fmt.Sprintf("INSERT INTO bid VALUES (%d, %d, %d)", i, rng.Intn(70), rng.Intn(100)))
	}
	const q4 = "SELECT q.category, avg(q.final) AS avg_final, count(*) AS n FROM (SELECT max(b.price) AS final, a.category FROM auction a JOIN bid b ON a.id = b.auction WHERE b.price >= a.reserve GROUP BY a.id, a.category) q GROUP BY q.category"
	o.view("q4", q4)
	const counts = "SELECT n, count(*) AS auctions FROM (SELECT b.auction, count(*) AS n FROM bid b GROUP BY b.auction) c GROUP BY n"
	o.view("counts", counts)
	// Two aggregates over a join, one of them DISTINCT, then a global one.
	o.view("sums", "SELECT sum(n) AS n, sum(total) AS total, sum(d) AS d FROM (SELECT a.category, count(*) AS n, sum(b.price) AS total, count(DISTINCT b.price % 7) AS d FROM bid b JOIN auction a ON a.id = b.auction GROUP BY a.category) q")
	for _, name := range []string{"q4", "counts"} {
		if got := rowsText(t, rs, "SELECT count(*) FROM "+name); len(got) != 1 {
			t.Fatalf("%s: %v", name, got)
		}
	}
	o.check("after backfill")
	change := func(n int) {
		t.Helper()
		for i := range n {
			id := rng.Intn(400)
			switch rng.Intn(6) {
			case 0, 1:
				o.both(fmt.Sprintf("INSERT INTO bid VALUES (%d, %d, %d) ON CONFLICT (id) DO UPDATE SET price = excluded.price", id, rng.Intn(70), rng.Intn(100)))
			case 2:
				o.both(fmt.Sprintf("UPDATE bid SET auction = %d WHERE id = %d", rng.Intn(70), id))
			case 3:
				o.both(fmt.Sprintf("DELETE FROM bid WHERE id = %d", id))
			case 4:
				o.both(fmt.Sprintf("UPDATE auction SET category = %d, reserve = %d WHERE id = %d", rng.Intn(6), rng.Intn(50), id%60))
			case 5:
				o.both(fmt.Sprintf("DELETE FROM auction WHERE id = %d", id%80))
			}
			if i%25 == 24 {
				o.check(fmt.Sprintf("after %d changes", i+1))
			}
		}
	}
	change(100)
	o.both("BEGIN; DELETE FROM bid WHERE price < 10; UPDATE auction SET category = 0 WHERE category = 5; COMMIT")
	o.check("after a transaction")
	if _, err := rs.Exec(context.Background(), "CREATE MATERIALIZED VIEW over_q4 AS SELECT count(*) FROM q4"); err == nil || !strings.Contains(err.Error(), "runs in stages") {
		t.Fatalf("a view reading a staged view: %v", err)
	}
	rows, err := rs.Query(context.Background(), "SUBSCRIBE q4")
	if err == nil {
		rows.Next()
		err = rows.Err()
		rows.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "runs in stages") {
		t.Fatalf("SUBSCRIBE of a staged view: %v", err)
	}
	plan := strings.Join(rowsText(t, rs, "EXPLAIN INCREMENTAL q4"), "\n")
	for _, want := range []string{"SHARDS  0, 1, 2 (in stages: 1 lower stage(s)", "UPPER STAGE  on shard 1: Aggregate", "Exchange stage shards 0, 1, 2 → 1: q4$stage0", "Exchange loopback shard 0 → 1, 2: auction's committed changes (shard 0 keeps its own share); each shard keeps the rows of its hash(id)"} {
		if !strings.Contains(plan, want) {
			t.Fatalf("EXPLAIN INCREMENTAL q4 lacks %q:\n%s", want, plan)
		}
	}
	if an := strings.Join(rowsText(t, rs, "EXPLAIN ANALYZE INCREMENTAL q4"), "\n"); !strings.Contains(an, "source q4$stage0 (lower stage 0, from every shard)") {
		t.Fatalf("EXPLAIN ANALYZE INCREMENTAL q4 does not name its lower stage:\n%s", an)
	}
	status := strings.Join(rowsText(t, rs, "SHOW VIEW STATUS"), "\n")
	if !strings.Contains(status, "q4|") || strings.Contains(status, "stage0") || strings.Contains(status, "failed") {
		t.Fatalf("SHOW VIEW STATUS:\n%s", status)
	}
	srv.Stop()

	srv, err = enginetest.StartStages(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	o.rs = connect(t, srv.URL)
	o.check("after a restart")
	change(50)
	exec(t, o.rs, "DROP MATERIALIZED VIEW counts")
	o.names = slices.DeleteFunc(o.names, func(n string) bool { return n == "counts" })
	change(25)
	o.check("at the end")
}
