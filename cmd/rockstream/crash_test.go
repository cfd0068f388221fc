package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// crashCycles is how many times the crash test kills the server (the
// acceptance criterion of issue F6 asks for at least 20).
const crashCycles = 20

// process is a `rockstream start` child process.
type process struct {
	cmd *exec.Cmd
	url string
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rockstream")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func startProcess(t *testing.T, bin, storage string, extra ...string) *process {
	t.Helper()
	p, err := launch(bin, storage, nil, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// launch starts `rockstream start` on storage (extra flags appended),
// its stderr to stderr (nil: discarded), and returns once it printed its
// connection URL, within 60s.
func launch(bin, storage string, stderr io.Writer, extra ...string) (*process, error) {
	args := append([]string{"start", "--storage=" + storage, "--listen=127.0.0.1:0", "--http="}, extra...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				return nil, fmt.Errorf("rockstream exited before it was ready (%v)", cmd.ProcessState)
			}
			if i := strings.Index(line, "postgres://"); i >= 0 {
				url := strings.TrimSuffix(line[i:], "\"")
				return &process{cmd: cmd, url: url + "?sslmode=disable"}, nil
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			return nil, fmt.Errorf("rockstream was not ready within 60s")
		}
	}
}

func (p *process) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// TestCrashKill9 commits multi-row, two-table transactions in a loop while
// the server is killed with SIGKILL at random moments and restarted. After
// every restart: every acknowledged commit is present, every unacknowledged
// one is present entirely or not at all, and every view equals PostgreSQL
// 15's answer over the same committed data. It runs over one shard and
// over four (tables on one, views fed through the exchange on another).
func TestCrashKill9(t *testing.T) {
	bin := buildBinary(t)
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { crashKill9(t, bin, shards) })
	}
}

func crashKill9(t *testing.T, bin string, shards int) {
	storage := t.TempDir()
	// --shards lays out a new store; later starts keep its layout.
	p := startProcess(t, bin, storage, fmt.Sprintf("--shards=%d", shards))
	defer func() { p.kill9() }()
	ctx := context.Background()
	setup, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE a (id int PRIMARY KEY, v int NOT NULL)",
		"CREATE TABLE b (id bigint PRIMARY KEY, a_id int, w int)",
		"CREATE TABLE counter (id int PRIMARY KEY, n bigint NOT NULL)",
		"INSERT INTO counter VALUES (0, 0)",
		"CREATE MATERIALIZED VIEW per_a AS SELECT a.id, a.v, count(b.id) AS nb, sum(b.w) AS sw FROM a JOIN b ON b.a_id = a.id GROUP BY a.id, a.v",
		"CREATE MATERIALIZED VIEW by_v AS SELECT v, count(*) AS n FROM a GROUP BY v",
	} {
		if _, err := setup.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	setup.Close(ctx)
	views := map[string]string{
		"per_a": "SELECT a.id, a.v, count(b.id) AS nb, sum(b.w) AS sw FROM a JOIN b ON b.a_id = a.id GROUP BY a.id, a.v",
		"by_v":  "SELECT v, count(*) AS n FROM a GROUP BY v",
	}
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	acked := map[int]bool{}
	inDoubt := map[int]bool{}
	next := 1
	for cycle := 0; cycle < crashCycles; cycle++ {
		var mu sync.Mutex
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, p.url)
			if err != nil {
				return
			}
			defer conn.Close(ctx)
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				i := next
				next++
				inDoubt[i] = true
				mu.Unlock()
				_, err := conn.PgConn().Exec(ctx, fmt.Sprintf(
					"BEGIN; INSERT INTO a VALUES (%d, %d); INSERT INTO b VALUES (%d, %d, %d), (%d, %d, %d); UPDATE counter SET n = n + 1 WHERE id = 0; COMMIT",
					i, i%7, int64(i)*10+1, i, i%13, int64(i)*10+2, i, i%5)).ReadAll()
				mu.Lock()
				if err == nil {
					delete(inDoubt, i)
					acked[i] = true
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Duration(50+rnd.IntN(400)) * time.Millisecond)
		p.kill9()
		close(stop)
		wg.Wait()
		p = startProcess(t, bin, storage)
		verifyAfterCrash(t, p.url, acked, inDoubt, views, cycle)
	}
	if len(acked) < crashCycles {
		t.Fatalf("only %d transactions were acknowledged over %d cycles: the workload did not run", len(acked), crashCycles)
	}
	t.Logf("%d cycles, %d acknowledged commits, %d in doubt", crashCycles, len(acked), len(inDoubt))
}

func verifyAfterCrash(t *testing.T, url string, acked, inDoubt map[int]bool, views map[string]string, cycle int) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("cycle %d: reconnect: %v", cycle, err)
	}
	defer conn.Close(ctx)
	present := map[int]int{} // a.id → number of b rows
	rows := queryText(t, conn, "SELECT id FROM a")
	for _, r := range rows {
		var id int
		fmt.Sscan(r[0], &id)
		present[id] = 0
	}
	for _, r := range queryText(t, conn, "SELECT a_id FROM b") {
		var id int
		fmt.Sscan(r[0], &id)
		if _, ok := present[id]; !ok {
			t.Fatalf("cycle %d: b row for transaction %d without its a row: a partial transaction", cycle, id)
		}
		present[id]++
	}
	for id, nb := range present {
		if nb != 2 {
			t.Fatalf("cycle %d: transaction %d has %d of its 2 b rows", cycle, id, nb)
		}
		if !acked[id] && !inDoubt[id] {
			t.Fatalf("cycle %d: transaction %d is present but was never sent", cycle, id)
		}
		if inDoubt[id] {
			// It committed: its acknowledgement was lost in the crash.
			delete(inDoubt, id)
			acked[id] = true
		}
	}
	for id := range acked {
		if _, ok := present[id]; !ok {
			t.Fatalf("cycle %d: acknowledged transaction %d is lost", cycle, id)
		}
	}
	for id := range inDoubt {
		delete(inDoubt, id) // absent: it did not commit
	}
	counter := queryText(t, conn, "SELECT n FROM counter")
	if len(counter) != 1 || counter[0][0] != fmt.Sprint(len(present)) {
		t.Fatalf("cycle %d: counter %v, want %d (one increment per committed transaction)", cycle, counter, len(present))
	}
	// Views equal PostgreSQL over the same committed data.
	pg := pgtest.Connect(t)
	schema := fmt.Sprintf("crash_%d_%d", os.Getpid(), cycle)
	execPG(t, pg, "CREATE SCHEMA "+schema+"; SET search_path = "+schema+"; CREATE TABLE a (id int PRIMARY KEY, v int NOT NULL); CREATE TABLE b (id bigint PRIMARY KEY, a_id int, w int)")
	defer execPG(t, pg, "DROP SCHEMA "+schema+" CASCADE")
	copyTable(t, conn, pg, "a", "SELECT id, v FROM a")
	copyTable(t, conn, pg, "b", "SELECT id, a_id, w FROM b")
	for name, q := range views {
		got := joinRows(queryText(t, conn, "SELECT * FROM "+name))
		want := joinRows(queryText(t, pg, q))
		if got != want {
			t.Fatalf("cycle %d: view %s differs from PostgreSQL\n got: %s\nwant: %s", cycle, name, got, want)
		}
	}
}

func queryText(t *testing.T, c *pgx.Conn, sql string) [][]string {
	t.Helper()
	out, err := query(c, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func joinRows(rows [][]string) string {
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = strings.Join(r, "|")
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func execPG(t *testing.T, c *pgx.Conn, sql string) {
	t.Helper()
	if _, err := c.PgConn().Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// copyTable copies the rows a RockStream query returns into a PostgreSQL
// table (text values, NULL kept).
func copyTable(t *testing.T, from, to *pgx.Conn, table, query string) {
	t.Helper()
	rows := queryText(t, from, query)
	if len(rows) == 0 {
		return
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " VALUES ")
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("(")
		for j, v := range r {
			if j > 0 {
				sb.WriteString(",")
			}
			if v == "NULL" {
				sb.WriteString("NULL")
			} else {
				sb.WriteString("'" + strings.ReplaceAll(v, "'", "''") + "'")
			}
		}
		sb.WriteString(")")
	}
	execPG(t, to, sb.String())
}
