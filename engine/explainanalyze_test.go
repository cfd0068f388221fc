package engine_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestExplainAnalyzeIncremental (issue O2 item 5): EXPLAIN ANALYZE
// INCREMENTAL view shows each operator of the circuit maintaining the
// view with its exact rows in and out after known commits, its steps, its
// time and its stored state.
func TestExplainAnalyzeIncremental(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := connect(t, srv.URL)
	exec(t, rs, "CREATE TABLE t (id int PRIMARY KEY, g int)")
	exec(t, rs, "CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t WHERE id > 1 GROUP BY g")
	exec(t, rs, "INSERT INTO t VALUES (1, 1), (2, 1), (3, 2)")
	// NB: the read makes the view apply the first commit on its own, so
	// the second is a step of its own too (a shard may apply several
	// commits in one step, whose changes then consolidate).
	rowsText(t, rs, "SELECT * FROM v")
	exec(t, rs, "INSERT INTO t VALUES (4, 1)")
	rowsText(t, rs, "SELECT * FROM v")
	// Rows 1-4 enter; the filter keeps 2, 3 and 4; the aggregate emits
	// +(1,1), +(2,1), then -(1,1), +(1,2) for row 4. Three steps: the
	// backfill of the empty table and the two commits.
	want := strings.Join([]string{
		"VIEW  v  (shard N, frontier epoch N; 2 rows, state 2 rows, 66 bytes)",
		" └─ #4 aggregate  rows in 3  out 4  steps 3  time T  state 2 rows 66 bytes",
		"     └─ #3 project  rows in 3  out 3  steps 3  time T",
		"         └─ #2 filter  rows in 4  out 3  steps 3  time in its consumer (fused)",
		"             └─ #1 source t  rows in 4  out 4  steps 3  time T",
		"Counts are since the server started or the view was last rebuilt (backfill included), and over the last 16 steps once there were more; state is as stored.",
	}, "\n")
	for _, sql := range []string{"EXPLAIN ANALYZE INCREMENTAL v", "EXPLAIN (ANALYZE) INCREMENTAL v"} {
		if got := normalizeExplain(explainLines(t, rs, sql)); got != want {
			t.Fatalf("%s:\n%s\nwant\n%s", sql, got, want)
		}
	}
	// Twenty more commits of one row each, each applied on its own: over
	// the last 16 steps every operator saw 16 rows in, and the aggregate
	// replaced group 1's count each time (-old, +new).
	for id := 5; id <= 24; id++ {
		exec(t, rs, fmt.Sprintf("INSERT INTO t VALUES (%d, 1)", id))
		rowsText(t, rs, "SELECT * FROM v")
	}
	want = strings.Join([]string{
		"VIEW  v  (shard N, frontier epoch N; 2 rows, state 2 rows, 66 bytes)",
		" └─ #4 aggregate  rows in 23  out 44  steps 23  time T  state 2 rows 66 bytes  (last 16 steps: rows in 16  out 32  time T)",
		"     └─ #3 project  rows in 23  out 23  steps 23  time T  (last 16 steps: rows in 16  out 16  time T)",
		"         └─ #2 filter  rows in 24  out 23  steps 23  time in its consumer (fused)  (last 16 steps: rows in 16  out 16)",
		"             └─ #1 source t  rows in 24  out 24  steps 23  time T  (last 16 steps: rows in 16  out 16  time T)",
		"Counts are since the server started or the view was last rebuilt (backfill included), and over the last 16 steps once there were more; state is as stored.",
	}, "\n")
	if got := normalizeExplain(explainLines(t, rs, "EXPLAIN ANALYZE INCREMENTAL v")); got != want {
		t.Fatalf("after 20 more commits:\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{"EXPLAIN ANALYZE INCREMENTAL SELECT g FROM t", "EXPLAIN ANALYZE INCREMENTAL t"} {
		if _, err := rs.Exec(context.Background(), bad); sqlState(err) != "0A000" {
			t.Fatalf("%s: %v, want SQLSTATE 0A000", bad, err)
		}
	}
}

// normalizeExplain joins lines with the shard, epoch and times replaced
// (they vary with the shard layout and the machine).
func normalizeExplain(lines []string) string {
	text := strings.Join(lines, "\n")
	text = regexp.MustCompile(`shards? \d+(, \d+)*, frontier epoch \d+`).ReplaceAllString(text, "shard N, frontier epoch N")
	return regexp.MustCompile(`time \d+\.\d{3} ms`).ReplaceAllString(text, "time T")
}

// explainLines are an EXPLAIN's lines, in order.
func explainLines(t *testing.T, c *pgx.Conn, sql string) []string {
	t.Helper()
	res, err := c.PgConn().Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, row := range res[0].Rows {
		out = append(out, string(row[0]))
	}
	return out
}
