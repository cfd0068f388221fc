package sql_test

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
)

// TestStagesSumToView: a view cut into stages (dist.SplitStages) is
// computed as the shards would: each lower stage on every part of 3, each
// part over the input rows its keys (dist.Spread) hash to it, the parts'
// outputs summed, and the upper stage over the sums. The result equals the
// view's query run whole, for the Nexmark queries that need stages and
// views over tables with primary keys (co-partitioned by a subset of a
// GROUP BY, DISTINCT ON, or PARTITION BY).
func TestStagesSumToView(t *testing.T) {
	const parts = 3
	e := newEngine()
	if _, err := e.exec(`CREATE TABLE auction (id bigint, item_name varchar, description varchar, initial_bid bigint, reserve bigint, date_time timestamp(3), expires timestamp(3), seller bigint, category bigint, extra varchar) WITH (insert_only = true);
		CREATE TABLE bid (auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp(3), extra varchar) WITH (insert_only = true);
		CREATE TABLE t (id int PRIMARY KEY, a int, b int, v int);
		CREATE TABLE u (id int PRIMARY KEY, a int, w int)`); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(7))
	var ins []string
	ts := func(s int) string { return fmt.Sprintf("'2024-01-01 00:00:00'::timestamp + interval '%d seconds'", s) }
	for id := 1; id <= 40; id++ {
		start := rng.Intn(60)
		ins = append(ins, fmt.Sprintf("INSERT INTO auction VALUES (%d, 'i', 'd', 1, 2, %s, %s, %d, %d, 'x')", id, ts(start), ts(start+5+rng.Intn(30)), rng.Intn(5), rng.Intn(6)))
	}
	for i := 0; i < 400; i++ {
		ins = append(ins, fmt.Sprintf("INSERT INTO bid VALUES (%d, %d, %d, 'c', 'u', %s, 'x')", 1+rng.Intn(45), rng.Intn(9), rng.Intn(50), ts(rng.Intn(90))))
	}
	for id := 1; id <= 60; id++ {
		ins = append(ins, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, %d, %d)", id, rng.Intn(7), rng.Intn(4), rng.Intn(100)))
		ins = append(ins, fmt.Sprintf("INSERT INTO u VALUES (%d, %d, %d)", id, rng.Intn(7), rng.Intn(100)))
	}
	if _, err := e.exec(strings.Join(ins, ";")); err != nil {
		t.Fatal(err)
	}
	queries := []struct {
		name, query string
		// lowers is how many lower stages the cut makes (0: none), and
		// upperSpread whether the upper stage can be spread too.
		lowers      int
		upperSpread bool
	}{
		{"q4", queryOf(t, "q4"), 1, true},
		{"q5", queryOf(t, "q5"), 2, true}, // counts, read twice
		{"q7", queryOf(t, "q7"), 1, true},
		{"q9", queryOf(t, "q9"), 0, false}, // spread whole
		{"group over a group by a subset", "SELECT b, count(*), sum(s) FROM (SELECT id, b, sum(v) AS s FROM t GROUP BY b, id) q GROUP BY b", 1, true},
		{"join then group by the join key and more", "SELECT w, max(m) FROM (SELECT t.a, u.w, max(t.v) AS m FROM t JOIN u ON t.a = u.a GROUP BY t.a, u.w) q GROUP BY w", 1, true},
		{"spread whole by a join key", "SELECT a, max(m) FROM (SELECT t.a, u.w, max(t.v) AS m FROM t JOIN u ON t.a = u.a GROUP BY t.a, u.w) q GROUP BY a", 0, false},
		{"group over a join on the right's key", "SELECT w, count(*) FROM (SELECT u.a, u.w, count(*) AS n FROM t JOIN u ON t.a = u.a GROUP BY u.w, u.a) q GROUP BY w", 1, true},
		{"distinct on over a subset", "SELECT b, count(*) FROM (SELECT DISTINCT ON (id, b) id, b, v FROM t ORDER BY id, b, v) q GROUP BY b", 1, true},
		{"window partitioned by a subset", "SELECT b, max(r) FROM (SELECT b, rank() OVER (PARTITION BY id, b ORDER BY v) AS r FROM t) q GROUP BY b", 1, true},
		{"group by keys overlapping the input's", "SELECT a, n, count(*), max(b) FROM (SELECT a, b, count(*) AS n FROM t GROUP BY a, b) q GROUP BY a, n", 1, true},
		{"three groupings", "SELECT n, count(*), sum(c) FROM (SELECT a, n, max(b) AS c FROM (SELECT a, b, count(*) AS n FROM t GROUP BY a, b) q GROUP BY a, n) r GROUP BY n", 1, false}, // a third stage
		{"group by a key computed over a constant", "SELECT k, max(n) FROM (SELECT a, k, count(*) AS n FROM t CROSS JOIN (VALUES (0), (1), (2)) w(k) WHERE b + k > 1 GROUP BY a, k) q GROUP BY k", 1, true},
		{"group by a key computed over a constant, whole", "SELECT a, k, count(*) FROM t CROSS JOIN (VALUES (0), (1)) w(k) GROUP BY a, k", 0, false},
		{"outer join with a constant outer side", "SELECT x, max(n) FROM (SELECT w.x, t.b, count(t.id) AS n FROM (VALUES (1), (2), (3), (9)) w(x) LEFT JOIN t ON t.a = w.x GROUP BY w.x, t.b) q GROUP BY x", 0, false},
		{"semi join with a constant", "SELECT n, count(*) FROM (SELECT b, count(*) AS n FROM t WHERE a IN (SELECT * FROM (VALUES (1), (2), (5)) w(x)) GROUP BY b) q GROUP BY n", 1, true},
		{"two lowers", "SELECT x.b, x.n, y.m FROM (SELECT b, count(*) AS n FROM t GROUP BY b) x JOIN (SELECT a, count(*) AS m FROM u GROUP BY a) y ON x.n % 3 = y.m % 3", 2, true},
		{"spread whole", "SELECT a, count(*) FROM t GROUP BY a", 0, false},
		{"spread whole by a subset", "SELECT id, b, sum(v) FROM t GROUP BY b, id", 0, false},
		{"global aggregate", "SELECT count(*) FROM t", 0, false},
	}
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			v, err := sql.CompileView(e.cat, q.query)
			if err != nil {
				t.Fatal(err)
			}
			want, err := sql.RunPlan(v.Plan, e.store, env())
			if err != nil {
				t.Fatal(err)
			}
			hidden := map[int]*catalog.Relation{}
			st, ok := dist.SplitStages(v.Plan, func(i int, cols []plan.Column) *catalog.Relation {
				rel := &catalog.Relation{Kind: catalog.KindMaterializedView, Name: fmt.Sprintf("%s$%d", q.name, i), Columns: columnsOf(cols),
					ID: catalog.ID{Object: catalog.ObjectID{15: byte(200 + i)}}}
				hidden[i] = rel
				return rel
			})
			if q.lowers == 0 {
				if ok {
					t.Fatalf("cut into %d stages, want none:\n%s", len(st.Lowers), plan.Format(st.Upper))
				}
				return
			}
			if !ok || len(st.Lowers) != q.lowers {
				t.Fatalf("cut into %d lower stages (ok %v), want %d:\n%s", len(st.Lowers), ok, q.lowers, plan.Format(dist.Distribute(v.Plan)))
			}
			store := &sqltest.Store{Rows: map[catalog.ID][]types.Row{}}
			for id, rows := range e.store.Rows { //lint:maprange copied into a map
				store.Rows[id] = rows
			}
			for i, l := range st.Lowers {
				if l.Relation != hidden[i] {
					t.Fatalf("lower %d scans another relation", i)
				}
				whole, err := sql.RunPlan(l.Plan, e.store, env())
				if err != nil {
					t.Fatal(err)
				}
				var sum []types.Row
				for p := 0; p < parts; p++ {
					rows, err := sql.RunPlan(l.Plan, partOf(t, e.store, l.Spread, p, parts), env())
					if err != nil {
						t.Fatal(err)
					}
					sum = append(sum, rows...)
				}
				if !sameRows(l.Plan.Schema(), whole, sum) {
					t.Fatalf("lower %d: the parts' sum differs from its whole (%d rows, %d):\n%s", i, len(sum), len(whole), plan.Format(l.Plan))
				}
				store.Rows[l.Relation.ID] = sum
			}
			got, err := sql.RunPlan(st.Upper, store, env())
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("the view is empty: the test shows nothing")
			}
			if !sameRows(v.Plan.Schema(), want, got) {
				t.Fatalf("stages give %d rows, the view %d:\nupper:\n%s", len(got), len(want), plan.Format(st.Upper))
			}
			if st.UpperSpreads != q.upperSpread {
				t.Fatalf("upper stage spread %v, want %v:\n%s", st.UpperSpreads, q.upperSpread, plan.Format(st.Upper))
			}
			if !st.UpperSpreads {
				return
			}
			// The upper stage spread too: each part over the rows of the
			// lower stages' sums and of the tables its keys hash to.
			var sum []types.Row
			for p := 0; p < parts; p++ {
				rows, err := sql.RunPlan(st.Upper, partOf(t, store, st.UpperSpread, p, parts), env())
				if err != nil {
					t.Fatal(err)
				}
				sum = append(sum, rows...)
			}
			if !sameRows(v.Plan.Schema(), want, sum) {
				t.Fatalf("the upper stage's parts give %d rows, the view %d:\nupper:\n%s", len(sum), len(want), plan.Format(st.Upper))
			}
		})
	}
}

// queryOf is the defining query of Nexmark view name
// (bench/nexmark/queries).
func queryOf(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../bench/nexmark/queries/" + name + ".sql")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	j := strings.Index(text, "CREATE MATERIALIZED VIEW")
	i := strings.Index(text[max(j, 0):], " AS ") + max(j, 0)
	if i < j || j < 0 {
		t.Fatalf("%s: no view", name)
	}
	return strings.TrimSpace(text[i+len(" AS "):])
}

// partOf is the store part p of n holds: each relation's rows whose keys
// in sp hash to p (a relation sp does not place: all of them, as a
// constant).
func partOf(t *testing.T, s *sqltest.Store, sp dist.Spread, p, n int) *sqltest.Store {
	t.Helper()
	out := &sqltest.Store{Rows: map[catalog.ID][]types.Row{}}
	for id, rows := range s.Rows { //lint:maprange filled into a map
		keys, ok := sp.Keys[id]
		if !ok {
			out.Rows[id] = rows
			continue
		}
		ts := make([]types.Type, len(keys))
		for i, k := range keys {
			ts[i] = k.Type()
		}
		for _, r := range rows {
			key := make(types.Row, len(keys))
			for i, k := range keys {
				x, err := lower.Scalar(k)
				if err != nil {
					t.Fatal(err)
				}
				if key[i], err = x.Eval(env(), r); err != nil {
					key[i] = nil
				}
			}
			if int(types.HashRow(ts, key)%uint64(n)) == p {
				out.Rows[id] = append(out.Rows[id], r)
			}
		}
	}
	return out
}

// sameRows compares two bags of rows of columns cols.
func sameRows(cols []plan.Column, a, b []types.Row) bool {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return len(a) == len(b) && sqltest.FormatRows(ts, a, false) == sqltest.FormatRows(ts, b, false)
}
