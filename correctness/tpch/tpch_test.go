package tpch_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/correctness/tpch"
	"github.com/rockstream/rockstream/internal/pgtest"
)

const (
	defaultScale = 0.005
	defaultSeed  = 1
)

var (
	scale   = flag.Float64("tpch.sf", defaultScale, "TPC-H scale factor of the generated data")
	seed    = flag.Uint64("tpch.seed", defaultSeed, "seed of the generated data and changes")
	batches = flag.Int("tpch.batches", 4, "transactions of random changes applied after the load")
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// knownFailures are the queries RockStream does not maintain as a
// materialized view, with (a part of) the error CREATE MATERIALIZED VIEW
// gives; they are still run ad hoc and compared. A query listed here that
// compiles fails the test, so the list stays true.
var knownFailures = map[string]string{}

type run struct {
	t      *testing.T
	srv    *harness.Server
	rs, pg *harness.Conn
	views  []tpch.Query
	adhoc  []tpch.Query
}

func (r *run) both(sql string) {
	r.t.Helper()
	if _, err := r.pg.Exec(sql); err != nil {
		r.t.Fatalf("postgresql: %s\n%s", harness.ErrorText(err), abbrev(sql))
	}
	if _, err := r.rsExec(sql); err != nil {
		r.t.Fatalf("rockstream: %s\n%s", harness.ErrorText(err), abbrev(sql))
	}
}

// rsExec runs sql on rockstream, opening a new session when a timeout
// closed the last one.
func (r *run) rsExec(sql string) (*harness.Result, error) {
	if !r.rs.Alive() {
		r.rs = harness.ConnectRS(r.t, r.srv)
	}
	return r.rs.Exec(sql)
}

func abbrev(sql string) string {
	if len(sql) > 300 {
		return sql[:300] + "..."
	}
	return sql
}

func (r *run) insert(table string, rows []string) {
	r.t.Helper()
	for len(rows) > 0 {
		n := min(len(rows), 500)
		r.both("INSERT INTO " + table + " VALUES " + strings.Join(rows[:n], ", "))
		rows = rows[n:]
	}
}

// compare checks rockstream's rows (a view read or the query run ad hoc)
// against PostgreSQL's answer to the query: as multisets, and in order for
// a query ending in LIMIT. It returns the number of rows.
func (r *run) compare(when string, q tpch.Query, rsSQL string) int {
	r.t.Helper()
	want, err := r.pg.Exec(q.SQL)
	if err != nil {
		r.t.Fatalf("%s: %s on postgresql: %s", when, q.Name, harness.ErrorText(err))
	}
	got, err := r.rsExec(rsSQL)
	if err != nil {
		r.t.Errorf("%s: %s: rockstream: %s", when, q.Name, harness.ErrorText(err))
		return len(want.Rows)
	}
	g, w := harness.SortedLines(got.Rows), harness.SortedLines(want.Rows)
	if q.Limit {
		g, w = harness.Lines(got.Rows), harness.Lines(want.Rows)
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		r.t.Errorf("%s: %s (%s) differs from postgresql:\n%s", when, q.Name, rsSQL, diff(g, w))
	}
	// A global aggregate over no rows is one row of NULLs: no rows either.
	if len(w) == 1 && strings.Trim(strings.ReplaceAll(w[0], "NULL", ""), "|") == "" {
		return 0
	}
	return len(want.Rows)
}

// diff lists the lines only one side has (at most 10 of each).
func diff(got, want []string) string {
	count := map[string]int{}
	for _, l := range want {
		count[l]++
	}
	for _, l := range got {
		count[l]--
	}
	var b strings.Builder
	var extra, missing int
	for _, l := range got {
		if count[l] < 0 && extra < 10 {
			fmt.Fprintf(&b, "  rockstream only: %s\n", l)
			count[l]++
			extra++
		}
	}
	for _, l := range want {
		if count[l] > 0 && missing < 10 {
			fmt.Fprintf(&b, "  postgresql only: %s\n", l)
			count[l]--
			missing++
		}
	}
	if extra == 0 && missing == 0 {
		fmt.Fprintf(&b, "  same rows, different order:\n  rockstream: %q\n  postgresql: %q\n", got, want)
	}
	return b.String()
}

func (r *run) check(when string) {
	r.t.Helper()
	start := time.Now()
	var counts []string
	for _, q := range r.views {
		n := r.compare(when, q, "SELECT * FROM "+q.Name)
		if n == 0 && when == "after the load" {
			// The default data gives every query rows; other seeds and
			// scales may leave the rarest (Q11, Q17, Q19, Q20) without.
			if *scale == defaultScale && *seed == defaultSeed {
				r.t.Errorf("%s has no rows on the generated data: the generator no longer exercises it", q.Name)
			} else {
				r.t.Logf("%s has no rows on this data", q.Name)
			}
		}
		counts = append(counts, fmt.Sprintf("%s:%d", q.Name, n))
	}
	for _, q := range r.adhoc {
		r.compare(when+" (ad hoc)", q, q.SQL)
	}
	r.t.Logf("%s: %d views and %d ad hoc queries equal postgresql's answers (%v); rows %s", when, len(r.views), len(r.adhoc), time.Since(start).Round(time.Millisecond), strings.Join(counts, " "))
}

// changes is one transaction of random inserts, updates and deletes over
// lineitem, orders, customer, partsupp, part and supplier.
func changes(g *tpch.Gen) []string {
	var out []string
	orders, lines := g.OrdersAndLines(g.Between(5, 20))
	out = append(out, "INSERT INTO orders VALUES "+strings.Join(orders, ", "), "INSERT INTO lineitem VALUES "+strings.Join(lines, ", "))
	last := g.LastOrder()
	for i := g.Between(3, 10); i > 0; i-- {
		k := g.Between(1, last)
		out = append(out, fmt.Sprintf("DELETE FROM lineitem WHERE l_orderkey = %d", k), fmt.Sprintf("DELETE FROM orders WHERE o_orderkey = %d", k))
	}
	for i := g.Between(5, 20); i > 0; i-- {
		k, ln := g.Between(1, last), g.Between(1, 7)
		switch g.Intn(5) {
		case 0:
			out = append(out, fmt.Sprintf("UPDATE lineitem SET l_quantity = %d, l_extendedprice = l_extendedprice / l_quantity * %d WHERE l_orderkey = %d AND l_linenumber = %d", g.Between(1, 60), g.Between(1, 60), k, ln))
		case 1:
			out = append(out, fmt.Sprintf("UPDATE lineitem SET l_discount = 0.%02d, l_tax = 0.%02d WHERE l_orderkey = %d", g.Between(0, 10), g.Between(0, 8), k))
		case 2:
			out = append(out, fmt.Sprintf("UPDATE lineitem SET l_shipdate = l_shipdate + %d, l_receiptdate = l_receiptdate + %d WHERE l_orderkey = %d AND l_linenumber = %d", g.Between(-60, 60), g.Between(0, 40), k, ln))
		case 3:
			out = append(out, fmt.Sprintf("UPDATE lineitem SET l_returnflag = '%s', l_shipmode = '%s' WHERE l_orderkey = %d", string("RAN"[g.Intn(3)]), g.Pick(tpch.Modes), k))
		case 4:
			out = append(out, fmt.Sprintf("DELETE FROM lineitem WHERE l_orderkey = %d AND l_linenumber = %d", k, ln))
		}
	}
	for i := g.Between(3, 10); i > 0; i-- {
		k := g.Between(1, last)
		switch g.Intn(3) {
		case 0:
			out = append(out, fmt.Sprintf("UPDATE orders SET o_orderpriority = '%s' WHERE o_orderkey = %d", g.Pick(tpch.Priorities), k))
		case 1:
			out = append(out, fmt.Sprintf("UPDATE orders SET o_orderdate = o_orderdate + %d, o_comment = substring(o_comment from 1 for 50) || ' special requests' WHERE o_orderkey = %d", g.Between(-100, 100), k))
		case 2:
			out = append(out, fmt.Sprintf("UPDATE orders SET o_orderstatus = '%s', o_custkey = %d WHERE o_orderkey = %d", string("FOP"[g.Intn(3)]), g.Between(1, g.Customers), k))
		}
	}
	for i := g.Between(1, 5); i > 0; i-- {
		out = append(out, fmt.Sprintf("UPDATE customer SET c_acctbal = %d.%02d, c_mktsegment = '%s' WHERE c_custkey = %d", g.Between(-999, 9999), g.Between(0, 99), g.Pick(tpch.Segments), g.Between(1, g.Customers)))
	}
	for i := g.Between(1, 5); i > 0; i-- {
		p := g.Between(1, g.Parts)
		out = append(out, fmt.Sprintf("UPDATE partsupp SET ps_supplycost = %d.%02d, ps_availqty = %d WHERE ps_partkey = %d AND ps_suppkey = %d", g.Between(1, 1000), g.Between(0, 99), g.Between(1, 9999), p, g.PartSupplier(p, g.Intn(4))))
	}
	out = append(out,
		fmt.Sprintf("UPDATE part SET p_size = %d, p_type = 'ECONOMY ANODIZED STEEL' WHERE p_partkey = %d", g.Between(1, 50), g.Between(1, g.Parts)),
		fmt.Sprintf("UPDATE part SET p_brand = 'Brand#23', p_container = 'MED BOX' WHERE p_partkey = %d", g.Between(1, g.Parts)),
		fmt.Sprintf("UPDATE supplier SET s_nationkey = %d, s_acctbal = s_acctbal + 100 WHERE s_suppkey = %d", g.Intn(25), g.Between(1, g.Suppliers)),
		fmt.Sprintf("UPDATE customer SET c_phone = '%d' || substring(c_phone from 3) WHERE c_custkey = %d", g.Between(10, 34), g.Between(1, g.Customers)),
	)
	return out
}

// TestTPCH creates the 22 TPC-H queries as materialized views over
// generated data, compares every view with the query on PostgreSQL, then
// again after each of a few transactions of random changes.
// ROCKSTREAM_TEST_SHARDS=N runs it over N shards (CI runs 1 and 3).
func TestTPCH(t *testing.T) {
	srv := harness.StartServer(t)
	r := &run{t: t, srv: srv, rs: harness.ConnectRS(t, srv), pg: harness.ConnectPG(t)}
	for _, ddl := range tpch.DDL {
		r.both(ddl)
	}
	g := tpch.New(*scale, *seed)
	start := time.Now()
	r.insert("region", g.Region())
	r.insert("nation", g.Nation())
	r.insert("part", g.Part())
	r.insert("supplier", g.Supplier())
	r.insert("partsupp", g.PartSupp())
	r.insert("customer", g.Customer())
	orders, lines := g.OrdersAndLines(g.Order)
	r.insert("orders", orders)
	r.insert("lineitem", lines)
	t.Logf("loaded SF %g: %d parts, %d suppliers, %d customers, %d orders, %d line items (%v)",
		*scale, g.Parts, g.Suppliers, g.Customers, len(orders), len(lines), time.Since(start).Round(time.Millisecond))

	var status []string
	for _, q := range tpch.Queries {
		if q.Setup != "" {
			r.both(q.Setup)
		}
		start := time.Now()
		_, err := r.rsExec("CREATE MATERIALIZED VIEW " + q.Name + " AS " + q.SQL)
		known, isKnown := knownFailures[q.Name]
		switch {
		case err == nil && isKnown:
			t.Errorf("%s is listed as a known failure (%q) but compiles: take it off the list", q.Name, known)
			r.views = append(r.views, q)
		case err == nil:
			r.views = append(r.views, q)
			status = append(status, fmt.Sprintf("%s: view ok (%v)", q.Name, time.Since(start).Round(time.Millisecond)))
		case isKnown && strings.Contains(harness.ErrorText(err), known):
			r.adhoc = append(r.adhoc, q)
			status = append(status, fmt.Sprintf("%s: ad hoc only: %s", q.Name, harness.ErrorText(err)))
		default:
			t.Errorf("%s: CREATE MATERIALIZED VIEW: %s", q.Name, harness.ErrorText(err))
			r.adhoc = append(r.adhoc, q)
		}
	}
	t.Logf("\n%s", strings.Join(status, "\n"))
	r.check("after the load")

	for b := 1; b <= *batches; b++ {
		stmts := changes(g)
		r.both("BEGIN;\n" + strings.Join(stmts, ";\n") + ";\nCOMMIT")
		r.check(fmt.Sprintf("after change batch %d (%d statements)", b, len(stmts)))
	}
	for _, q := range tpch.Queries {
		if q.Teardown != "" {
			if _, err := r.rsExec("DROP MATERIALIZED VIEW IF EXISTS " + q.Name); err != nil {
				t.Errorf("drop %s: %s", q.Name, harness.ErrorText(err))
			}
			r.both(q.Teardown)
		}
	}
}
