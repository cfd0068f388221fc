package differential

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
)

// The DDL-and-restart campaign: each case draws a stream of CREATE [OR
// REPLACE] VIEW, CREATE / DROP [CASCADE] of views and materialized views,
// ALTER TABLE ADD COLUMN, ALTER MATERIALIZED VIEW ... RECOMPILE, restarts
// of the server and data changes, and after every step checks every
// materialized view against its PINNED definition (the inline views as
// they were when it was created or last recompiled, expanded as
// subqueries) and every inline view against its current definition, both
// evaluated by PostgreSQL 15 over the same data. The model also predicts
// which DDL RockStream must refuse (DROP with dependents: 2BP01, a view
// cycle: 42P17, a RECOMPILE that changes columns: 0A000); every restart
// must come up with every view running.
//
//	go test ./correctness/differential -run TestDDLAndRestarts                  # CI budget
//	go test ./correctness/differential -run TestDDLAndRestarts -ddl.cases=1000   # the campaign
//	go test ./correctness/differential -run TestDDLAndRestarts -ddl.seed=N       # replay one case

// ddlCasesCI is the CI budget (a restart costs a server start); the
// campaign runs ddlCasesFull (ROCKSTREAM_CORRECTNESS_FULL=1) or -ddl.cases.
const (
	ddlCasesCI   = 12
	ddlCasesFull = 1000
	// ddlStepsMax bounds a case's steps; ddlViewsMax and ddlMatViewsMax the
	// live inline and materialized views, so names and plans stay small.
	ddlStepsMax    = 24
	ddlViewsMax    = 4
	ddlMatViewsMax = 4
)

var (
	ddlCases = flag.Int("ddl.cases", 0, "DDL-and-restart cases to run (0: the CI budget, or the campaign with ROCKSTREAM_CORRECTNESS_FULL=1)")
	ddlSeed  = flag.Uint64("ddl.seed", 0, "run only the DDL-and-restart case with this seed")
)

// inlineView is the model of one inline view: SELECT k, <expr> AS a, b
// FROM src WHERE filter. Every inline view has the columns (k, a, b), so
// any replacement keeps them and views compose.
type inlineView struct {
	name, expr, src, filter string
}

// matView is the model of one materialized view: shape over src, and the
// PostgreSQL query of the definition it was pinned to.
type matView struct {
	name, shape, src string
	// star views select * from the table: cols are its columns at pinning.
	cols   []string
	pinned string
}

// ddlModel is what RockStream must hold after each step.
type ddlModel struct {
	cols  []string // t0's columns
	views []*inlineView
	mats  []*matView
	next  int
}

func (m *ddlModel) view(name string) *inlineView {
	for _, v := range m.views {
		if v.name == name {
			return v
		}
	}
	return nil
}

// from is src as PostgreSQL must read it now: the table, or the inline
// view's current definition expanded.
func (m *ddlModel) from(src string) string {
	v := m.view(src)
	if v == nil {
		return src
	}
	return "(" + m.expand(v) + ") AS " + src
}

func (m *ddlModel) expand(v *inlineView) string {
	return fmt.Sprintf("SELECT k, %s AS a, b FROM %s WHERE %s", v.expr, m.from(v.src), v.filter)
}

func (v *inlineView) sql() string {
	return fmt.Sprintf("SELECT k, %s AS a, b FROM %s WHERE %s", v.expr, v.src, v.filter)
}

// matSQL is a materialized view's query reading from.
func matSQL(shape, from string, cols []string) string {
	switch shape {
	case "count":
		return "SELECT count(*) AS n, sum(a) AS s FROM " + from
	case "group":
		return "SELECT b, count(*) AS n, max(a) AS mx FROM " + from + " GROUP BY b"
	case "filter":
		return "SELECT k, a FROM " + from + " WHERE a > 2"
	}
	// star: the columns the table had when the view was pinned.
	if cols == nil {
		return "SELECT * FROM " + from + " WHERE b > 1"
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + from + " WHERE b > 1"
}

// pin computes mv's pinned PostgreSQL query from the current model.
func (m *ddlModel) pin(mv *matView) {
	if mv.shape == "star" {
		mv.cols = slices.Clone(m.cols)
	}
	mv.pinned = matSQL(mv.shape, m.from(mv.src), mv.cols)
}

// reaches reports whether reading src reads view name (a cycle if name
// were redefined over src).
func (m *ddlModel) reaches(src, name string) bool {
	for src != "" {
		if src == name {
			return true
		}
		v := m.view(src)
		if v == nil {
			return false
		}
		src = v.src
	}
	return false
}

// dependents are the views and materialized views reading name directly.
func (m *ddlModel) dependents(name string) (views []string, mats []string) {
	for _, v := range m.views {
		if v.src == name {
			views = append(views, v.name)
		}
	}
	for _, mv := range m.mats {
		if mv.src == name {
			mats = append(mats, mv.name)
		}
	}
	return views, mats
}

// dropView removes name and everything that reads it.
func (m *ddlModel) dropView(name string) {
	views, mats := m.dependents(name)
	for _, v := range views {
		m.dropView(v)
	}
	m.mats = slices.DeleteFunc(m.mats, func(mv *matView) bool { return slices.Contains(mats, mv.name) })
	m.views = slices.DeleteFunc(m.views, func(v *inlineView) bool { return v.name == name })
}

// ddlCase runs one case.
type ddlCase struct {
	t      *testing.T
	seed   uint64
	r      *rand.Rand
	dir    string
	srv    *harness.Server
	rs, pg *harness.Conn
	model  ddlModel
	script []string
}

func (c *ddlCase) fail(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("DDL-and-restart case failed: %s\n\nreproduce: go test ./correctness/differential -run TestDDLAndRestarts -ddl.seed=%d\n\nscript (RockStream; PostgreSQL ran the data changes and evaluated the definitions):\n%s",
		fmt.Sprintf(format, args...), c.seed, strings.Join(c.script, "\n"))
}

// rsOnly runs DDL on RockStream; want is the SQLSTATE it must fail with,
// "" for success.
func (c *ddlCase) rsOnly(sql, want string) {
	c.t.Helper()
	c.script = append(c.script, sql+";")
	_, err := c.rs.Exec(sql)
	if got := harness.SQLState(err); got != want || (want == "" && err != nil) {
		if want == "" {
			c.fail("%s: %s", sql, harness.ErrorText(err))
		}
		c.fail("%s: got %v, want SQLSTATE %s", sql, errText(err), want)
	}
	if want != "" {
		c.script[len(c.script)-1] += " -- error " + want
	}
}

// both runs a statement on both systems; both must succeed or both fail.
func (c *ddlCase) both(sql string) {
	c.t.Helper()
	c.script = append(c.script, sql+";")
	_, rerr := c.rs.Exec(sql)
	_, perr := c.pg.Exec(sql)
	if (rerr == nil) != (perr == nil) {
		c.fail("%s: rockstream %v, postgresql %v", sql, errText(rerr), errText(perr))
	}
}

func (c *ddlCase) restart() {
	c.t.Helper()
	c.script = append(c.script, "-- restart")
	c.srv.Stop()
	srv, err := harness.Start(c.dir)
	if err != nil {
		c.fail("the server did not start: %v", err)
	}
	c.srv = srv
	c.rs = harness.ConnectRS(c.t, srv)
	res, err := c.rs.Exec("SELECT name, state, error FROM rockstream_catalog.views WHERE kind = 'materialized' AND state <> 'running'")
	if err != nil {
		c.fail("reading rockstream_catalog.views after a restart: %v", err)
	}
	if len(res.Rows) > 0 {
		c.fail("views not running after a restart: %q", harness.Lines(res.Rows))
	}
}

func (c *ddlCase) compare(when, rsSQL, pgSQL string) {
	c.t.Helper()
	got, rerr := c.rs.Exec(rsSQL)
	want, perr := c.pg.Exec(pgSQL)
	if rerr != nil || perr != nil {
		c.fail("%s: %s: rockstream %v, postgresql (%s) %v", when, rsSQL, errText(rerr), pgSQL, errText(perr))
	}
	g, w := harness.SortedLines(got.Rows), harness.SortedLines(want.Rows)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		c.fail("%s: %s differs from %s on PostgreSQL\n-- rockstream: %q\n-- postgresql: %q", when, rsSQL, pgSQL, g, w)
	}
}

func (c *ddlCase) check(when string) {
	c.t.Helper()
	for _, mv := range c.model.mats {
		c.compare(when, "SELECT * FROM "+mv.name, mv.pinned)
	}
	for _, v := range c.model.views {
		c.compare(when, "SELECT * FROM "+v.name, c.model.expand(v))
	}
}

func (c *ddlCase) pick(options []string) string { return options[c.r.IntN(len(options))] }

func (c *ddlCase) sources() []string {
	out := []string{"t0"}
	for _, v := range c.model.views {
		out = append(out, v.name)
	}
	return out
}

func (c *ddlCase) newInline(name string) *inlineView {
	return &inlineView{
		name:   name,
		expr:   c.pick([]string{"a", "a + 1", "coalesce(a, 0)", "b - a"}),
		src:    c.pick(c.sources()),
		filter: c.pick([]string{"true", "a > 1", "b > 3", "a IS NOT NULL", "k % 2 = 0", "a + b > 4"}),
	}
}

func (c *ddlCase) dml() {
	k := c.r.IntN(8) + 1
	val := func() string {
		if c.r.IntN(5) == 0 {
			return "NULL"
		}
		return fmt.Sprint(c.r.IntN(10) - 2)
	}
	switch c.r.IntN(4) {
	case 0, 1:
		c.both(fmt.Sprintf("INSERT INTO t0 (k, a, b) VALUES (%d, %s, %s) ON CONFLICT (k) DO UPDATE SET a = EXCLUDED.a, b = EXCLUDED.b", k, val(), val()))
	case 2:
		c.both(fmt.Sprintf("UPDATE t0 SET a = a + 1 WHERE b > %d", c.r.IntN(6)))
	default:
		c.both(fmt.Sprintf("DELETE FROM t0 WHERE k = %d", k))
	}
}

// step draws and runs one step.
func (c *ddlCase) step() {
	m := &c.model
	switch n := c.r.IntN(20); {
	case n < 6:
		c.dml()
	case n < 8 && len(m.views) < ddlViewsMax:
		m.next++
		v := c.newInline(fmt.Sprintf("v%d", m.next))
		c.rsOnly("CREATE VIEW "+v.name+" AS "+v.sql(), "")
		m.views = append(m.views, v)
	case n < 11 && len(m.views) > 0:
		old := m.views[c.r.IntN(len(m.views))]
		v := c.newInline(old.name)
		if c.r.IntN(2) == 0 {
			// NB: most other sources read the view already (cycles);
			// half the replacements go back to the table.
			v.src = "t0"
		}
		if m.reaches(v.src, v.name) {
			c.rsOnly("CREATE OR REPLACE VIEW "+v.name+" AS "+v.sql(), "42P17")
			return
		}
		c.rsOnly("CREATE OR REPLACE VIEW "+v.name+" AS "+v.sql(), "")
		*old = *v
	case n < 13 && len(m.mats) < ddlMatViewsMax:
		m.next++
		mv := &matView{name: fmt.Sprintf("m%d", m.next), shape: c.pick([]string{"count", "group", "filter", "star"})}
		mv.src = c.pick(c.sources())
		if len(m.views) > 0 && c.r.IntN(3) > 0 {
			// Mostly over inline views: what pinning is about.
			mv.src = m.views[c.r.IntN(len(m.views))].name
		}
		if mv.shape == "star" {
			mv.src = "t0"
		}
		c.rsOnly("CREATE MATERIALIZED VIEW "+mv.name+" AS "+matSQL(mv.shape, mv.src, nil), "")
		m.pin(mv)
		m.mats = append(m.mats, mv)
	case n < 14 && len(m.views) > 0:
		v := m.views[c.r.IntN(len(m.views))]
		views, mats := m.dependents(v.name)
		if c.r.IntN(2) == 0 {
			c.rsOnly("DROP VIEW "+v.name+" CASCADE", "")
			m.dropView(v.name)
		} else if len(views)+len(mats) > 0 {
			c.rsOnly("DROP VIEW "+v.name, "2BP01")
		} else {
			c.rsOnly("DROP VIEW "+v.name, "")
			m.dropView(v.name)
		}
	case n < 15 && len(m.mats) > 0:
		i := c.r.IntN(len(m.mats))
		c.rsOnly("DROP MATERIALIZED VIEW "+m.mats[i].name, "")
		m.mats = slices.Delete(m.mats, i, i+1)
	case n < 16:
		col := fmt.Sprintf("c%d", len(m.cols))
		def := ""
		if c.r.IntN(2) == 0 {
			def = fmt.Sprintf(" DEFAULT %d", c.r.IntN(5))
		}
		c.both("ALTER TABLE t0 ADD COLUMN " + col + " int" + def)
		m.cols = append(m.cols, col)
	case n < 17 && len(m.mats) > 0:
		mv := m.mats[c.r.IntN(len(m.mats))]
		if mv.shape == "star" && !slices.Equal(mv.cols, m.cols) {
			c.rsOnly("ALTER MATERIALIZED VIEW "+mv.name+" RECOMPILE", "0A000")
			return
		}
		c.rsOnly("ALTER MATERIALIZED VIEW "+mv.name+" RECOMPILE", "")
		m.pin(mv)
	case n < 19:
		c.restart()
	default:
		c.dml()
	}
}

func runDDLCase(t *testing.T, c *ddlCase) {
	for _, sql := range []string{"DROP TABLE IF EXISTS t0 CASCADE"} {
		if _, err := c.rs.Exec(sql); err != nil {
			t.Fatalf("cannot reset rockstream: %v", err)
		}
	}
	drop, err := c.pg.FreshSchema("ddl")
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	c.model = ddlModel{cols: []string{"k", "a", "b"}}
	c.both("CREATE TABLE t0 (k int PRIMARY KEY, a int, b int)")
	c.both("INSERT INTO t0 VALUES (1, 1, 1), (2, 2, 5), (3, NULL, 3), (4, 4, NULL), (5, 5, 6)")
	steps := ddlStepsMax/2 + c.r.IntN(ddlStepsMax/2+1)
	for i := 0; i < steps; i++ {
		c.step()
		c.check(fmt.Sprintf("after step %d", i+1))
	}
	c.restart()
	c.check("after the final restart")
}

// TestDDLAndRestarts runs the DDL-and-restart campaign (see above).
func TestDDLAndRestarts(t *testing.T) {
	cases := *ddlCases
	if cases == 0 {
		cases = ddlCasesCI
		if os.Getenv("ROCKSTREAM_CORRECTNESS_FULL") != "" {
			cases = ddlCasesFull
		}
	}
	seeds := make([]uint64, cases)
	base := rand.Uint64()
	for i := range seeds {
		seeds[i] = base + uint64(i)
	}
	if *ddlSeed != 0 {
		seeds = []uint64{*ddlSeed}
	}
	harness.LogShards(t)
	t.Logf("SEED=%d cases=%d steps<=%d views<=%d materialized<=%d", seeds[0], len(seeds), ddlStepsMax, ddlViewsMax, ddlMatViewsMax)
	dir := t.TempDir()
	srv, err := harness.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &ddlCase{t: t, dir: dir, srv: srv, pg: harness.ConnectPG(t)}
	defer func() { c.srv.Stop() }()
	c.rs = harness.ConnectRS(t, srv)
	restarts := 0
	for i, seed := range seeds {
		c.seed, c.r, c.script = seed, rand.New(rand.NewPCG(seed, 0x5eed)), nil
		runDDLCase(t, c)
		for _, s := range c.script {
			if s == "-- restart" {
				restarts++
			}
		}
		if (i+1)%100 == 0 {
			t.Logf("%d cases, %d restarts", i+1, restarts)
		}
	}
	t.Logf("cases=%d restarts=%d mismatches=0 failed-starts=0", len(seeds), restarts)
}
