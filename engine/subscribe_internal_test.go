package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestSubscribeSlowConsumer: a subscriber that stops reading while many
// epochs close fills its bounded queue (4 updates here); the shard then
// keeps it behind in the view's change history and, once it reads again,
// catches it up from there with every change exactly once. A view that
// keeps no history cannot do that: its slow subscriber is ended with
// RS-2020 instead of growing a buffer.
func TestSubscribeSlowConsumer(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Config{Store: objstore.NewMemory(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SubscriberQueueUpdatesMax: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	open := func() gateway.Session {
		gs, err := e.NewSession(ctx, gateway.SessionInfo{Database: "default", User: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return gs
	}
	start := func(gs gateway.Session, sql string) gateway.Cursor {
		t.Helper()
		cur, err := startStatement(ctx, gs, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return cur
	}
	run := func(sql string) {
		t.Helper()
		if _, err := execSQL(ctx, e, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	run("CREATE TABLE s (id int PRIMARY KEY)")
	run("CREATE MATERIALIZED VIEW kept AS SELECT id FROM s")
	run("CREATE MATERIALIZED VIEW unkept WITH (retain_history = '0') AS SELECT id FROM s")
	keptSub := start(open(), "SUBSCRIBE kept WITH (SNAPSHOT = false)")
	unkeptSub := start(open(), "SUBSCRIBE unkept WITH (SNAPSHOT = false)")
	defer keptSub.Close()
	defer unkeptSub.Close()
	const inserts = 40
	for i := 1; i <= inserts; i++ {
		run(fmt.Sprintf("INSERT INTO s VALUES (%d)", i))
	}
	// A bound on the reads, so a lost change fails the test instead of
	// waiting forever.
	readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	seen := map[int64]int{}
	var last int64
	for len(seen) < inserts {
		row, err := keptSub.Next(readCtx)
		if err != nil {
			t.Fatalf("after %d changes: %v", len(seen), err)
		}
		epoch := row[0].(int64)
		if epoch < last {
			t.Fatalf("epoch went back from %d to %d", last, epoch)
		}
		last = epoch
		if !row[1].(bool) {
			if row[2].(int64) != 1 {
				t.Fatalf("change %v: want a +1 insertion", row)
			}
			seen[row[3].(int64)]++
		}
	}
	for id, n := range seen {
		if n != 1 || id < 1 || id > inserts {
			t.Fatalf("id %d arrived %d times", id, n)
		}
	}
	for {
		_, err := unkeptSub.Next(readCtx)
		if err == nil {
			continue
		}
		if e, ok := errcode.As(err); !ok || e.Code != errcode.SubscriberTooSlow {
			t.Fatalf("the slow subscriber of a view without history ended with %v, want RS-2020", err)
		}
		break
	}
}

// startStatement prepares and executes one statement on a session and
// returns its cursor.
func startStatement(ctx context.Context, gs gateway.Session, sql string) (gateway.Cursor, error) {
	st, err := gs.Prepare(ctx, gateway.PrepareRequest{SQL: sql})
	if err != nil {
		return nil, err
	}
	return gs.Execute(ctx, gateway.ExecuteRequest{Statement: st})
}
