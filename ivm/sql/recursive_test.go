package sql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/sql/sqltest"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"pgregory.net/rapid"
)

// recursiveView is a recursive view and the query whose batch fixpoint
// (run ad hoc, PostgreSQL's iteration) it must equal after every step;
// reference "" means the view's own query.
type recursiveView struct {
	query, reference string
	// mode is how the view must be maintained (the test fails if the
	// compiler picks another path, so each path is covered).
	mode string
}

const (
	closureQuery = `WITH RECURSIVE tc(s, d) AS (SELECT src, dst FROM e
		UNION SELECT tc.s, e.dst FROM tc JOIN e ON tc.d = e.src) SELECT s, d FROM tc`
	reachQuery = `WITH RECURSIVE r(n) AS (SELECT 0
		UNION SELECT e.dst FROM r JOIN e ON r.n = e.src) SELECT n FROM r`
)

// recursiveViews cover each maintenance path: DRed (linear and
// non-linear), recompute (a step that does not count derivations) and the
// signed bag iteration (UNION ALL over a DAG).
//
//lint:immutable a constant table of test queries.
var recursiveViews = []recursiveView{
	{query: closureQuery, mode: "dred"},
	{query: reachQuery, mode: "dred"},
	// Non-linear closure (PostgreSQL refuses it): the same relation as
	// the linear closure.
	{query: `WITH RECURSIVE tc(s, d) AS (SELECT src, dst FROM e
		UNION SELECT a.s, b.d FROM tc a JOIN tc b ON a.d = b.s) SELECT s, d FROM tc`, reference: closureQuery, mode: "dred"},
	// Reachability avoiding blocked nodes (u.v): an anti join on the path.
	{query: `WITH RECURSIVE r(n) AS (SELECT 0
		UNION SELECT e.dst FROM r JOIN e ON r.n = e.src WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.v = e.dst)) SELECT n FROM r`, mode: "recompute"},
	{query: `WITH RECURSIVE r(n) AS (SELECT 0
		UNION SELECT DISTINCT e.dst FROM r JOIN e ON r.n = e.src) SELECT n FROM r`, mode: "recompute"},
	// Bill of materials over the acyclic part of the graph (src < dst):
	// every path's product of quantities, summed per part.
	{query: `WITH RECURSIVE x(part, qty) AS (SELECT 0, 1
		UNION ALL SELECT e.dst, x.qty * e.q FROM x JOIN e ON x.part = e.src WHERE e.src < e.dst)
		SELECT part, sum(qty) FROM x GROUP BY part`, mode: "bag"},
	// Paths with their lengths, bounded by a depth column.
	{query: `WITH RECURSIVE p(n, depth) AS (SELECT src, 0 FROM e
		UNION ALL SELECT e.dst, p.depth + 1 FROM p JOIN e ON p.n = e.src WHERE p.depth < 3)
		SELECT n, depth, count(*) FROM p GROUP BY n, depth`, mode: "bag"},
}

const (
	recursiveNodesMax = 5 // tiny graphs: cycles, parallel edges and re-derivations are common
	recursiveStepsMax = 12
)

// TestRecursiveMatchesBatchFixpoint maintains each recursive view over
// random edge insert/delete/update streams and compares it, after every
// step, with the batch fixpoint of the reference query over the current
// tables.
func TestRecursiveMatchesBatchFixpoint(t *testing.T) {
	for i, v := range recursiveViews {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				checkRecursive(t, rt, v)
			})
		})
	}
}

func newRecursiveEngine(t *testing.T) *engine {
	e := newEngine()
	if _, err := e.exec(`CREATE TABLE e (id int PRIMARY KEY, src int, dst int, q int);
		CREATE TABLE u (k int PRIMARY KEY, v int, g text)`); err != nil {
		t.Fatal(err)
	}
	return e
}

// recursiveMode returns the mode the compiler chose for the view's
// recursive node (from the node labels).
func recursiveMode(t *testing.T, c *circuit.Circuit) string {
	for _, st := range c.Stats() {
		if m, ok := strings.CutPrefix(st.Label, "recursive "); ok {
			return m
		}
	}
	t.Fatal("the circuit has no recursive node")
	return ""
}

// buildView compiles query into a circuit over store's tables.
func buildView(t *testing.T, e *engine, query string) (*circuit.Circuit, *sql.View, *incr.Sources) {
	view, err := sql.CompileView(e.cat, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	b := circuit.NewBuilder()
	srcs := incr.NewSources(func(rel *catalog.Relation) circuit.SourceID { return circuit.SourceID(rel.ID.Object[15]) + 1 })
	out, err := incr.Build(b, view.Plan, srcs, lower.Lowerer{})
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	b.Sink(1, out)
	c, err := b.Build(circuit.Config{ID: 1, Env: env()})
	if err != nil {
		t.Fatal(err)
	}
	return c, view, srcs
}

// constants evaluates the circuit's constant sources (fed once, first).
func constants(t *testing.T, srcs *incr.Sources, deltas map[circuit.SourceID]zset.Batch) {
	for _, k := range srcs.Constants {
		batch, err := k.Batch(env())
		if err != nil {
			t.Fatal(err)
		}
		deltas[k.ID] = batch
	}
}

// drawEdgeChanges changes a few rows of e (and, rarely, u) at random and
// returns the deltas.
func drawEdgeChanges(t *testing.T, rt *rapid.T, e *engine, srcs *incr.Sources) map[circuit.SourceID]zset.Batch {
	deltas := map[circuit.SourceID]zset.Batch{}
	for ti, name := range []string{"e", "u"} {
		rel, _ := e.cat.LookupRelation([]string{name})
		var delta zset.Batch
		ops := rapid.IntRange(0, 3-2*ti).Draw(rt, "ops")
		for o := 0; o < ops; o++ {
			key := int64(rapid.IntRange(0, 7).Draw(rt, "key"))
			if removed, ok := deleteKey(e, rel, key); ok {
				delta.AddBatch(removed, 1)
				if rapid.Bool().Draw(rt, "delete") {
					continue
				}
			}
			node := func(label string) types.Datum {
				return int64(rapid.IntRange(0, recursiveNodesMax-1).Draw(rt, label))
			}
			row := types.Row{key, node("src"), node("dst"), int64(rapid.IntRange(1, 3).Draw(rt, "q"))}
			if name == "u" {
				row = types.Row{key, node("blocked"), nil}
			}
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
	return deltas
}

func checkRecursive(t *testing.T, rt *rapid.T, v recursiveView) {
	e := newRecursiveEngine(t)
	c, view, srcs := buildView(t, e, v.query)
	if got := recursiveMode(t, c); got != v.mode {
		t.Fatalf("%s: maintained by %s, want %s", v.query, got, v.mode)
	}
	reference := view.Plan
	if v.reference != "" {
		ref, err := sql.CompileView(e.cat, v.reference)
		if err != nil {
			t.Fatal(err)
		}
		reference = ref.Plan
	}
	store := kv.NewMemory()
	steps := rapid.IntRange(1, recursiveStepsMax).Draw(rt, "steps")
	for step := 0; step < steps; step++ {
		deltas := drawEdgeChanges(t, rt, e, srcs)
		if step == 0 {
			constants(t, srcs, deltas)
		}
		txn := kv.NewTxn(store)
		if _, err := c.Step(txn, deltas); err != nil {
			t.Fatalf("%s: step %d: %v", v.query, step, err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		got, err := circuit.ReadView(store, 1)
		if err != nil {
			t.Fatalf("%s: read view: %v", v.query, err)
		}
		want, err := sql.RunPlan(reference, e.store, env())
		if err != nil {
			t.Fatalf("%s: batch fixpoint: %v", v.query, err)
		}
		ws := sqltest.FormatRows(columnTypes(view.Columns), want, false)
		if gs := formatBatch(t, view.Columns, got); gs != ws {
			t.Fatalf("%s: step %d: incremental view differs from the batch fixpoint\nedges: %v\nincremental:\n%sbatch:\n%s",
				v.query, step, e.store.Rows, gs, ws)
		}
		// The same query ad hoc (a non-linear term runs through the
		// fixpoint operator there too) gives the same rows.
		adhoc, err := sql.RunPlan(view.Plan, e.store, env())
		if err != nil {
			t.Fatalf("%s: ad hoc: %v", v.query, err)
		}
		if as := sqltest.FormatRows(columnTypes(view.Columns), adhoc, false); as != ws {
			t.Fatalf("%s: step %d: ad-hoc result differs from the batch fixpoint\nad hoc:\n%sbatch:\n%s", v.query, step, as, ws)
		}
	}
}

func columnTypes(cols []plan.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, col := range cols {
		ts[i] = col.Type
	}
	return ts
}

// formatBatch formats a view's stored Z-set as rows (weights expanded).
func formatBatch(t *testing.T, cols []plan.Column, b zset.Batch) string {
	var rows []types.Row
	g := zset.Consolidate(b)
	for i, r := range g.Rows {
		if g.Weights[i] < 0 {
			t.Fatalf("negative weight %d for %v", g.Weights[i], r)
		}
		for k := int64(0); k < g.Weights[i]; k++ {
			rows = append(rows, r)
		}
	}
	return sqltest.FormatRows(columnTypes(cols), rows, false)
}

// TestRecursiveBagCycleFailsWithBound: UNION ALL over a cycle never
// converges (PostgreSQL loops forever); the view's step fails with
// RS-3503 naming the query and the bound, and stays unchanged.
func TestRecursiveBagCycleFailsWithBound(t *testing.T) {
	e := newRecursiveEngine(t)
	c, _, srcs := buildView(t, e, `WITH RECURSIVE w(n) AS (SELECT 0 UNION ALL SELECT e.dst FROM w JOIN e ON w.n = e.src) SELECT n FROM w`)
	rel, _ := e.cat.LookupRelation([]string{"e"})
	d, err := e.store.Insert(rel, []types.Row{{int64(1), int64(0), int64(1), int64(1)}, {int64(2), int64(1), int64(0), int64(1)}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := srcs.SourceID(rel.ID)
	deltas := map[circuit.SourceID]zset.Batch{id: d}
	constants(t, srcs, deltas)
	_, err = c.Step(kv.NewTxn(kv.NewMemory()), deltas)
	ee, ok := errcode.As(err)
	if !ok || ee.Code != errcode.RecursionNotConverging {
		t.Fatalf("want RS-3503, got %v", err)
	}
	if !strings.Contains(ee.Message, `"w"`) || !strings.Contains(ee.Message, "10000 iterations") {
		t.Fatalf("the error must name the query and the bound: %s", ee.Message)
	}
}

// TestRecursiveRefusals: constructs the fixpoint cannot maintain are
// refused by name at CREATE MATERIALIZED VIEW.
func TestRecursiveRefusals(t *testing.T) {
	e := newRecursiveEngine(t)
	for _, tc := range []struct{ query, named string }{
		{`WITH RECURSIVE r(n, c) AS (SELECT 0, 0::bigint UNION SELECT e.dst, count(*) FROM r JOIN e ON r.n = e.src GROUP BY e.dst) SELECT * FROM r`, "aggregate function count()"},
		{`WITH RECURSIVE tc(s, d) AS (SELECT src, dst FROM e UNION ALL SELECT a.s, b.d FROM tc a JOIN tc b ON a.d = b.s) SELECT * FROM tc`, "non-linear"},
		{`WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT DISTINCT e.dst FROM r JOIN e ON r.n = e.src) SELECT * FROM r`, "DISTINCT in the recursive term of UNION ALL"},
		{`WITH RECURSIVE r(n) AS (SELECT 0 UNION SELECT e.dst FROM e LEFT JOIN r ON r.n = e.src) SELECT * FROM r`, "outer join"},
	} {
		_, err := sql.CompileView(e.cat, tc.query)
		ee, ok := errcode.As(err)
		if !ok || !strings.Contains(ee.Message, tc.named) {
			t.Errorf("%s: want an error naming %q, got %v", tc.query, tc.named, err)
		}
	}
}

// TestRecursiveDocTable replays op.Recursive's doc table: reachability
// from 1; a new edge closing a cycle changes nothing, and deleting the
// root's edge retracts the cycle that now only supports itself.
func TestRecursiveDocTable(t *testing.T) {
	e := newRecursiveEngine(t)
	c, _, srcs := buildView(t, e, `WITH RECURSIVE r(n) AS (SELECT 1
		UNION SELECT e.dst FROM r JOIN e ON r.n = e.src) SELECT n FROM r`)
	rel, _ := e.cat.LookupRelation([]string{"e"})
	id, _ := srcs.SourceID(rel.ID)
	edge := func(id, src, dst int64) types.Row { return types.Row{id, src, dst, int64(1)} }
	store := kv.NewMemory()
	for i, tc := range []struct {
		delta zset.Batch
		want  string
	}{
		{zset.Batch{Rows: []types.Row{edge(1, 1, 2), edge(2, 2, 3)}, Weights: []int64{1, 1}}, "{(1):+1, (2):+1, (3):+1}"},
		{zset.Batch{Rows: []types.Row{edge(3, 3, 2)}, Weights: []int64{1}}, "{}"},
		{zset.Batch{Rows: []types.Row{edge(1, 1, 2)}, Weights: []int64{-1}}, "{(2):-1, (3):-1}"},
	} {
		deltas := map[circuit.SourceID]zset.Batch{id: tc.delta}
		if i == 0 {
			constants(t, srcs, deltas)
		}
		txn := kv.NewTxn(store)
		outs, err := c.Step(txn, deltas)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Apply(txn.Batch()); err != nil {
			t.Fatal(err)
		}
		if got := zset.Consolidate(outs[1]).String(); got != tc.want {
			t.Fatalf("time %d: output %s, want %s", i, got, tc.want)
		}
	}
}
