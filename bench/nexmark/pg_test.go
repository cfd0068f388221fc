package nexmark

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/bench/internal/benchutil"
	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// rowsText runs sql over the simple protocol and returns its rows as
// sorted text lines (a multiset).
func rowsText(ctx context.Context, c *pgx.Conn, sql string) ([]string, error) {
	res, err := c.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range res {
		for _, row := range r.Rows {
			f := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					f[i] = "NULL"
				} else {
					f[i] = string(v)
				}
			}
			out = append(out, strings.Join(f, "|"))
		}
	}
	sort.Strings(out)
	return out, nil
}

// TestQueriesMatchPostgres maintains every runnable query as a view while
// generated events arrive in several commits, then checks each view
// against the same SELECT run by PostgreSQL 15 over the same events.
func TestQueriesMatchPostgres(t *testing.T) {
	ctx := context.Background()
	pg := pgNexmark(t, ctx, "nexmark_pg")
	// ROCKSTREAM_TEST_SHARDS lays the server out over several shards.
	shards, err := enginetest.Shards()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := benchutil.StartServer(t.TempDir(), shards)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rs, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	// bid has q12's p_time (TablesFor): RockStream fills it, and
	// PostgreSQL computes q12 over the values RockStream assigned (copied
	// into bid_ptime below).
	for _, s := range TablesFor("p_time") {
		if _, err := rs.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for _, s := range SideInput {
		for _, c := range []*pgx.Conn{rs, pg} {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	selects := map[string]string{}
	for _, q := range QueryNames() {
		view, err := QuerySQL(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rs.Exec(ctx, view); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		prefix := fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS ", q)
		selects[q] = strings.TrimPrefix(strings.ReplaceAll(view, "\n", " "), prefix)
		if pgForm, ok := pgEquivalents[q]; ok {
			selects[q] = pgForm
		}
		if strings.Contains(view, "p_time") {
			selects[q] = strings.ReplaceAll(selects[q], "FROM bid ", "FROM bid_ptime ")
		}
	}
	// Six 10-second event-time windows in four commits.
	g := Generator{Seed: 11}
	var b Batch
	const events, step = 6000, 1500
	for n := int64(0); n < events; n += step {
		b.Reset()
		b.Append(g, n, n+step)
		for _, tb := range []struct {
			name string
			data []byte
		}{{"person", b.Person}, {"auction", b.Auction}, {"bid", b.Bid}} {
			for _, c := range []*pgx.Conn{rs, pg} {
				if _, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(tb.data), CopySQL(tb.name)); err != nil {
					t.Fatalf("COPY %s: %v", tb.name, err)
				}
			}
		}
	}
	ptimes, err := rowsText(ctx, rs, "SELECT bidder, p_time FROM bid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pg.Exec(ctx, "CREATE TABLE bid_ptime (bidder bigint, p_time timestamptz)"); err != nil {
		t.Fatal(err)
	}
	data := strings.ReplaceAll(strings.Join(ptimes, "\n"), "|", "\t") + "\n"
	if _, err := pg.PgConn().CopyFrom(ctx, strings.NewReader(data), "COPY bid_ptime FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	for _, q := range QueryNames() {
		got, err := rowsText(ctx, rs, "SELECT * FROM "+q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want, err := rowsText(ctx, pg, selects[q])
		if err != nil {
			t.Fatalf("%s on PostgreSQL: %v", q, err)
		}
		if len(want) == 0 {
			t.Errorf("%s: PostgreSQL returns no rows; the data does not exercise it", q)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: view has %d rows, PostgreSQL %d; first difference %s", q, len(got), len(want), firstDiff(got, want))
		}
	}
}

// pgEquivalents are PostgreSQL's forms of the queries written with a
// construct PostgreSQL lacks. q11's SESSION window: a bid starts a
// session when the bidder's previous bid is 10 seconds or more before it
// (lag), a running sum numbers the sessions, and a session spans its
// first bid to its last bid plus 10 seconds.
//
//lint:immutable a constant table of oracle queries.
var pgEquivalents = map[string]string{
	"q11": `WITH f AS (SELECT bidder, date_time, CASE WHEN date_time - lag(date_time) OVER (PARTITION BY bidder ORDER BY date_time) < interval '10 seconds' THEN 0 ELSE 1 END AS new_session FROM bid WHERE date_time IS NOT NULL),
g AS (SELECT bidder, date_time, sum(new_session) OVER (PARTITION BY bidder ORDER BY date_time ROWS UNBOUNDED PRECEDING) AS session_number FROM f)
SELECT bidder, count(*) AS bid_count, min(date_time) AS starttime, max(date_time) + interval '10 seconds' AS endtime FROM g GROUP BY bidder, session_number`,
}

// pgNexmark connects to PostgreSQL with the Nexmark tables in a fresh
// schema (UTC session).
func pgNexmark(t *testing.T, ctx context.Context, schema string) *pgx.Conn {
	pg := pgtest.Connect(t)
	for _, s := range []string{"DROP SCHEMA IF EXISTS " + schema + " CASCADE", "CREATE SCHEMA " + schema, "SET search_path = " + schema, "SET TimeZone = 'UTC'"} {
		if _, err := pg.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range Tables {
		if _, err := pg.Exec(ctx, strings.Replace(s, " WITH (insert_only = true)", "", 1)); err != nil {
			t.Fatal(err)
		}
	}
	return pg
}

func firstDiff(got, want []string) string {
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("at %d: view %q, PostgreSQL %q", i, g, w)
		}
	}
	return "none"
}
