// Package enginetest starts in-process RockStream servers (engine.Serve,
// the same code as `rockstream start`) for tests: the engine's end-to-end
// tests and the correctness harness share it.
//
//	srv := enginetest.StartServer(t, t.TempDir())  // stopped when t ends
//	conn, _ := pgx.Connect(ctx, srv.URL)
package enginetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// startTimeout bounds a server's start-up (catalog load and view
// hydration); past it the test fails instead of hanging.
const startTimeout = 60 * time.Second

// Server is an in-process `rockstream start`.
type Server struct {
	// URL is a postgres:// connection string for the server's pgwire port.
	URL    string
	cancel context.CancelFunc
	done   chan error
}

// StartServer boots a server over storage (a directory, file://, or
// memory://) and stops it when t ends.
func StartServer(t testing.TB, storage string) *Server {
	t.Helper()
	s, err := Start(storage)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Start boots a server over storage; the caller stops it.
func Start(storage string) (*Server, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	s := &Server{cancel: cancel, done: make(chan error, 1)}
	go func() {
		s.done <- engine.Serve(ctx, engine.ServerOptions{
			Storage: storage,
			Listen:  "127.0.0.1:0",
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			Out:     io.Discard,
			Ready:   func(pg, _ string) { ready <- pg },
		})
	}()
	select {
	case addr := <-ready:
		s.URL = "postgres://rockstream@" + addr + "/default?sslmode=disable"
		return s, nil
	case err := <-s.done:
		cancel()
		return nil, fmt.Errorf("rockstream server did not start: %v", err)
	case <-time.After(startTimeout):
		cancel()
		return nil, errors.New("rockstream server did not start within 60s")
	}
}

// Stop shuts the server down gracefully and waits for it; safe to call
// twice. It returns what Serve returned.
func (s *Server) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel = nil
}
