package engine_test

import (
	"context"
	"fmt"
	"strings"
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

// TestReadOfViewsBeingFilledWaits: on a server with 3 shards, a statement
// reading a view being filled together with a view of the other view
// shard (one snapshot pinned on every shard) waits for the fill, as a
// read of the view alone does, and then shows it whole; it used to fail
// with 40001 ("still being filled when the snapshot was taken"), as
// reads did right after a restart while views were filled again.
func TestReadOfViewsBeingFilledWaits(t *testing.T) {
	srv, err := enginetest.StartShards(t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	rs := connect(t, srv.URL)
	exec(t, rs, "CREATE TABLE t (id bigint PRIMARY KEY, g int, v int)")
	exec(t, rs, "INSERT INTO t SELECT i, i % 1000, i FROM generate_series(1, 150000) i")
	exec(t, rs, "CREATE MATERIALIZED VIEW a AS SELECT count(*) AS n FROM t")
	creator := connect(t, srv.URL)
	created := make(chan error, 1)
	go func() {
		// Spread over both view shards: the read of it and a is pinned.
		_, err := creator.Exec(context.Background(), "CREATE MATERIALIZED VIEW b AS SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g")
		created <- err
	}()
	deadline := time.Now().Add(time.Minute)
	read := 0
	for {
		select {
		case err := <-created:
			if err != nil {
				t.Fatal(err)
			}
			if read == 0 {
				t.Log("the fill ended before a read named the view: nothing checked in flight")
			}
			return
		default:
		}
		var a, n int64
		err := rs.QueryRow(context.Background(), "SELECT (SELECT n FROM a), (SELECT sum(n) FROM b)").Scan(&a, &n)
		switch {
		case err != nil && strings.Contains(err.Error(), "42P01"):
			// b is not in the catalog yet.
		case err != nil:
			t.Fatalf("a read of a view being filled with another view: %v", err)
		case a != 150000 || n != 150000:
			t.Fatalf("a read of a view being filled shows a = %d, b's rows = %d, want 150000 each", a, n)
		default:
			read++
		}
		if time.Now().After(deadline) {
			t.Fatal("the view was never created")
		}
	}
}
