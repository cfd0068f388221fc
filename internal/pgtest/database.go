package pgtest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// databaseSeq numbers the databases of one test binary.
var databaseSeq atomic.Uint64

// Database creates a fresh database in the server (for tests that need
// their own publications and replication slots) and returns its
// connection string and an open connection to it. At the end of the test
// the database is dropped with its replication slots; register it before
// anything that replicates from it, so that stops first.
func Database(t testing.TB) (string, *pgx.Conn) {
	t.Helper()
	admin := Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("rs_db_%d_%d", time.Now().UnixNano()%1_000_000_000, databaseSeq.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	url := strings.Replace(Start(t), "/postgres?", "/"+name+"?", 1)
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("pgtest: connect to %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = c.Close(context.Background())
		dropDatabase(t, name)
	})
	return url, c
}

// dropDatabase drops a test database and its replication slots, waiting
// for the walsenders of a stopped replica to exit (a slot in use cannot
// be dropped).
func dropDatabase(t testing.TB, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := ConnString()
	if err != nil {
		t.Errorf("pgtest: %v", err)
		return
	}
	admin, err := pgx.Connect(ctx, cs)
	if err != nil {
		t.Errorf("pgtest: connect: %v", err)
		return
	}
	defer admin.Close(context.Background())
	for {
		_, err := admin.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, name)
		if err == nil {
			_, err = admin.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, name)
		}
		if err == nil {
			_, err = admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
		}
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
