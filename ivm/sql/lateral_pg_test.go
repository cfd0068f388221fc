package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// lateralSchema has array and jsonb columns for functions in FROM.
const lateralSchema = `CREATE TABLE t (a int PRIMARY KEY, b int, c text, tags int[], doc jsonb);
CREATE TABLE u (k int PRIMARY KEY, v int, g text)`

// lateralQueries are functions in FROM referencing the FROM items to
// their left and LATERAL subqueries: each is maintained as a materialized
// view through random inserts, updates and deletes and run ad hoc, and
// both must equal PostgreSQL 15 after every step.
//
//lint:immutable a constant table of test queries.
var lateralQueries = []string{
	`SELECT t.a, x FROM t, unnest(t.tags) AS x`,
	`SELECT t.a, u.x, u.n FROM t, unnest(t.tags) WITH ORDINALITY AS u(x, n)`,
	`SELECT t.a, s.x, s.y FROM t, unnest(t.tags, ARRAY[t.c, 'z']) AS s(x, y)`,
	`SELECT a, g FROM t, generate_series(1, t.b) AS g`,
	`SELECT a, g FROM t CROSS JOIN generate_series(t.b, 3, 2) AS g WHERE g > 0`,
	`SELECT a, s, u.g FROM t, generate_series(t.b, t.b + a % 3) s JOIN u ON u.k = s`,
	`SELECT t.a, g, x FROM t, generate_series(0, t.b) AS g, unnest(t.tags) AS x WHERE x >= g`,
	`SELECT t.a, e FROM t, jsonb_array_elements(t.doc -> 'l') AS e`,
	`SELECT t.a, e.value FROM t, jsonb_array_elements_text(t.doc -> 'l') AS e`,
	`SELECT t.a, kv.key, kv.value FROM t, jsonb_each(t.doc) AS kv`,
	`SELECT t.a, key, value FROM t, jsonb_each_text(t.doc) WHERE key <> 'l'`,
	`SELECT t.a, k FROM t, jsonb_object_keys(t.doc) AS k`,
	`SELECT t.a, x FROM t LEFT JOIN LATERAL unnest(t.tags) AS x ON true`,
	`SELECT t.a, x, o FROM t LEFT JOIN LATERAL unnest(t.tags) WITH ORDINALITY AS s(x, o) ON x > t.b`,
	`SELECT t.a, x FROM t JOIN LATERAL unnest(t.tags) AS x ON x <> t.b`,
	`SELECT x, count(*), sum(t.a) FROM t, unnest(t.tags) AS x GROUP BY x`,
	`SELECT DISTINCT x FROM t, unnest(t.tags) AS x`,
	`SELECT t.a, l FROM t, lower(t.c) AS l`,
	`SELECT t.a, g FROM generate_series(1, 3) AS g, t WHERE t.b = g`,
	`SELECT t.a, s.v, s.g FROM t, LATERAL (SELECT u.v, u.g FROM u WHERE u.k = t.b) s`,
	`SELECT t.a, s.v FROM t, LATERAL (SELECT u.v FROM u WHERE u.k > t.b AND u.g = t.c) s`,
	`SELECT t.a, s.v FROM t LEFT JOIN LATERAL (SELECT u.v FROM u WHERE u.k < t.b) s ON true`,
	`SELECT t.a, s.v FROM t LEFT JOIN LATERAL (SELECT u.v FROM u WHERE u.g = t.c) s ON s.v > t.b`,
	`SELECT t.a, s.n, s.total FROM t, LATERAL (SELECT count(*) AS n, sum(u.v) AS total FROM u WHERE u.g = t.c) s`,
	`SELECT t.a, s.n, s.m FROM t LEFT JOIN LATERAL (SELECT count(u.v) AS n, max(u.v) + 1 AS m FROM u WHERE u.k = t.b) s ON true`,
	`SELECT t.a, s.n FROM t, LATERAL (SELECT count(*) AS n FROM u WHERE u.g = t.c HAVING count(*) > 1) s`,
	`SELECT t.a, s.n, s.m FROM t LEFT JOIN LATERAL (SELECT count(*) AS n, min(u.k) AS m FROM u WHERE u.g = t.c HAVING count(*) > 1) s ON true`,
	`SELECT t.a, s.n, s.m FROM t LEFT JOIN LATERAL (SELECT count(*) AS n, min(u.k) AS m FROM u WHERE u.g = t.c) s ON s.m < t.a`,
	`SELECT t.a, s.g, s.n FROM t, LATERAL (SELECT u.g, count(*) AS n FROM u WHERE u.v = t.b GROUP BY u.g) s`,
	`SELECT t.a, s.g, s.n FROM t LEFT JOIN LATERAL (SELECT u.g, sum(u.k) AS n FROM u WHERE u.v = t.b GROUP BY u.g HAVING sum(u.k) > 1) s ON true`,
	`SELECT t.a, s.v, s.k FROM t, LATERAL (SELECT u.v, u.k FROM u WHERE u.g = t.c ORDER BY u.v DESC NULLS LAST, u.k LIMIT 2) s`,
	`SELECT t.a, s.k FROM t LEFT JOIN LATERAL (SELECT u.k FROM u WHERE u.v = t.b ORDER BY u.k OFFSET 1) s ON true`,
	`SELECT t.a, s.k, s.v FROM t, LATERAL (SELECT u.k, u.v FROM u WHERE u.g = t.c ORDER BY u.k LIMIT 1) s`,
	`SELECT t.a, s.k FROM t LEFT JOIN LATERAL (SELECT u.k FROM u WHERE u.v = t.b AND u.g = t.c ORDER BY u.k LIMIT 1 OFFSET 1) s ON s.k > t.a`,
	`SELECT t.a, s.w, s.k FROM t, LATERAL (SELECT u.v + t.a AS w, u.k FROM u WHERE u.k = t.b) s`,
	`SELECT t.a, s.w, s.one FROM t LEFT JOIN LATERAL (SELECT coalesce(u.v, t.a) AS w, 1 AS one FROM u WHERE u.g = t.c) s ON s.w > 0`,
	`SELECT t.a, s.x, s.y FROM t, LATERAL (SELECT t.a * 2 AS x, t.c || 'q' AS y) s`,
	`SELECT t.a, s.x FROM t LEFT JOIN LATERAL (SELECT t.b AS x) s ON s.x > 1`,
	`WITH RECURSIVE r(a, n) AS (SELECT a, b FROM t UNION SELECT r.a, g FROM r, generate_series(r.n + 1, r.n + 2) AS g WHERE r.n < 4) SELECT a, n FROM r`,
	`WITH RECURSIVE r(a, n) AS (SELECT a, 0 FROM t UNION ALL SELECT r.a, x FROM r, unnest(ARRAY[r.n + 1, r.n + 2]) AS x WHERE r.n < 3) SELECT a, n, count(*) FROM r GROUP BY a, n`,
	`SELECT t.a, s.v FROM t, LATERAL (SELECT DISTINCT u.v FROM u WHERE u.g = t.c) s`,
	`SELECT t.a, s.g, s.k FROM t LEFT JOIN LATERAL (SELECT DISTINCT ON (u.g) u.g, u.k FROM u WHERE u.v = t.b ORDER BY u.g, u.k DESC) s ON true`,
	`SELECT t.a, s.v, s.wv FROM t, LATERAL (SELECT u.v, w.v AS wv FROM u JOIN u AS w ON w.k = u.v AND w.g = t.c) s`,
	`SELECT t.a, s.k, s.rn, s.run FROM t LEFT JOIN LATERAL (SELECT u.k, row_number() OVER (ORDER BY u.k) AS rn, sum(u.v) OVER (ORDER BY u.k) AS run FROM u WHERE u.g = t.c) s ON true`,
	`SELECT t.a, s.k, s.r FROM t, LATERAL (SELECT u.k, rank() OVER (PARTITION BY u.v ORDER BY u.k DESC) AS r FROM u WHERE u.g = t.c) s WHERE s.r = 1`,
	`SELECT t.a, s.k, s.rn, s.run FROM t, LATERAL (SELECT u.k, row_number() OVER (ORDER BY u.k DESC) AS rn, sum(u.v) OVER (ORDER BY u.k) AS run FROM u WHERE u.g = t.c) s`,
	`SELECT t.a, s.x, s.n FROM t, LATERAL (SELECT x, count(*) AS n FROM unnest(t.tags) AS x GROUP BY x) s`,
	`SELECT t.a, s.total, s.n FROM t LEFT JOIN LATERAL (SELECT sum(x) AS total, count(x) AS n FROM unnest(t.tags) AS x WHERE x > t.b) s ON true`,
	`SELECT t.a, s.x FROM t LEFT JOIN LATERAL (SELECT x FROM unnest(t.tags) AS x ORDER BY x DESC LIMIT 1) s ON true`,
	`SELECT t.a, s.x, s.v FROM t, LATERAL (SELECT x, u.v FROM unnest(t.tags) AS x JOIN u ON u.k = x WHERE u.g = t.c) s`,
	`SELECT t.a, s.v, s.x FROM t, LATERAL (SELECT u.v, x FROM u JOIN generate_series(0, t.b) AS x ON u.k = x) s`,
	`SELECT t.a, s.key FROM t LEFT JOIN LATERAL (SELECT DISTINCT key FROM jsonb_each(t.doc)) s ON s.key <> 'l'`,
	`SELECT t.a, s.x FROM t, LATERAL (SELECT x FROM unnest(ARRAY[t.b, t.b]) AS x) s`,
	`SELECT d.c, s.n FROM (SELECT DISTINCT c FROM t) d, LATERAL (SELECT count(*) AS n FROM t WHERE t.c = d.c) s`,
}

// lateralRefused are forms views refuse at DDL time, naming the construct.
//
//lint:immutable a constant table of test queries.
var lateralRefused = map[string]string{
	`SELECT t.a, s.v FROM t, LATERAL (SELECT u.v FROM u WHERE u.k > t.b ORDER BY u.v LIMIT 1) s`:        "LATERAL subqueries with LIMIT/OFFSET over a non-equality correlation",
	`SELECT t.a, s.v FROM t, LATERAL (SELECT DISTINCT u.v FROM u WHERE u.k > t.b) s`:                    "LATERAL subqueries with DISTINCT",
	`SELECT t.a, s.n FROM t, LATERAL (SELECT count(*) AS n FROM u WHERE u.k > t.b) s`:                   "LATERAL subqueries aggregating over a non-equality correlation",
	`SELECT t.a, s.v FROM t, LATERAL (SELECT u.v FROM u LEFT JOIN u AS w ON w.k = u.v AND w.v = t.b) s`: "LATERAL subqueries correlated in a JOIN condition",
}

func TestLateralAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	for i, q := range lateralQueries {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkLateral(t, conn, q, int64(7000+i))
		})
	}
}

func TestLateralRefused(t *testing.T) {
	e := newEngine()
	if _, err := e.exec(lateralSchema); err != nil {
		t.Fatal(err)
	}
	for q, construct := range lateralRefused { //lint:maprange each entry is checked independently
		_, err := sql.CompileView(e.cat, q)
		ce, ok := errcode.As(err)
		if !ok || ce.Code != errcode.UnsupportedSQLConstruct || !strings.Contains(ce.Message, construct) {
			t.Errorf("%s: want RS-2001 naming %q, got %v", q, construct, err)
		}
	}
}

// randomLateralChange is one random upsert or delete by key, as SQL.
func randomLateralChange(r *rand.Rand) []string {
	null := func(s string) string {
		if r.Intn(6) == 0 {
			return "NULL"
		}
		return s
	}
	small := func() string { return null(fmt.Sprint(r.Intn(5) - 1)) }
	text := func() string { return null([]string{"'x'", "'y'", "'z'"}[r.Intn(3)]) }
	if r.Intn(2) == 0 {
		k := r.Intn(6)
		out := []string{fmt.Sprintf("DELETE FROM u WHERE k = %d", k)}
		if r.Intn(3) != 0 {
			out = append(out, fmt.Sprintf("INSERT INTO u VALUES (%d, %s, %s)", k, small(), text()))
		}
		return out
	}
	a := r.Intn(6)
	out := []string{fmt.Sprintf("DELETE FROM t WHERE a = %d", a)}
	if r.Intn(3) == 0 {
		return out
	}
	var tags []string
	for i := r.Intn(4); i > 0; i-- {
		tags = append(tags, null(fmt.Sprint(r.Intn(4))))
	}
	tagLit := null("'{" + strings.Join(tags, ", ") + "}'::int[]")
	var docs = []string{`'{"l": [1, "two", null, {"z": 3}], "n": 2}'`, `'{"l": []}'`, `'{"a": "x", "b": {"c": [1]}, "l": [true]}'`, `'{}'`, `'{"l": ["a", "b"], "z": null}'`}
	doc := null(docs[r.Intn(len(docs))] + "::jsonb")
	return append(out, fmt.Sprintf("INSERT INTO t VALUES (%d, %s, %s, %s, %s)", a, small(), text(), tagLit, doc))
}

// storeDelta is the change to every relation's rows between two
// snapshots of the store.
func storeDelta(before, after map[catalog.ID][]types.Row) map[catalog.ID]zset.Batch {
	out := map[catalog.ID]zset.Batch{}
	add := func(rows map[catalog.ID][]types.Row, w int64) {
		for id, rs := range rows { //lint:maprange batches are consolidated per relation
			b := out[id]
			for _, r := range rs {
				b.Add(r, w)
			}
			out[id] = b
		}
	}
	add(before, -1)
	add(after, 1)
	for id, b := range out { //lint:maprange batches are consolidated per relation
		out[id] = zset.Consolidate(b)
	}
	return out
}

func snapshotStore(e *engine) map[catalog.ID][]types.Row {
	out := map[catalog.ID][]types.Row{}
	for id, rs := range e.store.Rows { //lint:maprange copied per relation
		out[id] = append([]types.Row(nil), rs...)
	}
	return out
}

func checkLateral(t *testing.T, conn *pgx.Conn, query string, seed int64) {
	pgExec(t, conn, "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u")
	pgExec(t, conn, lateralSchema)
	e := newEngine()
	if _, err := e.exec(lateralSchema); err != nil {
		t.Fatal(err)
	}
	view, err := sql.CompileView(e.cat, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	q, err := sql.CompileQuery(e.cat, query, sql.Options{})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	ts := make([]types.Type, len(view.Columns))
	for i, c := range view.Columns {
		ts[i] = c.Type
	}
	b := circuit.NewBuilder()
	var next circuit.SourceID
	srcs := incr.NewSources(func(*catalog.Relation) circuit.SourceID { next++; return next })
	out, err := incr.Build(b, view.Plan, srcs, lower.Lowerer{})
	if err != nil {
		t.Fatal(err)
	}
	b.Sink(1, out)
	c, err := b.Build(circuit.Config{ID: 1, Env: env()})
	if err != nil {
		t.Fatal(err)
	}
	store := kv.NewMemory()
	r := rand.New(rand.NewSource(seed))
	for step := 0; step < 12; step++ {
		inputs := map[circuit.SourceID]zset.Batch{}
		if step == 0 {
			for _, k := range srcs.Constants {
				batch, err := k.Batch(env())
				if err != nil {
					t.Fatal(err)
				}
				inputs[k.ID] = batch
			}
		} else {
			before := snapshotStore(e)
			for n := 1 + r.Intn(6); n > 0; n-- {
				for _, stmt := range randomLateralChange(r) {
					pgExec(t, conn, stmt)
					if _, err := e.exec(stmt); err != nil {
						t.Fatalf("%s: %v", stmt, err)
					}
				}
			}
			for id, d := range storeDelta(before, snapshotStore(e)) { //lint:maprange one input per source
				if sid, ok := srcs.SourceID(id); ok {
					inputs[sid] = d
				}
			}
		}
		txn := kv.NewTxn(store)
		if _, err := c.Step(txn, inputs); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		want, err := pgRows(t, conn, query, false)
		if err != nil {
			t.Fatalf("postgres: %v", err)
		}
		got, err := circuit.ReadView(store, 1)
		if err != nil {
			t.Fatalf("step %d: read view: %v", step, err)
		}
		g := zset.Consolidate(got)
		var gotRows []types.Row
		for i, gr := range g.Rows {
			for k := int64(0); k < g.Weights[i]; k++ {
				gotRows = append(gotRows, gr)
			}
		}
		if s := formatResult(ts, gotRows, false); s != want {
			t.Fatalf("%s\nstep %d: incremental view differs from PostgreSQL\nrockstream:\n%spostgres:\n%s", query, step, s, want)
		}
		res, err := sql.RunQuery(q, e.store, env())
		if err != nil {
			t.Fatalf("%s: ad hoc: %v", query, err)
		}
		if s := formatResult(ts, res.Rows, false); s != want {
			t.Fatalf("%s\nstep %d: ad-hoc result differs from PostgreSQL\nrockstream:\n%spostgres:\n%s", query, step, s, want)
		}
	}
}

// lateralAdHoc are ad-hoc queries (ordered, so compared in order) with
// functions in FROM and LATERAL in places views do not take them, and
// jsonb set-returning functions failing on the wrong kind of document:
// results, or the error's SQLSTATE, must equal PostgreSQL's.
//
//lint:immutable a constant table of test queries.
var lateralAdHoc = []string{
	`SELECT a, (SELECT sum(x) FROM unnest(t.tags) AS x) AS s FROM t ORDER BY a`,
	`SELECT a, (SELECT max(x) FROM u, unnest(ARRAY[u.k, t.a]) AS x WHERE u.v > 0) AS m FROM t ORDER BY a`,
	`SELECT a FROM t WHERE EXISTS (SELECT 1 FROM unnest(t.tags) AS x WHERE x = t.b) ORDER BY a`,
	`SELECT t.a, x, n FROM t, unnest(t.tags) WITH ORDINALITY AS s(x, n) ORDER BY t.a, n`,
	`SELECT t.a, e FROM t, jsonb_array_elements(t.doc -> 'l') AS e ORDER BY 1, 2`,
	`SELECT a, jsonb_array_elements_text(doc -> 'l') AS e, jsonb_object_keys(doc) AS k FROM t ORDER BY 1, 2, 3`,
	`SELECT * FROM jsonb_each('{"b": 1, "a": [2, {"c": null}], "aa": "x"}'::jsonb) ORDER BY key`,
	`SELECT * FROM jsonb_each_text('{"b": 1, "a": [2], "n": null, "s": "x"}') AS j(k, v) ORDER BY k`,
	`SELECT value, count(*) FROM t, jsonb_array_elements_text(t.doc -> 'l') GROUP BY value ORDER BY 1`,
	`SELECT t.a, s.k FROM t, LATERAL (SELECT u.k FROM u WHERE u.g = t.c ORDER BY u.k DESC LIMIT 1) s ORDER BY 1`,
	`SELECT t.a, s.n FROM t LEFT JOIN LATERAL (SELECT count(*) AS n FROM u WHERE u.v = t.b) s ON true ORDER BY t.a DESC LIMIT 3`,
	`SELECT t.a, e FROM t, jsonb_array_elements(t.doc) AS e ORDER BY 1, 2`,
	`SELECT t.a, k FROM t, jsonb_object_keys(t.doc -> 'l') AS k ORDER BY 1, 2`,
	`SELECT t.a, k.key FROM t, jsonb_each(t.doc -> 'n') AS k ORDER BY 1, 2`,
	`SELECT t.a, g FROM t, generate_series(1, 3, t.b - t.b) AS g ORDER BY 1, 2`,
}

func TestLateralAdHocAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	pgExec(t, conn, "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u")
	pgExec(t, conn, lateralSchema)
	e := newEngine()
	if _, err := e.exec(lateralSchema); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(77))
	for round := 0; round < 6; round++ {
		for n := 0; n < 8; n++ {
			for _, stmt := range randomLateralChange(r) {
				pgExec(t, conn, stmt)
				if _, err := e.exec(stmt); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
		}
		for _, query := range lateralAdHoc {
			want, pgErr := pgRows(t, conn, query, true)
			q, err := sql.CompileQuery(e.cat, query, sql.Options{})
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			res, err := sql.RunQuery(q, e.store, env())
			if pgErr != nil {
				ce, ok := errcode.As(err)
				if !ok || !strings.Contains(pgErr.Error(), ce.State()) {
					t.Fatalf("%s: postgres failed with %v, rockstream with %v", query, pgErr, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", query, err)
			}
			ts := make([]types.Type, len(res.Columns))
			for k, c := range res.Columns {
				ts[k] = c.Type
			}
			if got := formatResult(ts, res.Rows, true); got != want {
				t.Fatalf("%s\nround %d: ad-hoc result differs from PostgreSQL\nrockstream:\n%spostgres:\n%s", query, round, got, want)
			}
		}
	}
}
