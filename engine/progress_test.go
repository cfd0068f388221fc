package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// pausedRows is a COPY source that pauses after pauseAt rows until
// resume is closed.
type pausedRows struct {
	n, total, pauseAt int
	paused            chan struct{}
	resume            chan struct{}
}

func (p *pausedRows) Next() bool {
	if p.n == p.pauseAt {
		close(p.paused)
		<-p.resume
	}
	p.n++
	return p.n <= p.total
}
func (p *pausedRows) Values() ([]any, error) {
	return []any{int32(p.n), fmt.Sprintf("row %d", p.n)}, nil
}
func (p *pausedRows) Err() error { return nil }

// TestCopyProgressSeenFromAnotherSession: while a COPY FROM STDIN runs,
// a second session sees it in pg_stat_progress_copy and
// rockstream_catalog.progress with the rows handed over so far; the rows
// vanish when it ends.
func TestCopyProgressSeenFromAnotherSession(t *testing.T) {
	srv := startServer(t, t.TempDir())
	loader, watcher := connect(t, srv.url()), connect(t, srv.url())
	exec(t, loader, "CREATE TABLE big (k int PRIMARY KEY, note text)")
	src := &pausedRows{total: 40_000, pauseAt: 25_000, paused: make(chan struct{}), resume: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := loader.CopyFrom(context.Background(), pgx.Identifier{"big"}, []string{"k", "note"}, src)
		done <- err
	}()
	<-src.paused
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	for {
		got = rowsText(t, watcher, `SELECT command, type, tuples_processed, bytes_processed > 0,
			relid = (SELECT oid FROM pg_class WHERE relname = 'big') FROM pg_stat_progress_copy`)
		if len(got) == 1 {
			f := strings.Split(got[0], "|")
			if n, _ := strconv.Atoi(f[2]); n >= 20_000 && f[0] == "COPY FROM" && f[1] == "PIPE" && f[3] == "t" && f[4] == "t" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pg_stat_progress_copy during the COPY: %v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	progress := rowsText(t, watcher, "SELECT kind, relation, phase, rows_done >= 20000, rows_total IS NULL FROM rockstream_catalog.progress")
	if fmt.Sprint(progress) != "[copy|big|copy from|t|t]" {
		t.Fatalf("rockstream_catalog.progress during the COPY: %v", progress)
	}
	close(src.resume)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rowsText(t, watcher, "SELECT count(*) FROM pg_stat_progress_copy"); got[0] != "0" {
		t.Fatalf("pg_stat_progress_copy after the COPY: %v", got)
	}
	if got := rowsText(t, watcher, "SELECT count(*) FROM big"); got[0] != "40000" {
		t.Fatalf("rows after the COPY: %v", got)
	}
}
