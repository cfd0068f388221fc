package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// TestSecondServerOnStoreRefused: a second server on the same data
// directory fails at start naming the holder, and the first keeps serving
// commits untouched (two servers used to fence each other back and forth).
func TestSecondServerOnStoreRefused(t *testing.T) {
	dir := t.TempDir()
	opts := engine.ServerOptions{
		Storage: dir, Listen: "127.0.0.1:0", HTTP: "",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Out: io.Discard,
	}
	first, err := engine.Start(opts, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(time.Minute)
	rs := connect(t, first.URL)
	exec(t, rs, "CREATE TABLE h (id int PRIMARY KEY)")
	exec(t, rs, "INSERT INTO h VALUES (1)")

	second, err := engine.Start(opts, time.Minute)
	if err == nil {
		second.Stop(time.Minute)
		t.Fatal("a second server started on a store in use")
	}
	for _, want := range []string{"RS-3103", "in use by pid", "--takeover"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("refusal %q lacks %q", err, want)
		}
	}
	// The first server was not disturbed: it still commits and reads.
	for i := 2; i <= 20; i++ {
		exec(t, rs, fmt.Sprintf("INSERT INTO h VALUES (%d)", i))
	}
	var n int
	if err := rs.QueryRow(context.Background(), "SELECT count(*) FROM h").Scan(&n); err != nil || n != 20 {
		t.Fatalf("first server after the refused start: count %d, err %v", n, err)
	}
	rs.Close(context.Background())
	if err := first.Stop(time.Minute); err != nil {
		t.Fatalf("first server stop: %v", err)
	}
	// Stopped cleanly, it released the store: the next start needs no wait.
	third, err := engine.Start(opts, time.Minute)
	if err != nil {
		t.Fatalf("restart after a clean stop: %v", err)
	}
	third.Stop(time.Minute)
}

// TestShutdownIsLogged: a graceful stop says so, and says when it is done,
// so an operator can tell a clean stop from a crash in the log.
func TestShutdownIsLogged(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) })
	srv, err := engine.Start(engine.ServerOptions{Storage: t.TempDir(), Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(w, nil)), Out: io.Discard}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"shutting down", "stopped: storage flushed and closed"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the log of a graceful stop lacks %q:\n%s", want, logs.String())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
