package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkPointStatements measures the per-statement cost of the session
// path (binding, the session actor's requests, a point read) without a
// durable commit in the loop: on memory:// storage, a point SELECT in
// autocommit, and a point UPDATE inside an open transaction (rolled back
// every 1,000 statements). Compare builds by running it in each:
//
//	go test ./engine -run '^$' -bench PointStatements -benchtime 3000x -count 3
//
// cpu-µs/op is the process's CPU time (client included) per statement.
func BenchmarkPointStatements(b *testing.B) {
	url := startServerB(b, "memory://")
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	for _, s := range []string{"CREATE TABLE pt (k int PRIMARY KEY, v int)", "INSERT INTO pt SELECT g, 0 FROM generate_series(1, 1000) g"} {
		if _, err := c.Exec(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	// pgx prepares each new text (Parse, Describe) and runs it (Bind,
	// Execute): a statement with its literal in the text.
	b.Run("select", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			if _, err := c.Exec(ctx, fmt.Sprintf("SELECT v FROM pt WHERE k = %d", i%1000+1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// One Query message per statement, as psql and pgbench -M simple send.
	b.Run("select-simple", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			if _, err := c.Exec(ctx, fmt.Sprintf("SELECT v FROM pt WHERE k = %d", i%1000+1), pgx.QueryExecModeSimpleProtocol); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A prepared statement run with a parameter (pgbench -M prepared).
	b.Run("select-prepared", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			if _, err := c.Exec(ctx, "SELECT v FROM pt WHERE k = $1", i%1000+1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("update-in-transaction", func(b *testing.B) {
		defer reportCPU(b)()
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			if i%1000 == 999 {
				if _, err := c.Exec(ctx, "ROLLBACK; BEGIN"); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := c.Exec(ctx, fmt.Sprintf("UPDATE pt SET v = v + 1 WHERE k = %d", i%1000+1)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			b.Fatal(err)
		}
	})
}

// reportCPU reports allocations and the process's CPU time (server and
// client: both run in this process) per operation from now until the
// returned func is called; CPU time is steadier than ns/op on a busy
// machine.
func reportCPU(b *testing.B) func() {
	b.ReportAllocs()
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
