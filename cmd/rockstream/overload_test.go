package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// overloadBudgetBytes is the memory budget the overload test gives the
// server; the test fails if the process's peak RSS exceeds it by more than
// overloadSlack.
const (
	overloadBudgetBytes = 256 << 20
	overloadSlack       = 1.25
	overloadWriters     = 4
	overloadDuration    = 8 * time.Second
)

// TestOverload: writers far faster than maintenance (a self-join view whose
// work grows with every row) are slowed, not failed, and the process stays
// within its memory budget; afterwards every view has caught up.
func TestOverload(t *testing.T) {
	bin := buildBinary(t)
	p := startProcess(t, bin, t.TempDir(), fmt.Sprintf("--memory-budget=%d", overloadBudgetBytes))
	defer p.kill9()
	ctx := context.Background()
	setup, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE t (id bigint PRIMARY KEY, g int NOT NULL, payload text)",
		"CREATE MATERIALIZED VIEW pairs AS SELECT a.g, count(*) AS n FROM t a JOIN t b ON a.g = b.g GROUP BY a.g",
		"CREATE MATERIALIZED VIEW per_g AS SELECT g, count(*) AS n, max(length(payload)) AS len FROM t GROUP BY g",
	} {
		if _, err := setup.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			if rss := residentBytes(t, p.cmd.Process.Pid); rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	var commits, failures atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(overloadDuration)
	var writers sync.WaitGroup
	payload := strings.Repeat("x", 200)
	for w := 0; w < overloadWriters; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			conn, err := pgx.Connect(ctx, p.url)
			if err != nil {
				failures.Add(1)
				firstErr.Store(err)
				return
			}
			defer conn.Close(ctx)
			for batch := 0; time.Now().Before(deadline); batch++ {
				var sb strings.Builder
				sb.WriteString("INSERT INTO t VALUES ")
				for i := 0; i < 200; i++ {
					id := int64(w)<<40 | int64(batch)<<10 | int64(i)
					if i > 0 {
						sb.WriteString(",")
					}
					fmt.Fprintf(&sb, "(%d, %d, '%s')", id, id%10, payload)
				}
				if _, err := conn.Exec(ctx, sb.String()); err != nil {
					failures.Add(1)
					firstErr.Store(err)
					return
				}
				commits.Add(1)
			}
		}(w)
	}
	writers.Wait()
	// Every view catches up with what was committed.
	var want, got int64
	if err := setup.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&want); err != nil {
		t.Fatal(err)
	}
	if err := setup.QueryRow(ctx, "SELECT sum(n) FROM per_g").Scan(&got); err != nil {
		t.Fatal(err)
	}
	var pairsWant, pairsGot int64
	if err := setup.QueryRow(ctx, "SELECT sum(c * c) FROM (SELECT count(*) AS c FROM t GROUP BY g) s").Scan(&pairsWant); err != nil {
		t.Fatal(err)
	}
	if err := setup.QueryRow(ctx, "SELECT sum(n) FROM pairs").Scan(&pairsGot); err != nil {
		t.Fatal(err)
	}
	close(stopSampling)
	sampler.Wait()
	setup.Close(ctx)
	if f := failures.Load(); f != 0 {
		t.Fatalf("%d writers failed (writers must be slowed, not failed): %v", f, firstErr.Load())
	}
	if got != want || pairsGot != pairsWant {
		t.Fatalf("views did not catch up: per_g %d rows of %d, pairs %d of %d", got, want, pairsGot, pairsWant)
	}
	limit := int64(overloadBudgetBytes * overloadSlack)
	t.Logf("%d commits of 200 rows by %d writers in %v; peak RSS %d MiB (budget %d MiB)", commits.Load(), overloadWriters, overloadDuration, peak.Load()>>20, overloadBudgetBytes>>20)
	if peak.Load() > limit {
		t.Fatalf("peak RSS %d MiB exceeds the budget of %d MiB by more than %.0f%%", peak.Load()>>20, overloadBudgetBytes>>20, (overloadSlack-1)*100)
	}
	if commits.Load() < overloadWriters {
		t.Fatalf("only %d commits: the workload did not run", commits.Load())
	}
}

// residentBytes reads a process's resident set size from /proc.
func residentBytes(t *testing.T, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
