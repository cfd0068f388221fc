package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestCancelStopsEvaluation: cancelling a statement's context while its
// evaluation runs (what CancelRequest, statement_timeout and a shutdown
// do) makes Execute return 57014 instead of the finished result, and the
// abandoned evaluation stops at its next interruption point.
func TestCancelStopsEvaluation(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Store: objstore.NewMemory(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	gs, err := e.NewSession(ctx, gateway.SessionInfo{Database: "default", User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, sql string) error {
		st, err := gs.Prepare(ctx, gateway.PrepareRequest{SQL: sql})
		if err != nil {
			return err
		}
		cur, err := gs.Execute(ctx, gateway.ExecuteRequest{Statement: st})
		if err != nil {
			return err
		}
		for {
			if _, err := cur.Next(ctx); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	}
	var vals []string
	for i := 1; i <= 100; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	for _, sql := range []string{`CREATE TABLE t (k int PRIMARY KEY)`, `INSERT INTO t VALUES ` + strings.Join(vals, ",")} {
		if err := run(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if err := gs.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithCancel(ctx)
	go func() {
		// Cancel once the evaluation runs (the read of t is done by then).
		for e.metrics.QueriesRunning.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	err = run(qctx, `SELECT sum(a.k * b.k + c.k) FROM t a, t b, t c`)
	if e, ok := errcode.As(err); !ok || e.State() != "57014" {
		t.Fatalf("cancelled query: %v, want 57014", err)
	}
	// The abandoned evaluation stops (at the latest at its next operator).
	deadline := time.Now().Add(2 * time.Minute)
	for e.metrics.QueriesRunning.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled evaluation is still running")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := run(ctx, `SELECT count(*) FROM t`); err != nil {
		t.Fatalf("session after a cancelled statement: %v", err)
	}
}
