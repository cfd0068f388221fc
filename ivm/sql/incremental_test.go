package sql_test

import (
	"fmt"
	"testing"

	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"pgregory.net/rapid"
)

// incrementalViews are maintained incrementally over random deltas and
// compared, after every step, with the same query run ad hoc over the
// accumulated tables (the non-incremental reference).
//
//lint:immutable a constant table of test queries.
var incrementalViews = []string{
	"SELECT a, b FROM t WHERE b > 1",
	"SELECT b, count(*), sum(a), min(c), max(a) FROM t GROUP BY b",
	"SELECT count(*), sum(b) FROM t",
	"SELECT count(*) FROM (SELECT DISTINCT b FROM t) s",
	"SELECT 1 AS one FROM t WHERE a > 100",
	"SELECT t.a, u.v FROM t JOIN u ON t.b = u.k",
	"SELECT t.a, u.v FROM t LEFT JOIN u ON t.b = u.k",
	"SELECT t.a, u.k FROM t FULL JOIN u ON t.b = u.k",
	"SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.b)",
	"SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.k = t.b)",
	"SELECT a FROM t WHERE b IN (SELECT v FROM u)",
	"SELECT a FROM t WHERE b NOT IN (SELECT v FROM u)",
	"SELECT a, (SELECT count(*) FROM u WHERE u.v = t.b) FROM t",
	"SELECT DISTINCT b, c FROM t",
	"SELECT b FROM t UNION SELECT v FROM u",
	"SELECT b FROM t UNION ALL SELECT v FROM u",
	"SELECT b FROM t INTERSECT SELECT v FROM u",
	"SELECT b FROM t EXCEPT ALL SELECT v FROM u",
	"SELECT a, b FROM t ORDER BY b DESC NULLS LAST, a LIMIT 3",
	"SELECT DISTINCT ON (b) b, a FROM t ORDER BY b, a DESC",
	"SELECT g, count(DISTINCT v) FROM u GROUP BY g HAVING count(*) > 1",
	"SELECT c, sum(b) FILTER (WHERE a > 2) FROM t GROUP BY c",
	"SELECT a + b AS s, CASE WHEN c IS NULL THEN 'none' ELSE c END FROM t WHERE a % 2 = 0",
	"WITH big AS (SELECT * FROM t WHERE a > 1) SELECT b, count(*) FROM big GROUP BY b",
	"SELECT x.a, y.a FROM t x JOIN t y ON x.b = y.b AND x.a < y.a",
	// A CTE read twice: its aggregate is built once and feeds both reads.
	"WITH n AS (SELECT b, count(*) AS k FROM t GROUP BY b) SELECT n.b, n.k FROM n JOIN (SELECT max(k) AS m FROM n) x ON n.k >= x.m",
}

const (
	valuesMax = 4 // small domains make duplicates and retractions common
	stepsMax  = 8
)

func drawValue(t *rapid.T, label string) types.Datum {
	v := rapid.IntRange(-1, valuesMax-1).Draw(t, label)
	if v < 0 {
		return nil
	}
	return int64(v)
}

func drawText(t *rapid.T, label string) types.Datum {
	v := rapid.IntRange(0, 2).Draw(t, label)
	if v == 2 {
		return nil
	}
	return []string{"x", "y"}[v]
}

func TestIncrementalMatchesAdHoc(t *testing.T) {
	for i, q := range incrementalViews {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				checkIncremental(t, rt, q)
			})
		})
	}
}

func checkIncremental(t *testing.T, rt *rapid.T, query string) {
	e := newEngine()
	if _, err := e.exec(`CREATE TABLE t (a int PRIMARY KEY, b int, c text);
		CREATE TABLE u (k int PRIMARY KEY, v int, g text)`); err != nil {
		t.Fatal(err)
	}
	tRel, _ := e.cat.LookupRelation([]string{"t"})
	uRel, _ := e.cat.LookupRelation([]string{"u"})
	c, view, srcs := buildView(t, e, query)
	store := kv.NewMemory()
	steps := rapid.IntRange(1, stepsMax).Draw(rt, "steps")
	for step := 0; step < steps; step++ {
		deltas := map[circuit.SourceID]zset.Batch{}
		for _, rel := range []*catalog.Relation{tRel, uRel} {
			var delta zset.Batch
			ops := rapid.IntRange(0, 4).Draw(rt, "ops")
			for o := 0; o < ops; o++ {
				key := int64(rapid.IntRange(0, 5).Draw(rt, "key"))
				if removed, ok := deleteKey(e, rel, key); ok {
					delta.AddBatch(removed, 1)
					if rapid.Bool().Draw(rt, "delete") {
						continue
					}
				}
				row := types.Row{key, drawValue(rt, "v"), drawText(rt, "s")}
				d, err := e.store.Insert(rel, []types.Row{row})
				if err != nil {
					t.Fatal(err)
				}
				delta.AddBatch(d, 1)
			}
			if id, ok := srcs.SourceID(rel.ID); ok {
				deltas[id] = delta
			}
		}
		if step == 0 {
			for _, k := range srcs.Constants {
				t.Fatalf("constant sources are not expected in these views (%d)", k.ID)
			}
		}
		txn := kv.NewTxn(store)
		if _, err := c.Step(txn, deltas); err != nil {
			t.Fatalf("%s: step %d: %v", query, step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		got, err := circuit.ReadView(store, 1)
		if err != nil {
			t.Fatalf("%s: read view: %v", query, err)
		}
		want, err := sql.RunPlan(view.Plan, e.store, env())
		if err != nil {
			t.Fatalf("%s: ad hoc: %v", query, err)
		}
		gs, ws := formatBatch(t, view.Columns, got), sqltest.FormatRows(columnTypes(view.Columns), want, false)
		if gs != ws {
			t.Fatalf("%s: step %d: incremental view differs from ad-hoc result\nincremental:\n%sad hoc:\n%s", query, step, gs, ws)
		}
	}
}

// deleteKey deletes the row of rel whose first column is key, if there is
// one, and returns the delta.
func deleteKey(e *engine, rel *catalog.Relation, key int64) (zset.Batch, bool) {
	for _, r := range e.store.Rows[rel.ID] {
		if r[0] == key {
			return e.store.Delete(rel, []types.Row{r}), true
		}
	}
	return zset.Batch{}, false
}
