package engine

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/slate/objstore"
)

// rangeSession runs statements in one session of e (so BEGIN … COMMIT
// spans them), returning each result's rows formatted and sorted.
type rangeSession struct {
	t     *testing.T
	gs    gateway.Session
	inTxn bool
}

func newRangeSession(t *testing.T, e *Engine) *rangeSession {
	t.Helper()
	gs, err := e.NewSession(context.Background(), gateway.SessionInfo{Database: "default", User: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gs.Close() })
	return &rangeSession{t: t, gs: gs}
}

func (s *rangeSession) run(sql string) []string {
	s.t.Helper()
	rows := s.runOrdered(sql)
	slices.Sort(rows)
	return rows
}

// runOrdered is run keeping the result's order.
func (s *rangeSession) runOrdered(sql string) []string {
	s.t.Helper()
	ctx := context.Background()
	cur, err := startStatement(ctx, s.gs, sql)
	if err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
	defer cur.Close()
	var rows []string
	for {
		r, err := cur.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			s.t.Fatalf("%s: %v", sql, err)
		}
		rows = append(rows, zset.FormatRow(r))
	}
	if !s.inTxn {
		if err := s.gs.Commit(ctx); err != nil {
			s.t.Fatalf("%s: commit: %v", sql, err)
		}
	}
	return rows
}

func readRows(t *testing.T, e *Engine) uint64 {
	t.Helper()
	st, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.ReadRows
}

// TestKeyRangeReadsOnlyTheRange: a SELECT, UPDATE and DELETE filtered on
// a range of the primary key read only the rows in it from the store
// (the shard's ReadRows), and answer as a read of the whole table would.
func TestKeyRangeReadsOnlyTheRange(t *testing.T) { bothRangeReads(t, testKeyRangeReadsOnlyTheRange) }

// bothRangeReads runs test with the shard reading small tables' ranges
// as on large ones (a seek per bucket) and as it does (one scan).
func bothRangeReads(t *testing.T, test func(*testing.T, Config)) {
	t.Run("seeks", func(t *testing.T) { test(t, Config{Store: objstore.NewMemory(), rangeSeeksAlways: true}) })
	t.Run("scan", func(t *testing.T) { test(t, Config{Store: objstore.NewMemory()}) })
}

func testKeyRangeReadsOnlyTheRange(t *testing.T, cfg Config) {
	e := openQuiet(t, cfg)
	defer e.Close(context.Background())
	s := newRangeSession(t, e)
	s.run(`CREATE TABLE t (id int PRIMARY KEY, v int)`)
	s.run(`CREATE TABLE c (a int, b text, v int, PRIMARY KEY (a, b))`)
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := 1; i <= 2000; i++ {
		if i > 1 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d)", i, i*7%1000)
	}
	s.run(sb.String())
	s.run(`INSERT INTO c SELECT id % 20, 'k' || id, v FROM t`)
	// c's rows: (id % 20, 'k' || id, v) for id 1..2000.
	countC := func(keep func(a int, b string) bool) string {
		n := 0
		for id := 1; id <= 2000; id++ {
			if keep(id%20, fmt.Sprintf("k%d", id)) {
				n++
			}
		}
		return fmt.Sprintf("(%d)", n)
	}
	c3 := countC(func(a int, b string) bool { return a == 3 && b >= "k1000" && b < "k2" })
	c12 := countC(func(a int, b string) bool { return (a == 1 || a == 2) && b < "k11" })
	for _, tc := range []struct {
		sql  string
		want string
		read uint64
	}{
		{`SELECT count(*), sum(v) FROM t WHERE id <= 10`, "(10,385)", 10},
		{`SELECT count(*) FROM t WHERE id BETWEEN 100 AND 149`, "(50)", 50},
		{`SELECT count(*) FROM t WHERE id > 1990 AND id < 1995 AND v > 0`, "(4)", 4},
		{`SELECT count(*) FROM t WHERE 1995 < id`, "(5)", 5},
		{`SELECT count(*) FROM t WHERE id IN (3, 5, 5, 7000, NULL)`, "(2)", 2},
		{`SELECT count(*) FROM t WHERE id > 10 AND id < 5`, "(0)", 0},
		{`SELECT count(*) FROM c WHERE a = 3`, "(100)", 100},
		{`SELECT count(*) FROM c WHERE a = 3 AND b >= 'k1000' AND b < 'k2'`, c3, 0},
		{`SELECT count(*) FROM c WHERE a IN (1, 2) AND b < 'k11'`, c12, 0},
		{`SELECT count(*) FROM t WHERE v <= 10`, "(22)", 2000}, // not a key column: whole
		{`SELECT count(*) FROM t WHERE id <= 10 OR v = 3`, "(12)", 2000},
	} {
		before := readRows(t, e)
		got := strings.Join(s.run(tc.sql), "; ")
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.sql, got, tc.want)
		}
		want := tc.read
		if want == 0 { // the range holds exactly the rows kept
			fmt.Sscanf(tc.want, "(%d)", &want)
		}
		if n := readRows(t, e) - before; n != want {
			t.Errorf("%s read %d rows from the store, want %d", tc.sql, n, want)
		}
	}
	before := readRows(t, e)
	s.run(`UPDATE t SET v = v + 1 WHERE id >= 1000 AND id < 1010`)
	s.run(`DELETE FROM t WHERE id > 1990`)
	if n := readRows(t, e) - before; n != 20 {
		t.Errorf("UPDATE and DELETE on key ranges read %d rows from the store, want 20", n)
	}
	if got := strings.Join(s.run(`SELECT count(*), sum(v) FROM t`), "; "); got != "(1990,990325)" {
		t.Errorf("after UPDATE and DELETE: %s", got)
	}
	// The transaction's own writes show in a range read.
	if err := s.gs.Begin(context.Background(), gateway.TxOptions{}); err != nil {
		t.Fatal(err)
	}
	s.inTxn = true
	s.run(`INSERT INTO t VALUES (0, 5), (-4, 6)`)
	s.run(`DELETE FROM t WHERE id = 2`)
	if got := strings.Join(s.run(`SELECT id FROM t WHERE id < 4`), "; "); got != "(-4); (0); (1); (3)" {
		t.Errorf("range read in a transaction: %s", got)
	}
	if err := s.gs.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.inTxn = false
	// REPEATABLE READ reads its pinned snapshot in key ranges too: a row
	// committed meanwhile in the range stays invisible.
	if err := s.gs.Begin(context.Background(), gateway.TxOptions{Isolation: gateway.RepeatableRead}); err != nil {
		t.Fatal(err)
	}
	s.inTxn = true
	if got := strings.Join(s.run(`SELECT count(*) FROM t WHERE id BETWEEN -10 AND 5`), "; "); got != "(5)" {
		t.Errorf("REPEATABLE READ range read: %s", got)
	}
	other := newRangeSession(t, e)
	other.run(`INSERT INTO t VALUES (-1, 0)`)
	before = readRows(t, e)
	if got := strings.Join(s.run(`SELECT id FROM t WHERE id BETWEEN -10 AND 2`), "; "); got != "(1); (2)" {
		t.Errorf("REPEATABLE READ range read after another commit: %s", got)
	}
	if n := readRows(t, e) - before; n != 2 {
		t.Errorf("REPEATABLE READ range read read %d rows from the store, want 2", n)
	}
	if err := s.gs.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.inTxn = false
	if got := strings.Join(s.run(`SELECT id FROM t WHERE id BETWEEN -10 AND 2`), "; "); got != "(-1); (1); (2)" {
		t.Errorf("range read after the commit: %s", got)
	}
}

// TestKeyRangesMatchPostgres compares random primary-key predicates
// (points, ranges, BETWEEN, IN, NULLs, reversed operands, casts, mixed
// with other conjuncts and ORs) over int, bigint, text, numeric and
// composite keys with PostgreSQL 15: the same rows, and no more rows read
// from the store than a whole read.
func TestKeyRangesMatchPostgres(t *testing.T) { bothRangeReads(t, testKeyRangesMatchPostgres) }

func testKeyRangesMatchPostgres(t *testing.T, cfg Config) {
	_, pg := pgtest.Database(t)
	ctx := context.Background()
	e := openQuiet(t, cfg)
	defer e.Close(ctx)
	s := newRangeSession(t, e)
	rng := rand.New(rand.NewPCG(7, 11))
	type table struct {
		name, ddl string
		cols      []string        // primary-key columns
		gen       []func() string // a literal for each, of the column's domain
		rows      func(i int) (key, row string)
	}
	ints := func(lo, hi int) func() string {
		return func() string { return fmt.Sprint(lo + rng.IntN(hi-lo+1)) }
	}
	texts := func() string {
		const alpha = "aAb z"
		n := rng.IntN(4)
		var sb strings.Builder
		for range n {
			sb.WriteByte(alpha[rng.IntN(len(alpha))])
		}
		return "'" + sb.String() + "'"
	}
	nums := func() string {
		switch rng.IntN(8) {
		case 0:
			return "'NaN'"
		case 1:
			return fmt.Sprintf("%d.%d0", rng.IntN(20)-10, rng.IntN(10))
		}
		return fmt.Sprintf("%d.%d", rng.IntN(20)-10, rng.IntN(10))
	}
	tables := []table{
		{name: "ti", ddl: "CREATE TABLE ti (id int PRIMARY KEY, v int)", cols: []string{"id"}, gen: []func() string{ints(-20, 320)},
			rows: func(i int) (string, string) { return fmt.Sprint(i), fmt.Sprintf("(%d, %d)", i, i*37%101) }},
		{name: "tb", ddl: "CREATE TABLE tb (id bigint PRIMARY KEY, v int)", cols: []string{"id"}, gen: []func() string{ints(-5, 305)},
			rows: func(i int) (string, string) { return fmt.Sprint(i), fmt.Sprintf("(%d, %d)", int64(i)*3-1, i*37%101) }},
		{name: "tt", ddl: "CREATE TABLE tt (k text PRIMARY KEY, v int)", cols: []string{"k"}, gen: []func() string{texts},
			rows: func(i int) (string, string) { k := texts(); return k, fmt.Sprintf("(%s, %d)", k, i*37%101) }},
		{name: "tn", ddl: "CREATE TABLE tn (k numeric PRIMARY KEY, v int)", cols: []string{"k"}, gen: []func() string{nums},
			rows: func(i int) (string, string) {
				k := nums()
				f, _ := strconv.ParseFloat(strings.Trim(k, "'"), 64)
				return fmt.Sprint(f), fmt.Sprintf("(%s, %d)", k, i*37%101)
			}},
		{name: "tc", ddl: "CREATE TABLE tc (a int, b text, c bigint, v int, PRIMARY KEY (a, b, c))", cols: []string{"a", "b", "c"},
			gen: []func() string{ints(-1, 6), texts, ints(-2, 12)},
			rows: func(i int) (string, string) {
				a, b, c := rng.IntN(6), texts(), rng.IntN(10)
				return fmt.Sprint(a, b, c), fmt.Sprintf("(%d, %s, %d, %d)", a, b, c, i*37%101)
			}},
	}
	for _, tb := range tables {
		s.run(tb.ddl)
		if _, err := pg.Exec(ctx, "DROP TABLE IF EXISTS "+tb.name); err != nil {
			t.Fatal(err)
		}
		if _, err := pg.Exec(ctx, tb.ddl); err != nil {
			t.Fatal(err)
		}
		var vals []string
		seen := map[string]bool{}
		for i := range 300 {
			if k, r := tb.rows(i); !seen[k] {
				seen[k] = true
				vals = append(vals, r)
			}
		}
		ins := "INSERT INTO " + tb.name + " VALUES " + strings.Join(vals, ", ")
		if _, err := pg.Exec(ctx, ins); err != nil {
			t.Fatal(err)
		}
		s.run(ins)
	}
	atom := func(tb table) string {
		j := 0
		if rng.IntN(3) == 0 {
			j = rng.IntN(len(tb.cols))
		}
		col, gen := tb.cols[j], tb.gen[j]
		switch rng.IntN(12) {
		case 0:
			return fmt.Sprintf("%s BETWEEN %s AND %s", col, gen(), gen())
		case 1:
			return fmt.Sprintf("%s IN (%s, %s, %s)", col, gen(), gen(), gen())
		case 2:
			return fmt.Sprintf("%s IN (%s, NULL)", col, gen())
		case 3:
			ops := []string{"=", "<", "<=", ">", ">="}
			return fmt.Sprintf("%s %s %s", gen(), ops[rng.IntN(len(ops))], col)
		case 4:
			return fmt.Sprintf("%s < NULL", col)
		case 5:
			return fmt.Sprintf("v %% 3 <> %d", rng.IntN(3))
		case 6:
			return fmt.Sprintf("(%s = %s OR v > 50)", col, gen())
		case 7:
			return fmt.Sprintf("%s <> %s", col, gen())
		}
		ops := []string{"=", "<", "<=", ">", ">="}
		return fmt.Sprintf("%s %s %s", col, ops[rng.IntN(len(ops))], gen())
	}
	const queries = 600
	for q := range queries {
		tb := tables[q%len(tables)]
		var conj []string
		for range 1 + rng.IntN(3) {
			conj = append(conj, atom(tb))
		}
		where := strings.Join(conj, " AND ")
		if tb.name == "tb" && rng.IntN(4) == 0 {
			where += " AND id < 150.5" // compared as numeric: no range
		}
		sql := "SELECT v FROM " + tb.name + " WHERE " + where
		got := s.run(sql)
		want := pgRows(t, pg, sql)
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %v\nwant %v", sql, got, want)
		}
		before := readRows(t, e)
		agg := "SELECT count(*), coalesce(sum(v), 0) FROM " + tb.name + " WHERE " + where
		got = s.run(agg)
		if n := readRows(t, e) - before; n > 300 {
			t.Fatalf("%s read %d rows, more than the table holds", agg, n)
		}
		var cnt, sum int64
		if err := pg.QueryRow(ctx, agg).Scan(&cnt, &sum); err != nil {
			t.Fatalf("%s: %v", agg, err)
		}
		if w := fmt.Sprintf("(%d,%d)", cnt, sum); len(got) != 1 || got[0] != w {
			t.Fatalf("%s = %v, want %s", agg, got, w)
		}
	}
}

// pgRows runs sql (one int column) on PostgreSQL, rows formatted as
// zset.FormatRow does and sorted.
func pgRows(t *testing.T, pg *pgx.Conn, sql string) []string {
	t.Helper()
	out := pgRowsOrdered(t, pg, sql)
	slices.Sort(out)
	return out
}

// pgRowsOrdered is pgRows keeping the result's order.
func pgRowsOrdered(t *testing.T, pg *pgx.Conn, sql string) []string {
	t.Helper()
	rows, err := pg.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("postgres: %s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("(%d)", v))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("postgres: %s: %v", sql, err)
	}
	return out
}

// TestKeyRangeWritesMatchPostgres: UPDATE and DELETE filtered on ranges
// of the primary key (points, ranges, BETWEEN, IN with NULL, empty and
// reversed ranges, literals of another type than the key: int4 literals
// beyond a smallint key's range, int8 and numeric literals against int4
// and int8 keys, timestamps against a date key), and ordered reads of such
// ranges (ORDER BY the key DESC with LIMIT), leave the same tables and
// return the same rows as PostgreSQL 15 after every statement.
func TestKeyRangeWritesMatchPostgres(t *testing.T) {
	bothRangeReads(t, testKeyRangeWritesMatchPostgres)
}

func testKeyRangeWritesMatchPostgres(t *testing.T, cfg Config) {
	_, pg := pgtest.Database(t)
	ctx := context.Background()
	e := openQuiet(t, cfg)
	defer e.Close(ctx)
	s := newRangeSession(t, e)
	rng := rand.New(rand.NewPCG(3, 5))
	type table struct {
		name, ddl, fill string
		key             string          // the key column, or a composite's first
		lits            []func() string // literals compared with key
		order           string          // ORDER BY of an ordered read
	}
	ints := func(lo, hi int) func() string {
		return func() string { return fmt.Sprint(lo + rng.IntN(hi-lo+1)) }
	}
	pick := func(vs ...string) func() string { return func() string { return vs[rng.IntN(len(vs))] } }
	days := func() string { return fmt.Sprintf("'2024-01-%02d'", 1+rng.IntN(28)) }
	tables := []table{
		{name: "ws", ddl: "CREATE TABLE ws (id smallint PRIMARY KEY, v int)", key: "id", order: "id",
			fill: "INSERT INTO ws SELECT i, i FROM generate_series(-150, 150) AS i",
			lits: []func() string{ints(-160, 160), pick("40000", "-40000", "32767", "-32768", "70000::int8", "2.5", "-0.5")}},
		{name: "wi", ddl: "CREATE TABLE wi (id int PRIMARY KEY, v int)", key: "id", order: "id",
			fill: "INSERT INTO wi SELECT i * 3, i FROM generate_series(-100, 100) AS i",
			lits: []func() string{ints(-310, 310), pick("3000000000", "-3000000000", "2147483647", "9.5::numeric", "'12'", "NULL")}},
		{name: "wb", ddl: "CREATE TABLE wb (id bigint PRIMARY KEY, v int)", key: "id", order: "id",
			fill: "INSERT INTO wb SELECT i * 10000000000 + i, i FROM generate_series(-100, 100) AS i",
			lits: []func() string{pick("0", "1", "-1", "2147483647", "10000000001", "-10000000001", "500000000005", "20000000002::int8", "1.5")}},
		{name: "wd", ddl: "CREATE TABLE wd (d date PRIMARY KEY, v int)", key: "d", order: "d",
			fill: "INSERT INTO wd SELECT date '2024-01-01' + i, i FROM generate_series(0, 27) AS i",
			lits: []func() string{days, pick("timestamp '2024-01-05 12:00'", "timestamp '2024-01-10 00:00'", "date '2024-02-01'", "'2023-12-31'")}},
		{name: "wc", ddl: "CREATE TABLE wc (a int, b text, v int, PRIMARY KEY (a, b))", key: "a", order: "a, b",
			fill: "INSERT INTO wc SELECT i % 10, 'k' || (i % 17), i FROM generate_series(0, 169) AS i",
			lits: []func() string{ints(-1, 11)}},
	}
	for _, tb := range tables {
		for _, sql := range []string{tb.ddl, tb.fill} {
			if _, err := pg.Exec(ctx, sql); err != nil {
				t.Fatalf("postgres: %s: %v", sql, err)
			}
			s.run(sql)
		}
	}
	lit := func(tb table) string { return tb.lits[rng.IntN(len(tb.lits))]() }
	pred := func(tb table) string {
		k := tb.key
		var conj []string
		for range 1 + rng.IntN(2) {
			switch rng.IntN(7) {
			case 0:
				conj = append(conj, fmt.Sprintf("%s BETWEEN %s AND %s", k, lit(tb), lit(tb)))
			case 1:
				conj = append(conj, fmt.Sprintf("%s IN (%s, %s, NULL)", k, lit(tb), lit(tb)))
			case 2:
				conj = append(conj, fmt.Sprintf("%s %s %s", lit(tb), []string{"=", "<", "<=", ">", ">="}[rng.IntN(5)], k))
			case 3:
				if tb.name == "wc" {
					conj = append(conj, fmt.Sprintf("b %s 'k%d'", []string{"=", "<", ">="}[rng.IntN(3)], rng.IntN(17)))
					continue
				}
				fallthrough
			default:
				conj = append(conj, fmt.Sprintf("%s %s %s", k, []string{"=", "<", "<=", ">", ">="}[rng.IntN(5)], lit(tb)))
			}
		}
		return strings.Join(conj, " AND ")
	}
	// exec runs a statement on PostgreSQL, returning its tag.
	exec := func(sql string) string {
		tag, err := pg.Exec(ctx, sql)
		if err != nil {
			t.Fatalf("postgres: %s: %v", sql, err)
		}
		return tag.String()
	}
	for q := range 300 {
		tb := tables[q%len(tables)]
		where := pred(tb)
		var stmt string
		switch rng.IntN(3) {
		case 0:
			stmt = fmt.Sprintf("UPDATE %s SET v = v * 2 + %d WHERE %s", tb.name, rng.IntN(5), where)
		case 1:
			stmt = fmt.Sprintf("DELETE FROM %s WHERE %s", tb.name, where)
		default:
			stmt = fmt.Sprintf("SELECT v FROM %s WHERE %s ORDER BY %s DESC LIMIT %d", tb.name, where, strings.ReplaceAll(tb.order, ",", " DESC,"), 1+rng.IntN(6))
			if got, want := s.runOrdered(stmt), pgRowsOrdered(t, pg, stmt); !slices.Equal(got, want) {
				t.Fatalf("%s:\n got %v\nwant %v", stmt, got, want)
			}
			continue
		}
		want := exec(stmt)
		var got string
		func() {
			cur, err := startStatement(ctx, s.gs, stmt)
			if err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			defer cur.Close()
			for {
				if _, err := cur.Next(ctx); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}
			got = cur.Tag()
		}()
		if err := s.gs.Commit(ctx); err != nil {
			t.Fatalf("%s: commit: %v", stmt, err)
		}
		if got != want {
			t.Fatalf("%s: %q, PostgreSQL %q", stmt, got, want)
		}
		check := fmt.Sprintf("SELECT v FROM %s", tb.name)
		if got, want := s.run(check), pgRows(t, pg, check); !slices.Equal(got, want) {
			t.Fatalf("after %s:\n got %v\nwant %v", stmt, got, want)
		}
	}
}

// TestKeyRangeExplain: EXPLAIN of a SELECT, UPDATE or DELETE filtered on
// primary-key points or ranges names the primary key's index and the keys
// or ranges read, as PostgreSQL names an index scan; a predicate that
// bounds no key column shows none.
func TestKeyRangeExplain(t *testing.T) {
	e := openQuiet(t, Config{Store: objstore.NewMemory()})
	defer e.Close(context.Background())
	s := newRangeSession(t, e)
	s.run(`CREATE TABLE t (id int PRIMARY KEY, v int)`)
	s.run(`CREATE TABLE c (a int, b text, v int, PRIMARY KEY (a, b))`)
	for _, tc := range []struct{ sql, want string }{
		{`EXPLAIN SELECT v FROM t WHERE id = 5`, "Index Scan using t_pkey on t\n  Index Cond: (id = 5)"},
		{`EXPLAIN SELECT v FROM t x WHERE id BETWEEN 5 AND 9`, "Index Scan using t_pkey on t x\n  Index Cond: (id >= 5 AND id <= 9)"},
		{`EXPLAIN SELECT v FROM t WHERE id IN (3, 1)`, "Index Scan using t_pkey on t\n  Index Cond: ((id = 3) OR (id = 1))"},
		{`EXPLAIN SELECT v FROM c WHERE a = 2 AND b > 'k'`, "Index Scan using c_pkey on c\n  Index Cond: (a = 2 AND b > 'k')"},
		{`EXPLAIN UPDATE t SET v = v + 1 WHERE id < 10`, "Update on t\n  Project id, v, id, (v + 1) AS v\n    Filter (id < 10)\n      Scan t\nIndex Scan using t_pkey on t\n  Index Cond: (id < 10)"},
		{`EXPLAIN DELETE FROM t WHERE id > 7 AND id <= 9 AND v = 0`, "Delete on t\n  Filter ((id > 7) AND (id <= 9) AND (v = 0))\n    Scan t\nIndex Scan using t_pkey on t\n  Index Cond: (id > 7 AND id <= 9)"},
		{`EXPLAIN DELETE FROM t WHERE id IN (1, 2)`, "Index Scan using t_pkey on t\n  Index Cond: ((id = 1) OR (id = 2))"},
	} {
		got := strings.Join(s.runOrdered(tc.sql), "\n")
		want := `("` + strings.ReplaceAll(tc.want, "\n", "\")\n(\"") + `")`
		if !strings.Contains(got, want) {
			t.Errorf("%s:\n%s\nwant it to hold\n%s", tc.sql, got, want)
		}
	}
	for _, sql := range []string{`EXPLAIN SELECT v FROM t WHERE v < 3`, `EXPLAIN DELETE FROM t WHERE id <= 10 OR v = 3`, `EXPLAIN UPDATE c SET v = 1 WHERE b = 'x'`} {
		if got := strings.Join(s.runOrdered(sql), "\n"); strings.Contains(got, "Index Scan") {
			t.Errorf("%s reads the table whole but shows an index scan:\n%s", sql, got)
		}
	}
}
