package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
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
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// coverageRow is one row of docs/sql.md's query table.
type coverageRow struct {
	construct, status, example, names string
}

// readCoverage parses the first table of docs/sql.md.
func readCoverage(t *testing.T) []coverageRow {
	data, err := os.ReadFile("../../docs/sql.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []coverageRow
	inTable := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| Construct |") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if len(rows) > 0 {
				break
			}
			continue
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		const pipe = "\x00"
		cells := strings.Split(strings.ReplaceAll(line, `\|`, pipe), "|")
		if len(cells) < 6 {
			t.Fatalf("docs/sql.md: malformed row %q", line)
		}
		get := func(i int) string { return strings.TrimSpace(strings.ReplaceAll(cells[i], pipe, "|")) }
		r := coverageRow{construct: get(1), status: get(2), example: get(3), names: get(4)}
		if strings.HasPrefix(r.example, "`") && strings.HasSuffix(r.example, "`") {
			r.example = strings.Trim(r.example, "`")
		} else {
			r.example = ""
		}
		rows = append(rows, r)
	}
	if len(rows) < 20 {
		t.Fatalf("docs/sql.md: found only %d coverage rows", len(rows))
	}
	return rows
}

const coverageSchema = `CREATE TABLE t (a int PRIMARY KEY, b int, c text);
CREATE TABLE u (k int PRIMARY KEY, v int, g text)`

// pgRows runs a query on PostgreSQL and formats its rows like
// sqltest.FormatRows (text format; NULL as "NULL").
func pgRows(t *testing.T, conn *pgx.Conn, query string, ordered bool) (string, error) {
	rows, err := conn.Query(context.Background(), query, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		raw := rows.RawValues()
		parts := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		lines = append(lines, strings.Join(parts, " | "))
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if !ordered {
		sort.Strings(lines)
	}
	if len(lines) == 0 {
		return "(no rows)\n", nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

func pgExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("postgres: %s: %v", sql, err)
	}
}

// change is one random row change, applied to both engines.
type change struct {
	table  string
	key    int64
	delete bool
	row    types.Row
}

func literal(v types.Datum) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + x + "'"
	}
	return fmt.Sprint(v)
}

func randomChanges(r *rand.Rand, n int) []change {
	var out []change
	val := func() types.Datum {
		if r.Intn(5) == 0 {
			return nil
		}
		return int64(r.Intn(4))
	}
	text := func() types.Datum {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			return "x"
		}
		return "y"
	}
	for i := 0; i < n; i++ {
		c := change{table: []string{"t", "u"}[r.Intn(2)], key: int64(r.Intn(6))}
		if r.Intn(3) == 0 {
			c.delete = true
		} else {
			c.row = types.Row{c.key, val(), text()}
		}
		out = append(out, c)
	}
	return out
}

// apply applies changes (an upsert or a delete by key) to the engine's
// store and to PostgreSQL; it returns the deltas per relation.
func apply(t *testing.T, e *engine, conn *pgx.Conn, changes []change) map[catalog.ID]zset.Batch {
	deltas := map[catalog.ID]zset.Batch{}
	for _, c := range changes {
		rel, _ := e.cat.LookupRelation([]string{c.table})
		key := rel.Columns[0].Name
		d := deltas[rel.ID]
		for _, old := range e.store.Rows[rel.ID] {
			if old[0] == c.key {
				d.AddBatch(e.store.Delete(rel, []types.Row{old}), 1)
				break
			}
		}
		pgExec(t, conn, fmt.Sprintf("DELETE FROM %s WHERE %s = %d", c.table, key, c.key))
		if !c.delete {
			ins, err := e.store.Insert(rel, []types.Row{c.row})
			if err != nil {
				t.Fatal(err)
			}
			d.AddBatch(ins, 1)
			pgExec(t, conn, fmt.Sprintf("INSERT INTO %s VALUES (%s, %s, %s)", c.table, literal(c.row[0]), literal(c.row[1]), literal(c.row[2])))
		}
		deltas[rel.ID] = d
	}
	return deltas
}

func formatResult(cols []types.Type, rows []types.Row, ordered bool) string {
	return sqltest.FormatRows(cols, rows, ordered)
}

// TestCoverage keeps docs/sql.md true: supported examples give
// PostgreSQL's results both ad hoc and incrementally; unsupported ones fail
// with RS-2001 naming the construct.
func TestCoverage(t *testing.T) {
	conn := pgtest.Connect(t)
	for i, row := range readCoverage(t) {
		if row.example == "" {
			continue
		}
		row := row
		t.Run(fmt.Sprintf("%02d_%s", i, row.construct), func(t *testing.T) {
			switch row.status {
			case "unsupported":
				checkUnsupported(t, row)
			case "supported":
				checkSupported(t, conn, row, int64(i))
			default:
				t.Fatalf("docs/sql.md: status %q of %q must be supported or unsupported", row.status, row.construct)
			}
		})
	}
}

func checkUnsupported(t *testing.T, row coverageRow) {
	e := newEngine()
	if _, err := e.exec(coverageSchema); err != nil {
		t.Fatal(err)
	}
	_, err := sql.CompileView(e.cat, row.example)
	if err == nil {
		t.Fatalf("%s: compiled as a view, but docs/sql.md says unsupported", row.example)
	}
	ce, ok := errcode.As(err)
	if !ok || ce.Code != errcode.UnsupportedSQLConstruct {
		t.Fatalf("%s: want RS-2001, got %v", row.example, err)
	}
	if !strings.Contains(ce.Message, row.names) {
		t.Fatalf("%s: RS-2001 message %q does not name %q", row.example, ce.Message, row.names)
	}
}

func checkSupported(t *testing.T, conn *pgx.Conn, row coverageRow, seed int64) {
	pgExec(t, conn, "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u")
	pgExec(t, conn, coverageSchema)
	e := newEngine()
	if _, err := e.exec(coverageSchema); err != nil {
		t.Fatal(err)
	}
	view, err := sql.CompileView(e.cat, row.example)
	if err != nil {
		t.Fatalf("%s: %v", row.example, err)
	}
	q, err := sql.CompileQuery(e.cat, row.example, sql.Options{})
	if err != nil {
		t.Fatalf("%s: %v", row.example, err)
	}
	ts := make([]types.Type, len(view.Columns))
	for i, c := range view.Columns {
		ts[i] = c.Type
	}
	// The incremental circuit, stepped with every change batch.
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
	// Step 0 runs over the empty tables (a global aggregate or a grand
	// total has a row even then).
	for step := 0; step < 7; step++ {
		var deltas map[catalog.ID]zset.Batch
		if step > 0 {
			deltas = apply(t, e, conn, randomChanges(r, 2+r.Intn(6)))
		}
		inputs := map[circuit.SourceID]zset.Batch{}
		for id, d := range deltas {
			if sid, ok := srcs.SourceID(id); ok {
				inputs[sid] = d
			}
		}
		if step == 0 {
			for _, k := range srcs.Constants {
				var batch zset.Batch
				for _, cr := range k.Rows {
					vals := make(types.Row, len(cr))
					for i, x := range cr {
						if vals[i], err = x.Eval(env(), nil); err != nil {
							t.Fatal(err)
						}
					}
					batch.Add(vals, 1)
				}
				inputs[k.ID] = batch
			}
		}
		txn := kv.NewTxn(store)
		if _, err := c.Step(txn, inputs); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		// Incremental view vs PostgreSQL (a view is a set of rows: unordered).
		want, err := pgRows(t, conn, pgQuery(row.example), false)
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
			t.Fatalf("%s\nstep %d: incremental view differs from PostgreSQL\nrockstream:\n%spostgres:\n%s", row.example, step, s, want)
		}
		// Ad hoc vs PostgreSQL, in order when the query orders.
		ordered := len(q.Order) > 0
		res, err := sql.RunQuery(q, e.store, env())
		if err != nil {
			t.Fatalf("ad hoc: %v", err)
		}
		if ordered {
			if want, err = pgRows(t, conn, pgQuery(row.example), true); err != nil {
				t.Fatal(err)
			}
		}
		if s := formatResult(ts, res.Rows, ordered); s != want {
			t.Fatalf("%s\nstep %d: ad-hoc result differs from PostgreSQL\nrockstream:\n%spostgres:\n%s", row.example, step, s, want)
		}
	}
}

// pgEquivalents are PostgreSQL's forms of the supported examples whose
// construct PostgreSQL lacks: a SESSION window is a new session where the
// gap to the key's previous row reaches the gap (lag), numbered by a
// running sum, bounded by its first time and its last time plus the gap;
// a HOP window is a join with the window offsets under date_bin.
//
//lint:immutable a constant table of test queries.
var pgEquivalents = map[string]string{
	"WITH e AS (SELECT a, c, timestamp '2024-01-01' + b * interval '1 minute' AS ts FROM t) SELECT h.c, h.window_start, h.window_end, count(*) AS n, sum(a) FROM HOP(e, ts, interval '2 minutes', interval '6 minutes') AS h GROUP BY 1, 2, 3": "WITH e AS (SELECT a, c, timestamp '2024-01-01' + b * interval '1 minute' AS ts FROM t) SELECT e.c, date_bin('2 minutes', ts, '1970-01-01') - w.k * interval '2 minutes', date_bin('2 minutes', ts, '1970-01-01') - w.k * interval '2 minutes' + interval '6 minutes', count(*) AS n, sum(a) FROM e CROSS JOIN (VALUES (0), (1), (2)) AS w(k) GROUP BY 1, 2, 3",
	"WITH e AS (SELECT a, c, timestamp '2024-01-01' + b * interval '1 minute' AS ts FROM t) SELECT c, window_start, window_end, count(*) AS n, min(a) FROM SESSION(e, ts, c, interval '2 minutes') GROUP BY c, window_start, window_end": sessionPG(
		"SELECT a, c, timestamp '2024-01-01' + b * interval '1 minute' AS ts FROM t", "ts", "c", "interval '2 minutes'",
		"SELECT c, window_start, window_end, count(*) AS n, min(a) FROM s GROUP BY c, window_start, window_end"),
}

// sessionPG is PostgreSQL's form of SELECT … FROM SESSION(rel, ts, key,
// gap) AS s, rel being the query input and outer the query over s.
func sessionPG(input, ts, key, gap, outer string) string {
	return fmt.Sprintf(`WITH e AS (%[1]s),
f AS (SELECT *, CASE WHEN %[2]s - lag(%[2]s) OVER (PARTITION BY %[3]s ORDER BY %[2]s) < %[4]s THEN 0 ELSE 1 END AS new_session FROM e WHERE %[2]s IS NOT NULL AND isfinite(%[2]s)),
g AS (SELECT *, sum(new_session) OVER (PARTITION BY %[3]s ORDER BY %[2]s ROWS UNBOUNDED PRECEDING) AS session_number FROM f),
s AS (SELECT *, min(%[2]s) OVER (PARTITION BY %[3]s, session_number) AS window_start, max(%[2]s) OVER (PARTITION BY %[3]s, session_number) + %[4]s AS window_end FROM g)
%[5]s`, input, ts, key, gap, outer)
}

// pgQuery is the query PostgreSQL runs for a supported example.
func pgQuery(example string) string {
	if q, ok := pgEquivalents[example]; ok {
		return q
	}
	return example
}

// adHocOnly are queries views reject but ad-hoc execution runs (nested
// loops for correlated subqueries, volatile-free), compared with
// PostgreSQL over random data.
//
//lint:immutable a constant table of test queries.
var adHocOnly = []string{
	"SELECT a, (SELECT v FROM u WHERE u.k = t.b) FROM t ORDER BY a",
	"SELECT a FROM t WHERE c = 'x' OR EXISTS (SELECT 1 FROM u WHERE u.k = t.b AND u.v > 1) ORDER BY a",
	"SELECT a FROM t WHERE b NOT IN (SELECT v FROM u WHERE u.k <> t.a) ORDER BY a",
	"SELECT a FROM t WHERE b IN (SELECT v FROM u WHERE u.g = t.c) OR a = 0 ORDER BY a",
	"SELECT a, (SELECT max(v) FROM u WHERE u.k < t.a) FROM t ORDER BY a",
	"SELECT k FROM u WHERE v > (SELECT min(b) FROM t) ORDER BY k",
	"SELECT a, b FROM t ORDER BY b NULLS FIRST, a DESC LIMIT 4 OFFSET 1",
}

// adHocQ2 are more ad-hoc queries compared with PostgreSQL (after
// adHocArrays, so the others keep their seeds): subqueries under OR inside
// subqueries, and JSON aggregates failing on a NULL key.
//
//lint:immutable a constant table of test queries.
var adHocQ2 = []string{
	"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.b OR u.v IN (SELECT b FROM t t2 WHERE t2.c = 'x')) ORDER BY a",
	"SELECT a FROM t WHERE b IN (SELECT v FROM u WHERE u.k = t.a OR u.g IN (SELECT c FROM t t2 WHERE t2.b = t.b)) ORDER BY a",
	"SELECT json_object_agg(c, a ORDER BY a) FROM t",
	"SELECT b, jsonb_object_agg(c, a) FROM t GROUP BY b ORDER BY b",
}

func TestAdHocAgainstPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	for i, query := range append(append(adHocOnly, adHocArrays...), adHocQ2...) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			pgExec(t, conn, "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS u")
			pgExec(t, conn, coverageSchema)
			e := newEngine()
			if _, err := e.exec(coverageSchema); err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewSource(int64(100 + i)))
			for round := 0; round < 4; round++ {
				apply(t, e, conn, randomChanges(r, 4+r.Intn(6)))
				q, err := sql.CompileQuery(e.cat, query, sql.Options{})
				if err != nil {
					t.Fatalf("%s: %v", query, err)
				}
				res, err := sql.RunQuery(q, e.store, env())
				want, pgErr := pgRows(t, conn, query, true)
				if pgErr != nil {
					// Both must fail (e.g. 21000 for a multi-row scalar subquery).
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
		})
	}
}
