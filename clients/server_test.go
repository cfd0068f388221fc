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
	"github.com/rockstream/rockstream/internal/enginetest"
)

// startServer runs an in-process `rockstream start` on a fresh local
// storage directory and returns it as a gatewaytest.Server.
func startServer(t *testing.T) gatewaytest.Server {
	t.Helper()
	host, port, _, _ := serve(t, engine.ServerOptions{Storage: t.TempDir()})
	return gatewaytest.Server{Host: host, Port: port, User: "rockstream", Database: "default", Notices: true}
}

// serve runs engine.Serve with opts on a fresh loopback port until the
// test ends or stop is called, and returns the pgwire host and port and
// the HTTP address (when opts.HTTP is set).
func serve(t *testing.T, opts engine.ServerOptions) (host, port, httpAddr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	opts.Listen = "127.0.0.1:0"
	if opts.Shards == 0 {
		// ROCKSTREAM_TEST_SHARDS: the client matrix over several shards.
		n, err := enginetest.Shards()
		if err != nil {
			t.Fatal(err)
		}
		opts.Shards = n
		opts.PartitionTables = enginetest.Partitioned()
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Out = io.Discard
	opts.Ready = func(pg, http string) { ready <- [2]string{pg, http} }
	go func() { done <- engine.Serve(ctx, opts) }()
	var addrs [2]string
	select {
	case addrs = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("server did not start within 60s")
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	host, port, err := net.SplitHostPort(addrs[0])
	if err != nil {
		t.Fatal(err)
	}
	return host, port, addrs[1], stop
}
