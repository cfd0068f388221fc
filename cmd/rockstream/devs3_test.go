package main

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/slate/objstore"
	"github.com/rockstream/rockstream/slate/objstore/objstoretest"
	"github.com/rockstream/rockstream/slate/objstore/s3store"
)

// lineWriter hands each line written to it to a channel (a command's
// output, read while the command runs).
type lineWriter struct {
	mu    sync.Mutex
	buf   string
	lines chan string
}

func newLineWriter() *lineWriter { return &lineWriter{lines: make(chan string, 64)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf += string(p)
	for {
		i := strings.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		select {
		case w.lines <- w.buf[:i]:
		default: // nobody reads any more
		}
		w.buf = w.buf[i+1:]
	}
}

// waitLine returns the first line containing want.
func (w *lineWriter) waitLine(t *testing.T, want string, run *running) string {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case line := <-w.lines:
			if strings.Contains(line, want) {
				return line
			}
		case <-run.exited:
			t.Fatalf("command exited before printing %q: %v", want, run.err)
		case <-deadline:
			t.Fatalf("no line with %q within 90s", want)
		}
	}
}

// running is a command running in-process.
type running struct {
	exited chan struct{} // closed when it returned
	err    error         // what it returned, once exited
}

// runCommand runs the root command with args in-process until the
// returned stop is called (it waits for the command to return).
func runCommand(t *testing.T, args ...string) (out *lineWriter, run *running, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newRootCommand()
	out = newLineWriter()
	cmd.SetOut(out)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	run = &running{exited: make(chan struct{})}
	go func() {
		run.err = cmd.ExecuteContext(ctx)
		close(run.exited)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-run.exited:
				if run.err != nil {
					t.Errorf("rockstream %s: %v", strings.Join(args, " "), run.err)
				}
			case <-time.After(60 * time.Second):
				t.Errorf("rockstream %s did not stop within 60s", strings.Join(args, " "))
			}
		})
	}
	t.Cleanup(stop)
	return out, run, stop
}

// startDevS3 runs `rockstream dev s3` and returns the --storage URL and the
// environment it printed.
func startDevS3(t *testing.T, args ...string) (storage string, env map[string]string, stop func()) {
	t.Helper()
	out, run, stop := runCommand(t, append([]string{"dev", "s3", "--listen=127.0.0.1:0"}, args...)...)
	exports := out.waitLine(t, "export ", run)
	env = map[string]string{}
	for _, kv := range strings.Fields(strings.TrimSpace(exports))[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("export line %q: %q is not NAME=value", exports, kv)
		}
		env[k] = v
	}
	line := out.waitLine(t, "rockstream start --storage '", run)
	_, rest, _ := strings.Cut(line, "--storage '")
	storage, _, _ = strings.Cut(rest, "'")
	return storage, env, stop
}

// TestDevS3Conformance: the file-backed server passes the object store
// conformance suite through our S3 client (conditional writes atomic,
// listings, ranges, concurrent readers and writers).
func TestDevS3Conformance(t *testing.T) {
	objstoretest.Run(t, func(t *testing.T) objstore.Store {
		storage, env, _ := startDevS3(t, "--dir="+t.TempDir())
		cfg, err := s3store.ParseURL(storage)
		if err != nil {
			t.Fatal(err)
		}
		cfg.AccessKeyID, cfg.SecretAccessKey = env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
		s, err := s3store.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, objstoretest.Capabilities{IdenticalBytesSameVersion: true})
}

// TestDevS3StartRestart follows the printed instructions: with the
// exported variables set, `rockstream start --storage '<printed URL>'`
// runs on the local server; a table and a view created there read back
// after both RockStream and the S3 server restart (on another port, so
// with the URL it prints then).
func TestDevS3StartRestart(t *testing.T) {
	dir := t.TempDir()
	storage, env, stopS3 := startDevS3(t, "--dir="+dir, "--bucket=rsdev")
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		if env[v] == "" {
			t.Fatalf("dev s3 printed no %s: %v", v, env)
		}
		t.Setenv(v, env[v])
	}
	if !strings.HasPrefix(storage, "s3://rsdev/") || !strings.Contains(storage, "path_style=true") {
		t.Fatalf("printed storage URL %q", storage)
	}
	start := func(storage string) (*pgx.Conn, func()) {
		out, run, stop := runCommand(t, "start", "--storage="+storage, "--listen=127.0.0.1:0", "--http=")
		line := out.waitLine(t, "postgres://", run)
		i := strings.Index(line, "postgres://")
		url := strings.TrimSuffix(line[i:], "\"") + "?sslmode=disable"
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		return c, func() { _ = c.Close(context.Background()); stop() }
	}
	c, stop := start(storage)
	execPG(t, c, "CREATE TABLE t (id int PRIMARY KEY, g text)")
	execPG(t, c, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'a')")
	execPG(t, c, "CREATE MATERIALIZED VIEW v AS SELECT g, count(*) AS n FROM t GROUP BY g")
	wantT, wantV := "1|a\n2|b\n3|a", "a|2\nb|1"
	if got := joinRows(queryText(t, c, "SELECT * FROM v ORDER BY g")); got != wantV {
		t.Fatalf("view before restart: %s, want %s", got, wantV)
	}
	stop()
	stopS3()

	storage, _, _ = startDevS3(t, "--dir="+dir, "--bucket=rsdev")
	c, _ = start(storage)
	if got := joinRows(queryText(t, c, "SELECT * FROM t ORDER BY id")); got != wantT {
		t.Fatalf("table after restart: %s, want %s", got, wantT)
	}
	if got := joinRows(queryText(t, c, "SELECT * FROM v ORDER BY g")); got != wantV {
		t.Fatalf("view after restart: %s, want %s", got, wantV)
	}
}

// TestDevS3RefusesNonLoopback: the server checks no credentials, so it
// does not serve a network.
func TestDevS3RefusesNonLoopback(t *testing.T) {
	err := serveDevS3(context.Background(), devS3Options{Listen: "0.0.0.0:0", Bucket: "b"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("got %v, want a loopback-only refusal", err)
	}
}
