package gateway

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// emfileListener is a real loopback listener whose Accept first fails
// with EMFILE the given number of times, as accept4 does when the process
// is out of file descriptors.
type emfileListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
	seen  int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.fails > 0 {
		l.fails--
		l.seen++
		l.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAcceptSurvivesEMFILE: before, the first EMFILE from accept made
// Serve return, and the whole server exit ("accept4: too many open
// files"). Now the error is retried with back-off, logged once for the
// burst, and clients are served once descriptors are available again.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &emfileListener{Listener: inner, fails: 8}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ln, testEngine, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	}()
	c, err := pgconn.Connect(ctx, connTo(inner.Addr().String(), "user=postgres sslmode=disable connect_timeout=20"))
	if err != nil {
		cancel()
		t.Fatalf("connect after EMFILE: %v (Serve: %v)", err, <-done)
	}
	if got := scalar(t, c, "select 1"); got != "1" {
		t.Errorf("select 1 = %q", got)
	}
	c.Close(ctx)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if ln.seen != 8 {
		t.Errorf("accept failed %d times, want 8", ln.seen)
	}
	if n := strings.Count(logs.String(), "accept failed"); n != 1 {
		t.Errorf("%d accept-failure log lines for one burst, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "failed_accepts=8") {
		t.Errorf("no recovery line:\n%s", logs.String())
	}
}

// TestAcceptStopsOnPermanentError: a closed listener still ends Serve.
func TestAcceptStopsOnPermanentError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := Serve(context.Background(), ln, testEngine, Options{}); err == nil {
		t.Fatal("Serve on a closed listener returned nil")
	}
}

// TestIdleSocketsCountAgainstTheLimit: sockets that never send a startup
// packet hold connection slots (a client over the limit gets 53300) until
// the startup timeout closes them.
func TestIdleSocketsCountAgainstTheLimit(t *testing.T) {
	const limit = 3
	addr := startServer(t, Options{MaxConnections: limit, StartupTimeout: 500 * time.Millisecond})
	var idle []net.Conn
	for range limit {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		idle = append(idle, nc)
	}
	// The server closes each idle socket after the startup timeout; wait
	// for that (bounded: a socket left open fails the test).
	for i, nc := range idle {
		_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("idle socket %d: %v, want EOF from the startup timeout", i, err)
		}
	}
	// With every slot free again, clients connect.
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, connTo(addr, "user=postgres sslmode=disable"))
	if err != nil {
		t.Fatalf("after the idle sockets closed: %v", err)
	}
	c.Close(ctx)

	// And while idle sockets hold every slot, a client is refused with
	// 53300 (PostgreSQL's "sorry, too many clients already").
	addr = startServer(t, Options{MaxConnections: limit})
	for range limit {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
	}
	// The listen backlog is first in, first out: the idle sockets are
	// accepted before this client.
	_, err = pgconn.Connect(ctx, connTo(addr, "user=postgres sslmode=disable"))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "53300" || pe.Message != "sorry, too many clients already" {
		t.Errorf("over the limit: %v, want 53300 sorry, too many clients already", err)
	}
}
