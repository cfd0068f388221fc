package clients_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
	"github.com/rockstream/rockstream/gateway/gatewaytest"
)

// startServer runs an in-process `rockstream start` on a fresh local
// storage directory and returns it as a gatewaytest.Server.
func startServer(t *testing.T) gatewaytest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	storage := t.TempDir()
	go func() {
		done <- engine.Serve(ctx, engine.ServerOptions{
			Storage: storage,
			Listen:  "127.0.0.1:0",
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			Out:     io.Discard,
			Ready:   func(pg, _ string) { ready <- pg },
		})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start within 60s")
	}
	t.Cleanup(func() { cancel(); <-done })
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return gatewaytest.Server{Host: host, Port: port, User: "rockstream", Database: "default", Notices: true}
}
