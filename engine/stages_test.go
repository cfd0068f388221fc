package engine_test

import (
	"fmt"
	"math/rand"
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
		if !strings.Contains(plan, "SHARDS  1, 2 (spread") || !strings.Contains(plan, "each shard keeps the rows of its hash(a)") {
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
