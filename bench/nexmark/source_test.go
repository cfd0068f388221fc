package nexmark

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/bench/internal/benchutil"
)

// TestNexmarkSource creates the three tables as NEXMARK sources, lets them
// run to their event limit, and checks the tables and a view over them
// against PostgreSQL 15 loaded with the same events by COPY.
func TestNexmarkSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const events, seed = 4000, 5
	pg := pgNexmark(t, ctx, "nexmark_src")
	var b Batch
	b.Append(Generator{Seed: seed}, 0, events)
	for _, tb := range []struct {
		name string
		data []byte
	}{{"person", b.Person}, {"auction", b.Auction}, {"bid", b.Bid}} {
		if _, err := pg.PgConn().CopyFrom(ctx, bytes.NewReader(tb.data), "COPY "+tb.name+" FROM STDIN"); err != nil {
			t.Fatal(err)
		}
	}

	srv, err := benchutil.StartServer(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rs, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	view, _ := QuerySQL("q19")
	for _, s := range []string{
		"CREATE SOURCE person FROM NEXMARK (events = 4000, rate = 20000, seed = 5)",
		"CREATE SOURCE auction FROM NEXMARK (events = 4000, rate = 20000, seed = 5)",
		"CREATE SOURCE nx_bid FROM NEXMARK (table = 'bid', events = 4000, rate = 20000, seed = 5)",
		"CREATE VIEW bid AS SELECT * FROM nx_bid",
		view,
	} {
		if _, err := rs.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	// Wait until the three sources reached the event limit.
	for {
		var n int64
		if err := rs.QueryRow(ctx, "SELECT (SELECT count(*) FROM person) + (SELECT count(*) FROM auction) + (SELECT count(*) FROM nx_bid)").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == events {
			break
		}
		if n > events || ctx.Err() != nil {
			t.Fatalf("sources hold %d rows, want %d (%v)", n, events, ctx.Err())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range []struct{ rs, pg string }{
		{"SELECT * FROM person", "SELECT * FROM person"},
		{"SELECT * FROM auction", "SELECT * FROM auction"},
		{"SELECT * FROM nx_bid", "SELECT * FROM bid"},
		{"SELECT * FROM q19", strings.TrimPrefix(view, "CREATE MATERIALIZED VIEW q19 AS ")},
	} {
		got, err := rowsText(ctx, rs, c.rs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rowsText(ctx, pg, c.pg)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d rows, PostgreSQL %d; %s", c.rs, len(got), len(want), firstDiff(got, want))
		}
	}
}
