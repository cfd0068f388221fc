// Package enginetest starts in-process RockStream servers (engine.Start,
// the same code as `rockstream start`) for tests: the engine's end-to-end
// tests and the correctness harness share it.
//
//	srv := enginetest.StartServer(t, t.TempDir())  // stopped when t ends
//	conn, _ := pgx.Connect(ctx, srv.URL)
package enginetest

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// startTimeout bounds a server's start-up (catalog load and view
// hydration); past it the test fails instead of hanging.
const startTimeout = 60 * time.Second

// Server is an in-process `rockstream start` on a loopback port.
type Server struct {
	// URL is a postgres:// connection string for the server's pgwire port.
	URL string
	run *engine.Running
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

// Start boots a server over storage; the caller stops it. A new store is
// laid out over ROCKSTREAM_TEST_SHARDS shards (default 1), so every suite
// can run against several shards: ROCKSTREAM_TEST_SHARDS=3 go test ./...
// With ROCKSTREAM_TEST_PARTITIONED=1 its tables are partitioned too
// (StartPartitioned).
func Start(storage string) (*Server, error) {
	shards, err := Shards()
	if err != nil {
		return nil, err
	}
	if Partitioned() {
		return StartPartitioned(storage, shards)
	}
	return StartShards(storage, shards)
}

// Partitioned reports ROCKSTREAM_TEST_PARTITIONED=1: the test servers'
// new stores partition their tables (--partition-tables).
func Partitioned() bool { return os.Getenv("ROCKSTREAM_TEST_PARTITIONED") == "1" }

// StartShards boots a server whose new store has the given shards.
func StartShards(storage string, shards int) (*Server, error) {
	return StartClock(storage, shards, nil)
}

// StartPartitioned boots a server whose new store has the given shards
// with its tables partitioned over the first half of them
// (engine.Config.PartitionTables).
func StartPartitioned(storage string, shards int) (*Server, error) {
	return start(engine.ServerOptions{Storage: storage, Shards: shards, PartitionTables: true})
}

// StartClock boots a server whose new store has the given shards and
// whose time is clock (nil: the wall clock), so a test drives the time
// materialized views' temporal filters and now() see.
func StartClock(storage string, shards int, clock func() time.Time) (*Server, error) {
	return start(engine.ServerOptions{Storage: storage, Shards: shards, Clock: clock})
}

// StartStages starts a server whose new materialized views are planned
// with exchange stages (engine.Config.ExchangeStages).
func StartStages(storage string, shards int) (*Server, error) {
	return start(engine.ServerOptions{Storage: storage, Shards: shards, ExchangeStages: true})
}

// start boots a server with opts on a free loopback port, its log and
// output discarded.
func start(opts engine.ServerOptions) (*Server, error) {
	opts.Listen = "127.0.0.1:0"
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Out = io.Discard
	run, err := engine.Start(opts, startTimeout)
	if err != nil {
		return nil, err
	}
	return &Server{URL: run.URL, run: run}, nil
}

// Shards is ROCKSTREAM_TEST_SHARDS (1 when unset).
func Shards() (int, error) {
	v := os.Getenv("ROCKSTREAM_TEST_SHARDS")
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 64 {
		return 0, fmt.Errorf("ROCKSTREAM_TEST_SHARDS=%q: want a number of shards from 1 to 64", v)
	}
	return n, nil
}

// Stop shuts the server down gracefully and waits for it; safe to call
// twice.
func (s *Server) Stop() { _ = s.run.Stop(0) }
