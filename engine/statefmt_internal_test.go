package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/storage"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/slate/objstore"
)

// TestViewStateFormatAcrossRestarts, with the real planner: (1) a restart
// of the same build rebuilds no view — every kind of stateful operator's
// format record is the same when the view is planned again; (2) views
// whose stored format record is not this build's (here a marker written
// before records, as earlier builds wrote it) are rebuilt from the base
// tables at start-up, the views reading them too, and answer exactly as
// before.
func TestViewStateFormatAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	open := func() *Engine { return openQuiet(t, Config{Store: store}) }
	run := func(e *Engine, sql string) string { return mustSQL(t, e, sql) }
	views := map[string]string{
		"agg":    `SELECT g, count(*) AS n, sum(b) AS sb, avg(b) AS ab, sum(f) AS sf, bool_or(b > 0) AS bo FROM t GROUP BY g`,
		"mm":     `SELECT g, min(b) AS lo, max(f) AS hi, count(DISTINCT b) AS cd, sum(f) AS sf FROM t GROUP BY g`,
		"j":      `SELECT t.g, u.name, t.b FROM t JOIN u ON t.g = u.g`,
		"lj":     `SELECT u.name, t.b FROM u LEFT JOIN t ON t.g = u.g`,
		"d":      `SELECT DISTINCT g FROM t`,
		"top":    `SELECT g, b FROM t ORDER BY b DESC LIMIT 3`,
		"w":      `SELECT g, b, row_number() OVER (PARTITION BY g ORDER BY b) AS rn FROM t`,
		"onview": `SELECT sum(n) AS total, max(sb) AS best FROM agg`,
		"ex":     `SELECT g FROM t EXCEPT SELECT g FROM u`,
	}
	names := []string{"agg", "mm", "j", "lj", "d", "top", "w", "onview", "ex"}
	e := open()
	for _, sql := range []string{
		`CREATE TABLE t (k int PRIMARY KEY, g int, b bigint, f float8)`,
		`CREATE TABLE u (g int PRIMARY KEY, name text)`,
		`INSERT INTO t VALUES (1, 1, 9223372036854775807, 1e308), (2, 1, 9223372036854775807, 0.5), (3, 2, -5, 2.5), (4, 3, 7, NULL)`,
		`INSERT INTO u VALUES (1, 'one'), (2, 'two'), (4, 'four')`,
	} {
		run(e, sql)
	}
	for _, n := range names {
		run(e, `CREATE MATERIALIZED VIEW `+n+` AS `+views[n])
	}
	run(e, `DELETE FROM t WHERE k = 3`)
	read := func(e *Engine) map[string]string {
		out := map[string]string{}
		for _, n := range names {
			rows := strings.Split(run(e, `SELECT * FROM `+n), "; ")
			slices.Sort(rows)
			out[n] = strings.Join(rows, "; ")
		}
		return out
	}
	want := read(e)
	rebuilds := func(e *Engine) uint64 {
		t.Helper()
		st, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.ViewRebuilds
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// (1) The same build again: nothing rebuilt, same answers.
	e = open()
	if n := rebuilds(e); n != 0 {
		t.Fatalf("a restart of the same build rebuilt %d views", n)
	}
	if got := read(e); !equalMaps(got, want) {
		t.Fatalf("after a restart:\n%v\nwant\n%v", got, want)
	}
	snap, err := e.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agg, _ := snap.LookupRelation([]string{"agg"})
	top, _ := snap.LookupRelation([]string{"top"})
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// (2) "Earlier builds" wrote agg's and top's state.
	db, err := storage.Open(ctx, store, "shards/0", storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b kv.WriteBatch
	for _, id := range [][16]byte{agg.ID.Object, top.ID.Object} {
		b.Ops = append(b.Ops, kv.Op{Key: append([]byte{kv.PrefixShardMeta, 'V'}, id[:]...), Value: []byte{1}})
	}
	if err := db.Apply(&b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close(ctx)
	// agg, top, and onview (it reads agg).
	if n := rebuilds(e); n != 3 {
		t.Fatalf("%d views rebuilt, want 3", n)
	}
	if got := read(e); !equalMaps(got, want) {
		t.Fatalf("after the rebuild:\n%v\nwant\n%v", got, want)
	}
	run(e, `INSERT INTO t VALUES (5, 1, 1, 1)`)
	if got := run(e, `SELECT * FROM onview`); !strings.Contains(got, "18446744073709551615") {
		t.Fatalf("onview after an insert: %s", got)
	}
}

// execSQL runs one statement in a new session and commits; it returns the
// rows formatted and joined by "; ".
// openQuiet opens an engine with cfg, its logs discarded.
func openQuiet(t *testing.T, cfg Config) *Engine {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// mustSQL runs one statement (execSQL), failing the test on an error.
func mustSQL(t *testing.T, e *Engine, sql string) string {
	t.Helper()
	out, err := execSQL(context.Background(), e, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func execSQL(ctx context.Context, e *Engine, sql string) (string, error) {
	gs, err := e.NewSession(ctx, gateway.SessionInfo{Database: "default", User: "test"})
	if err != nil {
		return "", err
	}
	defer gs.Close()
	cur, err := startStatement(ctx, gs, sql)
	if err != nil {
		return "", err
	}
	defer cur.Close()
	var rows []string
	for {
		r, err := cur.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		rows = append(rows, zset.FormatRow(r))
	}
	if err := gs.Commit(ctx); err != nil {
		return "", err
	}
	return strings.Join(rows, "; "), nil
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a { //lint:maprange comparison only
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestSpreadViewFromEarlierLayoutIsRebuilt: a spread view's parts are the
// rows its inputs' keys deal to each shard, so state dealt out otherwise
// must never be read. Here "an earlier build" spread the view over the
// view shards only, or dealt its rows out by other slots: its format
// records name no slots. At the next start every shard rebuilds its part
// from the tables (a table shard that had no part installs it afresh, as
// for a new view), and the view answers as before and keeps being
// maintained.
func TestSpreadViewFromEarlierLayoutIsRebuilt(t *testing.T) {
	ctx := context.Background()
	store := objstore.NewMemory()
	open := func() *Engine { return openQuiet(t, Config{Store: store, Shards: 3}) }
	run := func(e *Engine, sql string) string { return mustSQL(t, e, sql) }
	const read = `SELECT g, n, s FROM by_g ORDER BY g`
	e := open()
	run(e, `CREATE TABLE t (k int PRIMARY KEY, g int, b int)`)
	for i := range 60 {
		run(e, fmt.Sprintf(`INSERT INTO t VALUES (%d, %d, %d)`, i, i%11, i*7%13))
	}
	run(e, `CREATE MATERIALIZED VIEW by_g AS SELECT g, count(*) AS n, sum(b) AS s FROM t GROUP BY g`)
	want := run(e, read)
	snap, err := e.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	view, _ := snap.LookupRelation([]string{"by_g"})
	if !shard.IsSpread(view) {
		t.Fatalf("by_g is not spread over 3 shards")
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	key := append([]byte{kv.PrefixShardMeta, 'V'}, view.ID.Object[:]...)
	for _, s := range []string{"shards/0", "shards/1", "shards/2"} {
		db, err := storage.Open(ctx, store, s, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		marker, ok, err := db.Get(key)
		if err != nil || !ok || !strings.Contains(string(marker), " | spread over shards [0 1 2], slots 1+2") {
			t.Fatalf("%s: by_g's format record %q (%v, %v) does not name its slots", s, marker, ok, err)
		}
		op := kv.Op{Key: key, Value: []byte(strings.Split(string(marker), " | spread")[0])}
		if err := db.Apply(&kv.WriteBatch{Ops: []kv.Op{op}}); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	e = open()
	defer e.Close(ctx)
	if got := run(e, read); got != want {
		t.Fatalf("after the rebuild: %s, want %s", got, want)
	}
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ViewRebuilds != 3 {
		t.Fatalf("%d parts rebuilt, want 3", st.ViewRebuilds)
	}
	run(e, `UPDATE t SET b = b + 1 WHERE k < 30`)
	if got, want := run(e, `SELECT sum(s) FROM by_g`), run(e, `SELECT sum(b) FROM t`); got != want {
		t.Fatalf("after an update: view sums to %s, table %s", got, want)
	}
}
