package engine_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// serveHTTPAt runs a server with its HTTP endpoint over storage dir and
// returns its addresses and a function that stops it gracefully (the
// test's cleanup stops it too). A new store has ROCKSTREAM_TEST_SHARDS
// shards.
func serveHTTPAt(t *testing.T, dir string) (httpServer, func()) {
	t.Helper()
	shards, err := enginetest.Shards()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan httpServer, 1)
	done := make(chan error, 1)
	go func() {
		done <- engine.Serve(ctx, engine.ServerOptions{
			Storage: dir, Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Shards: shards,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
			Ready: func(pg, h string) { ready <- httpServer{pg, h} },
		})
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	select {
	case a := <-ready:
		return a, stop
	case err := <-done:
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("server did not start")
	}
	return httpServer{}, stop
}

// metricsText is the server's /metrics page.
func metricsText(t *testing.T, a httpServer) string {
	t.Helper()
	resp, err := http.Get("http://" + a.http + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// requireMetrics fails unless /metrics has every line of want.
func requireMetrics(t *testing.T, a httpServer, want ...string) {
	t.Helper()
	m := metricsText(t, a)
	for _, w := range want {
		if !strings.Contains(m, w) {
			t.Fatalf("/metrics lacks %q:\n%s", w, grepLines(m, "rockstream_view_"))
		}
	}
}

// grepLines are the lines of text containing s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestFreshnessTarget (issue O2 item 4): a view's freshness_target is set
// by CREATE ... WITH, changed by ALTER ... SET, removed by RESET, kept
// across a restart, and a view that keeps up shows it met in SHOW VIEW
// STATUS, rockstream_catalog.views and /metrics.
func TestFreshnessTarget(t *testing.T) {
	dir := t.TempDir()
	a, stop := serveHTTPAt(t, dir)
	rs := connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	exec(t, rs, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW v WITH (freshness_target = '1s') AS SELECT g, count(*) FROM t GROUP BY g")
	exec(t, rs, "CREATE MATERIALIZED VIEW plain AS SELECT count(*) FROM t")
	exec(t, rs, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)")
	rowsText(t, rs, "SELECT * FROM v") // waits until the view reflects the insert

	check := func(want ...string) {
		t.Helper()
		got := strings.Join(rowsText(t, rs, "SELECT name, freshness_target, freshness_met, freshness_reason, freshness_lag IS NOT NULL FROM rockstream_catalog.views WHERE kind = 'materialized' ORDER BY name"), ",")
		if w := strings.Join(want, ","); got != w {
			t.Fatalf("rockstream_catalog.views freshness:\n got %s\nwant %s", got, w)
		}
		var show []string
		res, err := rs.PgConn().Exec(context.Background(), "SHOW VIEW STATUS").ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		cols := map[string]int{}
		for i, f := range res[0].FieldDescriptions {
			cols[f.Name] = i
		}
		text := func(v []byte) string {
			if v == nil {
				return "NULL"
			}
			return string(v)
		}
		for _, row := range res[0].Rows {
			lagKnown := "f"
			if row[cols["freshness_lag"]] != nil {
				lagKnown = "t"
			}
			show = append(show, strings.Join([]string{text(row[cols["name"]]), text(row[cols["freshness_target"]]), text(row[cols["freshness_met"]]), text(row[cols["freshness_reason"]]), lagKnown}, "|"))
		}
		sort.Strings(show)
		if got := strings.Join(show, ","); got != strings.Join(want, ",") {
			t.Fatalf("SHOW VIEW STATUS freshness:\n got %s\nwant %s", got, strings.Join(want, ","))
		}
	}
	check("plain|NULL|NULL|NULL|t", "v|00:00:01|t|NULL|t")
	requireMetrics(t, a,
		`rockstream_view_freshness_target_seconds{view="v"} 1`+"\n",
		`rockstream_view_freshness_target_met{view="v"} 1`+"\n",
		`rockstream_view_freshness_lag_seconds{view="v"} 0`+"\n",
		`rockstream_view_freshness_lag_seconds{view="plain"} 0`+"\n")
	if m := metricsText(t, a); strings.Contains(m, `rockstream_view_freshness_target_met{view="plain"}`) || strings.Contains(m, "rockstream_view_freshness_missed{") {
		t.Fatalf("/metrics judges a view without a target, or reports a miss:\n%s", grepLines(m, "freshness"))
	}

	exec(t, rs, "ALTER MATERIALIZED VIEW v SET (freshness_target = '500ms')")
	exec(t, rs, "ALTER MATERIALIZED VIEW plain SET (freshness_target = '2 minutes')")
	check("plain|00:02:00|t|NULL|t", "v|00:00:00.5|t|NULL|t")
	exec(t, rs, "ALTER MATERIALIZED VIEW plain RESET (freshness_target)")
	check("plain|NULL|NULL|NULL|t", "v|00:00:00.5|t|NULL|t")
	for _, bad := range []string{
		"ALTER MATERIALIZED VIEW v SET (freshness_target = '0')",
		"ALTER MATERIALIZED VIEW v SET (freshness_target = '2 days')",
		"ALTER MATERIALIZED VIEW v SET (freshness_target = 'soon')",
		"CREATE MATERIALIZED VIEW w WITH (freshness_target = '-1s') AS SELECT 1",
		"ALTER MATERIALIZED VIEW v SET (freshnes_target = '1s')",
	} {
		if _, err := rs.Exec(context.Background(), bad); sqlState(err) != "22023" {
			t.Fatalf("%s: %v, want SQLSTATE 22023", bad, err)
		}
	}

	// The target is in the durable catalog: a restart keeps it.
	stop()
	a, _ = serveHTTPAt(t, dir)
	rs = connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	rowsText(t, rs, "SELECT * FROM v")
	check("plain|NULL|NULL|NULL|t", "v|00:00:00.5|t|NULL|t")
}

// TestFreshnessTargetMissedWhileBackfilling (issue O2 item 4): a view
// whose backfill is still running misses its target and says why,
// instead of silently lagging: freshness_met false and freshness_reason
// 'backfilling' in SHOW VIEW STATUS, rockstream_catalog.views and
// /metrics (rockstream_view_freshness_missed{reason="backfilling"}).
func TestFreshnessTargetMissedWhileBackfilling(t *testing.T) {
	a, _ := serveHTTPAt(t, t.TempDir())
	url := "postgres://rockstream@" + a.pg + "/default?sslmode=disable"
	conn := dialPgx(t, url)
	for _, sql := range []string{
		`CREATE TABLE big (a int PRIMARY KEY)`,
		`INSERT INTO big SELECT generate_series(1, 2000)`,
	} {
		if _, err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	creator := dialPgx(t, url)
	created := make(chan error, 1)
	go func() {
		// ln at a thousand digits costs a large fraction of a second a
		// row: the backfill runs for minutes, far past the target.
		_, err := creator.Exec(context.Background(), `CREATE MATERIALIZED VIEW v WITH (freshness_target = '1s') AS SELECT a, ln(1e-1000 + a) AS l FROM big`)
		created <- err
	}()
	awaitBackfilling(t, conn, created)
	got := rowsText(t, conn, "SELECT name, state, freshness_target, freshness_met, freshness_reason, freshness_lag FROM rockstream_catalog.views")
	if want := "v|backfilling|00:00:01|f|backfilling|NULL"; strings.Join(got, ",") != want {
		t.Fatalf("rockstream_catalog.views of a backfilling view: %q, want %q", got, want)
	}
	requireMetrics(t, a,
		`rockstream_view_freshness_target_met{view="v"} 0`+"\n",
		`rockstream_view_freshness_missed{reason="backfilling",view="v"} 1`+"\n")
	// The CREATE is cancelled: the test does not wait minutes for it.
	if err := creator.PgConn().CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-created:
		if sqlState(err) != "57014" {
			t.Fatalf("the cancelled CREATE: %v, want 57014", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the cancelled CREATE did not end")
	}
}
