package differential

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
)

// The recursive-view campaign: three materialized views defined WITH
// RECURSIVE — the transitive closure of a graph, the nodes reachable from
// a root, and a bill of materials (every part's total quantity over all
// paths from the product, UNION ALL over a DAG) — maintained through a
// stream of random edge changes (inserts, deletes, and updates that move
// an edge, which re-route derivations through cycles), each view compared
// with its defining query evaluated by PostgreSQL 15 after every change.
// Every step changes one edge of the graph and one of the bill of
// materials, so each view sees every step's change.
//
//	go test ./correctness/differential -run TestRecursiveViews                          # CI: recursiveChangesCI changes
//	go test ./correctness/differential -run TestRecursiveViews -recursive.changes=1000  # the acceptance run
//	go test ./correctness/differential -run TestRecursiveViews -recursive.seed=N        # replay a seed
//
// ROCKSTREAM_CORRECTNESS_FULL=1 runs recursiveChangesFull changes.
const (
	recursiveChangesCI   = 150
	recursiveChangesFull = 1000
	// recursiveNodes is the graph's node count and recursiveEdgeIDs its
	// edge id range: small, so cycles, parallel paths and re-derivations
	// are common.
	recursiveNodes   = 8
	recursiveEdgeIDs = 14
	// bomParts is the bill of materials' part count (part 0 is the
	// product); every edge goes from a lower to a higher part, so it stays
	// acyclic and UNION ALL terminates.
	bomParts = 9
)

var (
	recursiveChanges = flag.Int("recursive.changes", 0, "edge changes in the recursive-view campaign (0: the CI budget, or the full run with ROCKSTREAM_CORRECTNESS_FULL=1)")
	recursiveSeed    = flag.Uint64("recursive.seed", 0, "seed of the recursive-view campaign (0: random)")
)

// recursiveViewDefs are the views (name → defining query, which
// PostgreSQL evaluates as the oracle).
//
//lint:immutable a constant table of test queries.
var recursiveViewDefs = [][2]string{
	{"rv_closure", `WITH RECURSIVE tc(s, d) AS (SELECT src, dst FROM rv_edges
		UNION SELECT tc.s, e.dst FROM tc JOIN rv_edges e ON tc.d = e.src) SELECT s, d FROM tc`},
	{"rv_reach", `WITH RECURSIVE r(n) AS (SELECT 0
		UNION SELECT e.dst FROM r JOIN rv_edges e ON r.n = e.src) SELECT n FROM r`},
	{"rv_bom_totals", `WITH RECURSIVE x(part, qty) AS (SELECT child, qty FROM rv_bom WHERE parent = 0
		UNION ALL SELECT b.child, x.qty * b.qty FROM x JOIN rv_bom b ON b.parent = x.part)
		SELECT part, sum(qty) AS total, count(*) AS paths FROM x GROUP BY part`},
}

type recursiveCampaign struct {
	t      *testing.T
	seed   uint64
	r      *rand.Rand
	rs, pg *harness.Conn
	script []string
	// steps counts the steps run (for the reproduction command).
	steps int
	// edges and bom hold the live rows' ids (the model that picks
	// updates and deletes of existing rows and inserts of new ones).
	edges, bom map[int]bool
}

func (c *recursiveCampaign) fail(format string, args ...any) {
	c.t.Helper()
	tail := c.script
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	c.t.Fatalf("recursive-view campaign failed: %s\n\nreproduce: go test ./correctness/differential -run TestRecursiveViews -recursive.seed=%d -recursive.changes=%d\n\nlast statements:\n%s",
		fmt.Sprintf(format, args...), c.seed, c.steps, strings.Join(tail, "\n"))
}

// both runs a statement on both systems; both must succeed.
func (c *recursiveCampaign) both(sql string) {
	c.t.Helper()
	c.script = append(c.script, sql+";")
	if _, err := c.rs.Exec(sql); err != nil {
		c.fail("%s: rockstream: %s", sql, harness.ErrorText(err))
	}
	if _, err := c.pg.Exec(sql); err != nil {
		c.fail("%s: postgresql: %s", sql, harness.ErrorText(err))
	}
}

// change draws one insert, update or delete of table's rows.
func (c *recursiveCampaign) change(table string, live map[int]bool, ids int, row func() string, set func() string) {
	id := c.r.IntN(ids)
	switch {
	case !live[id]:
		c.both(fmt.Sprintf("INSERT INTO %s VALUES (%d, %s)", table, id, row()))
		live[id] = true
	case c.r.IntN(2) == 0:
		c.both(fmt.Sprintf("UPDATE %s SET %s WHERE id = %d", table, set(), id))
	default:
		c.both(fmt.Sprintf("DELETE FROM %s WHERE id = %d", table, id))
		delete(live, id)
	}
}

func (c *recursiveCampaign) step() {
	c.steps++
	node := func() int { return c.r.IntN(recursiveNodes) }
	c.change("rv_edges", c.edges, recursiveEdgeIDs,
		func() string { return fmt.Sprintf("%d, %d", node(), node()) },
		func() string {
			if c.r.IntN(2) == 0 {
				return fmt.Sprintf("dst = %d", node())
			}
			return fmt.Sprintf("src = %d", node())
		})
	bomEdge := func() (int, int) {
		parent := c.r.IntN(bomParts - 1)
		return parent, parent + 1 + c.r.IntN(bomParts-1-parent)
	}
	c.change("rv_bom", c.bom, recursiveEdgeIDs,
		func() string { p, ch := bomEdge(); return fmt.Sprintf("%d, %d, %d", p, ch, 1+c.r.IntN(3)) },
		func() string {
			if c.r.IntN(2) == 0 {
				return fmt.Sprintf("qty = %d", 1+c.r.IntN(3))
			}
			p, ch := bomEdge()
			return fmt.Sprintf("parent = %d, child = %d", p, ch)
		})
}

func (c *recursiveCampaign) check(when string) {
	c.t.Helper()
	for _, v := range recursiveViewDefs {
		got, rerr := c.rs.Exec("SELECT * FROM " + v[0])
		want, perr := c.pg.Exec(v[1])
		if rerr != nil || perr != nil {
			c.fail("%s: %s: rockstream %v, postgresql %v", when, v[0], errText(rerr), errText(perr))
		}
		g, w := harness.SortedLines(got.Rows), harness.SortedLines(want.Rows)
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			c.fail("%s: %s differs from PostgreSQL\n-- rockstream: %q\n-- postgresql: %q", when, v[0], g, w)
		}
	}
}

// TestRecursiveViews runs the recursive-view campaign (see above).
func TestRecursiveViews(t *testing.T) {
	changes := *recursiveChanges
	if changes == 0 {
		changes = recursiveChangesCI
		if os.Getenv("ROCKSTREAM_CORRECTNESS_FULL") != "" {
			changes = recursiveChangesFull
		}
	}
	seed := *recursiveSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	harness.LogShards(t)
	t.Logf("SEED=%d changes=%d nodes=%d edge_ids=%d bom_parts=%d", seed, changes, recursiveNodes, recursiveEdgeIDs, bomParts)
	dir := t.TempDir()
	srv, err := harness.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Stop() }()
	c := &recursiveCampaign{
		t: t, seed: seed, r: rand.New(rand.NewPCG(seed, 0x2ec)),
		rs: harness.ConnectRS(t, srv), pg: harness.ConnectPG(t),
		edges: map[int]bool{}, bom: map[int]bool{},
	}
	drop, err := c.pg.FreshSchema("recursive")
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	c.both("CREATE TABLE rv_edges (id int PRIMARY KEY, src int NOT NULL, dst int NOT NULL)")
	c.both("CREATE TABLE rv_bom (id int PRIMARY KEY, parent int NOT NULL, child int NOT NULL, qty int NOT NULL)")
	for _, v := range recursiveViewDefs {
		c.script = append(c.script, "CREATE MATERIALIZED VIEW "+v[0]+" AS "+v[1]+";")
		if _, err := c.rs.Exec("CREATE MATERIALIZED VIEW " + v[0] + " AS " + v[1]); err != nil {
			c.fail("CREATE MATERIALIZED VIEW %s: %s", v[0], harness.ErrorText(err))
		}
	}
	c.check("after creating the views")
	for i := 0; i < changes; i++ {
		c.step()
		c.check(fmt.Sprintf("after change %d", i+1))
		if i == changes/2 {
			// A restart halfway: the fixpoint's state (its own and the
			// recursive term's) continues from storage.
			c.script = append(c.script, "-- restart")
			srv.Stop()
			if srv, err = harness.Start(dir); err != nil {
				t.Fatal(err)
			}
			c.rs = harness.ConnectRS(t, srv)
			c.check("after the restart")
		}
	}
}
