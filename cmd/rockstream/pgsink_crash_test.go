package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// pgSinkCrashCycles is how many times the POSTGRES sink's crash test kills
// the server (per shard layout).
const pgSinkCrashCycles = 10

// pgSinkKeys is the number of groups of the sinks' view.
const pgSinkKeys = 20

// TestPostgresSinkCrashKill9 writes a grouped view into a PostgreSQL 15
// database through two sinks, one upsert and one append, while a writer
// inserts into the view's table (and now and then deletes a whole group)
// and the server is killed with SIGKILL pgSinkCrashCycles times — often in
// the middle of a sink transaction — and restarted. Then:
//
//   - the upsert table equals the view exactly;
//   - the append table replays, key by key in epoch order, as the view's
//     change history exactly once: every deleted row is the key's row
//     inserted last (a skipped epoch or one written twice breaks the
//     chain), no (epoch, row) appears twice, and the rows left equal the
//     view.
//
// It runs over one shard and over four (the view on another shard than
// its table, fed through the exchange).
func TestPostgresSinkCrashKill9(t *testing.T) {
	bin := buildBinary(t)
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) { pgSinkCrashKill9(t, bin, shards) })
	}
}

func pgSinkCrashKill9(t *testing.T, bin string, shards int) {
	url, pg := pgtest.Database(t)
	execPG(t, pg, `CREATE TABLE groups (k int PRIMARY KEY, n bigint NOT NULL, total bigint NOT NULL)`)
	execPG(t, pg, `CREATE TABLE groups_log (k int NOT NULL, n bigint NOT NULL, total bigint NOT NULL, rockstream_epoch bigint NOT NULL, rockstream_diff bigint NOT NULL)`)

	storage := t.TempDir()
	// --shards lays out a new store; later starts keep its layout.
	p := startProcess(t, bin, storage, fmt.Sprintf("--shards=%d", shards))
	defer func() { p.kill9() }()
	ctx := context.Background()
	rs, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE events (id bigint PRIMARY KEY, k int NOT NULL, v int NOT NULL)`,
		`CREATE MATERIALIZED VIEW groups AS SELECT k, count(*) AS n, sum(v) AS total FROM events GROUP BY k`,
		fmt.Sprintf(`CREATE SINK groups_up FROM groups INTO POSTGRES (connection = '%s', table = 'groups', mode = 'upsert', key = 'k')`, url),
		fmt.Sprintf(`CREATE SINK groups_log FROM groups INTO POSTGRES (connection = '%s', table = 'groups_log', mode = 'append')`, url),
	} {
		if _, err := rs.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rs.Close(ctx)

	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	var nextID int64
	var mu sync.Mutex
	writes := 0
	for cycle := 0; cycle < pgSinkCrashCycles; cycle++ {
		// The writer runs until the kill cuts it off.
		var wg sync.WaitGroup
		wg.Add(1)
		go func(url string, seed uint64) {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				return
			}
			defer conn.Close(ctx)
			w := rand.New(rand.NewPCG(seed, 1))
			for {
				sql := ""
				if w.IntN(10) == 0 {
					sql = fmt.Sprintf("DELETE FROM events WHERE k = %d", w.IntN(pgSinkKeys))
				} else {
					mu.Lock()
					id := nextID
					nextID += 5
					mu.Unlock()
					var vals []string
					for i := int64(0); i < 5; i++ {
						vals = append(vals, fmt.Sprintf("(%d, %d, %d)", id+i, w.IntN(pgSinkKeys), 1+w.IntN(100)))
					}
					sql = "INSERT INTO events VALUES " + strings.Join(vals, ", ")
				}
				if _, err := conn.Exec(ctx, sql); err != nil {
					return
				}
				mu.Lock()
				writes++
				mu.Unlock()
			}
		}(p.url, rnd.Uint64())
		time.Sleep(time.Duration(300+rnd.IntN(1200)) * time.Millisecond)
		p.kill9()
		wg.Wait()
		p = startProcess(t, bin, storage)
	}

	conn, err := pgx.Connect(ctx, p.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	want := joinRows(queryText(t, conn, "SELECT k, n, total FROM groups ORDER BY k"))
	const logSum = `SELECT k, n, total FROM groups_log GROUP BY k, n, total HAVING sum(rockstream_diff) <> 0 ORDER BY k`
	deadline := time.Now().Add(60 * time.Second)
	for {
		up, log := joinRows(queryText(t, pg, "SELECT k, n, total FROM groups ORDER BY k")), joinRows(queryText(t, pg, logSum))
		if up == want && log == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d crashes the sinks' tables differ from the view\nupsert: %s\nappend: %s\n  view: %s", pgSinkCrashCycles, up, log, want)
		}
		time.Sleep(100 * time.Millisecond)
	}

	if dup := queryText(t, pg, `SELECT rockstream_epoch, k, n, total, count(*) FROM groups_log GROUP BY 1, 2, 3, 4 HAVING count(*) > 1 LIMIT 5`); len(dup) > 0 {
		t.Fatalf("rows appended twice at one epoch (epoch, k, n, total, copies): %v", dup)
	}
	// Replay the log key by key: at each epoch a key's row is deleted
	// (-1) and/or inserted (+1), and the deleted one must be the one
	// inserted last.
	rows := queryText(t, pg, `SELECT k, rockstream_epoch, rockstream_diff, n || '/' || total FROM groups_log ORDER BY k, rockstream_epoch, rockstream_diff`)
	current := map[string]string{}
	epochs := map[string]bool{}
	for _, r := range rows {
		k, epoch, diff, row := r[0], r[1], r[2], r[3]
		epochs[epoch] = true
		switch diff {
		case "-1":
			if current[k] != row {
				t.Fatalf("key %s at epoch %s: the log deletes row %s but the key's row is %q (an epoch skipped or written twice)", k, epoch, row, current[k])
			}
			delete(current, k)
		case "1":
			if cur, ok := current[k]; ok {
				t.Fatalf("key %s at epoch %s: the log inserts row %s over row %s that was never deleted (an epoch skipped or written twice)", k, epoch, row, cur)
			}
			current[k] = row
		default:
			t.Fatalf("key %s at epoch %s: diff %s, want ±1 (one row per key)", k, epoch, diff)
		}
	}
	if len(epochs) < pgSinkCrashCycles {
		t.Fatalf("only %d epochs delivered over %d cycles", len(epochs), pgSinkCrashCycles)
	}
	t.Logf("%d SIGKILLs; %d writes; %d rows appended over %d epochs exactly once; %d groups mirrored", pgSinkCrashCycles, writes, len(rows), len(epochs), len(current))
}
