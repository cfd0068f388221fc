package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestNewViewDoesNotStallRunningViews: on a server with 2 shards, a view
// created over 300K existing rows has its tables copied to the view shard
// ("copying inputs"); meanwhile a session writes and reads (read-your-writes)
// another view of that shard, and is answered while the copy still runs,
// with the right rows. The copy held every view of the shard at its
// export's epoch before: the read waited for the whole copy. The new view
// then equals its query.
func TestNewViewDoesNotStallRunningViews(t *testing.T) {
	srv, err := enginetest.StartShards(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	exec(t, rs, "CREATE TABLE t (id bigint PRIMARY KEY, g int, v int)")
	exec(t, rs, "INSERT INTO t SELECT i, i % 1000, i FROM generate_series(1, 300000) i")
	exec(t, rs, "CREATE TABLE w (id bigint PRIMARY KEY, g int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW a AS SELECT g, count(*) AS n FROM w GROUP BY g")
	creator := connect(t, srv.URL)
	created := make(chan error, 1)
	go func() {
		_, err := creator.Exec(context.Background(), "CREATE MATERIALIZED VIEW b AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g")
		created <- err
	}()
	phase := func() string {
		var p string
		err := rs.QueryRow(context.Background(), "SELECT coalesce((SELECT phase FROM rockstream_catalog.progress WHERE relation = 'b'), 'none')").Scan(&p)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	deadline := time.Now().Add(time.Minute)
	for phase() != "copying inputs" {
		select {
		case err := <-created:
			t.Fatalf("the view was created (%v) before its inputs were seen being copied", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the view's inputs were never seen being copied")
		}
		time.Sleep(5 * time.Millisecond)
	}
	answeredDuringCopy := 0
	for i := 1; i <= 3; i++ {
		exec(t, rs, fmt.Sprintf("INSERT INTO w VALUES (%d, 7)", i))
		var n int64
		if err := rs.QueryRow(context.Background(), "SELECT n FROM a WHERE g = 7").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != int64(i) {
			t.Fatalf("view a after %d inserts shows %d rows in group 7", i, n)
		}
		if phase() == "copying inputs" {
			answeredDuringCopy++
		}
	}
	if answeredDuringCopy == 0 {
		t.Fatal("no write-then-read of view a was answered while view b's inputs were being copied: running views waited for the copy")
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	got := rowsText(t, rs, "SELECT count(*), sum(n), sum(s) FROM b")
	if want := []string{"1000|300000|45000150000"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view b: %v, want %v", got, want)
	}
}
