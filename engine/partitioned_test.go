package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestPartitionedTables runs a server whose tables are partitioned over
// two table shards (of 3: the third runs the views): single-row writes go
// to the owner of their key's bucket, each commit with an epoch from the
// control plane; the view shard takes both table shards' changes and
// steps an epoch once both sealed it. Views and table reads equal
// PostgreSQL's, also after a restart; what a partitioned layout does not
// do yet is refused with 0A000.
func TestPartitionedTables(t *testing.T) {
	dir := t.TempDir()
	srv, err := enginetest.StartPartitioned(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	o := newOracle(t, rs)
	o.both("CREATE TABLE acct (id int PRIMARY KEY, owner int NOT NULL, amount int)")
	o.both("CREATE TABLE notes (n int PRIMARY KEY, body text)")
	o.view("total", "SELECT count(*) AS n, sum(amount) AS s FROM acct")
	exec(t, o.pg, "CREATE VIEW total AS "+o.views["total"])
	o.view("by_owner", "SELECT owner, count(*) AS n, sum(amount) AS s FROM acct GROUP BY owner")
	exec(t, o.pg, "CREATE VIEW by_owner AS "+o.views["by_owner"])
	o.view("joined", "SELECT a.id, n.body FROM acct a JOIN notes n ON n.n = a.owner")
	o.check("empty")
	for i := range 120 {
		o.both(fmt.Sprintf("INSERT INTO acct VALUES (%d, %d, %d)", i, i%7, i*13%50))
		if i < 7 {
			o.both(fmt.Sprintf("INSERT INTO notes VALUES (%d, 'note %d')", i, i))
		}
	}
	// A view over rows already on both table shards: each exports its
	// part as of one epoch.
	o.view("top", "SELECT owner, max(amount) AS m, count(*) AS n FROM acct GROUP BY owner")
	o.view("notes_of", "SELECT n.body, count(*) AS c FROM acct a JOIN notes n ON n.n = a.owner GROUP BY n.body")
	tables := []string{"SELECT * FROM acct ORDER BY id", "SELECT * FROM notes ORDER BY n", "SELECT owner, sum(amount) FROM acct GROUP BY owner ORDER BY 1"}
	o.checkWith("after inserts", tables)
	for i := range 60 {
		switch i % 3 {
		case 0:
			o.both(fmt.Sprintf("UPDATE acct SET amount = amount + 5 WHERE id = %d", i))
		case 1:
			o.both(fmt.Sprintf("DELETE FROM acct WHERE id = %d", i))
		case 2:
			o.both(fmt.Sprintf("BEGIN; UPDATE acct SET owner = 3 WHERE id = %d; COMMIT", i))
		}
	}
	o.checkWith("after updates and deletes", tables)
	// A view and a table in one statement: one epoch for both.
	o.checkWith("a view with a table", []string{"SELECT (SELECT n FROM total) = (SELECT count(*) FROM acct)"})

	// Transactions writing rows of both table shards: prepared on each,
	// decided on the first, resolved.
	o.both("INSERT INTO acct SELECT g, g % 7, g % 13 FROM generate_series(1000, 1063) g")
	o.both("BEGIN; UPDATE acct SET amount = amount - 10 WHERE id = 1001; UPDATE acct SET amount = amount + 10 WHERE id = 1002; DELETE FROM acct WHERE id = 1003; COMMIT")
	o.both("UPDATE acct SET amount = amount * 2 WHERE id >= 1010 AND id < 1040")
	o.both("DELETE FROM acct WHERE id >= 1040 AND id < 1050")
	o.checkWith("after transactions on both table shards", tables)
	// Rows moving to keys of the other shard.
	o.both("UPDATE acct SET id = id + 5000 WHERE id >= 1050")
	o.checkWith("after rows moved between shards", tables)
	// A secondary index: each table shard keeps its rows' entries.
	o.both("CREATE INDEX acct_owner ON acct (owner)")
	o.both("UPDATE acct SET amount = amount + 1 WHERE owner = 4")
	o.checkWith("an index over both table shards", []string{"SELECT id, amount FROM acct WHERE owner = 4 ORDER BY id", "SELECT count(*) FROM acct WHERE owner BETWEEN 2 AND 3"})
	if _, err := o.rs.Exec(context.Background(), "CREATE UNIQUE INDEX acct_amount ON acct (amount)"); err == nil || !strings.Contains(err.Error(), "0A000") {
		t.Fatalf("a unique index on a partitioned table's other columns: %v", err)
	}
	// An insert-only table without a key: its rows go to the owner of
	// their value's bucket; multi-row INSERT and COPY split over both
	// table shards (the Nexmark shape).
	exec(t, o.rs, "CREATE TABLE events (owner int, amount int, note text) WITH (insert_only = true)")
	exec(t, o.pg, "CREATE TABLE events (owner int, amount int, note text)")
	o.view("events_by_owner", "SELECT owner, count(*) AS n, sum(amount) AS s FROM events GROUP BY owner")
	o.view("events_joined", "SELECT e.owner, a.id, e.amount + a.amount AS t FROM events e JOIN acct a ON a.owner = e.owner AND a.id < 20")
	if plan := strings.Join(rowsText(t, o.rs, "EXPLAIN INCREMENTAL events_by_owner"), "\n"); !strings.Contains(plan, "shards 0, 1 (partitioned by hash(its whole row))") {
		t.Fatalf("events is not partitioned over both table shards:\n%s", plan)
	}
	o.both("INSERT INTO events SELECT g % 9, g, 'n' || g FROM generate_series(1, 300) g")
	var copyText strings.Builder
	for i := range 500 {
		fmt.Fprintf(&copyText, "%d\t%d\tc%d\n", i%11, i%37, i)
	}
	for _, c := range []*pgx.Conn{o.rs, o.pg} {
		if _, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader(copyText.String()), "COPY events FROM STDIN"); err != nil {
			t.Fatal(err)
		}
	}
	o.both("INSERT INTO events VALUES (1, 1, 'dup'), (1, 1, 'dup'), (2, NULL, NULL)")
	o.checkWith("an insert-only table over both table shards", []string{"SELECT owner, count(*), sum(amount), min(note), max(note) FROM events GROUP BY owner ORDER BY 1"})

	// Views of both view shards in one statement (by_owner is spread
	// over them, total runs on one): one snapshot of every shard.
	o.checkWith("views of both view shards", []string{
		"SELECT (SELECT n FROM total) = (SELECT sum(n) FROM by_owner)",
		"SELECT (SELECT s FROM total), (SELECT sum(s) FROM by_owner), (SELECT count(*) FROM acct)",
	})
	// REPEATABLE READ: one snapshot of every shard for the whole
	// transaction, while another session writes rows of both table shards.
	ctx := context.Background()
	tx := connect(t, srv.URL)
	exec(t, tx, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	snapshot := func() string {
		var out string
		if err := tx.QueryRow(ctx, "SELECT concat_ws(',', (SELECT count(*) FROM acct), (SELECT sum(amount) FROM acct), (SELECT n FROM total), (SELECT s FROM total), (SELECT sum(n) FROM by_owner), (SELECT amount FROM acct WHERE id = 1001), (SELECT amount FROM acct WHERE id = 1002))").Scan(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := snapshot()
	var want string
	if err := o.pg.QueryRow(ctx, "SELECT concat_ws(',', (SELECT count(*) FROM acct), (SELECT sum(amount) FROM acct), (SELECT count(*) FROM acct), (SELECT sum(amount) FROM acct), (SELECT count(*) FROM acct), (SELECT amount FROM acct WHERE id = 1001), (SELECT amount FROM acct WHERE id = 1002))").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if first != want {
		t.Fatalf("REPEATABLE READ's first read: %s, PostgreSQL has %s", first, want)
	}
	o.both("BEGIN; UPDATE acct SET amount = amount - 3 WHERE id = 1001; UPDATE acct SET amount = amount + 3 WHERE id = 1002; INSERT INTO acct VALUES (7001, 2, 9), (7002, 3, 9); COMMIT")
	o.both("DELETE FROM acct WHERE id = 1005")
	if again := snapshot(); again != first {
		t.Fatalf("REPEATABLE READ read %s after other sessions' commits, %s before", again, first)
	}
	exec(t, tx, "COMMIT")
	if now := snapshot(); now == first {
		t.Fatalf("a new transaction still reads the old snapshot %s", now)
	}
	_ = tx.Close(ctx)
	o.check("after the refusals")

	_ = rs.Close(context.Background())
	srv.Stop()
	for id := range 4 {
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
	o.checkWith("after a restart", tables)
	for i := 200; i < 240; i++ {
		o.both(fmt.Sprintf("INSERT INTO acct VALUES (%d, %d, %d)", i, i%5, i%11))
	}
	o.both("DELETE FROM acct WHERE id = 201")
	o.checkWith("after a restart and more changes", tables)
	o.view("after_restart", "SELECT amount % 4 AS r, count(*) AS n FROM acct GROUP BY amount % 4")
	o.both("INSERT INTO acct VALUES (300, 1, 7)")
	o.check("a view created after the restart")
}
