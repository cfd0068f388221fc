package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Running is a server started in the background by Start (tests,
// benchmarks, tools embedding RockStream).
type Running struct {
	// Addr is the pgwire listen address; URL a connection string for it.
	Addr, URL string
	// HTTPAddr is the HTTP listen address (metrics, health), when opts.HTTP
	// asked for one.
	HTTPAddr string
	cancel   context.CancelFunc
	done     chan error
}

// Start runs Serve in the background and returns once the server is ready
// (or failed to start, or did not become ready within startTimeout). The
// caller's opts.Ready, if any, is still called.
func Start(opts ServerOptions, startTimeout time.Duration) (*Running, error) {
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	r := &Running{cancel: cancel, done: make(chan error, 1)}
	userReady := opts.Ready
	opts.Ready = func(pg, http string) {
		if userReady != nil {
			userReady(pg, http)
		}
		ready <- [2]string{pg, http}
	}
	go func() { r.done <- Serve(ctx, opts) }()
	select {
	case addrs := <-ready:
		r.Addr, r.HTTPAddr = addrs[0], addrs[1]
		r.URL = "postgres://rockstream@" + r.Addr + "/default?sslmode=disable"
		return r, nil
	case err := <-r.done:
		cancel()
		return nil, fmt.Errorf("rockstream server did not start: %v", err)
	case <-time.After(startTimeout):
		cancel()
		return nil, errors.New("rockstream server did not start within " + startTimeout.String())
	}
}

// Stop shuts the server down gracefully and waits up to timeout for it
// (0: no limit); it returns what Serve returned. Safe to call twice.
func (r *Running) Stop(timeout time.Duration) error {
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.cancel = nil
	if timeout <= 0 {
		return <-r.done
	}
	select {
	case err := <-r.done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("rockstream server did not stop within %s", timeout)
	}
}
