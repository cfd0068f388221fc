package engine_test

import (
	"fmt"
	"net/url"
	"os"
	osexec "os/exec"
	"regexp"
	"strings"
	"testing"
)

// pgbenchBin is Debian's PostgreSQL 15 pgbench.
const pgbenchBin = "/usr/lib/postgresql/15/bin/pgbench"

// runPgbench runs the real pgbench against a server URL.
func runPgbench(t *testing.T, serverURL string, args ...string) string {
	t.Helper()
	if _, err := os.Stat(pgbenchBin); err != nil {
		t.Fatalf("pgbench is missing (%v): apt-get install -y postgresql-15 (or postgresql-contrib-15)", err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	if user == "" {
		user = "postgres"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "postgres"
	}
	full := append([]string{"-h", u.Hostname(), "-p", u.Port(), "-U", user}, args...)
	full = append(full, db)
	cmd := osexec.Command(pgbenchBin, full...)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestPgbench runs the real pgbench: `pgbench -i -s 1` (tables without
// keys, COPY, VACUUM, ALTER TABLE ADD PRIMARY KEY on the loaded tables),
// then the default TPC-B-like script with eight clients on two threads
// for a few seconds (kept short for CI; `pgbench -c 8 -j 2 -T 30` is the
// same check run longer). Every transaction must succeed (concurrent
// updates of the one branch row wait for each other in the shard's row
// locks, as in PostgreSQL, instead of failing with 40001 or 40P01), the
// balances must add up to the deltas in pgbench_history, with one history
// row per transaction, and a materialized view over pgbench_accounts must
// equal its query. ROCKSTREAM_TEST_SHARDS=N runs it over N shards (the
// view on a view shard, fed by the exchange; CI runs 1 and 3).
func TestPgbench(t *testing.T) {
	srv := startServer(t, t.TempDir())
	runPgbench(t, srv.url(), "-i", "-s", "1", "-q")
	c := connect(t, srv.url())
	if got := rowsText(t, c, "SELECT count(*), sum(abalance) FROM pgbench_accounts"); fmt.Sprint(got) != "[100000|0]" {
		t.Fatalf("after pgbench -i: accounts %v", got)
	}
	if _, err := c.Exec(t.Context(), "INSERT INTO pgbench_accounts (aid, bid, abalance) VALUES (1, 1, 0)"); err == nil || !strings.Contains(err.Error(), "23505") {
		t.Fatalf("pgbench_accounts has no primary key after pgbench -i: duplicate insert gave %v", err)
	}
	exec(t, c, "CREATE MATERIALIZED VIEW bench_by_branch AS SELECT bid, count(*) AS n, sum(abalance) AS total FROM pgbench_accounts GROUP BY bid")
	out := runPgbench(t, srv.url(), "-c", "8", "-j", "2", "-T", "5")
	if !strings.Contains(out, "number of failed transactions: 0 ") {
		t.Fatalf("pgbench had failed transactions:\n%s", out)
	}
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)`).FindStringSubmatch(out)
	if processed == nil || processed[1] == "0" {
		t.Fatalf("pgbench processed no transactions:\n%s", out)
	}
	sums := rowsText(t, c, `SELECT (SELECT count(*) FROM pgbench_history), (SELECT sum(delta) FROM pgbench_history),
		(SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)`)
	f := strings.Split(sums[0], "|")
	if f[0] != processed[1] || f[1] != f[2] || f[1] != f[3] || f[1] != f[4] {
		t.Fatalf("history rows | sum(delta) | accounts | tellers | branches = %s: want %s rows and four equal sums", sums[0], processed[1])
	}
	got, want := rowsText(t, c, "SELECT * FROM bench_by_branch"), rowsText(t, c, "SELECT bid, count(*), sum(abalance) FROM pgbench_accounts GROUP BY bid")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view over pgbench_accounts %v, its query %v", got, want)
	}
}
