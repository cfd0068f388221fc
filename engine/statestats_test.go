package engine_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestViewStateSurvivesRestart (issue O2 item 6): a view's state rows and
// bytes are stored, not recomputed: right after a restart, before any
// commit, SHOW VIEW STATUS, rockstream_catalog.views, /metrics and
// EXPLAIN ANALYZE INCREMENTAL show the numbers they showed before it.
func TestViewStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	a, stop := serveHTTPAt(t, dir)
	url := "postgres://rockstream@" + a.pg + "/default?sslmode=disable"
	rs := connect(t, url)
	exec(t, rs, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g")
	exec(t, rs, "INSERT INTO t SELECT i, i % 7 FROM generate_series(1, 100) i")
	rowsText(t, rs, "SELECT * FROM v")
	state := func() (string, string, string) {
		t.Helper()
		show := strings.Join(rowsText(t, rs, "SELECT state_rows, state_bytes FROM rockstream_catalog.views WHERE name = 'v'"), ",")
		m := grepLines(metricsText(t, a), `{view="v"}`)
		metrics := strings.Join(regexp.MustCompile(`rockstream_view_state_(rows|bytes)\{view="v"\} \d+`).FindAllString(m, -1), ",")
		explain := ""
		for _, l := range explainLines(t, rs, "EXPLAIN ANALYZE INCREMENTAL v") {
			if strings.Contains(l, "aggregate") {
				explain = regexp.MustCompile(`state \d+ rows \d+ bytes`).FindString(l)
			}
		}
		return show, metrics, explain
	}
	show, metrics, explain := state()
	if show != "7|"+strings.Split(show, "|")[1] || strings.HasSuffix(show, "|0") {
		t.Fatalf("state of a view over 7 groups before the restart: %q", show)
	}
	if metrics == "" || explain == "" {
		t.Fatalf("before the restart: /metrics %q, EXPLAIN ANALYZE %q", metrics, explain)
	}
	stop()
	a, _ = serveHTTPAt(t, dir)
	rs = connect(t, "postgres://rockstream@"+a.pg+"/default?sslmode=disable")
	show2, metrics2, explain2 := state()
	if show2 != show || metrics2 != metrics || explain2 != explain {
		t.Fatalf("after a restart:\n  views %q, /metrics %q, EXPLAIN %q\nbefore:\n  views %q, /metrics %q, EXPLAIN %q",
			show2, metrics2, explain2, show, metrics, explain)
	}
}
