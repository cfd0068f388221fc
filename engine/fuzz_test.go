package engine_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/engine"
)

// fuzzStatementTimeout bounds one fuzz input on the server
// (statement_timeout) and fuzzInputTimeout on the client, so that a
// SUBSCRIBE or a huge generate_series cannot stall the fuzzer.
const (
	fuzzStatementTimeout = "2s"
	fuzzInputTimeout     = 10 * time.Second
)

// fuzzSchema is created once per fuzz worker so that inputs can reach the
// binder, planner and executor with real tables and a view.
const fuzzSchema = `CREATE TABLE t (a int PRIMARY KEY, b int, c text);
CREATE TABLE u (k int PRIMARY KEY, v numeric(10,2), g text);
INSERT INTO t VALUES (1, 10, 'x'), (2, NULL, 'y'), (3, 30, NULL);
INSERT INTO u VALUES (1, 1.5, 'p'), (3, NULL, 'q');
CREATE MATERIALIZED VIEW tv AS SELECT b, count(*) FROM t GROUP BY b`

// fuzzReproducers are the statements that crashed the process or were
// silently accepted (issue 18), kept as seeds.
func fuzzReproducers() []string {
	return []string{
		"SELECT lpad('x', 2147483647)",
		"SELECT rpad('x', 2147483647, 'ab')",
		"SELECT repeat('xy', 600000000)",
		"SELECT string_agg(false, ',')",
		"SELECT " + strings.Repeat("1 + ", 25000) + "1",
		"SELECT " + strings.Repeat("'a' || ", 100000) + "'a'",
		strings.Repeat("SELECT 1 UNION ALL ", 100000) + "SELECT 1",
		"SELEC 1", "FOO", "INSRET 1", "FOO; SELECT 1",
		"SELECT 1\x00 SELECT 2",
		"SELECT array_agg(a) || array_agg(b) FROM t",
		"SELECT string_agg(c, repeat(',', 3)) FROM t",
		"COPY t TO STDOUT", "COPY (SELECT * FROM tv) TO STDOUT",
		"BEGIN; INSERT INTO t VALUES (9, 9, 'z'); SAVEPOINT s; UPDATE t SET b = b / 0; ROLLBACK TO s; COMMIT",
	}
}

// repoStatements samples the SQL of the repository's datadriven engine
// tests (ivm/sql/testdata/engine): every statement of every exec and query
// block.
func repoStatements(t testing.TB) []string {
	files, err := filepath.Glob("../ivm/sql/testdata/engine/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no datadriven SQL tests found (%v)", err)
	}
	var out []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		scanner := bufio.NewScanner(f)
		scanner.Buffer(nil, 1<<20)
		inBlock, inResult := false, false
		for scanner.Scan() {
			line := scanner.Text()
			switch {
			case line == "----":
				inBlock, inResult = false, true
			case line == "":
				inResult = false
			case inResult || strings.HasPrefix(line, "#"):
			case !inBlock:
				inBlock = true // the directive line (exec, query, error ...)
			default:
				out = append(out, line)
			}
		}
		f.Close()
		if err := scanner.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// panicLog records the gateway's "panic in handler" lines: the gateway
// recovers a panic into XX000, so a fuzz input that panics would
// otherwise pass.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (p *panicLog) Write(b []byte) (int, error) {
	if strings.Contains(string(b), "panic") {
		p.mu.Lock()
		p.panics = append(p.panics, string(b))
		p.mu.Unlock()
	}
	return len(b), nil
}

func (p *panicLog) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.panics
	p.panics = nil
	return out
}

// FuzzStatement sends arbitrary text through the whole statement path of
// an embedded server on a memory store: the gateway's statement splitting
// and classification, the parser with its depth guard, the binder, the
// planner and execution (or the gateway's own statements). No input may
// panic (even a recovered one), break the connection or stop the server
// from answering SELECT 1 afterwards. Run it with
//
//	go test -run '^$' -fuzz '^FuzzStatement$' -fuzztime 60s ./engine
func FuzzStatement(f *testing.F) {
	for _, s := range fuzzReproducers() {
		f.Add(s)
	}
	for i, s := range repoStatements(f) {
		if i%3 == 0 { // a sample keeps seed runs short
			f.Add(s)
		}
	}
	logs := &panicLog{}
	run, err := engine.Start(engine.ServerOptions{
		Storage: "memory://", Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Out: io.Discard,
		MemoryBudgetBytes: 512 << 20,
	}, 60*time.Second)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = run.Stop(0) })
	dial := func(t testing.TB) *pgconn.PgConn {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgconn.Connect(ctx, run.URL+"&statement_timeout="+fuzzStatementTimeout)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		return c
	}
	setup := dial(f)
	if _, err := setup.Exec(context.Background(), fuzzSchema).ReadAll(); err != nil {
		f.Fatal(err)
	}
	setup.Close(context.Background())
	var conn *pgconn.PgConn
	f.Fuzz(func(t *testing.T, sql string) {
		if conn == nil || conn.IsClosed() {
			conn = dial(t)
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzInputTimeout)
		_, err := conn.Exec(ctx, sql).ReadAll()
		timedOut := ctx.Err() != nil
		cancel()
		if panics := logs.take(); len(panics) > 0 {
			t.Fatalf("%q panicked in the server:\n%s", sql, strings.Join(panics, "\n"))
		}
		if conn.IsClosed() {
			if timedOut {
				conn = nil // the client gave up; not the server's fault
				return
			}
			t.Fatalf("%q: the server dropped the connection: %v", sql, err)
		}
		var pe *pgconn.PgError
		if err != nil && !errors.As(err, &pe) && strings.Contains(err.Error(), "unexpected EOF") {
			t.Fatalf("%q: %v", sql, err)
		}
		if _, err := conn.Exec(context.Background(), "ROLLBACK; SELECT 1").ReadAll(); err != nil {
			if conn.IsClosed() {
				t.Fatalf("after %q the server does not answer: %v", sql, err)
			}
		}
	})
}
