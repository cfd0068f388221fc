package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// lockedBuffer is a bytes.Buffer written by the progress goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSQLShowsProgress: `rockstream sql` running a CREATE MATERIALIZED VIEW
// over existing rows shows the fill's phase and percent while it runs, and
// the statement's result when it ends.
func TestSQLShowsProgress(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	ctx := context.Background()
	var out bytes.Buffer
	if err := runSQL(ctx, srv.URL, "CREATE TABLE t (id int PRIMARY KEY, b int); INSERT INTO t SELECT g, g % 97 FROM generate_series(1, 400000) g", &out); err != nil {
		t.Fatal(err)
	}
	var progressOut lockedBuffer
	p := &progress{out: &progressOut, every: 20 * time.Millisecond}
	out.Reset()
	if err := runSQLWith(ctx, srv.URL, "CREATE MATERIALIZED VIEW v AS SELECT b, count(*) AS n, max(id) AS top FROM t GROUP BY b", &out, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "CREATE MATERIALIZED VIEW") {
		t.Fatalf("result: %q", out.String())
	}
	got := progressOut.String()
	if !strings.Contains(got, "filling v: reading inputs [") || !strings.Contains(got, "%, ") || !strings.Contains(got, "input rows") {
		t.Fatalf("no progress of the fill was shown:\n%s", got)
	}
	// And nothing for a short statement.
	progressOut = lockedBuffer{}
	p = &progress{out: &progressOut, every: time.Second}
	if err := runSQLWith(ctx, srv.URL, "SELECT count(*) FROM v", &out, p); err != nil {
		t.Fatal(err)
	}
	if got := progressOut.String(); got != "" {
		t.Fatalf("progress shown for a short statement: %q", got)
	}
}
